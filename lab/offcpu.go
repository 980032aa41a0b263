package lab

import (
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/bpf"
)

// offCPUFix is what to do when off_cpu: on cannot be.
const offCPUFix = "run as root (or with CAP_BPF and CAP_PERFMON) on Linux 5.18 or later with the kernel's BTF (/sys/kernel/btf/vmlinux), or write off_cpu: auto or off"

// resolveOffCPU decides whether the profiled windows record off-CPU
// profiles (capture.off_cpu): off never; on and auto when the sampler may
// be the BPF one and check (the off-CPU program loaded and attached for a
// moment, bpf.CheckOffCPU) passes. When it fails, auto goes without (and
// says why in s.offCPUNote, logged once the servers are up); on is an
// error at the config's off_cpu line.
func (s *Session) resolveOffCPU() error {
	c := s.cfg.Capture
	switch {
	case c.OffCPU == "off":
		return nil
	case c.Sampler == "perf" || strings.HasPrefix(c.CallGraph, "dwarf"):
		// ParseConfig refuses on with these.
		s.offCPUNote = "off-CPU profiles: off (auto: the perf sampler records none)"
		return nil
	}
	check := s.opts.CheckOffCPU
	if check == nil {
		check = bpf.CheckOffCPU
	}
	if err := check(); err != nil {
		if c.OffCPU == "on" {
			return fmt.Errorf("%s:%d:%d: capture.off_cpu is on, but off-CPU profiles cannot be recorded here: %w (fix: %s)",
				s.cfg.File, c.OffCPULine, c.OffCPUColumn, err, offCPUFix)
		}
		s.offCPUNote = fmt.Sprintf("off-CPU profiles: off (auto: %v)", err)
		return nil
	}
	s.offCPU = true
	s.offCPUNote = fmt.Sprintf("off-CPU profiles: on (%s: the kernel allows them): offcpu.folded and offcpu-switches.folded in each profiled window", c.OffCPU)
	return nil
}
