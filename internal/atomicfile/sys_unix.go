//go:build unix

package atomicfile

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	accessWrite  = unix.W_OK
	accessSearch = unix.X_OK
)

// access asks the kernel whether the effective user may access path as mode
// says, as the shell does before a > redirection (root may write a 0444 file).
func access(path string, mode uint32) error {
	return unix.Faccessat(unix.AT_FDCWD, path, mode, unix.AT_EACCESS)
}

// keepOwner gives f the owner and group of the file it replaces, where the
// writer may (root may; others keep their own).
func keepOwner(f *os.File, old os.FileInfo) {
	if st, ok := old.Sys().(*syscall.Stat_t); ok {
		_ = f.Chown(int(st.Uid), int(st.Gid))
	}
}

// dupFile returns a new *os.File on a duplicate of descriptor fd.
func dupFile(fd int, name string) (*os.File, error) {
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(d), name), nil
}
