// Package atomicfile writes outputs the way careful Unix tools do (cp,
// sort -o): a regular file is replaced atomically (a temporary file in the
// same directory, synced, then renamed over it), so that readers see the old
// contents or the new ones, never a part, and an interrupted writer leaves no
// temporary file behind; anything that is not a regular file (a character or
// block device such as /dev/null, a FIFO, /dev/stdout, /dev/fd/N, a process
// substitution) is opened and written through, never replaced.
//
// The rules, in the order Check applies them:
//
//   - /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N
//     name a descriptor the process already holds: the output is written
//     to that descriptor (Output.FD), whatever it is.
//   - A symbolic link is followed: its target is what is written or
//     replaced, and the link stays a link.
//   - A directory, a missing directory, a dangling link or a path the user
//     may not write (as the shell's > would find: access(2) with W_OK, so
//     root may write a 0444 file and others may not) is an error naming the
//     path the user gave.
//   - A new regular file gets mode 0666 less the umask, as open(2) gives it;
//     a replaced file keeps its mode (and, where the writer may, its owner).
//   - A regular file in a directory the user may not write, but which the
//     user may write itself, is truncated and written in place (not
//     atomically), as the shell's > would.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Kind says how an Output is written.
type Kind int

// Kinds of output.
const (
	// Replace: a regular file, new or existing, replaced atomically.
	Replace Kind = iota
	// InPlace: an existing regular file in a directory the user may not
	// write, truncated and written in place.
	InPlace
	// Through: a device, FIFO or socket, opened and written through.
	Through
	// FD: a descriptor the process holds (/dev/stdout, /dev/fd/N), written
	// to directly; Output.Descriptor says which.
	FD
)

// Output is a checked destination. Make one with Check before reading any
// input, so that a wrong path fails at once.
type Output struct {
	// Path is the path as the user gave it; every error names it.
	Path string
	// Kind says how the output is written.
	Kind Kind
	// Descriptor is the file descriptor for Kind FD.
	Descriptor int

	target string      // what is written or replaced (symlinks followed)
	info   os.FileInfo // the existing target, nil for a new file
}

// ErrNotWritable is wrapped when the user may not write the output.
var ErrNotWritable = errors.New("not writable")

// ErrSameFile is wrapped by SameAs when an output is one of the inputs.
var ErrSameFile = errors.New("output is one of the inputs")

// Check says how path would be written and fails, naming path, when it
// cannot be: a directory, a missing directory, a dangling symbolic link, or
// a file or directory the user may not write.
func Check(path string) (*Output, error) {
	if path == "" {
		return nil, errors.New("output: empty file name")
	}
	if fd, ok := descriptor(path); ok {
		o := &Output{Path: path, Kind: FD, Descriptor: fd}
		if fi, err := os.Stat(path); err == nil {
			o.info = fi
		}
		return o, nil
	}
	o := &Output{Path: path, target: path}
	lfi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return o, o.checkNew(path)
	case err != nil:
		return nil, o.describe(err)
	}
	if lfi.Mode()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				dest, _ := os.Readlink(path)
				return nil, &wordsError{fmt.Sprintf("%s: a symbolic link to %s, which does not exist", path, dest), fs.ErrNotExist, nil}
			}
			return nil, o.describe(err)
		}
		o.target = target
	}
	fi, err := os.Stat(o.target)
	if err != nil {
		return nil, o.describe(err)
	}
	o.info = fi
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("%s: is a directory; give a file name (for example %s)", path, filepath.Join(path, "out"))
	case !fi.Mode().IsRegular():
		o.Kind = Through
		if err := access(o.target, accessWrite); err != nil {
			return nil, fmt.Errorf("%s: %w: you may not write to this %s", path, ErrNotWritable, kindName(fi.Mode()))
		}
		return o, nil
	}
	if err := access(o.target, accessWrite); err != nil {
		return nil, fmt.Errorf("%s: %w: its mode is %04o and you may not write to it (the shell's > would fail too); change its mode or choose another file", path, ErrNotWritable, fi.Mode().Perm())
	}
	if access(filepath.Dir(o.target), accessWrite|accessSearch) != nil {
		o.Kind = InPlace
	}
	return o, nil
}

// checkNew checks that a new file can be made at path.
func (o *Output) checkNew(path string) error {
	if strings.HasSuffix(path, "/") {
		return fmt.Errorf("%s: is a directory name; give a file name", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &wordsError{fmt.Sprintf("%s: directory %s does not exist", path, dir), fs.ErrNotExist, nil}
	case err != nil:
		return o.describe(err)
	case !fi.IsDir():
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	if err := access(dir, accessWrite|accessSearch); err != nil {
		return fmt.Errorf("%s: %w: you may not create files in directory %s", path, ErrNotWritable, dir)
	}
	return nil
}

// describe turns an error from the file system into words that name the
// user's path, keeping the error for errors.Is.
func (o *Output) describe(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	switch {
	case errors.Is(err, fs.ErrPermission):
		return &wordsError{o.Path + ": not writable: permission denied", err, ErrNotWritable}
	case errors.Is(err, fs.ErrNotExist):
		return &wordsError{o.Path + ": no such file or directory", err, nil}
	}
	return fmt.Errorf("%s: %w", o.Path, err)
}

// SameAs returns an error wrapping ErrSameFile when the output is the file
// input (the same device and inode, whatever the names), and nil when it is
// not or when either cannot be examined (an input that does not exist is
// reported by whoever reads it). label names the input in the message.
func (o *Output) SameAs(input string) error {
	if o.info == nil || input == "" || input == "-" {
		return nil
	}
	fi, err := os.Stat(input)
	if err != nil || fi.IsDir() {
		return nil
	}
	if os.SameFile(o.info, fi) {
		if o.Path == input {
			return fmt.Errorf("%s: %w; write to another file", o.Path, ErrSameFile)
		}
		return fmt.Errorf("%s: %w (%s is the same file); write to another file", o.Path, ErrSameFile, input)
	}
	return nil
}

// Write writes data to the output as its Kind says. For Kind FD it writes
// to w when w is not nil (the caller's stream for that descriptor), else to
// the descriptor itself. Errors name the user's path, never a temporary file.
func (o *Output) Write(w io.Writer, data []byte) error {
	switch o.Kind {
	case FD:
		if w != nil {
			if _, err := w.Write(data); err != nil {
				return o.describe(err)
			}
			return nil
		}
		// A duplicate of the descriptor, closed after writing: the
		// descriptor itself stays open (an *os.File of it would close it,
		// at the latest when the garbage collector finalizes the File).
		f, err := dupFile(o.Descriptor, o.Path)
		return o.writeClose(f, err, data)
	case Through, InPlace:
		f, err := os.OpenFile(o.target, os.O_WRONLY|os.O_TRUNC, 0)
		return o.writeClose(f, err, data)
	}
	return o.replace(data, 0, false)
}

// writeClose writes data to f, which opening gave with err, and closes it;
// errors name the user's path.
func (o *Output) writeClose(f *os.File, err error, data []byte) error {
	if err != nil {
		return o.describe(err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return o.describe(err)
	}
	return nil
}

// replace writes a temporary file beside the target and renames it over.
// The new file has mode perm when setPerm, else the replaced file's mode,
// else 0666 less the umask.
func (o *Output) replace(data []byte, perm os.FileMode, setPerm bool) error {
	tmp, err := createTemp(o.target)
	if err != nil {
		return o.describe(err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // a no-op after the rename
	switch {
	case setPerm:
		err = tmp.Chmod(perm)
	case o.info != nil:
		err = tmp.Chmod(o.info.Mode().Perm())
		keepOwner(tmp, o.info)
	}
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), o.target)
	}
	if err != nil {
		return o.describe(err)
	}
	if d, err := os.Open(filepath.Dir(o.target)); err == nil {
		_ = d.Sync() // the rename reaches the disk; best effort
		_ = d.Close()
	}
	return nil
}

// createTemp makes a new file beside path with mode 0666 less the umask
// (os.CreateTemp would give 0600).
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	var err error
	for i := 0; i < 100; i++ {
		name := filepath.Join(dir, "."+base+".tmp"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(uint64(rand.Uint32()), 10))
		var f *os.File
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
	return nil, err
}

// Write writes data to path with permissions perm, atomically; for files
// that the caller owns entirely (a run directory's files, caches). The
// error names path.
func Write(path string, data []byte, perm os.FileMode) error {
	o := &Output{Path: path, target: path}
	if err := o.replace(data, perm, true); err != nil {
		return fmt.Errorf("write %w", err)
	}
	return nil
}

// descriptor reports whether path names a descriptor the process holds.
func descriptor(path string) (int, bool) {
	switch path {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, prefix := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 && strconv.Itoa(n) == rest {
				return n, true
			}
		}
	}
	return 0, false
}

func kindName(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "file"
}

// wordsError is an error whose message is written for people and which
// still unwraps to the system's error, for errors.Is.
type wordsError struct {
	msg  string
	err  error
	also error // a sentinel of this package, or nil
}

func (e *wordsError) Error() string { return e.msg }
func (e *wordsError) Unwrap() []error {
	if e.also == nil {
		return []error{e.err}
	}
	return []error{e.err, e.also}
}

// MakeDir makes the output directory path and any missing parents (mode
// 0777 less the umask, as mkdir -p), or checks the existing one, and fails,
// naming path, when it is not a directory or the user may not write in it.
func MakeDir(path string) error {
	o := &Output{Path: path}
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s: is a %s, not a directory; give a directory", path, kindName(fi.Mode()))
	}
	if err := os.MkdirAll(path, 0o777); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path != path && errors.Is(err, syscall.ENOTDIR) {
			return fmt.Errorf("%s: %s is not a directory", path, pe.Path)
		}
		return o.describe(err)
	}
	if err := access(path, accessWrite|accessSearch); err != nil {
		return &wordsError{path + ": not writable: you may not create files in this directory", err, ErrNotWritable}
	}
	return nil
}
