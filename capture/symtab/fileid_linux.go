//go:build linux

package symtab

import (
	"fmt"
	"os"
	"syscall"
)

// fileID returns the device ("fd:01", as /proc/PID/maps prints it) and
// inode of an open file.
func fileID(f *os.File) (dev string, ino uint64, ok bool) {
	fi, err := f.Stat()
	if err != nil {
		return "", 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", 0, false
	}
	d := uint64(st.Dev)
	major := (d>>8)&0xfff | (d>>32)&^0xfff
	minor := d&0xff | (d>>12)&^0xff
	return fmt.Sprintf("%02x:%02x", major, minor), st.Ino, true
}
