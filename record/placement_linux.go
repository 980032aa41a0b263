//go:build linux

package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// allowedCPUs returns the CPUs this process may run on, sorted.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	return cpuSetList(&set), nil
}

func cpuSetList(set *unix.CPUSet) []int {
	var out []int
	for c := 0; c <= maxCPU && len(out) < set.Count(); c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}

func cpuSet(cpus []int) *unix.CPUSet {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return &set
}

// maxPinPasses bounds the passes of pinThreads over a process that keeps
// starting threads.
const maxPinPasses = 20

// pinThreads sets the affinity of every thread of pid to cpus
// (sched_setaffinity on each procRoot/PID/task/TID) and returns how many
// it set. A thread inherits the affinity of the thread that creates it,
// so once every live thread is pinned, every later one is: pinThreads
// lists the threads again until a pass finds none it has not pinned
// (a thread created during a pass by a thread not yet pinned shows in the
// next). Threads that exit meanwhile are skipped.
func pinThreads(procRoot string, pid int, cpus []int) (int, error) {
	set := cpuSet(cpus)
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "task")
	pinned := map[int]bool{}
	for range maxPinPasses {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			return len(pinned), err
		}
		found := 0
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || pinned[tid] {
				continue
			}
			found++
			if err := unix.SchedSetaffinity(tid, set); err != nil {
				if errors.Is(err, unix.ESRCH) {
					continue // exited
				}
				return len(pinned), fmt.Errorf("thread %d: sched_setaffinity: %w", tid, err)
			}
			pinned[tid] = true
		}
		if found == 0 {
			return len(pinned), nil
		}
	}
	return len(pinned), fmt.Errorf("pid %d kept starting threads through %d passes", pid, maxPinPasses)
}

// startOn calls start on an OS thread whose affinity is cpus for the
// call, so that a process start() forks runs on cpus from its first
// instruction, and its threads and children too (they inherit it). The
// thread's affinity is put back after the call; were that to fail, the
// thread would not be given back to the Go scheduler (the goroutine ends
// locked to it, and the runtime ends the thread).
func startOn(cpus []int, start func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		var old unix.CPUSet
		if err := unix.SchedGetaffinity(0, &old); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("sched_getaffinity: %w", err)
			return
		}
		if err := unix.SchedSetaffinity(0, cpuSet(cpus)); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("sched_setaffinity: %w", err)
			return
		}
		err := start()
		if unix.SchedSetaffinity(0, &old) == nil {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}
