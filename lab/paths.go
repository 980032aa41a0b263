package lab

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// LoadConfig reads the bench config file at path (ParseConfig with path as
// the name). A path that cannot be read gives an error naming it and
// saying why in words: "bench config PATH: no such file" (wrapping
// fs.ErrNotExist), "...: is a directory, not a file", "...: permission
// denied" (wrapping fs.ErrPermission).
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench config %w", describePath(path, err, false))
	}
	return ParseConfig(bytes.NewReader(data), path)
}

// pathError is an error of the file system about a path, in words
// ("PATH: no such file"), without the system call's name ("stat",
// "open"); it unwraps to the original error, for errors.Is.
type pathError struct {
	path, problem string
	err           error
}

func (e *pathError) Error() string { return e.path + ": " + e.problem }

func (e *pathError) Unwrap() error { return e.err }

// describePath returns err, from using path (a directory when dir), as a
// *pathError.
func describePath(path string, err error, dir bool) error {
	problem := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		problem = pe.Err.Error()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist) && dir:
		problem = "no such directory"
	case errors.Is(err, fs.ErrNotExist):
		problem = "no such file"
	case errors.Is(err, syscall.EISDIR):
		problem = "is a directory, not a file"
	case errors.Is(err, syscall.ENOTDIR):
		problem = "a part of the path is a file, not a directory"
	case errors.Is(err, fs.ErrPermission):
		problem = "permission denied"
	}
	return &pathError{path: path, problem: problem, err: err}
}
