// Package golden compares test output with golden files under testdata/,
// and rewrites them when a test binary's -update flag is set.
package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Check compares got with the file at path. With update it writes got to
// path (creating its directory) instead. A difference fails the test with
// the first line that differs and hint, which says how to rewrite the
// file (say "go test ./flamegraph -run Golden -update"); a missing file
// fails with the same hint.
func Check(t testing.TB, path string, got []byte, update bool, hint string) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (%s writes it)", err, hint)
		return
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) && i < len(wl); i++ {
		if gl[i] != wl[i] {
			t.Errorf("output differs from %s at line %d (%s rewrites it):\n got: %s\nwant: %s", path, i+1, hint, clip(gl[i]), clip(wl[i]))
			return
		}
	}
	t.Errorf("output differs from %s: %d lines, want %d (%s rewrites it)", path, len(gl), len(wl), hint)
}

// clip shortens a long line (an SVG's) around nothing in particular: the
// first 300 bytes say enough.
func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
