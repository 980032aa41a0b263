package fserr

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestDescribe(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, errMissing := os.ReadFile(filepath.Join(dir, "missing"))
	_, errDir := os.ReadFile(dir)
	_, errNotDir := os.ReadFile(filepath.Join(file, "x"))
	for _, tc := range []struct {
		name string
		err  error
		what string
		want string
		is   error
	}{
		{"missing", errMissing, "map file", "P: no such file", fs.ErrNotExist},
		{"missing dir", errMissing, "directory", "P: no such directory", fs.ErrNotExist},
		{"missing either", errMissing, "file or directory", "P: no such file or directory", fs.ErrNotExist},
		{"a directory", errDir, "map file", "P: is a directory, not a map file", nil},
		{"through a file", errNotDir, "file", "P: a part of the path is a file, not a directory", nil},
		{"permission", &fs.PathError{Op: "open", Path: "P", Err: fs.ErrPermission}, "file", "P: permission denied", fs.ErrPermission},
		{"other error in the system's words", os.Mkdir(dir, 0o755), "directory", "P: file exists", fs.ErrExist},
		{"not a path error", errors.New("boom"), "file", "P: boom", nil},
	} {
		got := Describe("P", tc.err, tc.what)
		if got.Error() != tc.want {
			t.Errorf("%s: Describe = %q, want %q", tc.name, got, tc.want)
		}
		if tc.is != nil && !errors.Is(got, tc.is) {
			t.Errorf("%s: Describe(...) does not wrap %v", tc.name, tc.is)
		}
	}
	if Describe("P", nil, "file") != nil {
		t.Error("Describe(nil) != nil")
	}
}
