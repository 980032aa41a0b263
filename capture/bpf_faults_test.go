//go:build linux

package capture

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flamediff/flamediff/fold"
)

// faultProg is a test program: it spins in SPIN for argv[1] seconds (0:
// forever; -1: until SIGUSR1), then execs argv[2..] if given, else exits.
// ITERS makes the
// code of two builds differ: GNU ld's build id does not cover symbol
// names, and the symboliser shares symbols between files of one build id.
const faultProg = `
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static volatile sig_atomic_t go;
static void on_usr1(int sig) { (void)sig; go = 1; }
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec / 1e9; }
__attribute__((noinline)) void SPIN(double secs) {
	double end = now() + secs;
	volatile unsigned long x = 0;
	while (secs == 0 || (secs < 0 && !go) || (secs > 0 && now() < end)) for (int i = 0; i < ITERS; i++) x += i;
}
int main(int argc, char **argv) {
	signal(SIGUSR1, on_usr1);
	SPIN(argc > 1 ? atof(argv[1]) : 0);
	if (argc > 2) execv(argv[2], argv + 2);
	return 0;
}
`

// buildFaultProg compiles faultProg with its spinning function named spin
// into dir/name.
func buildFaultProg(t *testing.T, dir, name, spin string) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	src := filepath.Join(dir, name+".c")
	code := strings.NewReplacer("SPIN", spin, "ITERS", strconv.Itoa(100000+len(spin))).Replace(faultProg)
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, name)
	if out, err := exec.Command("gcc", "-O1", "-fno-omit-frame-pointer", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

func startProg(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return cmd
}

// sampleBPF samples pid with the BPF sampler for d.
func sampleBPF(t *testing.T, pid int, d time.Duration) *Result {
	t.Helper()
	return sampleBPFWhile(t, pid, func() { time.Sleep(d) })
}

// sampleBPFWhile samples pid with the BPF sampler while during runs.
func sampleBPFWhile(t *testing.T, pid int, during func()) *Result {
	t.Helper()
	s := NewBPF()
	ctx := context.Background()
	if err := s.Start(ctx, pid, Options{FrequencyHz: 499}); err != nil {
		t.Fatal(err)
	}
	during()
	res, err := s.Stop(ctx)
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("samples %d, warnings %q", res.Samples, res.Warnings)
	return res
}

// runCPU waits until the thread pid has run for d more on the CPU
// (/proc/PID/schedstat, which an exec keeps counting), so that a test
// gets the same number of samples whatever the load.
func runCPU(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	start, ok := schedRun(pid)
	if !ok {
		t.Fatalf("process %d: no /proc/%d/schedstat", pid, pid)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		now, ok := schedRun(pid)
		if !ok {
			t.Fatalf("process %d ended before it ran %v on the CPU", pid, d)
		}
		if now-start >= d {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d ran %v on the CPU in a minute, want %v", pid, now-start, d)
		}
	}
}

// schedRun is the time the thread pid has run on the CPU.
func schedRun(pid int) (time.Duration, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/schedstat", pid))
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, false
	}
	ns, err := strconv.ParseInt(f[0], 10, 64)
	return time.Duration(ns), err == nil
}

// valueWith sums the samples of stacks that have a frame named fn.
func valueWith(p *fold.Profile, fn string) int64 {
	var n int64
	for _, s := range p.Stacks {
		for _, f := range s.Frames[1:] {
			if f == fn {
				n += s.Value
				break
			}
		}
	}
	return n
}

func hasWarning(res *Result, sub string) bool {
	for _, w := range res.Warnings {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

// A process that exits mid-window: its samples are kept and resolve
// against the files opened at the start.
func TestBPFTargetExits(t *testing.T) {
	requireBPF(t)
	bin := buildFaultProg(t, t.TempDir(), "exits", "spin_then_exit")
	cmd := startProg(t, bin, "-1")
	pid := cmd.Process.Pid
	res := sampleBPFWhile(t, pid, func() {
		// 0.6 s of CPU at 499 Hz before the exit: ~300 samples.
		runCPU(t, pid, 600*time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if _, ok := schedRun(pid); !ok {
				break
			}
		}
	})
	// Nearly all in the spin.
	if n := valueWith(res.Profile, "spin_then_exit"); n < 150 || n < res.Profile.Total()*9/10 {
		t.Errorf("samples in spin_then_exit = %d of %d, want nearly all, and the ~300 taken before the exit (stacks %v)", n, res.Profile.Total(), res.Profile.Stacks)
	}
	if !hasWarning(res, "exited during sampling") {
		t.Errorf("warnings %q: want one saying the process exited", res.Warnings)
	}
}

// A binary deleted while it runs: frames still resolve (through the
// mapped file) and the capture says so.
func TestBPFDeletedBinary(t *testing.T) {
	requireBPF(t)
	bin := buildFaultProg(t, t.TempDir(), "deleted", "spin_deleted")
	cmd := startProg(t, bin)
	time.Sleep(100 * time.Millisecond) // exec'd
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	res := sampleBPF(t, cmd.Process.Pid, time.Second)
	if n := valueWith(res.Profile, "spin_deleted"); n < 100 || n < res.Profile.Total()*9/10 {
		t.Errorf("samples in spin_deleted = %d of %d, want nearly all of ~500 (stacks %v)", n, res.Profile.Total(), res.Profile.Stacks)
	}
	if !hasWarning(res, bin+" was deleted or replaced on disk") {
		t.Errorf("warnings %q: want one naming the deleted binary", res.Warnings)
	}
}

// A process that execs mid-window: the samples of both programs are kept
// and named, and the capture says that it exec'd.
func TestBPFTargetExecs(t *testing.T) {
	requireBPF(t)
	dir := t.TempDir()
	first := buildFaultProg(t, dir, "first", "spin_before_exec")
	second := buildFaultProg(t, dir, "second", "spin_after_exec")
	cmd := startProg(t, first, "-1", second, "0")
	pid := cmd.Process.Pid
	res := sampleBPFWhile(t, pid, func() {
		// 0.6 s of CPU at 499 Hz on each side of the exec: ~300 samples
		// each.
		runCPU(t, pid, 600*time.Millisecond)
		if err := cmd.Process.Signal(syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); exe == second {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("process %d did not exec %s", pid, second)
			}
		}
		runCPU(t, pid, 600*time.Millisecond)
	})
	before, after := valueWith(res.Profile, "spin_before_exec"), valueWith(res.Profile, "spin_after_exec")
	if before < 150 || after < 150 || before+after < res.Profile.Total()*9/10 {
		t.Errorf("samples before the exec %d, after %d, of %d: want hundreds of each, nearly all (stacks %v)", before, after, res.Profile.Total(), res.Profile.Stacks)
	}
	if !hasWarning(res, "exec'd "+second) {
		t.Errorf("warnings %q: want one saying the process exec'd %s", res.Warnings, second)
	}
}
