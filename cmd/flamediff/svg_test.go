package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/flamediff/flamediff/internal/golden"
)

// svgWellFormed fails unless data is one well-formed XML document with an
// <svg> root and exactly one <script>.
func svgWellFormed(t *testing.T, data []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	depth, roots, scripts := 0, 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 {
				roots++
				if e.Name.Local != "svg" {
					t.Fatalf("root element <%s>, want <svg>", e.Name.Local)
				}
			}
			if e.Name.Local == "script" {
				scripts++
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if roots != 1 || depth != 0 || scripts != 1 {
		t.Fatalf("%d roots, %d left open, %d scripts; want one closed <svg> with one script", roots, depth, scripts)
	}
}

// svgGolden compares got with the file at path, rewriting it with -update;
// a difference is reported by its first line, not by dumping the SVG.
func svgGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	goldenfile.Check(t, path, got, *update, "go test ./cmd/flamediff -run SVGGolden -update")
}

func TestSVGGolden(t *testing.T) {
	needParse(t)
	base := filepath.Join(runsDir, "mariadb-10.11-update-index")
	target := filepath.Join(runsDir, "mariadb-11.8-update-index")
	// --minwidth 3 keeps the goldens small; the default is exercised by
	// the flamegraph package and the scripts.
	cases := []struct {
		name string
		args []string
	}{
		{"single-10.11-update-index", []string{"--minwidth", "3", "--hash", base}},
		{"subsystems-11.8-update-index", []string{"--minwidth", "3", "--colors", "subsystem", "--map", mapFile, "--hash", target}},
		{"icicle-reverse-10.11-point-select", []string{"--minwidth", "5", "--inverted", "--reverse", "--colors", "io", filepath.Join(runsDir, "mariadb-10.11-point-select")}},
		{"diff-per-op-update-index", []string{"--minwidth", "3", "--diff", "--map", mapFile, base, target}},
		{"diff-share-self-update-index", []string{"--minwidth", "3", "--diff", "--map", mapFile, "--normalize", "share", "--color-by", "self", "--min-delta", "0.2", base, target}},
		{"diff-negate-10.5-10.11", []string{"--minwidth", "3", "--diff", "--negate", "--map", mapFile, "--title", "10.5 → 10.11 <update>",
			filepath.Join(runsDir, "mariadb-10.5-update-index"), filepath.Join(runsDir, "mariadb-10.11-update-index")}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"svg"}, c.args...)
			out, errOut, code := runCLI(t, args...)
			if code != exitOK {
				t.Fatalf("flamediff %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errOut)
			}
			svgWellFormed(t, []byte(out))
			svgGolden(t, filepath.Join("testdata", "svg", c.name+".svg"), []byte(out))
			again, _, _ := runCLI(t, args...)
			if again != out {
				t.Error("a second run wrote different bytes")
			}
		})
	}
	// Every golden, including ones no case above writes any more.
	files, err := filepath.Glob(filepath.Join("testdata", "svg", "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run("xml/"+filepath.Base(f), func(t *testing.T) { svgWellFormed(t, data) })
	}
}

func TestSVGContent(t *testing.T) {
	needParse(t)
	base := filepath.Join(runsDir, "mariadb-10.11-update-index")
	target := filepath.Join(runsDir, "mariadb-11.8-update-index")
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"per-op by default for run directories", []string{"--diff", "--map", mapFile, base, target},
			[]string{"normalized per operation: CPU µs/op (10.11 201.16, 11.8 244.41)", "10.11 (base) → 11.8 (target)", "µs/op", "class=\"only"}, nil},
		{"share when asked", []string{"--diff", "--normalize", "share", base, target},
			[]string{"normalized by share", " pp ("}, []string{"normalized per operation"}},
		{"period sums count ns", []string{base}, []string{" ns, "}, []string{" samples, "}},
		{"countname", []string{"--countname", "ticks", base}, []string{" ticks, "}, nil},
		{"subsystem legend and tooltips", []string{"--colors", "subsystem", "--map", mapFile, target},
			[]string{`<g class="legend">`, ">commit</text>", "\nsubsystem: commit"}, nil},
		{"title and subtitle escaped", []string{"--title", "a<b>&c", "--subtitle", `"q"`, base},
			[]string{">a&lt;b&gt;&amp;c</text>", ">&quot;q&quot;</text>"}, []string{"a<b>"}},
		{"width and height", []string{"--width", "800", "--height", "20", base},
			[]string{`<svg version="1.1" width="800"`, `height="19" fill=`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, append([]string{"svg"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr:\n%s", code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("SVG lacks %q", w)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("SVG holds %q", n)
				}
			}
		})
	}
}

func TestSVGMinWidth(t *testing.T) {
	needParse(t)
	run := filepath.Join(runsDir, "mariadb-10.11-update-index")
	count := func(minwidth string) int {
		out, errOut, code := runCLI(t, "svg", "--minwidth", minwidth, run)
		if code != exitOK {
			t.Fatalf("--minwidth %s: exit %d: %s", minwidth, code, errOut)
		}
		return strings.Count(out, "<rect x=")
	}
	all, def, wide, pct := count("0"), count("0.1"), count("2"), count("1%")
	if all < def || def <= wide || wide <= pct || pct <= 1 {
		t.Errorf("rect counts: minwidth 0 %d, 0.1 %d, 2 %d, 1%% %d; want fewer frames as the limit grows (0.1 px is under one sample here)", all, def, wide, pct)
	}
}

func TestSVGOptions(t *testing.T) {
	var got *SVGOptions
	s := &streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}
	cmd := newSVGCmd(s, func(o *SVGOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--diff", "--minwidth", "0.5%", "--negate", "--color-by", "self", "a", "b"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got == nil || got.minWidthPct != 0.5 || got.minWidthPx != 0 || !got.Negate || got.ColorBy != "self" || strings.Join(got.Profiles, ",") != "a,b" {
		t.Errorf("options %+v; want minwidth 0.5%%, negate, color-by self, profiles a b", got)
	}
}

func TestSVGUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no profile", []string{"svg"}, "svg takes one PROFILE, got 0"},
		{"two without diff", []string{"svg", "a", "b"}, "add --diff for a differential graph"},
		{"diff with one", []string{"svg", "--diff", "a"}, "--diff takes a BASE and a TARGET profile, got 1"},
		{"stdin twice", []string{"svg", "--diff", "-", "-"}, "standard input (-) is given twice"},
		{"bad minwidth", []string{"svg", "--minwidth", "wide", "a"}, `--minwidth "wide": want pixels (0.1) or a percentage`},
		{"negative minwidth", []string{"svg", "--minwidth", "-1", "a"}, "--minwidth"},
		{"bad palette", []string{"svg", "--colors", "rainbow", "a"}, `--colors "rainbow": want hot, mem, io or subsystem`},
		{"subsystem without map", []string{"svg", "--colors", "subsystem", "a"}, "--colors subsystem needs --map FILE"},
		{"colors with diff", []string{"svg", "--diff", "--colors", "mem", "a", "b"}, "--colors applies to single flame graphs"},
		{"diff flag without diff", []string{"svg", "--negate", "a"}, "--negate applies to differential graphs only"},
		{"bad color-by", []string{"svg", "--diff", "--color-by", "total", "a", "b"}, `--color-by "total": want subtree or self`},
		{"bad normalize", []string{"svg", "--diff", "--normalize", "qps", "a", "b"}, `--normalize "qps": want auto, share or per-op`},
		{"negative min-delta", []string{"svg", "--diff", "--min-delta", "-1", "a", "b"}, "--min-delta -1: want 0 or more"},
		{"narrow", []string{"svg", "--width", "10", "a"}, "--width 10: want at least 100 pixels"},
		{"html one arg", []string{"html", "a", "b"}, "html takes one PROFILE, got 2 arguments (add --diff"},
		{"html top", []string{"html", "--top", "-2", "a"}, "--top -2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("flamediff %v: exit %d, stderr %q; want exit %d and %q", tt.args, code, errOut, exitUsage, tt.want)
			}
		})
	}
}

func TestSVGErrors(t *testing.T) {
	needParse(t)
	dir := t.TempDir()
	folded := filepath.Join(dir, "plain.folded")
	if err := os.WriteFile(folded, []byte("t;a 3\nt;b 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.folded")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(runsDir, "mariadb-10.11-update-index")
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"per-op needs run metadata", []string{"svg", "--diff", "--normalize", "per-op", run, folded},
			[]string{"--normalize per-op: " + folded + " has no run metadata", "use --normalize share"}},
		{"missing file", []string{"svg", filepath.Join(dir, "nope.folded")}, []string{"nope.folded", "no such file"}},
		{"empty profile", []string{"svg", empty}, []string{empty + ": no samples (the input is empty)"}},
		{"map without subsystems", []string{"svg", "--colors", "subsystem", "--map", filepath.Join(dir, "m.yaml"), folded}, []string{"m.yaml"}},
	}
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte("version: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tt.args...)
			if code == exitOK {
				t.Fatalf("flamediff %v succeeded", tt.args)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("flamediff %v: stderr %q lacks %q", tt.args, errOut, w)
				}
			}
		})
	}
}

func TestHTML(t *testing.T) {
	needParse(t)
	base := filepath.Join(runsDir, "mariadb-10.11-update-index")
	target := filepath.Join(runsDir, "mariadb-11.8-update-index")
	out := filepath.Join(t.TempDir(), "diff.html")
	_, errOut, code := runCLI(t, "html", "--diff", "--map", mapFile, "--root", "mysqld_stmt_execute", "--top", "10", "-o", out, base, target)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, want := range []string{
		"<!DOCTYPE html>", "<title>Diff: 10.11 (base) vs 11.8</title>",
		"<h2>Run</h2>", "<h2>Functions (10 of ", "<h2>Subsystems</h2>", "<h2>Subtree mysqld_stmt_execute",
		`<th class="num">Δpp</th>`, `<td class="name">mysqld_stmt_execute → Prepared_statement::execute_loop`,
		`<svg version="1.1"`, "Differential Flame Graph", "normalized per operation",
		"Change in CPU per operation, 10.11 → 11.8",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("HTML page lacks %q", want)
		}
	}
	if n := strings.Count(page, "<script"); n != 1 {
		t.Errorf("%d scripts in the page, want 1 (the graph's)", n)
	}
	for _, bad := range []string{"<?xml", "https://", " src="} {
		if strings.Contains(page, bad) {
			t.Errorf("HTML page holds %q: it must be self-contained", bad)
		}
	}

	single, errOut, code := runCLI(t, "html", "--colors", "subsystem", "--map", mapFile, "--top", "5", target)
	if code != exitOK {
		t.Fatalf("html PROFILE: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"<title>Profile 11.8: ", "<h2>Functions (5 of ", "<h2>Subsystems</h2>", "<g class=\"legend\">", ">Flame Graph</text>"} {
		if !strings.Contains(single, want) {
			t.Errorf("single HTML page lacks %q", want)
		}
	}
}
