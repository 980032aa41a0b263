package bpf

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestThreads(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"10", "2", "100", "self", "0"} {
		if err := os.MkdirAll(filepath.Join(root, "42", "task", name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := threads(root, 42)
	if want := []int{2, 10, 100}; err != nil || !slices.Equal(got, want) {
		t.Errorf("threads = %v, %v; want %v", got, err, want)
	}
	if got, err := threads(root, 7); err == nil {
		t.Errorf("threads of a missing process = %v, want an error", got)
	}
	if err := os.MkdirAll(filepath.Join(root, "8", "task"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := threads(root, 8); err == nil {
		t.Errorf("threads of a process with no task entries = %v, want an error", got)
	}
}
