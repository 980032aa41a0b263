package lab

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrMissingLibrary is wrapped by the errors of a binary that cannot run
// because the dynamic loader does not find a library, or a version of one.
var ErrMissingLibrary = errors.New("missing shared library")

// MissingLibraryError says which library the loader did not find.
type MissingLibraryError struct {
	// Library is the soname ("libssl.so.1.1") or the path of the library
	// that lacks a version ("/lib/x86_64-linux-gnu/libc.so.6").
	Library string
	// Version is the symbol version that was not found ("GLIBC_2.38"),
	// empty when the library itself is missing.
	Version string
	// RequiredBy is the object that needs it, when the loader says.
	RequiredBy string
}

// Error says what is missing and, when known, what needs it.
func (e *MissingLibraryError) Error() string {
	var s string
	if e.Version != "" {
		s = fmt.Sprintf("%s: %s lacks version %s", ErrMissingLibrary, e.Library, e.Version)
	} else {
		s = fmt.Sprintf("%s %s", ErrMissingLibrary, e.Library)
	}
	if e.RequiredBy != "" {
		s += " (required by " + e.RequiredBy + ")"
	}
	return s
}

// Unwrap returns ErrMissingLibrary.
func (e *MissingLibraryError) Unwrap() error { return ErrMissingLibrary }

var (
	// "mariadbd: error while loading shared libraries: libssl.so.1.1: cannot open shared object file: No such file or directory"
	loadErr = regexp.MustCompile(`^(\S+): error while loading shared libraries: ([^:]+): cannot open shared object file`)
	// "mariadbd: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by mariadbd)"
	versionErr = regexp.MustCompile("^(\\S+): (\\S+): version [`'‘]([^'’]+)['’] not found(?: \\(required by ([^)]+)\\))?")
	// ldd or "ld.so --list": "\tlibssl.so.1.1 => not found"
	notFound = regexp.MustCompile(`^\s*(\S+) => not found`)
)

// ParseLoaderError finds the dynamic loader's complaint in the output of
// a program that failed to start (or in ldd's or "ld.so --list"'s
// output) and returns what is missing, or nil when the output has none.
// It never touches the system.
func ParseLoaderError(out []byte) *MissingLibraryError {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if m := loadErr.FindStringSubmatch(line); m != nil {
			return &MissingLibraryError{Library: m[2], RequiredBy: m[1]}
		}
		if m := versionErr.FindStringSubmatch(line); m != nil {
			return &MissingLibraryError{Library: m[2], Version: m[3], RequiredBy: m[4]}
		}
		if m := notFound.FindStringSubmatch(line); m != nil {
			return &MissingLibraryError{Library: m[1]}
		}
	}
	return nil
}

// verRE matches the version in "mariadbd  Ver 11.8.9-MariaDB-0+deb13u1 for debian-linux-gnu on x86_64".
var verRE = regexp.MustCompile(`\bVer\s+(\d+\.\d+\.\d+\S*)`)

// ParseVersionOutput returns the server version of `mariadbd --version`'s
// output ("11.8.9-MariaDB-0+deb13u1"), or an error quoting the output.
func ParseVersionOutput(out []byte) (string, error) {
	m := verRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("no version in %q", firstLine(out))
	}
	return string(m[1]), nil
}

func firstLine(b []byte) string {
	b = bytes.TrimSpace(b)
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}
