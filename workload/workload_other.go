//go:build !linux

package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// groupSignal is a signal sent to a Run's process group.
type groupSignal int

const (
	sigInterrupt groupSignal = iota + 1
	sigKill
)

// Start runs workloads in process groups on Linux only: here it returns an
// error wrapping errors.ErrUnsupported.
func Start(ctx context.Context, args []string, log io.Writer) (*Run, error) {
	return nil, fmt.Errorf("start workload: %w on this system", errors.ErrUnsupported)
}

// StartEnv is Start with more environment: Linux only, as Start.
func StartEnv(ctx context.Context, args, env []string, log io.Writer) (*Run, error) {
	return nil, fmt.Errorf("start workload: %w on this system", errors.ErrUnsupported)
}

func (r *Run) signalGroup(sig groupSignal) error {
	return fmt.Errorf("workload %s: signal: %w", r.name, errors.ErrUnsupported)
}
