// Package fserr says what went wrong with a path the user gave, in words:
// "PATH: no such file", "PATH: is a directory, not a map file",
// "PATH: permission denied", without the system call's name ("stat",
// "open") that os errors carry. The error unwraps to the original one, so
// errors.Is(err, fs.ErrNotExist) still holds. cmd, lab and symbolmap use
// it, so a path is described the same way everywhere.
package fserr

import (
	"errors"
	"io/fs"
	"syscall"
)

// Error is a file system error about a path, in words.
type Error struct {
	Path    string
	Problem string
	Err     error
}

func (e *Error) Error() string { return e.Path + ": " + e.Problem }

func (e *Error) Unwrap() error { return e.Err }

// Describe returns err, from using path, as an *Error. what names what path
// should be ("file", "map file", "directory", "file or directory"): a
// missing path is "no such WHAT" ("no such file" for a kind of file), a
// directory where a file was wanted "is a directory, not a WHAT".
func Describe(path string, err error, what string) error {
	if err == nil {
		return nil
	}
	problem := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		problem = pe.Err.Error()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		problem = "no such " + noun(what)
	case errors.Is(err, syscall.EISDIR):
		problem = "is a directory, not a " + what
	case errors.Is(err, syscall.ENOTDIR):
		problem = "a part of the path is a file, not a directory"
	case errors.Is(err, fs.ErrPermission):
		problem = "permission denied"
	}
	return &Error{Path: path, Problem: problem, Err: err}
}

// noun is what "no such" is followed by: "file" for every kind of file.
func noun(what string) string {
	switch what {
	case "directory", "file or directory":
		return what
	}
	return "file"
}
