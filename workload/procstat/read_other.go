//go:build !linux

package procstat

import (
	"errors"
	"fmt"
)

// Read reads /proc, which only Linux has: here it returns an error
// wrapping errors.ErrUnsupported.
func Read(procRoot string, pid int) (*Snapshot, error) {
	return nil, fmt.Errorf("read process %d: %w on this system", pid, errors.ErrUnsupported)
}
