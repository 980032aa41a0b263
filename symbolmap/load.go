package symbolmap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// Load reads the map file at path; it is Parse with path as the name. A
// path that cannot be read gives an error naming it and saying why in
// words: "symbol map PATH: no such file" (wrapping fs.ErrNotExist), "...:
// is a directory, not a map file", "...: permission denied" (wrapping
// fs.ErrPermission).
func Load(path string) (*Map, []Diagnostic, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("symbol map %w", describePath(path, err))
	}
	return parse(data, path)
}

// pathError is an error of the file system about a path the user gave,
// in words ("PATH: no such file"), without the system call's name; it
// unwraps to the original error, for errors.Is.
type pathError struct {
	path, problem string
	err           error
}

func (e *pathError) Error() string { return e.path + ": " + e.problem }

func (e *pathError) Unwrap() error { return e.err }

// describePath returns err, from reading the file path, as a *pathError.
func describePath(path string, err error) error {
	inner := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		inner = pe.Err
	}
	var problem string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		problem = "no such file"
	case errors.Is(err, syscall.EISDIR):
		problem = "is a directory, not a map file"
	case errors.Is(err, syscall.ENOTDIR):
		problem = "a part of the path is a file, not a directory"
	case errors.Is(err, fs.ErrPermission):
		problem = "permission denied"
	default:
		problem = inner.Error()
	}
	return &pathError{path: path, problem: problem, err: err}
}
