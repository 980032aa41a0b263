package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/flamegraph"
	"github.com/flamediff/flamediff/fold"
)

func TestWriteHTMLPage(t *testing.T) {
	p := &fold.Profile{Stacks: []fold.Stack{{Frames: []string{"t", "main", "work"}, Value: 3}}}
	p.Normalize()
	g, err := flamegraph.Layout(p, flamegraph.Options{Title: "Graph title"})
	if err != nil {
		t.Fatal(err)
	}
	d := &Document{
		Sections: []Section{{Title: "Functions", Columns: []Column{TextColumn("function"), NumColumn("incl %")},
			Rows: [][]Cell{{{Text: "work", Name: true, Level: 1}, Text("100.00")}}}},
		Notes: []string{"\n  a note  \n"},
	}
	tests := []struct {
		name, title string
		want        []string
	}{
		{"graph's title", "", []string{"<title>Graph title</title>", "<h1>Graph title</h1>"}},
		{"document's title", "Doc title", []string{"<title>Doc title</title>", "<h1>Doc title</h1>"}},
	}
	for _, tc := range tests {
		d.Title = tc.title
		var b bytes.Buffer
		if err := WriteHTMLPage(&b, d, g); err != nil {
			t.Fatalf("%s: WriteHTMLPage: %v", tc.name, err)
		}
		out := b.String()
		want := append(tc.want, `<svg`, "<h2>Functions</h2>", `<td class="name">  work</td>`, `<p class="note">a note</p>`)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: WriteHTMLPage() holds no %q:\n%s", tc.name, w, out)
			}
		}
	}
	if d.Notes[0] != "\n  a note  \n" {
		t.Errorf("WriteHTMLPage changed the document's notes to %q", d.Notes)
	}
}
