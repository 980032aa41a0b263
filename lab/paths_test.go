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
