package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCommandDocsCurrent regenerates the command reference into a temporary
// directory and compares it with the committed pages, so that a changed
// flag or help text cannot leave docs/commands behind.
func TestCommandDocsCurrent(t *testing.T) {
	committed := filepath.Join("..", "..", filepath.FromSlash(docsDir))
	tmp := t.TempDir()
	if code, _, errOut := runArgs("docs", tmp); code != exitOK {
		t.Fatalf("flamediff docs %s: exit %d, stderr %q", tmp, code, errOut)
	}
	want := mdFiles(t, tmp)
	got := mdFiles(t, committed)
	for _, name := range want {
		if !slices.Contains(got, name) {
			t.Errorf("%s/%s is missing; regenerate with: %s", docsDir, name, docsRegenerate)
			continue
		}
		w, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			t.Fatal(err)
		}
		g, err := os.ReadFile(filepath.Join(committed, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s/%s is out of date; regenerate with: %s", docsDir, name, docsRegenerate)
		}
	}
	for _, name := range got {
		if !slices.Contains(want, name) {
			t.Errorf("%s/%s is for a command that no longer exists; regenerate with: %s", docsDir, name, docsRegenerate)
		}
	}
}

// TestCommandDocsDeterministic: two generations give the same bytes (no
// date footer, no map order).
func TestCommandDocsDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if code, _, errOut := runArgs("docs", dir); code != exitOK {
			t.Fatalf("flamediff docs %s: exit %d, stderr %q", dir, code, errOut)
		}
	}
	names := mdFiles(t, a)
	if len(names) == 0 || !slices.Equal(names, mdFiles(t, b)) {
		t.Fatalf("pages %v and %v, want the same non-empty list", names, mdFiles(t, b))
	}
	for _, name := range names {
		x, _ := os.ReadFile(filepath.Join(a, name))
		y, _ := os.ReadFile(filepath.Join(b, name))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two generations", name)
		}
		if bytes.Contains(x, []byte("Auto generated")) {
			t.Errorf("%s has a date footer", name)
		}
	}
}

// mdFiles lists the names of the markdown pages in dir, sorted.
func mdFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(m))
	for i, p := range m {
		names[i] = filepath.Base(p)
	}
	slices.Sort(names)
	return names
}
