package benchreport

import (
	"reflect"

	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
)

// Every writer shows names (functions, subsystems, versions, workloads,
// reasons) as names.Clean makes them: each run of invalid UTF-8 bytes
// becomes one U+FFFD, in the tables, markdown, HTML, summary and JSON
// alike. The Report itself keeps the names as given.

// cleaned returns a deep copy of r in which every string reachable
// through exported fields is names.Clean'ed, for WriteJSON: encoding/json
// would replace each invalid byte by its own U+FFFD, not each run by one.
func (r *Report) cleaned() *Report {
	return cleanValue(reflect.ValueOf(r)).Interface().(*Report)
}

// cleanValue returns a copy of v with the strings it holds, through
// pointers, slices and exported struct fields, cleaned. Maps and unexported
// fields are copied as they are (report.json has no maps and ignores
// unexported fields).
func cleanValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		n := reflect.New(v.Type()).Elem()
		n.SetString(names.Clean(v.String()))
		return n
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(cleanValue(v.Elem()))
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		n.Set(v)
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n.Field(i).Set(cleanValue(v.Field(i)))
			}
		}
		return n
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			n.Index(i).Set(cleanValue(v.Index(i)))
		}
		return n
	}
	return v
}

// none is what a table with no rows shows instead.
const none = "(none)"

// cleanSection returns s with every text names.Clean'ed, showing none
// when it has no rows.
func cleanSection(s report.Section) report.Section {
	s.Title = names.Clean(s.Title)
	s.Intro = names.CleanAll(s.Intro)
	s.Notes = names.CleanAll(s.Notes)
	s.IfEmpty = none
	cols := make([]report.Column, len(s.Columns))
	for i, c := range s.Columns {
		c.Head = names.Clean(c.Head)
		cols[i] = c
	}
	s.Columns = cols
	rows := make([][]report.Cell, len(s.Rows))
	for i, row := range s.Rows {
		rows[i] = make([]report.Cell, len(row))
		for j, c := range row {
			c.Text, c.Title = names.Clean(c.Text), names.Clean(c.Title)
			rows[i][j] = c
		}
	}
	s.Rows = rows
	return s
}

func cleanSections(ss []report.Section) []report.Section {
	for i := range ss {
		ss[i] = cleanSection(ss[i])
	}
	return ss
}
