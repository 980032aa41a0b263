// Package atomicfile writes a file so that readers see the old contents or
// the new ones, never a part: a temporary file in the same directory,
// synced, then renamed over the path. An interrupted writer leaves no
// temporary file behind.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write writes data to path with permissions perm. The error names path.
func Write(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }() // a no-op after the rename
	err = tmp.Chmod(perm)
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
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
