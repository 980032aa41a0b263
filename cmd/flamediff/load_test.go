package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputWording: what package input reports, the command says with its
// flags: the skipped-lines warning, a profile without samples of the
// chosen event, a root the map removes, an input given twice.
func TestInputWording(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.folded", "t;f 3\nnot a stack\n")
	perf := write("x.perf", "mariadbd 100/101 1.000000: cpu-clock: \n\t  7f0 f (/x)\n\n")
	elide := write("m.yaml", "version: 1\nelide:\n  - from: [f]\n")
	good := write("good.folded", "t;f;g 3\n")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"skipped lines", []string{"report", bad}, exitOK,
			"flamediff: warning: " + bad + ": skipped 1 line that could not be parsed (first: line 2: "},
		{"skipped lines, strict", []string{"report", "--strict", bad}, exitError, "flamediff: " + bad + ":2: "},
		{"no sample of the event", []string{"fold", "--event-filter", "cycles", perf}, exitError,
			"flamediff: " + perf + `: no samples (no sample of event "cycles"; choose another with --event-filter)` + "\n"},
		{"root elided", []string{"report", "--map", elide, "--root", "f", good}, exitUsage,
			`flamediff: usage: --root "f": the symbol map removes this frame (`},
		{"root not found", []string{"html", "--root", "gg", good}, exitUsage,
			`flamediff: usage: --root "gg": no such function in the profile; closest: g, f, t` + "\n"},
		{"given twice", []string{"diff", good, good}, exitUsage,
			"flamediff: usage: " + good + " is given twice; give each input once\n"},
	} {
		code, _, errOut := runArgs(tc.args...)
		if code != tc.code || !strings.HasPrefix(errOut, tc.stderr) {
			t.Errorf("%s: flamediff %q: exit %d, stderr %q; want exit %d and stderr starting %q", tc.name, tc.args, code, errOut, tc.code, tc.stderr)
		}
		if tc.name == "skipped lines" && !strings.Contains(errOut, "; --strict makes this an error\n") {
			t.Errorf("%s: stderr %q does not say --strict makes it an error", tc.name, errOut)
		}
	}
}
