//go:build linux

package bpf

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf/link"
)

// CheckOffCPU says whether this process may record off-CPU counts
// (Options.OffCPU) on this kernel, by doing it briefly: it loads the
// sampler with the off-CPU program (for PID 1, without kernel frames),
// attaches the program to sched_switch and detaches it at once, without
// opening any perf event. It returns nil when all of that worked; else an
// error saying which step failed and why, wrapping ErrPermission or
// errors.ErrUnsupported where they apply (as Load's do). It takes as long
// as loading the program does (a fraction of a second; more on a loaded
// machine).
func CheckOffCPU() error {
	p, err := Load(Options{PID: 1, FrequencyHz: 1, MaxStacks: 16, OffCPU: true})
	if err != nil {
		return fmt.Errorf("bpf: off-CPU check: %w", err)
	}
	l, err := link.AttachTracing(link.TracingOptions{Program: p.objs.Offcpu})
	if err != nil {
		err = classify("bpf: off-CPU check: attach the off-CPU program to sched_switch", err)
		return errors.Join(err, p.Close())
	}
	return errors.Join(l.Close(), p.Close())
}
