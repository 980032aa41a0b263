package fuzzseed

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"b.seed": "two", "a.seed": "one", "other.txt": "other"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Files(filepath.Join(dir, "*.seed"))
	if err != nil || len(got) != 2 || string(got[0]) != "one" || string(got[1]) != "two" {
		t.Errorf("Files(*.seed) = %q, %v; want one and two", got, err)
	}
	if got, err := Files(filepath.Join(dir, "*.none")); err == nil {
		t.Errorf("Files(no match) = %q, nil error; want an error", got)
	}
	if got, err := Files("[bad"); err == nil {
		t.Errorf("Files(bad pattern) = %q, nil error; want an error", got)
	}
}
