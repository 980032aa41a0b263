// Package cli is the command-line plumbing of cmd/flamediff that knows
// nothing of profiles: usage errors, enum and mutually exclusive flags,
// argument counts, new output directories, writing an output file or a
// standard stream, and help texts kept as files. The commands themselves
// (their flags, wiring and printing) stay in cmd/flamediff.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/flamediff/flamediff/internal/atomicfile"
)

// Streams are a command's standard input and outputs; tests inject buffers.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// ErrUsage marks errors in how a command was called (exit code 2).
var ErrUsage = errors.New("usage")

// UsageError wraps a message as a usage error.
func UsageError(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, a...))
}

// CheckNewDir checks an output directory a command creates: absent or
// empty, so that no earlier run or report (what) is overwritten.
func CheckNewDir(flag, dir, what string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	if !st.IsDir() {
		return UsageError("%s %s exists and is not a directory", flag, dir)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		return UsageError("%s %s is not empty: choose a new directory so that no earlier %s is overwritten", flag, dir, what)
	}
	return nil
}

// WriteOutput writes data to standard output when o is nil, else to the
// checked output: /dev/stdout and /dev/stderr go to the command's streams,
// devices, FIFOs and descriptors are written through, regular files are
// replaced atomically (README, "Outputs").
func WriteOutput(s *Streams, o *atomicfile.Output, data []byte) error {
	if o == nil {
		_, err := s.Out.Write(data)
		return err
	}
	if o.Kind == atomicfile.FD {
		switch o.Descriptor {
		case 1:
			return o.Write(s.Out, data)
		case 2:
			return o.Write(s.ErrOut, data)
		}
	}
	return o.Write(nil, data)
}

// IsTerminal reports whether w is a terminal (for progress bars).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// OrList is "a, b or c".
func OrList(s []string) string { return joinLast(s, " or ") }

// AndList is "a, b and c".
func AndList(s []string) string { return joinLast(s, " and ") }

func joinLast(s []string, last string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + last + s[len(s)-1]
}
