//go:build linux

package bpf

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/flamediff/flamediff/workload/procstat"
)

// childEnv makes the test binary a workload instead of running tests (see
// TestMain).
const childEnv = "FLAMEDIFF_BPF_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "varied":
		variedStacks()
		return
	case "load":
		// Run without privileges by TestLoadWithoutPrivileges.
		p, err := Load(Options{PID: 1, FrequencyHz: 1, MaxStacks: 16})
		if err == nil {
			p.Close()
			fmt.Println("loaded")
			os.Exit(0)
		}
		fmt.Printf("permission=%v\n%v\n", errors.Is(err, ErrPermission), err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

var sink int

// variedStacks burns CPU forever in 4 threads at many call depths, so
// that the profile has many distinct {thread, stack} keys.
func variedStacks() {
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			runtime.LockOSThread()
			for d := i; ; d = (d + 1) % 64 {
				sink += recurse(d)
			}
		})
	}
	wg.Wait()
}

//go:noinline
func recurse(depth int) int {
	if depth == 0 {
		n := 0
		for i := range 100_000 {
			n += i * i
		}
		return n
	}
	return recurse(depth-1) + 1
}

// load loads a profiler or skips the test, saying why.
func load(t *testing.T, opts Options) *Profiler {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root (or CAP_BPF and CAP_PERFMON) to load BPF programs")
	}
	p, err := Load(opts)
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		t.Skipf("kernel lacks a feature: %v", err)
	case errors.Is(err, ErrPermission):
		t.Skipf("not permitted despite root (container or lockdown?): %v", err)
	case err != nil:
		t.Fatalf("Load(%+v): %v", opts, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// start starts a child process and kills it at the end of the test.
func start(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", cmd.Args, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
}

// sample starts p, waits d, stops p and returns its counts and health.
func sample(t *testing.T, p *Profiler, d time.Duration) ([]Count, Health) {
	t.Helper()
	if err := p.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	time.Sleep(d)
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	counts, err := p.Counts()
	if err != nil {
		t.Fatalf("Counts: %v", err)
	}
	h, err := p.Health()
	if err != nil {
		t.Fatalf("Health: %v", err)
	}
	return counts, h
}

func openFDs(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(fds)
}

func TestProfileBusyLoop(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (or CAP_BPF and CAP_PERFMON) to load BPF programs")
	}
	stats, err := EnableStats()
	if err != nil {
		t.Fatalf("EnableStats: %v", err)
	}
	defer stats.Close()

	cmd := exec.Command("sh", "-c", "while :; do :; done")
	start(t, cmd)
	pid := cmd.Process.Pid

	fdsBefore := openFDs(t)
	p := load(t, Options{PID: pid, FrequencyHz: 499})
	before, err := procstat.Read("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	counts, h := sample(t, p, 2*time.Second)
	after, err := procstat.Read("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	cpu := after.CPUSeconds() - before.CPUSeconds()

	var sum uint64
	for _, c := range counts {
		sum += c.Samples
		if c.PID != uint32(pid) || c.Comm != "sh" || len(c.User) == 0 || len(c.Kernel) != 0 {
			t.Errorf("count %+v: want PID %d, comm sh, a user stack and no kernel stack", c, pid)
		}
	}
	t.Logf("%d samples in %d counts; health %+v", sum, len(counts), h)
	// The loop's CPU time (not wall time: a loaded machine shares the CPU)
	// at 499 Hz, within 15% and the /proc tick granularity.
	if want := 499 * cpu; float64(sum) < 0.85*want-10 || float64(sum) > 1.15*want+10 || sum < 50 {
		t.Errorf("%d samples of a busy loop that used %.2f CPU-s at 499 Hz, want about %.0f", sum, cpu, want)
	}
	if h.Samples != sum+h.MapFull {
		t.Errorf("Health.Samples = %d, want sum of counts %d + MapFull %d", h.Samples, sum, h.MapFull)
	}
	if h.MapFull != 0 || h.Collisions != 0 {
		t.Errorf("health %+v: want no drops or collisions", h)
	}

	// Stopped: nothing moves.
	time.Sleep(100 * time.Millisecond)
	if h2, err := p.Health(); err != nil || h2.Samples != h.Samples {
		t.Errorf("Health after Stop: samples %d (%v), want %d", h2.Samples, err, h.Samples)
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}

	rt, runs, ok := p.RunTime()
	t.Logf("RunTime: %v over %d runs (%v per run), %v", rt, runs, rt/time.Duration(max(runs, 1)), ok)
	if !ok || runs < h.Samples {
		t.Errorf("RunTime() = %v, %d, %v: want ok and at least %d runs", rt, runs, ok, h.Samples)
	}

	for i := range 2 {
		if err := p.Close(); err != nil {
			t.Errorf("Close #%d: %v", i+1, err)
		}
	}
	if _, err := p.Counts(); !errors.Is(err, ErrClosed) {
		t.Errorf("Counts after Close: %v, want ErrClosed", err)
	}
	if err := p.Start(); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
	if _, _, ok := p.RunTime(); ok {
		t.Error("RunTime after Close: ok, want not")
	}
	if fdsAfter := openFDs(t); fdsAfter != fdsBefore {
		t.Errorf("%d open fds after Close, %d before Load: leaked", fdsAfter, fdsBefore)
	}
}

func TestProfileKernelStacks(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("prealloc=%v", prealloc), func(t *testing.T) {
			// Opening /dev/null in a loop spends time in the kernel.
			cmd := exec.Command("sh", "-c", "while :; do echo >/dev/null; done")
			start(t, cmd)
			p := load(t, Options{PID: cmd.Process.Pid, FrequencyHz: 499, Kernel: true, PreallocStacks: prealloc})
			counts, h := sample(t, p, time.Second)

			var sum, withKernel uint64
			for _, c := range counts {
				sum += c.Samples
				if len(c.Kernel) > 0 {
					withKernel += c.Samples
				}
			}
			t.Logf("%d samples, %d with a kernel stack, %d counts; health %+v", sum, withKernel, len(counts), h)
			if withKernel == 0 {
				t.Error("no kernel stacks")
			}
			if h.Samples != sum+h.MapFull {
				t.Errorf("Health.Samples = %d, want sum of counts %d + MapFull %d", h.Samples, sum, h.MapFull)
			}
			if h.MapFull != h.StackNoMem || (prealloc && h.StackNoMem != 0) {
				t.Errorf("health %+v: want no drops but StackNoMem, and none of those preallocated", h)
			}
		})
	}
}

func TestProfileMapFull(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"=varied")
	start(t, cmd)
	p := load(t, Options{PID: cmd.Process.Pid, FrequencyHz: 499, MaxStacks: 4})
	counts, h := sample(t, p, time.Second)

	var sum uint64
	for _, c := range counts {
		sum += c.Samples
	}
	t.Logf("%d samples in %d counts; health %+v", sum, len(counts), h)
	if len(counts) > 4 {
		t.Errorf("%d counts in a map of 4", len(counts))
	}
	if h.MapFull == 0 {
		t.Errorf("health %+v: want MapFull > 0", h)
	}
	if h.Samples != sum+h.MapFull {
		t.Errorf("Health.Samples = %d, want sum of counts %d + MapFull %d", h.Samples, sum, h.MapFull)
	}
}

func TestProfileAllProcesses(t *testing.T) {
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	start(t, cmd)
	p := load(t, Options{FrequencyHz: 99})
	counts, h := sample(t, p, 500*time.Millisecond)
	seen := false
	for _, c := range counts {
		seen = seen || c.PID == uint32(cmd.Process.Pid)
		if c.PID == 0 && c.TID == 0 {
			t.Errorf("idle task counted: %+v", c)
		}
	}
	if !seen {
		t.Errorf("busy child %d not among %d counts", cmd.Process.Pid, len(counts))
	}
	t.Logf("%d counts; health %+v", len(counts), h)
}

func TestLoadOptions(t *testing.T) {
	for _, opts := range []Options{{PID: -1}, {FrequencyHz: -1}, {MaxStacks: -1}, {PerThread: true}} {
		if p, err := Load(opts); err == nil {
			p.Close()
			t.Errorf("Load(%+v) = nil error, want one", opts)
		}
	}
}

// TestVerifierStats logs the verifier's statistics for the program.
func TestVerifierStats(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (or CAP_BPF and CAP_PERFMON) to load BPF programs")
	}
	for _, opts := range []Options{
		{MaxStacks: 16},
		{MaxStacks: 16, Kernel: true},
		{MaxStacks: 16, StackCopy: StackCopyAuto, Kernel: true},
		{MaxStacks: 16, StackCopy: StackCopyAlways},
	} {
		if err := opts.fill(); err != nil {
			t.Fatal(err)
		}
		spec, err := loadProfile()
		if err != nil {
			t.Fatal(err)
		}
		objs, err := loadObjects(spec, opts,
			&ebpf.CollectionOptions{Programs: ebpf.ProgramOptions{LogLevel: ebpf.LogLevelStats}})
		if errors.Is(err, errors.ErrUnsupported) {
			t.Skipf("kernel lacks a feature: %v", err)
		}
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		var insns string
		if info, err := objs.Profile.Info(); err == nil {
			if xl, err := info.Instructions(); err == nil {
				insns = fmt.Sprintf("%d instructions after loading", len(xl))
			}
		}
		t.Logf("kernel=%v stack copy %s: %d instructions in the object, %s; verifier: %s", opts.Kernel, opts.StackCopy,
			len(spec.Programs[profileProgProfile].Instructions), insns, strings.TrimSpace(objs.Profile.VerifierLog))
		objs.Close()
	}
}

// nobodyCommand returns a command that runs a copy of this test binary
// with args as user nobody (no CAP_BPF, no CAP_PERFMON): the go build
// directory is private, so the copy goes to a directory nobody can read.
func nobodyCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "flamediff-bpf-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "bpf.test")
	if err := os.WriteFile(exe, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}

// TestLoadWithoutPrivileges loads the program as user nobody (no
// CAP_BPF, no CAP_PERFMON): the error wraps ErrPermission and says what to
// do.
func TestLoadWithoutPrivileges(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a child as user nobody")
	}
	cmd := nobodyCommand(t, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=load")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("child as nobody: %v, output %q; want exit 3 (Load failed)", err, out)
	}
	t.Logf("as nobody: %s", out)
	if !strings.HasPrefix(string(out), "permission=true") || !strings.Contains(string(out), "CAP_BPF and CAP_PERFMON") {
		t.Errorf("Load as nobody said %q: want an error wrapping ErrPermission that names CAP_BPF and CAP_PERFMON", out)
	}
}
