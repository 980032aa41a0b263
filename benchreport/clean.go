package benchreport

import (
	"reflect"

	"github.com/flamediff/flamediff/internal/names"
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

// cleanSection returns s with every text names.Clean'ed.
func cleanSection(s section) section {
	s.title = names.Clean(s.title)
	s.intro = names.CleanAll(s.intro)
	s.notes = names.CleanAll(s.notes)
	cols := make([]column, len(s.cols))
	for i, c := range s.cols {
		c.head = names.Clean(c.head)
		cols[i] = c
	}
	s.cols = cols
	rows := make([][]cell, len(s.rows))
	for i, row := range s.rows {
		rows[i] = make([]cell, len(row))
		for j, c := range row {
			c.text, c.full = names.Clean(c.text), names.Clean(c.full)
			rows[i][j] = c
		}
	}
	s.rows = rows
	return s
}

func cleanSections(ss []section) []section {
	for i := range ss {
		ss[i] = cleanSection(ss[i])
	}
	return ss
}
