package lab

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestLoadConfig: a config path that is missing or a directory gives an
// error naming it in words, wrapping the file system's error; a good
// config loads.
func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(good, []byte("servers: [{label: a, path: /a}]\nworkloads: [{test: oltp_insert}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.yaml")
	tests := []struct {
		name, path string
		want       string // the error; "" for none
		is         error
	}{
		{"good", good, "", nil},
		{"missing", missing, "bench config " + missing + ": no such file", fs.ErrNotExist},
		{"directory", dir, "bench config " + dir + ": is a directory, not a file", nil},
		{"under a file", filepath.Join(good, "x.yaml"), "bench config " + filepath.Join(good, "x.yaml") + ": a part of the path is a file, not a directory", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := LoadConfig(tt.path)
			if tt.want == "" {
				if err != nil || c == nil || c.File != tt.path || len(c.Servers) != 1 {
					t.Fatalf("LoadConfig(%q) = %+v, %v; want the config of one server", tt.path, c, err)
				}
				return
			}
			if c != nil || err == nil || err.Error() != tt.want {
				t.Fatalf("LoadConfig(%q) = %v, %v; want the error %q", tt.path, c, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("LoadConfig(%q) error %v does not wrap %v", tt.path, err, tt.is)
			}
			if errors.Is(err, ErrInvalidConfig) {
				t.Errorf("LoadConfig(%q) error %v wraps ErrInvalidConfig: the config was never read", tt.path, err)
			}
		})
	}
}

// TestDescribePath: what the user reads for each file system error.
func TestDescribePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errMissing := os.Stat(filepath.Join(dir, "nope"))
	_, errUnderFile := os.Stat(filepath.Join(file, "x"))
	_, errIsDir := os.ReadFile(dir)
	errMkdir := os.Mkdir(dir, 0o755)
	tests := []struct {
		name string
		err  error
		dir  bool
		want string
		is   error
	}{
		{"missing file", errMissing, false, "P: no such file", fs.ErrNotExist},
		{"missing directory", errMissing, true, "P: no such directory", fs.ErrNotExist},
		{"under a file", errUnderFile, false, "P: a part of the path is a file, not a directory", nil},
		{"directory", errIsDir, false, "P: is a directory, not a file", nil},
		{"other error in the system's words", errMkdir, true, "P: file exists", fs.ErrExist},
		{"not a path error", errors.New("boom"), false, "P: boom", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := describePath("P", tt.err, tt.dir)
			if got.Error() != tt.want {
				t.Errorf("describePath(P, %v) = %q, want %q", tt.err, got, tt.want)
			}
			if !errors.Is(got, tt.err) || tt.is != nil && !errors.Is(got, tt.is) {
				t.Errorf("describePath(P, %v) = %v does not wrap it", tt.err, got)
			}
		})
	}
}

// TestInstalledBadPath: an installed server's path that does not exist or
// is a directory is named in the error, in words.
func TestInstalledBadPath(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the lab runs servers on Linux only")
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "sbin", "mariadbd")
	tests := []struct {
		name, path, want string
	}{
		{"missing", missing, "installed server " + missing + ": no such file"},
		{"directory", dir, "installed server " + dir + ": is a directory, not the mariadbd program"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Installed(context.Background(), tt.path)
			if b != nil || err == nil || err.Error() != tt.want {
				t.Fatalf("Installed(%q) = %v, %v; want the error %q", tt.path, b, err, tt.want)
			}
		})
	}
}
