package main

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
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

// TestHTMLNamesOnlyItsFlags: every flag the HTML page mentions is one that
// flamediff html accepts.
func TestHTMLNamesOnlyItsFlags(t *testing.T) {
	cmd := newHTMLCmd(&streams{}, nil)
	for _, args := range [][]string{
		{"html", "--root", "mysqld_stmt_execute", "--depth", "3", "--explain", "--map", "../../examples/symbolmaps/mariadb.yaml", "../../testdata/runs/mariadb-10.11-update-index"},
		{"html", "--diff", "--root", "mysqld_stmt_execute", "--map", "../../examples/symbolmaps/mariadb.yaml", "../../testdata/runs/mariadb-10.11-update-index", "../../testdata/runs/mariadb-11.8-update-index"},
	} {
		code, page, errOut := runArgs(args...)
		if code != exitOK {
			t.Fatalf("flamediff %v: exit %d: %s", args, code, errOut)
		}
		seen := 0
		for _, m := range flagMention.FindAllStringSubmatch(page, -1) {
			seen++
			if cmd.Flags().Lookup(m[1]) == nil {
				t.Errorf("flamediff %v: the page names --%s, which html does not accept", args[:2], m[1])
			}
		}
		if seen == 0 {
			t.Errorf("flamediff %v: the page names no flag; the test looks for none", args[:2])
		}
	}
}

var flagMention = regexp.MustCompile(`(?:^|[\s(>])--([a-z][a-z-]+)`)

// TestSVGDeepStackCut: a stack deeper than a browser can draw is cut, and
// the command says so.
func TestSVGDeepStackCut(t *testing.T) {
	dir := t.TempDir()
	frames := make([]string, 20000)
	for i := range frames {
		frames[i] = "f" + strconv.Itoa(i)
	}
	in := filepath.Join(dir, "deep.folded")
	if err := os.WriteFile(in, []byte(strings.Join(frames, ";")+" 1\nmain;other 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, svg, errOut := runArgs("svg", in)
	if code != exitOK || !strings.Contains(errOut, "warning: stacks deeper than") || !strings.Contains(svg, "stacks deeper than") {
		t.Errorf("svg of a 20,000-frame stack: exit %d, stderr %q; want a warning and a note in the graph", code, errOut)
	}
}

// TestOneRounding: every figure of a diff is rounded once; a change shown in
// a table is the difference of the figures shown beside it, and the
// sentence under the subsystem table quotes the table's changes.
func TestOneRounding(t *testing.T) {
	code, md, errOut := runArgs("diff", "--format", "markdown", "--top", "0", "--root", "mysqld_stmt_execute", "--map", "../../examples/symbolmaps/mariadb.yaml",
		"../../testdata/runs/mariadb-10.11-update-index", "../../testdata/runs/mariadb-11.8-update-index")
	if code != exitOK {
		t.Fatalf("diff: exit %d: %s", code, errOut)
	}
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(strings.TrimPrefix(s, "+"), 64)
		if err != nil {
			t.Fatalf("not a number: %q", s)
		}
		return v
	}
	section := ""
	subsystemDelta := map[string]string{}
	checked := 0
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "### ") {
			section = line
			continue
		}
		if !strings.HasPrefix(line, "| ") || strings.HasPrefix(line, "| function") || strings.HasPrefix(line, "| subsystem") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		switch {
		case strings.Contains(section, "Subsystems"):
			// subsystem, base %, target %, Δpp, ratio, base µs/op, target µs/op, Δµs/op
			if len(cells) != 8 {
				t.Fatalf("subsystem row %q", line)
			}
			if d := num(cells[2]) - num(cells[1]); strings.TrimSpace(report.Signed(d)) != cells[3] {
				t.Errorf("%s: Δpp %s, but %s − %s = %s", cells[0], cells[3], cells[2], cells[1], report.Signed(d))
			}
			if d := num(cells[6]) - num(cells[5]); report.Signed(d) != cells[7] {
				t.Errorf("%s: Δµs/op %s, but %s − %s = %s", cells[0], cells[7], cells[6], cells[5], report.Signed(d))
			}
			subsystemDelta[cells[0]] = cells[7]
			checked++
		case strings.Contains(section, "Subtree"):
			if len(cells) != 4 {
				continue
			}
			if d := num(cells[2]) - num(cells[1]); report.Signed(d) != cells[3] {
				t.Errorf("subtree row %s: Δpp %s, but %s − %s = %s", cells[0], cells[3], cells[2], cells[1], report.Signed(d))
			}
			checked++
		}
	}
	if checked < 10 || len(subsystemDelta) == 0 {
		t.Fatalf("checked %d rows (%d subsystems): the markdown layout changed?\n%s", checked, len(subsystemDelta), md)
	}
	i := strings.Index(md, "Change in CPU per operation, ")
	if i < 0 {
		t.Fatal("no attribution sentence")
	}
	sentence := md[i : i+strings.Index(md[i:], "\n")]
	for _, part := range strings.Split(sentence[strings.Index(sentence, "µs/op, ")+len("µs/op, "):], ", ") {
		name, delta, _ := strings.Cut(part, " ")
		if subsystemDelta[name] != delta {
			t.Errorf("the sentence says %s %s, the table %s", name, delta, subsystemDelta[name])
		}
	}
}

// TestDiffSuggestBestFirst: diff --suggest shows the best proposals, best
// first (on update-non-index, #3 scores above #2).
func TestDiffSuggestBestFirst(t *testing.T) {
	code, md, errOut := runArgs("diff", "--suggest", "--format", "markdown",
		"../../testdata/runs/mariadb-10.11-update-non-index", "../../testdata/runs/mariadb-11.8-update-non-index")
	if code != exitOK {
		t.Fatalf("diff --suggest: exit %d: %s", code, errOut)
	}
	i := strings.Index(md, "### Suggested map rules")
	if i < 0 {
		t.Fatalf("no suggestions:\n%s", md)
	}
	var scores []float64
	for _, line := range strings.Split(md[i:], "\n")[1:] {
		if strings.HasPrefix(line, "### ") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) < 2 {
			continue
		}
		if v, err := strconv.ParseFloat(cells[1], 64); err == nil {
			scores = append(scores, v)
		}
	}
	if len(scores) < 3 {
		t.Fatalf("%d proposals shown, want at least 3", len(scores))
	}
	for k := 1; k < len(scores); k++ {
		if scores[k] > scores[k-1] {
			t.Errorf("proposals not best first: scores %v", scores)
			break
		}
	}
}

// TestInputErrorsNameTheirPlace: bad inputs fail with the file, the line
// (and column) and what was found, through the commands.
func TestInputErrorsNameTheirPlace(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	overflow := write("overflow.folded", "a;b 9223372036854775807\na;c 9223372036854775807\n")
	nul := write("nul.folded", "a;b 1\na;c 2\na;\x00d 3\n")
	good := write("good.folded", "a;b 1\na;c 2\n")
	run := filepath.Dir(write("run/stacks.folded", "a;b 1\na;c 2\n"))
	write("run/run.json", "{\n  \"format\": 1,\n  \"label\": \"x\",\n  \"cpu_seconds\": \"3.88\"\n}\n")
	badMap := write("bad.yaml", "version: 1\nrename:\n  - to: x\n    from: [a, b\nsubsystems: []\n")
	longLine := write("long.folded", "main;"+strings.Repeat("std::vector<int>::", 4000)+"push_back 3\nmain;other 1\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"total overflow", []string{"report", overflow}, overflow + ":2: the counts add up to more than 9223372036854775807"},
		{"NUL byte", []string{"fold", nul}, nul + ":3: a NUL byte"},
		{"run.json", []string{"report", run}, filepath.Join(run, "run.json") + `: line 4, column 18: cpu_seconds: want a number, found "3.88"`},
		{"YAML", []string{"report", "--map", badMap, good}, badMap + ":4:11:"},
		{"input format named", []string{"report", "--input-format", "perf", good}, good},
		{"bad input format", []string{"svg", "--input-format", "csv", good}, `--input-format "csv": want auto, perf, folded or pprof`},
	} {
		code, _, errOut := runArgs(tc.args...)
		if code == exitOK || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: flamediff %v: exit %d, stderr %q; want a failure with %q", tc.name, tc.args, code, errOut, tc.want)
		}
	}
	// A 72,000-character first line is detected as folded.
	if code, out, errOut := runArgs("fold", longLine); code != exitOK || !strings.HasSuffix(out, "push_back 3\n") {
		t.Errorf("fold of a folded file with a 72 KB first line: exit %d, %s", code, errOut)
	}
	// --input-format folded reads the folded file as folded in every command.
	for _, args := range [][]string{{"report"}, {"svg"}, {"html"}, {"diff", "--input-format", "folded", good}, {"map", "suggest", "--input-format", "folded", good}} {
		a := append(append([]string{}, args...), "--input-format", "folded", filepath.Join(dir, "run", "stacks.folded"))
		if code, _, errOut := runArgs(a...); code != exitOK {
			t.Errorf("flamediff %v: exit %d: %s", a, code, errOut)
		}
	}
}
