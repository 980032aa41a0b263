//go:build linux

package capture

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flamediff/flamediff/fold"
)

// The program of TestStackCopyWholeStacks, after capture/unwind's fixture:
// main (frame pointers) → a (its own object file, built without frame
// pointers) → b (a shared library built without frame pointers, which
// zeroes rbp before calling back, as glibc 2.36's __send leaves rbp
// holding a scratch value) → leaf (frame pointer, a callback), which says
// "ready" and spins. The true stack is the source's: main, a, b, leaf,
// under glibc's start code.
const (
	copyLib = `
volatile long nofp_sink;
__attribute__((noinline)) long b(long (*cb)(long), long n) {
	volatile char buf[64];
	for (int i = 0; i < 64; i++) buf[i] = (char)(n + i);
	__asm__ volatile("xor %%ebp, %%ebp" ::: "rbp");
	long r = cb(n + buf[3]);
	nofp_sink += r;
	return r + 1;
}
`
	copyA = `
long b(long (*cb)(long), long n);
long leaf(long);
__attribute__((noinline)) long a(long n) {
	volatile long x[4] = {n, n + 1, n + 2, n + 3};
	long r = b(leaf, x[2]);
	return r + x[1];
}
`
	copyMain = `
#include <unistd.h>
long a(long);
volatile long sink;
__attribute__((noinline)) long leaf(long n) {
	if (write(1, "ready\n", 6) != 6) _exit(1);
	for (;;) sink += n;
	return n;
}
int main(int argc, char **argv) { return (int)a(argc); }
`
	// The program of TestStackCopySyscall: main → pump (frame pointer) →
	// glibc's write on a pipe that a child drains, in a loop: its CPU is
	// in the kernel under glibc's wrapper, which keeps no frame pointer,
	// so a frame-pointer walk skips pump.
	copyPump = `
#include <stdlib.h>
#include <unistd.h>
static char buf[1 << 16];
volatile int stop;
__attribute__((noinline)) int pump(int fd) {
	while (!stop) if (write(fd, buf, sizeof buf) < 0) return 1;
	return 0;
}
int main(void) {
	int p[2];
	if (pipe(p) != 0) return 1;
	if (fork() == 0) {
		close(p[1]);
		for (;;) if (read(p[0], buf, sizeof buf) <= 0) _exit(0);
	}
	close(p[0]);
	if (write(1, "ready\n", 6) != 6) return 1;
	int r = pump(p[1]);
	return r + 2;
}
`
)

// gccRun builds with gcc, in dir, each command's arguments (the output
// file and sources relative to dir), or skips the test without gcc.
func gccRun(t *testing.T, dir string, cmds ...[]string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed: the test builds its program")
	}
	for _, args := range cmds {
		cmd := exec.Command("gcc", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// writeSources writes name → text files into dir.
func writeSources(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// startReady runs bin until it printed "ready", and kills it (and its
// process group) at the end of the test.
func startReady(t *testing.T, bin string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("%s: read %q, %v; want ready", bin, line, err)
	}
	return cmd
}

// sampleFor samples pid with s for d.
func sampleFor(t *testing.T, s Sampler, pid int, opts Options, d time.Duration) *Result {
	t.Helper()
	ctx := context.Background()
	if err := s.Start(ctx, pid, opts); err != nil {
		t.Fatalf("%s: Start: %v", s.Name(), err)
	}
	time.Sleep(d)
	res, err := s.Stop(ctx)
	if err != nil {
		t.Fatalf("%s: Stop: %v", s.Name(), err)
	}
	return res
}

// isThreadRoot says whether name is one of ThreadRootSymbols.
func isThreadRoot(name string) bool { return slices.Contains(ThreadRootSymbols, name) }

// modalStack returns the stack (without the thread name) that holds most
// of the samples among those that keep, and its samples.
func modalStack(p *fold.Profile, keep func([]string) bool) ([]string, int64) {
	by := map[string]int64{}
	frames := map[string][]string{}
	for _, s := range p.Stacks {
		if !keep(s.Frames[1:]) {
			continue
		}
		k := strings.Join(s.Frames[1:], ";")
		by[k] += s.Value
		frames[k] = s.Frames[1:]
	}
	var best string
	for k, n := range by {
		if n > by[best] || n == by[best] && k < best {
			best = k
		}
	}
	return frames[best], by[best]
}

// share returns the samples of the stacks that keep, those of them whose
// frames (without the thread name) are want, and the stacks that differ.
func share(p *fold.Profile, keep func([]string) bool, want []string) (all, match int64, other []string) {
	for _, s := range p.Stacks {
		f := s.Frames[1:]
		if !keep(f) {
			continue
		}
		all += s.Value
		if slices.Equal(f, want) {
			match += s.Value
		} else {
			other = append(other, s.Key())
		}
	}
	return all, match, other
}

// TestStackCopyWholeStacks: with the default settings the BPF sampler
// gives the program's true stack, main → a → b → leaf under glibc's start
// code down to a thread root, for at least 99% of the leaf's samples,
// although a and b keep no frame pointer and b zeroes rbp; perf
// --call-graph dwarf gives the same stack; with --stack-copy never the
// frame-pointer walk stops in b, so the stack copies made the difference.
func TestStackCopyWholeStacks(t *testing.T) {
	requireBPF(t)
	requirePerf(t)
	dir := t.TempDir()
	writeSources(t, dir, map[string]string{"lib.c": copyLib, "a.c": copyA, "main.c": copyMain})
	gccRun(t, dir,
		[]string{"-O2", "-fomit-frame-pointer", "-shared", "-fPIC", "-o", "libnofp.so", "lib.c"},
		[]string{"-O2", "-fomit-frame-pointer", "-c", "-o", "a.o", "a.c"},
		[]string{"-O2", "-fno-omit-frame-pointer", "-c", "-o", "main.o", "main.c"},
		[]string{"-o", "copyprog", "main.o", "a.o", "-L.", "-lnofp", "-Wl,-rpath," + dir},
	)
	prog := startReady(t, filepath.Join(dir, "copyprog"))
	pid := prog.Process.Pid
	inLeaf := func(f []string) bool { return len(f) > 0 && f[len(f)-1] == "leaf" }

	// The reference: perf's DWARF unwinding of the same program.
	ref := sampleFor(t, NewPerf(), pid, Options{FrequencyHz: 499, CallGraph: "dwarf"}, 1500*time.Millisecond)
	want, n := modalStack(ref.Profile, inLeaf)
	i := slices.Index(want, "main")
	if i < 1 || !slices.Equal(want[i:], []string{"main", "a", "b", "leaf"}) || !isThreadRoot(want[0]) {
		t.Fatalf("perf --call-graph dwarf: most leaf samples (%d) under %q; want a thread root, glibc's start code, main, a, b, leaf", n, want)
	}
	t.Logf("perf dwarf: %d of %d samples in %q", n, ref.Samples, want)

	for _, tt := range []struct {
		stackCopy          string
		minShare, maxShare float64
		method             string
		setting            string // run.json's stack_copy
	}{
		{"", 0.99, 1, "cfi+fp", DefaultStackCopy},
		{"auto", 0.99, 1, "cfi+fp", "auto"},
		{"never", 0, 0, "fp", "never"},
	} {
		res := sampleFor(t, NewBPF(), pid, Options{FrequencyHz: 499, StackCopy: tt.stackCopy}, 1500*time.Millisecond)
		all, match, other := share(res.Profile, inLeaf, want)
		t.Logf("stack copy %q: %d of %d leaf samples (of %d) have the true stack; unwind %+v", tt.stackCopy, match, all, res.Samples, res.Unwind)
		if all < 100 {
			t.Errorf("stack copy %q: %d samples in leaf, want at least 100 to judge", tt.stackCopy, all)
			continue
		}
		if s := float64(match) / float64(all); s < tt.minShare || s > tt.maxShare {
			t.Errorf("stack copy %q: %d of %d leaf samples (%.1f%%) have the true stack, want %.0f%% to %.0f%%; others: %q",
				tt.stackCopy, match, all, 100*s, 100*tt.minShare, 100*tt.maxShare, other[:min(len(other), 5)])
		}
		u := res.Unwind
		if u == nil || u.Method != tt.method {
			t.Fatalf("stack copy %q: Unwind %+v, want method %s", tt.stackCopy, u, tt.method)
		}
		if tt.method == "fp" {
			continue
		}
		if u.StackCopy != tt.setting || u.CopiedSamples == 0 || u.Ends["root"] == 0 || u.WindowBytes <= 0 {
			t.Errorf("stack copy %q: Unwind %+v, want %s, copied samples, walks ending at the root, a window", tt.stackCopy, u, tt.setting)
		}
		// b's frames came from its CFI: the library has no frame pointer.
		var lib *fold.UnwindObject
		for i := range u.Objects {
			if strings.HasSuffix(u.Objects[i].Object, "/libnofp.so") {
				lib = &u.Objects[i]
			}
		}
		if lib == nil || lib.CFI == 0 || lib.CFI < 99*lib.Frames/100 {
			t.Errorf("stack copy %q: libnofp.so frames %+v, want (almost) all unwound by CFI", tt.stackCopy, lib)
		}
		if res.Health["copied"] != uint64(u.CopiedSamples) {
			t.Errorf("health copied %d, unwind copied_samples %d: want equal", res.Health["copied"], u.CopiedSamples)
		}
	}
}

// TestStackCopySyscall: a program whose CPU goes to glibc's write on a
// pipe: its samples under the wrapper reach main through pump (which a
// frame-pointer walk skips, glibc keeping no frame pointer) and a thread
// root, with the default settings.
func TestStackCopySyscall(t *testing.T) {
	requireBPF(t)
	dir := t.TempDir()
	writeSources(t, dir, map[string]string{"pump.c": copyPump})
	gccRun(t, dir, []string{"-O2", "-fno-omit-frame-pointer", "-o", "pump", "pump.c"})
	prog := startReady(t, filepath.Join(dir, "pump"))
	pid := prog.Process.Pid
	inLibc := func(f []string) bool {
		return len(f) > 0 && f[len(f)-1] != "pump" && f[len(f)-1] != "main"
	}
	// The true chain from main: main, pump, then glibc's frames.
	whole := func(f []string) bool {
		i := slices.Index(f, "main")
		return i >= 1 && isThreadRoot(f[0]) && i+2 < len(f) && f[i+1] == "pump" && !slices.Contains(f[i+2:], "pump")
	}
	for _, tt := range []struct {
		stackCopy string
		minShare  float64
		maxShare  float64
	}{
		{"", 0.99, 1},
		{"never", 0, 0.5},
	} {
		res := sampleFor(t, NewBPF(), pid, Options{FrequencyHz: 499, StackCopy: tt.stackCopy}, 1500*time.Millisecond)
		var all, ok int64
		var bad []string
		for _, s := range res.Profile.Stacks {
			if !inLibc(s.Frames[1:]) {
				continue
			}
			all += s.Value
			if whole(s.Frames[1:]) {
				ok += s.Value
			} else if len(bad) < 5 {
				bad = append(bad, s.Key())
			}
		}
		t.Logf("stack copy %q: %d of %d samples under glibc reach main through pump (of %d samples); unwind %+v", tt.stackCopy, ok, all, res.Samples, res.Unwind)
		if all < 50 {
			t.Errorf("stack copy %q: %d samples under glibc, want at least 50 to judge", tt.stackCopy, all)
			continue
		}
		if s := float64(ok) / float64(all); s < tt.minShare || s > tt.maxShare {
			t.Errorf("stack copy %q: %d of %d samples under glibc (%.1f%%) reach main through pump, want %.0f%% to %.0f%%; others: %q",
				tt.stackCopy, ok, all, 100*s, 100*tt.minShare, 100*tt.maxShare, bad)
		}
	}
}
