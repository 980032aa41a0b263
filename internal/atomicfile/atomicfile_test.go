package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	for _, content := range []string{"first\n", "second, longer\n"} {
		if err := Write(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Errorf("after Write(%q): %q, %v", content, got, err)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v (%v), want 0640", st.Mode().Perm(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the file (no temporary left)", len(ents))
	}
	err := Write(filepath.Join(dir, "missing", "f.txt"), []byte("x"), 0o644)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "missing", "f.txt")) {
		t.Errorf("Write into a missing directory = %v, want an error naming the path", err)
	}
}
