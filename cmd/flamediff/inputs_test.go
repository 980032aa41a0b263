package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// TestLoadRawThenApplyMap loads profiles once and applies a map as a
// separate step: the raw profiles keep their names, the mapped ones have
// the map's, and a cancelled context stops before the first load.
func TestLoadRawThenApplyMap(t *testing.T) {
	dir := t.TempDir()
	mapFile := filepath.Join(dir, "m.yaml")
	src := "version: 1\nrename:\n  - to: f\n    from: [g]\n"
	if err := os.WriteFile(mapFile, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	s := &streams{ErrOut: &errOut}
	m, text, err := readMap(s, mapFile)
	if err != nil || string(text) != src {
		t.Fatalf("readMap(%s) = %q, %v; want the file's text", mapFile, text, err)
	}
	load := fakeProfiles()
	raw, err := loadRaw(context.Background(), s, load, []string{"base", "target"}, fold.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		i         int
		raw, want string // the frames of the first stack, raw and mapped
	}{
		{0, "t;main;f;x", "t;main;f;x"},
		{1, "t;main;g;x", "t;main;f;x"},
	}
	for _, tt := range tests {
		mp, expl := applyMap(m, raw[tt.i])
		if got := strings.Join(mp.Stacks[0].Frames, ";"); got != tt.want {
			t.Errorf("applyMap(profile %d): first stack %s, want %s", tt.i, got, tt.want)
		}
		if got := strings.Join(raw[tt.i].Stacks[0].Frames, ";"); got != tt.raw {
			t.Errorf("after applyMap, raw profile %d: first stack %s, want %s (unchanged)", tt.i, got, tt.raw)
		}
		if renamed := len(expl.Rewrites) > 0; renamed != (tt.raw != tt.want) {
			t.Errorf("applyMap(profile %d): rewrites %v", tt.i, expl.Rewrites)
		}
	}
	if m, text, err := readMap(s, ""); err != nil || text != nil || m.Stats().Rename != 0 {
		t.Errorf(`readMap("") = %v, %q, %v; want the default map and no text`, m.Stats(), text, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	counting := func(s *streams, path string, o loadOptions) (*fold.Profile, error) {
		calls++
		return load(s, path, o)
	}
	if _, err := loadRaw(ctx, s, counting, []string{"base"}, fold.ParseOptions{}); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("loadRaw(cancelled) = %v after %d loads, want context.Canceled before any", err, calls)
	}
}
