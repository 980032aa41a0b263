//go:build linux

package bpf

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// BenchmarkSwitchFixSwitch measures what the switch fix's program
// (switch_fix on sched_switch, with per-thread events at 99 Hz and the
// timer-programming correction) costs per context switch of the target,
// without a server: one locked thread of this process sleeps b.N times for
// a microsecond, with this process the target. Reported:
//
//   - prog-ns/switch: the program's run time over the loop (every run on
//     the machine: the target's and the others', which return at once)
//     per switch of the target's threads, as /proc counts them;
//   - other-ns/run: what a run that returns at once costs, measured over
//     the same loop with a target that never runs (a sleeping child);
//   - target-ns/switch: prog-ns/switch less the other runs at that cost:
//     what the program spends on the target's own switches (the
//     switch-out with its checks, and a sample's stack copy when one is
//     taken there, and the switch-in).
//
// Needs root; skips otherwise. Run with -benchtime 20000x (make
// bench-overhead).
func BenchmarkSwitchFixSwitch(b *testing.B) {
	idle := benchStatsIdle(b)
	opts := func(pid int) Options {
		return Options{PID: pid, FrequencyHz: 99, PerThread: true, SwitchFix: true, TimerProgramCost: 5 * time.Microsecond}
	}
	other := fixLoop(b, opts(idle.Pid), b.N)
	otherNs := float64(other.runtime) / float64(other.runs)
	b.ResetTimer()
	r := fixLoop(b, opts(os.Getpid()), b.N)
	b.StopTimer()
	if r.procSwitches < uint64(b.N) {
		b.Fatalf("the process switched %d times in %d sleeps: /proc misses the loop's switches", r.procSwitches, b.N)
	}
	if r.runs < r.procSwitches {
		b.Fatalf("the program ran %d times over %d switches of the target: it did not see them all", r.runs, r.procSwitches)
	}
	per := float64(r.runtime) / float64(r.procSwitches)
	// Each switch of the target is two runs (out and in), or one when a
	// target thread follows another.
	others := max(0, float64(r.runs)-2*float64(r.procSwitches))
	own := (float64(r.runtime) - others*otherNs) / float64(r.procSwitches)
	b.ReportMetric(per, "prog-ns/switch")
	b.ReportMetric(otherNs, "other-ns/run")
	b.ReportMetric(own, "target-ns/switch")
	b.Logf("%d sleeps: %d switches of the process (/proc); %d runs of the program on the machine in %s; %.0f ns a run that returns at once",
		b.N, r.procSwitches, r.runs, r.runtime, otherNs)
}

// fixLoop loads a profiler with opts, starts it (its per-thread events
// open on the target's threads, this process's loop thread among them
// when the target is this process), sleeps n times for a microsecond on a
// locked thread and closes it. The switches counted are those of every
// thread of this process.
func fixLoop(b *testing.B, opts Options, n int) loopRun {
	b.Helper()
	ready, start := make(chan int), make(chan struct{})
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ready <- unix.Gettid()
		<-start
		// A raw system call: the Go runtime does not hand the thread's
		// P to another thread while it sleeps, so the loop's switches
		// are the thread's, not the runtime's.
		ts := unix.Timespec{Nsec: 1000}
		for range n {
			unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
		close(done)
	}()
	tid := <-ready
	p := benchLoad(b, opts)
	if err := p.Start(); err != nil {
		b.Fatalf("start: %v", err)
	}
	s0, _ := p.objs.SwitchFix.Stats()
	c0 := processSwitches()
	close(start)
	<-done
	c1 := processSwitches()
	s1, _ := p.objs.SwitchFix.Stats()
	if err := p.Close(); err != nil {
		b.Fatal(err)
	}
	return loopRun{tid: tid, procSwitches: c1 - c0, runtime: s1.Runtime - s0.Runtime, runs: s1.RunCount - s0.RunCount}
}

// processSwitches is the sum of threadSwitches over this process's
// threads.
func processSwitches() uint64 {
	dirs, _ := filepath.Glob("/proc/self/task/*")
	var n uint64
	for _, d := range dirs {
		if tid, err := strconv.Atoi(filepath.Base(d)); err == nil {
			n += threadSwitches(tid)
		}
	}
	return n
}
