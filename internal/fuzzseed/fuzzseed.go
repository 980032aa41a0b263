// Package fuzzseed gives fuzz tests their seed corpus from files: the
// fixtures a package's other tests read, so that fuzzing starts from real
// input.
package fuzzseed

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// AddFiles adds the content of every file matching pattern (a
// filepath.Glob pattern, relative to the test's package directory) as a
// seed of f. It fails the test when no file matches or one cannot be
// read, so that a moved fixture cannot leave a fuzz test without seeds.
func AddFiles(f *testing.F, pattern string) {
	f.Helper()
	seeds, err := Files(pattern)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		f.Add(s)
	}
}

// Files returns the content of every file matching pattern, in the order
// of their names; an error when none matches or one cannot be read.
func Files(pattern string) ([][]byte, error) {
	names, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("seeds %s: %w", pattern, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no seeds match %s", pattern)
	}
	out := make([][]byte, len(names))
	for i, name := range names {
		if out[i], err = os.ReadFile(name); err != nil {
			return nil, err
		}
	}
	return out, nil
}
