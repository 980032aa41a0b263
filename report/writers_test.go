package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flamediff/flamediff/internal/names"
)

func TestMarkdownSection(t *testing.T) {
	s := Section{
		Title:   "T `x`",
		Columns: []Column{TextColumn("function"), NumColumn("%")},
		Rows: [][]Cell{
			{{Text: "operator|", Name: true, Level: 1, Suffix: " (end 1.00%)"}, Text("1.00")},
			{{Text: "std::vector<int>", Name: true}, Text("a`b")},
		},
		Notes: []string{"note `n`"},
	}
	tests := []struct {
		name string
		o    MarkdownOptions
		want string
	}{
		{"as is", MarkdownOptions{Heading: "###"},
			"### T `x`\n\n| function | % |\n|---|---:|\n| \u00a0\u00a0`operator\\|` (end 1.00%) | 1.00 |\n| `std::vector<int>` | a`b |\n\nnote `n`\n\n"},
		{"escaped", MarkdownOptions{Heading: "##", EscapeText: true},
			"## T \\`x\\`\n\n| function | % |\n|---|---:|\n| \u00a0\u00a0`operator\\|` (end 1.00%) | 1.00 |\n| `std::vector<int>` | a\\`b |\n\nnote \\`n\\`\n\n"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		WriteMarkdownSection(&b, &s, tt.o)
		if b.String() != tt.want {
			t.Errorf("%s: WriteMarkdownSection() =\n%q\nwant\n%q", tt.name, b.String(), tt.want)
		}
	}
	var b bytes.Buffer
	WriteMarkdownSection(&b, &Section{Title: "E", Columns: []Column{TextColumn("a")}, IfEmpty: "(none)"}, MarkdownOptions{Heading: "###"})
	if want := "### E\n\n(none)\n\n"; b.String() != want {
		t.Errorf("empty section = %q, want %q", b.String(), want)
	}
}

func TestWriteTextAndMarkdownDocument(t *testing.T) {
	d := &Document{
		Title: "Doc",
		Sections: []Section{{Title: "S", Columns: []Column{TextColumn("f"), NumColumn("n")},
			Rows: [][]Cell{{{Text: "a", Name: true}, Text("1")}, {{Text: "b", Name: true, Level: 1}, Text("22")}}, Notes: []string{"n1"}}},
		Notes: []string{"warning: w"},
	}
	var text, md bytes.Buffer
	if err := WriteText(&text, d); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Doc\n\nS\n", "│ a   │  1 │", "│   b │ 22 │", "\n\nn1\n\nwarning: w\n"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("WriteText lacks %q:\n%s", want, text.String())
		}
	}
	if err := WriteMarkdown(&md, d); err != nil {
		t.Fatal(err)
	}
	want := "## Doc\n\n### S\n\n| f | n |\n|---|---:|\n| `a` | 1 |\n| \u00a0\u00a0`b` | 22 |\n\nn1\n\n> warning: w\n"
	if md.String() != want {
		t.Errorf("WriteMarkdown() =\n%q\nwant\n%q", md.String(), want)
	}
}

func TestWritePlainTable(t *testing.T) {
	var b bytes.Buffer
	s := &Section{Columns: []Column{TextColumn("workload"), NumColumn("10.5")},
		Rows: [][]Cell{{Text("point-select"), Text("1.11")}, {Text("x"), Text("≈0.79")}}}
	if err := WritePlainTable(&b, s); err != nil {
		t.Fatal(err)
	}
	want := "workload       10.5\n------------  -----\npoint-select   1.11\nx             ≈0.79\n"
	if b.String() != want {
		t.Errorf("WritePlainTable() =\n%s\nwant\n%s", b.String(), want)
	}
}

func TestHTMLTables(t *testing.T) {
	long := "ns::" + strings.Repeat("VeryLongTemplateArgument_", 200) + "::execute"
	short := names.Shorten(long, names.Width)
	if utf8.RuneCountInString(short) != names.Width || !strings.Contains(short, names.Ellipsis) {
		t.Fatalf("names.Shorten(%d runes, %d) = %q, want %d runes around an ellipsis", len(long), names.Width, short, names.Width)
	}
	page := HTMLOptions{Heading: "h2", Indent: "  ", Shorten: true}
	bench := HTMLOptions{Heading: "h3", Indent: "\u00a0\u00a0"}
	tests := []struct {
		name string
		o    HTMLOptions
		cell Cell
		num  bool
		want string
	}{
		{"short name whole, no tooltip", page, Text("mysql_update"), false, `<td class="name">mysql_update</td>`},
		{"long name shortened, whole in the tooltip", page, Text(long), false, `<td class="name" title="` + long + `">` + short + `</td>`},
		{"numbers never shortened", page, Text(strings.Repeat("9", 100)), true, `<td class="num">` + strings.Repeat("9", 100) + `</td>`},
		{"indented with spaces", page, Cell{Text: "a", Name: true, Level: 1, Suffix: " (end 1%)"}, false, `<td class="name">  a (end 1%)</td>`},
		{"escaped", page, Text("<b>&"), false, `<td class="name">&lt;b&gt;&amp;</td>`},
		{"invalid UTF-8 cleaned", page, Text("bad\xffname"), false, "<td class=\"name\">bad\uFFFDname</td>"},
		{"plain text cell without class", bench, Text("total"), false, `<td>total</td>`},
		{"name with its tooltip", bench, Cell{Text: "a…z", Name: true, Level: 1, Title: "abcz"}, false, "<td class=\"name\" title=\"abcz\">\u00a0\u00a0a…z</td>"},
		{"extra class", bench, Cell{Text: "≈1.00", Class: "noise"}, true, `<td class="num noise">≈1.00</td>`},
		{"link", bench, Cell{Text: "▲ 11.8", Href: "svg/w/10.11-vs-11.8.svg"}, false, `<td><a href="svg/w/10.11-vs-11.8.svg">▲ 11.8</a></td>`},
		{"link escaped", bench, Cell{Text: "a", Href: `svg/"x"&.svg`}, false, `<td><a href="svg/%22x%22&amp;.svg">a</a></td>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Section{Title: "t", Columns: []Column{{Head: "x", Numeric: tt.num}}, Rows: [][]Cell{{tt.cell}}}
			got, err := HTMLTables([]Section{s}, tt.o)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(got), tt.want) {
				t.Errorf("HTMLTables() lacks %.200q:\n%.400s", tt.want, got)
			}
		})
	}
	got, err := HTMLTables([]Section{{Title: "E & F", Columns: []Column{TextColumn("a")}, Intro: []string{"i"}, Notes: []string{"a & b"}, IfEmpty: "(none)"}}, bench)
	if want := "<h3>E &amp; F</h3>\n<p class=\"note\">i</p>\n<p>(none)</p>\n<p class=\"note\">a &amp; b</p>\n"; err != nil || string(got) != want {
		t.Errorf("empty section = %q, %v; want %q", got, err, want)
	}
	_, err = HTMLTables([]Section{{Title: "x", Columns: []Column{TextColumn("a")}, Rows: [][]Cell{{Text("1"), Text("2")}}}}, page)
	if err == nil || !strings.Contains(err.Error(), `table "x"`) {
		t.Errorf("a row wider than its table: error %v, want one naming the table", err)
	}
}
