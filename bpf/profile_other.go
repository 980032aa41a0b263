//go:build !linux

package bpf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

func unsupported(what string) error {
	return fmt.Errorf("bpf: %s needs Linux: %w", what, errors.ErrUnsupported)
}

// Profiler is the BPF sampler; on this system it cannot be loaded.
type Profiler struct{}

// Load fails: BPF needs Linux.
func Load(Options) (*Profiler, error) { return nil, unsupported("loading the profiler") }

// Start fails: BPF needs Linux.
func (p *Profiler) Start() error { return unsupported("sampling") }

// Stop does nothing.
func (p *Profiler) Stop() error { return nil }

// Counts fails: BPF needs Linux.
func (p *Profiler) Counts() ([]Count, error) { return nil, unsupported("reading counts") }

// Health fails: BPF needs Linux.
func (p *Profiler) Health() (Health, error) { return Health{}, unsupported("reading health") }

// ThreadCorrections fails: BPF needs Linux.
func (p *Profiler) ThreadCorrections() (map[uint32]ThreadCorrection, error) {
	return nil, unsupported("reading thread corrections")
}

// Close does nothing.
func (p *Profiler) Close() error { return nil }

// EnableStats fails: BPF needs Linux.
func EnableStats() (io.Closer, error) { return nil, unsupported("run-time stats") }

// RunTime returns (0, 0, false).
func (p *Profiler) RunTime() (time.Duration, uint64, bool) { return 0, 0, false }

// CFIWanted fails: BPF needs Linux.
func (p *Profiler) CFIWanted() ([]uint64, error) { return nil, unsupported("reading CFI wanted") }

// SetCFIRules fails: BPF needs Linux.
func (p *Profiler) SetCFIRules(map[uint64]CFIRule) error { return unsupported("setting CFI rules") }

// SetRanges fails: BPF needs Linux.
func (p *Profiler) SetRanges(noFP, roots []Range) error { return unsupported("setting ranges") }

// ReadSamples fails: BPF needs Linux.
func (p *Profiler) ReadSamples(ctx context.Context, fn func(RawSample) error) error {
	return unsupported("reading samples")
}

// OffCPU fails: BPF needs Linux.
func (p *Profiler) OffCPU() ([]OffCPUCount, error) { return nil, unsupported("reading off-CPU counts") }

// CheckOffCPU fails: BPF needs Linux.
func CheckOffCPU() error { return unsupported("recording off-CPU counts") }

// MeasureTimerProgramCost fails: BPF needs Linux.
func MeasureTimerProgramCost() (time.Duration, error) {
	return 0, unsupported("measuring the timer programming cost")
}
