package benchreport

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
)

// Frame names the fixture's functions are renamed to, to see how each
// output shows them.
const (
	badName       = "bad\xffname"       // an invalid byte
	truncatedName = "trunc\xe2\x82ated" // the first two bytes of "€"
	pipeName      = "operator|(a`b)"    // markdown's table and code characters
	badShown      = "bad\uFFFDname"     // as every output shows badName
	truncShown    = "trunc\uFFFDated"   // and truncatedName
)

// renamedReport builds point-select on 10.11 (the base) and 11.8 with
// whole frames renamed on the way (the functions keep their samples).
func renamedReport(t *testing.T, renames map[string]string) *Report {
	t.Helper()
	var runs []Run
	for _, s := range []string{"10.11", "11.8"} {
		dir := filepath.Join(t.TempDir(), s)
		copyRun(t, fixtureDir(s, "point-select"), dir, nil, func(lines []string) []string {
			for i, l := range lines {
				sp := strings.LastIndexByte(l, ' ')
				frames := strings.Split(l[:sp], ";")
				for j, f := range frames {
					if n, ok := renames[f]; ok {
						frames[j] = n
					}
				}
				lines[i] = strings.Join(frames, ";") + l[sp:]
			}
			return lines
		})
		runs = append(runs, Run{Server: s, Workload: "point-select", Dir: dir})
	}
	return mustBuild(t, runs, Options{Base: "10.11", Map: loadMariaDBMap(t)})
}

// outputs renders r with every writer of the package.
func outputs(t *testing.T, r *Report) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, write := range map[string]func(io.Writer) error{
		"markdown": r.WriteMarkdown,
		"json":     r.WriteJSON,
		"summary":  r.WriteSummary,
		"html":     func(w io.Writer) error { return r.writeHTML(w, nil, nil) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b.String()
	}
	return out
}

func TestInvalidUTF8Names(t *testing.T) {
	r := renamedReport(t, map[string]string{"_raw_spin_unlock_irqrestore": badName, "finish_task_switch.isra.0": truncatedName})
	out := outputs(t, r)
	for _, name := range []string{"markdown", "json", "summary", "html"} {
		t.Run(name, func(t *testing.T) {
			s := out[name]
			if !utf8.ValidString(s) {
				t.Fatal("output is not valid UTF-8")
			}
			for _, want := range []string{badShown, truncShown} {
				if !strings.Contains(s, want) {
					t.Errorf("output lacks %q", want)
				}
			}
			if strings.Contains(s, "\uFFFD\uFFFD") || strings.Contains(s, `\ufffd\ufffd`) {
				t.Error("a run of invalid bytes became more than one U+FFFD")
			}
		})
	}
	t.Run("json names", func(t *testing.T) {
		var doc struct {
			Workloads []struct {
				Comparisons []struct {
					TopSelf []struct{ Name string } `json:"top_self"`
				}
			}
		}
		if err := json.Unmarshal([]byte(out["json"]), &doc); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range doc.Workloads[0].Comparisons[0].TopSelf {
			got = append(got, f.Name)
		}
		for _, want := range []string{badShown, truncShown} {
			if !slices.Contains(got, want) {
				t.Errorf("report.json top_self names %q lack %q", got, want)
			}
		}
	})
	// The report keeps the names as given; only what is written changes.
	if f := r.Workloads[0].Comparisons[0].TopSelf; !slices.ContainsFunc(f, func(d FunctionDelta) bool { return d.Name == badName }) {
		t.Errorf("Report.TopSelf lost the name as given, %q", badName)
	}
}

func TestLongNames(t *testing.T) {
	// Two names of thousands of characters: a function with self time
	// (top self table, summary) and one of the subtree rows.
	longSelf := "ns::self::" + strings.Repeat("VeryLongTemplateArgument_", 160) + "::spin_unlock"
	longRow := "ns::row::" + strings.Repeat("AnotherLongTemplateArg_", 160) + "::execute_command"
	r := renamedReport(t, map[string]string{"_raw_spin_unlock_irqrestore": longSelf, "mysql_execute_command": longRow})
	out := outputs(t, r)
	shortSelf, shortRow := names.Shorten(longSelf, nameWidth), names.Shorten(longRow, nameWidth)
	if utf8.RuneCountInString(shortSelf) != nameWidth || !strings.Contains(shortSelf, names.Ellipsis) {
		t.Fatalf("names.Shorten(%d runes, %d) = %q: want %d runes with an ellipsis", len(longSelf), nameWidth, shortSelf, nameWidth)
	}
	tests := []struct {
		name     string
		output   string
		want     []string // present
		wantNot  []string // absent
		maxTable int      // the longest table line, in runes (0: not checked)
	}{
		{"markdown", "markdown", []string{"`" + shortSelf + "`", "`" + shortRow + "`"}, []string{longSelf, longRow}, 300},
		{"summary", "summary", []string{shortSelf + " "}, []string{longSelf}, 0},
		{"html: shortened, whole in the tooltip", "html", []string{
			`title="` + longSelf + `">` + shortSelf + "</td>",
			`title="` + longRow + `">` + "\u00a0\u00a0" + shortRow + "</td>",
		}, nil, 0},
		{"json: whole", "json", []string{`"name": "` + longSelf + `"`, `"label": "` + longRow + `"`}, []string{names.Ellipsis}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := out[tt.output]
			for _, w := range tt.want {
				if !strings.Contains(s, w) {
					t.Errorf("output lacks %.120q", w)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(s, w) {
					t.Errorf("output holds %.120q", w)
				}
			}
			if tt.maxTable > 0 {
				for _, l := range strings.Split(s, "\n") {
					if strings.HasPrefix(l, "|") && utf8.RuneCountInString(l) > tt.maxTable {
						t.Errorf("table line of %d runes, want at most %d: %.200q", utf8.RuneCountInString(l), tt.maxTable, l)
					}
				}
			}
		})
	}
	t.Run("text table", func(t *testing.T) {
		var b bytes.Buffer
		for _, s := range r.workloadSections(r.Workloads[0]) {
			if err := report.WritePlainTable(&b, &s); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > 300 {
				t.Errorf("text table line of %d runes, want at most 300: %.200q", n, l)
			}
		}
		if !strings.Contains(b.String(), shortRow) {
			t.Errorf("text tables lack %q", shortRow)
		}
	})
}

// TestCodeSpan: the spans below render (markdown-it 15, GitHub's table
// syntax) as the name itself, each | of a table cell written \| on top.
func TestCodeSpan(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "mysql_update", "`mysql_update`"},
		{"a backtick inside", "operator|(a`b)", "``operator|(a`b)``"},
		{"two backticks in a row", "a``b", "```a``b```"},
		{"starts with a backtick", "`start", "`` `start ``"},
		{"ends with a backtick", "end`", "`` end` ``"},
		{"a space at both ends", " x ", "`  x  `"},
		{"only spaces", "  ", "`  `"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := names.CodeSpan(tt.in); got != tt.want {
				t.Errorf("codeSpan(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMarkdownNames(t *testing.T) {
	r := renamedReport(t, map[string]string{"open_and_lock_tables": pipeName, "mysql_execute_command": "run`cmd"})
	md := markdown(t, r)
	tests := []struct {
		name, want string
		present    bool
	}{
		{"the name in a code span, | escaped", "\u00a0``operator\\|(a`b)`` | 2.89 |", true},
		{"the backtick not turned into a quote", "operator|(a'b)", false},
		{"the | not left bare in a table", "`operator|(a", false},
		{"the backtick escaped in a note", "mysqld_stmt_execute 24.44% → Prepared_statement::execute 23.86%: run\\`cmd 22.19%", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Contains(md, tt.want); got != tt.present {
				t.Errorf("markdown holds %q: %v, want %v", tt.want, got, tt.present)
			}
		})
	}
}

// TestSentenceMatchesTable: with repeats, the subtree's one-line summary
// quotes the shares the table shows (medians over the repeats), not the
// shares of the repeats merged.
func TestSentenceMatchesTable(t *testing.T) {
	var runs []Run
	for k, f := range []float64{1, 1.5} { // uneven: the merged share is not the median
		dir := filepath.Join(t.TempDir(), "r")
		copyRun(t, fixtureDir("10.11", "point-select"), dir, nil, func(lines []string) []string {
			for i, l := range lines {
				if strings.Contains(l, "mysqld_stmt_execute") {
					sp := strings.LastIndexByte(l, ' ')
					n, err := strconv.ParseInt(l[sp+1:], 10, 64)
					if err != nil {
						t.Fatal(err)
					}
					lines[i] = l[:sp+1] + strconv.FormatInt(int64(float64(n)*f), 10)
				}
			}
			return lines
		})
		runs = append(runs, Run{Server: "10.11", Workload: "point-select", Repeat: k + 1, Dir: dir})
	}
	runs = append(runs, Run{Server: "11.8", Workload: "point-select", Repeat: 1, Dir: fixtureDir("11.8", "point-select")})
	r := mustBuild(t, runs, Options{Base: "10.11", Map: loadMariaDBMap(t)})
	st := r.Workloads[0].Subtrees[0]
	c := colOf(t, st, "10.11")
	median := st.Rows[0].Shares[c].Median
	merged := diff.Subtree(r.Workloads[0].merged["10.11"], st.Root, diff.SubtreeOptions{Depth: st.Depth}).Root.Pct
	if report.F2(median) == report.F2(merged) {
		t.Fatalf("median share %.2f = merged share %.2f: the fixture does not tell them apart", median, merged)
	}
	want := "10.11: " + st.Root + " " + report.F2(median) + "%"
	md := markdown(t, r)
	if !strings.Contains(md, "| "+report.F2(median)+" (") {
		t.Fatalf("the table has no cell %s", report.F2(median))
	}
	if !strings.Contains(md, "\n"+want) {
		t.Errorf("markdown has no sentence starting %q (the merged share is %.2f)", want, merged)
	}
	if got := st.Summaries[c]; !strings.HasPrefix(got, st.Root+" "+report.F2(median)+"%") {
		t.Errorf("report.json summary %q, want it to start with the median share %s%%", got, report.F2(median))
	}
}
