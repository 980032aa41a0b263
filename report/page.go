package report

import (
	"io"
	"strings"

	"github.com/flamediff/flamediff/flamegraph"
)

// WriteHTMLPage writes d as one self-contained HTML page around the flame
// graph g (flamegraph.WritePage): the graph, then d's sections as HTML
// tables whose names keep their indentation in monospace cells, shortened
// with the whole name as tooltip (HTMLTables with Shorten), then d's notes
// without their surrounding white space. The page's title is d's, else the
// graph's. d is not changed.
func WriteHTMLPage(w io.Writer, d *Document, g *flamegraph.Graph) error {
	tables, err := HTMLTables(d.Sections, HTMLOptions{Heading: "h2", Indent: "  ", Shorten: true})
	if err != nil {
		return err
	}
	p := flamegraph.Page{Title: d.Title, Graph: g, Tables: tables, Notes: make([]string, len(d.Notes))}
	if p.Title == "" && g != nil {
		p.Title = g.Title()
	}
	for i, n := range d.Notes {
		p.Notes[i] = strings.TrimSpace(n)
	}
	return flamegraph.WritePage(w, p)
}
