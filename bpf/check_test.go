//go:build linux

package bpf

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// offCPUPrograms counts the programs named offcpu loaded on the machine
// (the kernel's list, not ours).
func offCPUPrograms(t testing.TB) int {
	t.Helper()
	n := 0
	for id := ebpf.ProgramID(0); ; {
		next, err := ebpf.ProgramGetNextID(id)
		if errors.Is(err, os.ErrNotExist) {
			return n
		}
		if err != nil {
			t.Fatalf("ProgramGetNextID(%d): %v", id, err)
		}
		id = next
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue // unloaded in between
		}
		if info, err := p.Info(); err == nil && info.Name == "offcpu" {
			n++
		}
		p.Close()
	}
}

// TestCheckOffCPU: as root on a kernel that can (Linux 5.18 with BTF),
// CheckOffCPU succeeds and leaves no program or descriptor behind; else
// its error wraps errors.ErrUnsupported or ErrPermission. Without root it
// wraps ErrPermission (the child runs as nobody).
func TestCheckOffCPU(t *testing.T) {
	if os.Geteuid() != 0 {
		err := CheckOffCPU()
		if !errors.Is(err, ErrPermission) {
			t.Fatalf("CheckOffCPU() as uid %d = %v; want an error wrapping ErrPermission", os.Geteuid(), err)
		}
		t.Logf("as uid %d: %v", os.Geteuid(), err)
		return
	}
	var uname unix.Utsname
	_ = unix.Uname(&uname)
	release := unix.ByteSliceToString(uname.Release[:])
	_, btfErr := os.Stat("/sys/kernel/btf/vmlinux")
	fds, before := openFDs(t), offCPUPrograms(t)
	err := CheckOffCPU()
	switch {
	case err != nil && (errors.Is(err, errors.ErrUnsupported) || errors.Is(err, ErrPermission)):
		t.Skipf("kernel %s (BTF: %v) cannot: %v", release, btfErr == nil, err)
	case err != nil:
		t.Fatalf("CheckOffCPU() = %v; want nil, or an error wrapping errors.ErrUnsupported or ErrPermission", err)
	}
	if btfErr != nil {
		t.Errorf("CheckOffCPU() = nil without the kernel's BTF (%v): the program needs it", btfErr)
	}
	// The kernel frees a closed program after an RCU grace period.
	after := offCPUPrograms(t)
	for deadline := time.Now().Add(3 * time.Second); after > before && time.Now().Before(deadline); after = offCPUPrograms(t) {
		time.Sleep(50 * time.Millisecond)
	}
	if after > before {
		t.Errorf("offcpu programs loaded: %d before CheckOffCPU, %d 3 s after; want it to unload its own", before, after)
	}
	if n := openFDs(t); n != fds {
		t.Errorf("open descriptors: %d before CheckOffCPU, %d after", fds, n)
	}
	t.Logf("kernel %s: the off-CPU program loads and attaches", release)
}

// TestCheckOffCPUWithoutPrivileges runs CheckOffCPU as user nobody: the
// error wraps ErrPermission and says what to do.
func TestCheckOffCPUWithoutPrivileges(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a child as user nobody")
	}
	cmd := nobodyCommand(t, "-test.run=^TestCheckOffCPU$", "-test.v")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestCheckOffCPU") {
		t.Fatalf("TestCheckOffCPU as nobody: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// BenchmarkOffCPUSwitch measures what the off-CPU program costs per
// context switch of the target, without a server: one thread of this
// process sleeps b.N times for a microsecond (b.N voluntary switches, as
// /proc counts them), with the program attached to sched_switch and the
// kernel's run-time statistics on. Reported:
//
//   - prog-ns/switch: the program's run time over the loop (every run on
//     the machine, the target's and the others', which return at once)
//     per switch of the target the program counted;
//   - other-ns/run: what a run that returns at once costs, measured over
//     the same loop with a target that never runs (a sleeping child);
//   - target-ns/switch: prog-ns/switch less the other runs at that cost:
//     what the program spends on the target's own switches (the
//     switch-out with its stacks and the switch-in).
//
// "user" walks user stacks only, "kernel" kernel stacks too (the lab's
// setting). Needs root; skips otherwise. Run with -benchtime 20000x.
func BenchmarkOffCPUSwitch(b *testing.B) {
	idle := benchStatsIdle(b)
	for _, kernel := range []bool{false, true} {
		name := "user"
		if kernel {
			name = "kernel"
		}
		b.Run(name, func(b *testing.B) {
			other := benchLoad(b, Options{PID: idle.Pid, OffCPU: true, Kernel: kernel, FrequencyHz: 1})
			o := sleepLoop(b, other, b.N)
			otherNs := float64(o.runtime) / float64(o.runs)
			target := benchLoad(b, Options{PID: os.Getpid(), OffCPU: true, Kernel: kernel, FrequencyHz: 1})
			b.ResetTimer()
			r := sleepLoop(b, target, b.N)
			b.StopTimer()
			counts, err := target.OffCPU()
			if err != nil {
				b.Fatal(err)
			}
			var all, thread uint64
			for _, c := range counts {
				all += c.Switches
				if c.TID == uint32(r.tid) {
					thread += c.Switches
				}
			}
			// The truth of the loop's switches is /proc's; the program
			// must have seen them.
			// (Ten switches of slack: those of attaching and of reading /proc
			// and the statistics, in one count and not the other.)
			if d := math.Abs(float64(thread) - float64(r.procSwitches)); d > 10 && d > 0.03*float64(r.procSwitches) {
				b.Fatalf("the program counted %d switches of the sleeping thread, /proc %d: more than 3%% apart", thread, r.procSwitches)
			}
			per := float64(r.runtime) / float64(all)
			// Each switch of the target is two runs (out and in), or one
			// when a target thread follows another.
			others := math.Max(0, float64(r.runs)-2*float64(all))
			own := (float64(r.runtime) - others*otherNs) / float64(all)
			b.ReportMetric(per, "prog-ns/switch")
			b.ReportMetric(otherNs, "other-ns/run")
			b.ReportMetric(own, "target-ns/switch")
			b.Logf("%s, %d sleeps: %d switches of the thread (/proc %d), %d of the process; %d runs of the program on the machine in %s; %.0f ns a run that returns at once",
				name, b.N, thread, r.procSwitches, all, r.runs, r.runtime, otherNs)
		})
	}
}

// benchStatsIdle skips b without root or the kernel's BPF run-time
// statistics, turns them on for b, and starts a process that never runs
// (sleep 3600, killed at b's end): a target for measuring what the
// programs' runs that return at once cost.
func benchStatsIdle(b *testing.B) *os.Process {
	b.Helper()
	if os.Geteuid() != 0 {
		b.Skip("needs root (or CAP_BPF and CAP_PERFMON) to load BPF programs")
	}
	stats, err := EnableStats()
	if err != nil {
		b.Skipf("BPF run-time statistics: %v", err)
	}
	b.Cleanup(func() { stats.Close() })
	idle := exec.Command("sleep", "3600")
	if err := idle.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = idle.Process.Kill(); _ = idle.Wait() })
	return idle.Process
}

func benchLoad(b *testing.B, opts Options) *Profiler {
	b.Helper()
	p, err := Load(opts)
	switch {
	case errors.Is(err, errors.ErrUnsupported), errors.Is(err, ErrPermission):
		b.Skipf("cannot load the off-CPU program: %v", err)
	case err != nil:
		b.Fatalf("Load(%+v): %v", opts, err)
	}
	b.Cleanup(func() { p.Close() })
	return p
}

// loopRun is what one sleepLoop saw: the sleeping thread, its switches
// per /proc, and the program's run time and runs over the loop.
type loopRun struct {
	tid          int
	procSwitches uint64
	runtime      time.Duration
	runs         uint64
}

// sleepLoop attaches p's off-CPU program to sched_switch, sleeps n times
// for a microsecond on a thread of its own and detaches it.
func sleepLoop(b *testing.B, p *Profiler, n int) loopRun {
	b.Helper()
	done := make(chan loopRun)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r := loopRun{tid: unix.Gettid()}
		sw := func() uint64 { return threadSwitches(r.tid) }
		l, err := link.AttachTracing(link.TracingOptions{Program: p.objs.Offcpu})
		if err != nil {
			errc <- err
			return
		}
		s0, _ := p.objs.Offcpu.Stats()
		c0 := sw()
		// A raw system call: the Go runtime does not hand the thread's
		// P to another thread while it sleeps, so the loop's switches
		// are the thread's, not the runtime's.
		ts := unix.Timespec{Nsec: 1000}
		for range n {
			unix.RawSyscall(unix.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
		c1 := sw()
		s1, _ := p.objs.Offcpu.Stats()
		if err := l.Close(); err != nil {
			errc <- err
			return
		}
		r.procSwitches = c1 - c0
		r.runtime, r.runs = s1.Runtime-s0.Runtime, s1.RunCount-s0.RunCount
		done <- r
	}()
	select {
	case r := <-done:
		return r
	case err := <-errc:
		b.Fatal(err)
	}
	return loopRun{}
}

// threadSwitches is the thread's voluntary_ctxt_switches plus
// nonvoluntary_ctxt_switches in /proc (0 when unreadable).
func threadSwitches(tid int) uint64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/status", tid))
	var n uint64
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches" {
			x, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			n += x
		}
	}
	return n
}
