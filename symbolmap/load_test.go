package symbolmap

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"
)

// TestLoad: a map path that is missing, a directory or unreadable gives an
// error naming the path and saying what is wrong, without "open", "read"
// or "stat"; a good path loads.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("version: 1\nelide:\n  - from: [w]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	underFile := filepath.Join(good, "x.yaml")
	tests := []struct {
		name, path string
		want       string // the error, "" for none
		is         error
	}{
		{"good", good, "", nil},
		{"missing", missing, "symbol map " + missing + ": no such file", fs.ErrNotExist},
		{"missing directory", filepath.Join(dir, "no", "m.yaml"), "symbol map " + filepath.Join(dir, "no", "m.yaml") + ": no such file", fs.ErrNotExist},
		{"directory", dir, "symbol map " + dir + ": is a directory, not a map file", nil},
		{"under a file", underFile, "symbol map " + underFile + ": a part of the path is a file, not a directory", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _, err := Load(tt.path)
			if tt.want == "" {
				if err != nil || m == nil || m.Stats().Elide != 1 {
					t.Fatalf("Load(%q) = %v, %v; want the map with one elide rule", tt.path, m, err)
				}
				return
			}
			if m != nil || err == nil || err.Error() != tt.want {
				t.Fatalf("Load(%q) = %v, %v; want the error %q", tt.path, m, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Load(%q) error %v does not wrap %v", tt.path, err, tt.is)
			}
			if errors.Is(err, ErrInvalid) {
				t.Errorf("Load(%q) error %v wraps ErrInvalid: the map was never read", tt.path, err)
			}
		})
	}
	t.Run("unreadable", func(t *testing.T) {
		if os.Geteuid() == 0 {
			t.Skip("root reads a file of mode 0")
		}
		p := filepath.Join(dir, "secret.yaml")
		if err := os.WriteFile(p, []byte("version: 1\n"), 0o000); err != nil {
			t.Fatal(err)
		}
		_, _, err := Load(p)
		if want := "symbol map " + p + ": permission denied"; err == nil || err.Error() != want || !errors.Is(err, fs.ErrPermission) {
			t.Errorf("Load(%q) = %v, want %q wrapping fs.ErrPermission", p, err, want)
		}
	})
}

// TestParseReadError: Parse of an opened directory says so in words;
// other read errors are wrapped as they are.
func TestParseReadError(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, _, err = Parse(f, dir)
	if want := "symbol map " + dir + ": is a directory, not a map file"; err == nil || err.Error() != want {
		t.Errorf("Parse(directory %s) = %v, want %q", dir, err, want)
	}
	boom := errors.New("boom")
	if _, _, err := Parse(iotest.ErrReader(boom), "m.yaml"); !errors.Is(err, boom) || err.Error() != "symbol map m.yaml: boom" {
		t.Errorf("Parse(failing reader) = %v, want \"symbol map m.yaml: boom\" wrapping boom", err)
	}
}

func TestCountDiagnostics(t *testing.T) {
	diags := []Diagnostic{{Severity: Warning}, {Severity: Error}, {Severity: Warning}}
	tests := []struct {
		name           string
		diags          []Diagnostic
		errs, warnings int
	}{
		{"none", nil, 0, 0},
		{"mixed", diags, 1, 2},
		{"warnings only", diags[:1], 0, 1},
	}
	for _, tc := range tests {
		if e, w := CountDiagnostics(tc.diags); e != tc.errs || w != tc.warnings {
			t.Errorf("%s: CountDiagnostics = %d, %d; want %d errors, %d warnings", tc.name, e, w, tc.errs, tc.warnings)
		}
	}
}

func TestStatsString(t *testing.T) {
	tests := []struct {
		st   Stats
		want string
	}{
		{Stats{}, "0 rename rules, 0 elide, 0 comm, 0 subsystems"},
		{Stats{Rename: 1, Elide: 2, Comm: 3, Subsystems: 1, ThreadRoots: 4}, "1 rename rule, 2 elide, 3 comm, 1 subsystem"},
	}
	for _, tc := range tests {
		if got := tc.st.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.st, got, tc.want)
		}
	}
}
