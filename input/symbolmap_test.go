package input

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/symbolmap"
)

// readTestMap reads a map from src through ReadMap.
func readTestMap(t *testing.T, src string) *symbolmap.Map {
	t.Helper()
	m, _, _, err := ReadMap(write(t, t.TempDir(), "m.yaml", src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReadMap(t *testing.T) {
	dir := t.TempDir()
	good := "version: 1\nrename:\n  - to: f\n    from: [g]\n"
	for _, tc := range []struct {
		name, src string // src "": no file
		path      string // when src is "": the path given
		renames   int
		text      bool   // the file's text returned
		diags     string // a diagnostic contains this
		err       string // the error contains this
	}{
		{name: "no map", renames: 0},
		{name: "a map", src: good, renames: 1, text: true},
		{name: "a warning", src: strings.TrimPrefix(good, "version: 1\n"), renames: 1, text: true, diags: "m.yaml:1:"},
		{name: "an error", src: "version: 1\nrename:\n  - to: x\n    from: [a, b\n", diags: "m.yaml:4:", err: "m.yaml"},
		{name: "missing", path: filepath.Join(dir, "missing.yaml"), err: "symbol map " + filepath.Join(dir, "missing.yaml") + ": no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path
			if tc.src != "" {
				path = write(t, t.TempDir(), "m.yaml", tc.src)
			}
			m, text, diags, err := ReadMap(path)
			var ds []string
			for _, d := range diags {
				ds = append(ds, d.String())
			}
			if tc.diags != "" && !strings.Contains(strings.Join(ds, "\n"), tc.diags) || tc.diags == "" && len(ds) > 0 {
				t.Errorf("ReadMap(%s): diagnostics %q, want one with %q", path, ds, tc.diags)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || m != nil {
					t.Errorf("ReadMap(%s) = %v, %v; want no map and an error with %q", path, m, err, tc.err)
				}
				if tc.path != "" && !errors.Is(err, os.ErrNotExist) {
					t.Errorf("ReadMap(%s) = %v, want os.ErrNotExist", path, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadMap(%s): %v", path, err)
			}
			if m.Stats().Rename != tc.renames || (text != nil) != tc.text || tc.text && string(text) != tc.src {
				t.Errorf("ReadMap(%s) = %d renames, text %q; want %d, the file's text: %v", path, m.Stats().Rename, text, tc.renames, tc.text)
			}
		})
	}
}
