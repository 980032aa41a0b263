//go:build !linux

package capture

import (
	"context"
	"errors"
	"fmt"
)

func unsupported(what string) error {
	return fmt.Errorf("capture: %s needs Linux: %w", what, errors.ErrUnsupported)
}

// Perf is the perf record sampler; on this system it only returns errors.
type Perf struct{ Path string }

// NewPerf returns a sampler whose methods fail with errors.ErrUnsupported.
func NewPerf() Sampler { return &Perf{} }

// Name returns "perf".
func (p *Perf) Name() string { return "perf" }

// Start fails: perf runs on Linux only.
func (p *Perf) Start(context.Context, int, Options) error { return unsupported("perf") }

// Stop fails: perf runs on Linux only.
func (p *Perf) Stop(context.Context) (*Result, error) { return nil, unsupported("perf") }

// SamplesSoFar returns 0.
func (p *Perf) SamplesSoFar() int64 { return 0 }

// CheckPerf fails: perf runs on Linux only.
func CheckPerf() error { return unsupported("perf") }

// FindProcesses fails: it reads a Linux proc tree.
func FindProcesses(procRoot string, names ...string) ([]Process, error) {
	return nil, unsupported("finding processes")
}

// FindServer fails: it reads a Linux proc tree.
func FindServer(procRoot string) (Process, error) {
	return Process{}, unsupported("finding the server")
}

// ReadPIDFile fails on this system.
func ReadPIDFile(path string) (int, error) { return 0, unsupported("reading a pid file") }

// DefaultEvent is the software event every Linux machine has.
const DefaultEvent = "cpu-clock"

// DetectEvent always answers cpu-clock off Linux.
func DetectEvent(context.Context) (event, why string) {
	return DefaultEvent, "not Linux"
}

// BPF is the BPF sampler; on this system it only returns errors.
type BPF struct{ ProcRoot string }

// NewBPF returns a sampler whose methods fail with errors.ErrUnsupported.
func NewBPF() Sampler { return &BPF{} }

// Name returns "bpf".
func (b *BPF) Name() string { return "bpf" }

// Start fails: BPF sampling runs on Linux only.
func (b *BPF) Start(context.Context, int, Options) error { return unsupported("the bpf sampler") }

// Stop fails: BPF sampling runs on Linux only.
func (b *BPF) Stop(context.Context) (*Result, error) { return nil, unsupported("the bpf sampler") }

// SamplesSoFar returns 0.
func (b *BPF) SamplesSoFar() int64 { return 0 }

// CheckBPF fails: BPF sampling runs on Linux only.
func CheckBPF() error { return unsupported("the bpf sampler") }
