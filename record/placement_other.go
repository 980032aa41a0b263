//go:build !linux

package record

import (
	"errors"
	"fmt"
)

func allowedCPUs() ([]int, error) {
	return nil, fmt.Errorf("CPU affinity: %w", errors.ErrUnsupported)
}

func pinThreads(string, int, []int) (int, error) {
	return 0, fmt.Errorf("CPU affinity: %w", errors.ErrUnsupported)
}

func startOn(_ []int, start func() error) error {
	return fmt.Errorf("CPU affinity: %w", errors.ErrUnsupported)
}
