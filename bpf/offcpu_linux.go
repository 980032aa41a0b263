//go:build linux

package bpf

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// monotonicNs is CLOCK_MONOTONIC in nanoseconds, the clock of
// bpf_ktime_get_ns.
func monotonicNs() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return uint64(ts.Nano())
}

// OffCPUEnd is the CLOCK_MONOTONIC time (nanoseconds, the clock of
// bpf_ktime_get_ns) at which Stop detached the off-CPU program: OffCPU
// counts the threads still off the CPU up to it. It is 0 before Stop or
// without Options.OffCPU.
func (p *Profiler) OffCPUEnd() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.offStop
}

// OffCPU reads the off-CPU counts (Options.OffCPU), sorted by PID, TID,
// comm, stacks and kind, with the threads that were still off the CPU at
// Stop counted up to Stop. Call it after Stop; it returns nil without
// Options.OffCPU.
func (p *Profiler) OffCPU() ([]OffCPUCount, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objs == nil {
		return nil, fmt.Errorf("bpf: off-CPU counts: %w", ErrClosed)
	}
	if p.objs.Offcpu == nil {
		return nil, nil
	}
	sums := map[profileOffcpuKey]profileOffcpuValue{}
	var (
		k profileOffcpuKey
		v profileOffcpuValue
	)
	it := p.objs.OffcpuCounts.Iterate()
	for it.Next(&k, &v) {
		sums[k] = v
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("bpf: off-CPU counts: %w", err)
	}
	if p.offStop != 0 {
		var (
			tid uint32
			st  profileOffcpuStart
		)
		it := p.objs.OffcpuStarts.Iterate()
		for it.Next(&tid, &st) {
			if st.Ts > p.offStop || p.offStop-st.Ts < uint64(p.opts.OffCPUMin) {
				continue
			}
			s := sums[st.Key]
			s.Ns += p.offStop - st.Ts
			s.Switches++
			sums[st.Key] = s
		}
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("bpf: off-CPU counts: threads off the CPU at the end: %w", err)
		}
	}
	stack := p.stackReader("off-CPU counts")
	out := make([]OffCPUCount, 0, len(sums))
	for k, v := range sums {
		c := OffCPUCount{PID: k.Tgid, TID: k.Tid, Comm: comm(k.Comm), Voluntary: k.Voluntary != 0, Nanoseconds: v.Ns, Switches: v.Switches}
		var err error
		if c.User, err = stack(k.UserHash); err != nil {
			return nil, err
		}
		if c.Kernel, err = stack(k.KernelHash); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b OffCPUCount) int {
		return cmp.Or(
			cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.TID, b.TID),
			strings.Compare(a.Comm, b.Comm),
			slices.Compare(a.User, b.User),
			slices.Compare(a.Kernel, b.Kernel),
			cmpBool(a.Voluntary, b.Voluntary),
		)
	})
	return out, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
