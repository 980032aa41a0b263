//go:build !unix

package atomicfile

import (
	"fmt"
	"os"
)

const (
	accessWrite  = 2
	accessSearch = 1
)

// access checks only that path exists where access(2) is not available.
func access(path string, _ uint32) error {
	_, err := os.Stat(path)
	return err
}

func keepOwner(*os.File, os.FileInfo) {}

// dupFile: descriptors are not duplicated where there is no fcntl; the
// commands write /dev/stdout and /dev/stderr through their own streams.
func dupFile(fd int, name string) (*os.File, error) {
	return nil, fmt.Errorf("%s: writing to descriptor %d is not supported here", name, fd)
}
