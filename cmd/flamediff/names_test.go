package main

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flamediff/flamediff/internal/names"
)

// TestNamesInEveryOutput: invalid UTF-8 becomes U+FFFD the same way in every
// output; a very long name is shortened in the middle in tables, markdown
// and HTML cells (whole in the HTML tooltip, JSON and CSV); markdown shows
// | and backticks without changing the name.
func TestNamesInEveryOutput(t *testing.T) {
	dir := t.TempDir()
	long := "std::vector<" + strings.Repeat("Templated<int>, ", 300) + "int>::push_back"
	odd := "operator|(a`b)"
	bad := "bad\xffname\xe2\x82"
	in := filepath.Join(dir, "names.folded")
	folded := "mysqld;do_command;" + bad + " 5\nmysqld;do_command;" + long + " 3\nmysqld;do_command;" + odd + " 2\n"
	if err := os.WriteFile(in, []byte(folded), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := "bad\uFFFDname\uFFFD"
	short := names.Shorten(long, names.Width)
	out := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runArgs(args...)
		if code != exitOK {
			t.Fatalf("flamediff %v: exit %d: %s", args, code, stderr)
		}
		if !utf8.ValidString(stdout) {
			t.Errorf("flamediff %v: output is not valid UTF-8", args)
		}
		if strings.Contains(stdout, "\xff") {
			t.Errorf("flamediff %v: output keeps the invalid byte", args)
		}
		return stdout
	}
	root := []string{"--top", "0", "--root", "do_command"}

	table := out(append([]string{"report"}, append(root, in)...)...)
	for _, want := range []string{clean, short, odd} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	for _, line := range strings.Split(table, "\n") {
		if n := utf8.RuneCountInString(line); n > 200 && (strings.Contains(line, "│") || strings.Contains(line, "%")) {
			t.Errorf("a table line of %d runes: a name ran off the page: %.120s…", n, line)
			break
		}
	}

	md := out(append([]string{"report", "--format", "markdown"}, append(root, in)...)...)
	for _, want := range []string{"`" + clean + "`", "``operator\\|(a`b)``", "`" + short + "`"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "operator|(a'b)") {
		t.Error("markdown changed a backtick into a quote")
	}

	var j struct {
		Functions []struct{ Name string } `json:"functions"`
	}
	if err := json.Unmarshal([]byte(out(append([]string{"report", "--format", "json"}, append(root, in)...)...)), &j); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range j.Functions {
		got[f.Name] = true
	}
	for _, want := range []string{clean, long, odd} {
		if !got[want] {
			t.Errorf("JSON lacks the whole name %.60q", want)
		}
	}

	rows, err := csv.NewReader(strings.NewReader(out("report", "--format", "csv", "--top", "0", in))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	got = map[string]bool{}
	for _, r := range rows {
		got[r[1]] = true
	}
	for _, want := range []string{clean, long, odd} {
		if !got[want] {
			t.Errorf("CSV lacks the whole name %.60q", want)
		}
	}

	svg := out("svg", in)
	if err := xml.Unmarshal([]byte(svg), new(struct{})); err != nil {
		t.Errorf("SVG is not well-formed XML: %v", err)
	}
	if !strings.Contains(svg, clean) {
		t.Errorf("SVG lacks %q", clean)
	}

	page := out(append([]string{"html"}, append(root, in)...)...)
	if !strings.Contains(page, clean) {
		t.Errorf("HTML lacks %q", clean)
	}
	if !strings.Contains(page, `title="`+strings.ReplaceAll(long, "<", "&lt;")) && !strings.Contains(page, `title="`+strings.ReplaceAll(strings.ReplaceAll(long, "<", "&lt;"), ">", "&gt;")) {
		t.Error("HTML cell of the long name has no tooltip with the whole name")
	}
	if !strings.Contains(page, ">"+strings.ReplaceAll(strings.ReplaceAll(short, "<", "&lt;"), ">", "&gt;")+"<") {
		t.Error("HTML cell of the long name is not shortened")
	}
}
