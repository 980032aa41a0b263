package flamegraph

import (
	"bufio"
	"bytes"
	"fmt"
	"html/template"
	"io"

	"github.com/flamediff/flamediff/internal/names"
)

// Column is one column of a Table: its heading and whether it holds
// numbers (right-aligned).
type Column struct {
	Head    string
	Numeric bool
}

// Table is one titled table of a Page, with sentences printed after it.
type Table struct {
	Title   string
	Columns []Column
	Rows    [][]string
	Notes   []string
}

// Page is a self-contained HTML report: a title, a flame graph drawn
// inline, tables, then notes.
type Page struct {
	Title  string
	Graph  *Graph
	Tables []Table
	Notes  []string
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: -apple-system, "Segoe UI", "DejaVu Sans", Verdana, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; }
h2 { font-size: 1.1em; margin-top: 2em; }
svg.flamegraph { max-width: 100%; height: auto; display: block; border: 1px solid #ddd; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; vertical-align: top; }
th { background: #f0f0f0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.name { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; white-space: pre; }
p.note { color: #444; font-size: 0.9em; overflow-wrap: anywhere; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .SVG}}<div class="graph">
{{.SVG}}</div>
<p class="note">Hover a frame for its figures, click to zoom (Reset Zoom undoes it), Search or Ctrl-F to highlight frames by regular expression; the address keeps zoom and search.</p>
{{end}}{{range .Tables}}<h2>{{.Title}}</h2>
<table>
<thead><tr>{{range .Columns}}<th{{if .Numeric}} class="num"{{end}}>{{.Head}}</th>{{end}}</tr></thead>
<tbody>
{{range .Cells}}<tr>{{range .}}<td class="{{if .Numeric}}num{{else}}name{{end}}"{{if .Title}} title="{{.Title}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{range .Notes}}<p class="note">{{.}}</p>
{{end}}{{end}}{{range .Notes}}<p class="note">{{.}}</p>
{{end}}</body>
</html>
`))

// CellWidth is the most runes a name in a cell of a non-numeric column
// shows: a longer one (a C++ name can run to thousands of characters) is
// shortened in the middle (names.ShortenChain: each function of a chain
// "a → b" on its own), with the whole text as the cell's tooltip, so that
// one name does not push a table off the page.
const CellWidth = names.Width

// WritePage writes p as one HTML document with everything inline (styles,
// the SVG and its script): no external file or network access. Table cells,
// titles and notes are cleaned (invalid UTF-8 replaced as names.Clean does,
// as in the SVG) and HTML-escaped; cells of non-numeric columns are
// shortened to CellWidth runes. A row may not have more cells than its
// table has columns.
func WritePage(w io.Writer, p Page) error {
	var svg bytes.Buffer
	if p.Graph != nil {
		bw := bufio.NewWriter(&svg)
		p.Graph.writeSVG(bw)
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	for _, t := range p.Tables {
		for _, r := range t.Rows {
			if len(r) > len(t.Columns) {
				return fmt.Errorf("html page: table %q: a row has %d cells for %d columns", t.Title, len(r), len(t.Columns))
			}
		}
	}
	p = cleanPage(p)
	type pageCell struct {
		Text, Title string
		Numeric     bool
	}
	type pageTable struct {
		Table
		Cells [][]pageCell
	}
	data := struct {
		Page
		Tables []pageTable
		// SVG is our own output, every name in it escaped (see WriteSVG).
		SVG template.HTML
	}{Page: p, SVG: template.HTML(svg.String())} // #nosec G203 -- escaped by writeSVG
	for _, t := range p.Tables {
		pt := pageTable{Table: t}
		for _, r := range t.Rows {
			cells := make([]pageCell, len(r))
			for i, c := range r {
				cells[i] = pageCell{Text: c, Numeric: t.Columns[i].Numeric}
				if !cells[i].Numeric {
					if short := names.ShortenChain(c, CellWidth); short != c {
						cells[i].Text, cells[i].Title = short, c
					}
				}
			}
			pt.Cells = append(pt.Cells, cells)
		}
		data.Tables = append(data.Tables, pt)
	}
	return pageTemplate.Execute(w, data)
}

// cleanPage returns a copy of p whose text is valid UTF-8 (names.Clean);
// the graph cleans its own names.
func cleanPage(p Page) Page {
	p.Title = names.Clean(p.Title)
	p.Notes = names.CleanAll(p.Notes)
	tables := make([]Table, len(p.Tables))
	for i, t := range p.Tables {
		t.Title = names.Clean(t.Title)
		t.Notes = names.CleanAll(t.Notes)
		cols := make([]Column, len(t.Columns))
		for j, c := range t.Columns {
			c.Head = names.Clean(c.Head)
			cols[j] = c
		}
		t.Columns = cols
		rows := make([][]string, len(t.Rows))
		for j, r := range t.Rows {
			rows[j] = names.CleanAll(r)
		}
		t.Rows = rows
		tables[i] = t
	}
	p.Tables = tables
	return p
}
