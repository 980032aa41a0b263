package bpf

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxCPUs bounds the CPU numbers parseCPUList accepts (the kernel's
// NR_CPUS is at most 8192).
const maxCPUs = 1 << 16

// parseCPUList parses a kernel CPU list such as the contents of
// /sys/devices/system/cpu/online: comma-separated CPU numbers and ranges,
// "0-3,5\n". It returns the CPUs sorted, without duplicates.
func parseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("cpu list: empty")
	}
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := parseCPU(lo)
		if err != nil {
			return nil, fmt.Errorf("cpu list %q: %w", s, err)
		}
		last := first
		if isRange {
			if last, err = parseCPU(hi); err != nil {
				return nil, fmt.Errorf("cpu list %q: %w", s, err)
			}
			if last < first {
				return nil, fmt.Errorf("cpu list %q: range %s backwards", s, part)
			}
		}
		for cpu := first; cpu <= last; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

func parseCPU(s string) (int, error) {
	n, err := strconv.Atoi(s)
	switch {
	case err != nil || s == "" || s[0] == '+' || s[0] == '-':
		return 0, fmt.Errorf("cpu %q: not a number", s)
	case n >= maxCPUs:
		return 0, fmt.Errorf("cpu %d: more than %d", n, maxCPUs-1)
	}
	return n, nil
}
