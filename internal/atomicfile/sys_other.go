//go:build !unix

package atomicfile

import "os"

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
