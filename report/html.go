package report

import (
	"bytes"
	"fmt"
	"html/template"
	"strings"

	"github.com/flamediff/flamediff/internal/names"
)

// HTMLOptions say how HTMLTables marks up sections.
type HTMLOptions struct {
	// Heading is the element of section titles: "h2", "h3".
	Heading string
	// Indent shows a name's level: "  " in a cell that keeps white space,
	// non-breaking spaces in one that wraps.
	Indent string
	// Shorten shortens the text of every cell of a non-numeric column to
	// names.Width runes (names.ShortenChain: each function of a chain on
	// its own), the whole text as the cell's tooltip, so that one name does
	// not push a table off the page; and marks every such cell "name"
	// (monospace). Without it a cell is "name" when Cell.Name says so and
	// shows Cell.Text, its tooltip Cell.Title.
	Shorten bool
}

type htmlCell struct {
	Text, Class, Title, Href string
}

type htmlSection struct {
	Open, Close template.HTML
	Title       string
	Intro       []string
	Heads       []htmlCell
	Table       bool
	Rows        [][]htmlCell
	IfEmpty     string
	Notes       []string
}

var sectionTemplate = template.Must(template.New("section").Parse(`{{.Open}}{{.Title}}{{.Close}}
{{range .Intro}}<p class="note">{{.}}</p>
{{end}}{{if .Table}}<table>
<thead><tr>{{range .Heads}}<th{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}{{if .Title}} title="{{.Title}}"{{end}}>{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{else}}<p>{{.IfEmpty}}</p>
{{end}}{{range .Notes}}<p class="note">{{.}}</p>
{{end}}`))

// HTMLTables returns the sections as HTML, for a page to insert as it is:
// per section its title, intro paragraphs, table (or IfEmpty) and notes.
// Every text is cleaned (names.Clean) and escaped by html/template;
// numeric columns are of class "num". A row may not have more cells than
// its section has columns; shorter rows are filled with empty cells.
func HTMLTables(sections []Section, o HTMLOptions) (template.HTML, error) {
	var b bytes.Buffer
	for _, s := range sections {
		hs, err := toHTMLSection(&s, o)
		if err != nil {
			return "", err
		}
		if err := sectionTemplate.Execute(&b, hs); err != nil {
			return "", fmt.Errorf("html table %q: %w", s.Title, err)
		}
	}
	return template.HTML(b.String()), nil // #nosec G203 -- every text escaped by html/template
}

func toHTMLSection(s *Section, o HTMLOptions) (htmlSection, error) {
	hs := htmlSection{
		Open: template.HTML("<" + o.Heading + ">"), Close: template.HTML("</" + o.Heading + ">"), // #nosec G203 -- the caller's element name
		Title: names.Clean(s.Title), Intro: names.CleanAll(s.Intro), Notes: names.CleanAll(s.Notes),
		Table: len(s.Rows) > 0 || s.IfEmpty == "", IfEmpty: names.Clean(s.IfEmpty),
	}
	for _, c := range s.Columns {
		hs.Heads = append(hs.Heads, htmlCell{Text: names.Clean(c.Head), Class: numClass(c.Numeric)})
	}
	for _, row := range s.Rows {
		if len(row) > len(s.Columns) {
			return hs, fmt.Errorf("html table %q: a row has %d cells for %d columns", s.Title, len(row), len(s.Columns))
		}
		cells := make([]htmlCell, len(s.Columns))
		for i, col := range s.Columns {
			var c Cell
			if i < len(row) {
				c = row[i]
			}
			cells[i] = htmlCellOf(c, col, o)
		}
		hs.Rows = append(hs.Rows, cells)
	}
	return hs, nil
}

func numClass(num bool) string {
	if num {
		return "num"
	}
	return ""
}

func htmlCellOf(c Cell, col Column, o HTMLOptions) htmlCell {
	text := names.Clean(strings.Repeat(o.Indent, c.Level) + c.Text + c.Suffix)
	h := htmlCell{Text: text, Class: numClass(col.Numeric), Title: names.Clean(c.Title), Href: c.Href}
	switch {
	case o.Shorten && !col.Numeric:
		h.Class = "name"
		if short := names.ShortenChain(text, names.Width); short != text {
			h.Text, h.Title = short, text
		}
	case c.Name:
		h.Class = "name"
	}
	if c.Class != "" {
		h.Class = strings.TrimSpace(h.Class + " " + c.Class)
	}
	return h
}
