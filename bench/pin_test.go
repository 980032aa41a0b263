package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// placement is where the benchmark runs the server and sysbench:
// serverCPU and clientCPU are CPU numbers, -1 when not pinned.
type placement struct {
	name                 string
	serverCPU, clientCPU int
}

// parsePin parses FLAMEDIFF_BENCH_PIN: same (the default), apart or none.
func parsePin(s string) (placement, error) {
	last := runtime.NumCPU() - 1
	switch s {
	case "", "same":
		return placement{"same", last, last}, nil
	case "apart":
		if last == 0 {
			return placement{}, fmt.Errorf("FLAMEDIFF_BENCH_PIN=apart needs two CPUs, this machine has one")
		}
		return placement{"apart", last, 0}, nil
	case "none":
		return placement{"none", -1, -1}, nil
	}
	return placement{}, fmt.Errorf("FLAMEDIFF_BENCH_PIN=%q: want same, apart or none", s)
}

func (p placement) String() string {
	switch p.name {
	case "none":
		return "server and sysbench unpinned"
	case "same":
		return fmt.Sprintf("server and sysbench pinned to CPU %d", p.serverCPU)
	}
	return fmt.Sprintf("server pinned to CPU %d, sysbench to CPU %d", p.serverCPU, p.clientCPU)
}

// server pins every thread of pid; the threads it starts later inherit
// the mask of the thread that starts them.
func (p placement) server(pid int) error {
	if p.serverCPU < 0 {
		return nil
	}
	var set unix.CPUSet
	set.Set(p.serverCPU)
	return pinThreads(strconv.Itoa(pid), &set)
}

// harness pins every thread of this process (and the children it starts
// later) to the CPUs that neither the server nor sysbench is pinned to;
// with placement apart on two CPUs there is none, and it does nothing.
func (p placement) harness() error {
	if p.serverCPU < 0 {
		return nil
	}
	var set unix.CPUSet
	for cpu := 0; cpu < runtime.NumCPU(); cpu++ {
		if cpu != p.serverCPU && cpu != p.clientCPU {
			set.Set(cpu)
		}
	}
	if set.Count() == 0 {
		return nil
	}
	return pinThreads("self", &set)
}

// pinThreads sets the affinity of every thread of /proc/PROC (a process
// id, or self) to set; the threads they start later inherit it.
func pinThreads(proc string, set *unix.CPUSet) error {
	tids, err := threadIDs(proc)
	if err != nil {
		return err
	}
	for _, tid := range tids {
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("thread %d: %w", tid, err)
		}
	}
	return nil
}

// client returns the sysbench command line run under taskset, so that
// sysbench and its threads start on the client CPU.
func (p placement) client(args []string) []string {
	if p.clientCPU < 0 {
		return args
	}
	return append([]string{"taskset", "-c", strconv.Itoa(p.clientCPU)}, args...)
}

// threadIDs returns the thread ids in /proc/PROC/task (PROC a process id,
// or self).
func threadIDs(proc string) ([]int, error) {
	tasks, err := os.ReadDir(filepath.Join("/proc", proc, "task"))
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, t := range tasks {
		if tid, err := strconv.Atoi(t.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}
