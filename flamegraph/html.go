package flamegraph

import (
	"bufio"
	"bytes"
	"html/template"
	"io"

	"github.com/flamediff/flamediff/internal/names"
)

// Page is a self-contained HTML report: a title, a flame graph drawn
// inline, tables, then notes.
type Page struct {
	Title string
	Graph *Graph
	// Tables is HTML the caller wrote (flamediff's report layer writes the
	// report's tables), inserted as it is after the graph: it must be
	// escaped and self-contained.
	Tables template.HTML
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
{{end}}{{.Tables}}{{range .Notes}}<p class="note">{{.}}</p>
{{end}}</body>
</html>
`))

// WritePage writes p as one HTML document with everything inline (styles,
// the SVG and its script): no external file or network access. The title
// and notes are cleaned (invalid UTF-8 replaced as names.Clean does, as in
// the SVG) and HTML-escaped; the tables are inserted as they are.
func WritePage(w io.Writer, p Page) error {
	var svg bytes.Buffer
	if p.Graph != nil {
		bw := bufio.NewWriter(&svg)
		p.Graph.writeSVG(bw)
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	p.Title = names.Clean(p.Title)
	p.Notes = names.CleanAll(p.Notes)
	data := struct {
		Page
		// SVG is our own output, every name in it escaped (see WriteSVG).
		SVG template.HTML
	}{Page: p, SVG: template.HTML(svg.String())} // #nosec G203 -- escaped by writeSVG
	return pageTemplate.Execute(w, data)
}
