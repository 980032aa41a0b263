package suite

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name      string
		rng       int
		wantTest  string
		wantArgs  []string
		wantRange int
	}{
		{"point-query", 0, "oltp_point_select", []string{"--skip-trx=on"}, 0},
		{"read-only", 10000, "oltp_read_only", []string{"--range-size=10000"}, 10000},
		{"read-write", 0, "oltp_read_write", []string{"--range-size=100"}, 100},
		{"random-points", 1000, "random_points.lua", []string{"--rand-type=uniform", "--range-size=1000"}, 1000},
		{"random-points", 0, "random_points.lua", []string{"--rand-type=uniform", "--range-size=10"}, 10},
		{"hot-points", 0, "hot_points.lua", []string{"--rand-type=uniform"}, 0},
		{"update-zipf", 0, "update_zipf.lua", []string{"--rand-type=uniform"}, 0},
	}
	for _, tt := range tests {
		b, err := Lookup(tt.name, tt.rng)
		if err != nil {
			t.Errorf("Lookup(%q, %d): %v", tt.name, tt.rng, err)
			continue
		}
		if b.Test != tt.wantTest || !slices.Equal(b.Args, tt.wantArgs) || b.Range != tt.wantRange {
			t.Errorf("Lookup(%q, %d) = %+v, want test %s args %q range %d", tt.name, tt.rng, b, tt.wantTest, tt.wantArgs, tt.wantRange)
		}
		if b.Script != strings.HasSuffix(tt.wantTest, ".lua") {
			t.Errorf("Lookup(%q, %d).Script = %v", tt.name, tt.rng, b.Script)
		}
	}
	if b, _ := Lookup("update-one", 0); b.TableSize != 1 {
		t.Errorf("Lookup(update-one).TableSize = %d, want 1", b.TableSize)
	}
	if b, _ := Lookup("scan", 0); !b.RowsPerQuery {
		t.Errorf("Lookup(scan).RowsPerQuery = false, want true")
	}
}

func TestLookupErrors(t *testing.T) {
	tests := []struct {
		name string
		rng  int
		want string
	}{
		{"random-pints", 0, "known: delete, hot-points"},
		{"hot-points", 10, "takes no range"},
		{"read-only", -1, "negative range"},
	}
	for _, tt := range tests {
		_, err := Lookup(tt.name, tt.rng)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Lookup(%q, %d) error = %v, want one containing %q", tt.name, tt.rng, err, tt.want)
		}
	}
}

// TestNamesHaveScripts checks every script name is embedded and every
// embedded script (but the shared module) has a name.
func TestNamesHaveScripts(t *testing.T) {
	dir := t.TempDir()
	if err := WriteScripts(dir); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{"flamediff_suite.lua": true}
	for _, n := range Names() {
		b, err := Lookup(n, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Script {
			continue
		}
		used[b.Test] = true
		if _, err := os.Stat(b.TestArg(dir)); err != nil {
			t.Errorf("%s: %v", n, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.lua"))
	for _, f := range files {
		if !used[filepath.Base(f)] {
			t.Errorf("script %s has no name", filepath.Base(f))
		}
	}
	if len(files) != 14 {
		t.Errorf("WriteScripts wrote %d scripts, want 14", len(files))
	}
}

func TestPreset(t *testing.T) {
	full, err := Preset("full")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, b := range full {
		seen[b.Name] = true
	}
	for _, n := range Names() {
		if !seen[n] {
			t.Errorf("Preset(full) lacks %s", n)
		}
	}
	small, err := Preset("small")
	if err != nil {
		t.Fatal(err)
	}
	if len(small) == 0 || len(small) >= len(full) {
		t.Errorf("Preset(small) has %d benchmarks, full %d", len(small), len(full))
	}
	if _, err := Preset("medium"); err == nil || !strings.Contains(err.Error(), "known: full, small") {
		t.Errorf("Preset(medium) error = %v", err)
	}
}
