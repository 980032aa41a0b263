package benchreport

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
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
		"html":     func(w io.Writer) error { return r.writeHTML(w, nil) },
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
