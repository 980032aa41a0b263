//go:build linux

package capture

import (
	"context"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

const strippedProg = `
#include <time.h>
__attribute__((noinline)) static void static_spin(void) {
	volatile unsigned long x = 0;
	for (;;) for (int i = 0; i < 100000; i++) x += i;
}
int main(void) { static_spin(); return 0; }
`

// buildStripped builds strippedProg, strips it and puts its symbols in a
// separate debug file under dir/debug/.build-id/xx/yyyy.debug, as a -dbg
// package does. It returns the stripped binary and the debug root.
func buildStripped(t *testing.T, dir string) (bin, debugRoot string) {
	t.Helper()
	for _, tool := range []string{"gcc", "objcopy"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	src := filepath.Join(dir, "prog.c")
	if err := os.WriteFile(src, []byte(strippedProg), 0o644); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(dir, "stripped")
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, out)
		}
	}
	run("gcc", "-O1", "-fno-omit-frame-pointer", "-Wl,--build-id", "-o", bin, src)
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	if s := f.Section(".note.gnu.build-id"); s != nil {
		data, _ := s.Data()
		if len(data) > 16 {
			id = hex.EncodeToString(data[16:])
		}
	}
	f.Close()
	if len(id) < 4 {
		t.Fatal("no build id")
	}
	debugRoot = filepath.Join(dir, "debug")
	dbgDir := filepath.Join(debugRoot, ".build-id", id[:2])
	if err := os.MkdirAll(dbgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	run("objcopy", "--only-keep-debug", bin, filepath.Join(dbgDir, id[2:]+".debug"))
	run("objcopy", "--strip-all", bin)
	return bin, debugRoot
}

// Both samplers name a stripped program's static function from the debug
// file in Options.DebugDirs, and not without it.
func TestDebugDirs(t *testing.T) {
	bin, debugRoot := buildStripped(t, t.TempDir())
	cmd := startProg(t, bin)
	pid := cmd.Process.Pid
	time.Sleep(100 * time.Millisecond)
	for _, tt := range []struct {
		sampler string
		new     func() Sampler
		require func(*testing.T)
	}{
		{"perf", NewPerf, requirePerf},
		{"bpf", NewBPF, requireBPF},
	} {
		t.Run(tt.sampler, func(t *testing.T) {
			tt.require(t)
			for _, dirs := range [][]string{nil, {filepath.Join(t.TempDir(), "nowhere"), debugRoot}} {
				s := tt.new()
				ctx := context.Background()
				if err := s.Start(ctx, pid, Options{FrequencyHz: 199, DebugDirs: dirs, SystemWide: true}); err != nil {
					t.Fatal(err)
				}
				time.Sleep(time.Second)
				res, err := s.Stop(ctx)
				if err != nil {
					t.Fatal(err)
				}
				n, total := valueWith(res.Profile, "static_spin"), res.Profile.Total()
				t.Logf("debug dirs %q: %d of %d samples in static_spin; stacks %v", dirs, n, total, res.Profile.Stacks)
				if total < 20 {
					t.Fatalf("%d samples", total)
				}
				if dirs == nil && n != 0 {
					t.Errorf("without debug dirs, %d samples named static_spin: the binary is not stripped?", n)
				}
				if dirs != nil && n < total*9/10 {
					t.Errorf("with debug dirs %q, %d of %d samples in static_spin, want nearly all", dirs, n, total)
				}
			}
		})
	}
}

const vdsoProg = `
#include <stdio.h>
#include <time.h>
volatile long sink;
__attribute__((noinline)) void in_vdso(void) {
	struct timespec ts;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sink += ts.tv_nsec;
	}
}
int main(void) {
	printf("ready\n");
	fflush(stdout);
	in_vdso();
}
`

// perf's DWARF call graphs unwind out of the vDSO with debug dirs too:
// perf script then runs with a build-id cache of its own, and the vDSO,
// which perf record kept in the usual cache and which exists nowhere else,
// must be linked into it (without it every vDSO sample was a lone
// [[vdso]] frame).
//
// An empty perf build-id cache (PERF_BUILDID_DIR), as on a fresh machine
// where no perf run has cached the vDSO (perf record runs with -N), with
// and without debug dirs: flamediff caches the vDSO itself (cacheVDSO).
// The test passed before only when another test's perf run had cached it.
func TestPerfDebugDirsVDSO(t *testing.T) {
	requirePerf(t)
	dir := t.TempDir()
	writeSources(t, dir, map[string]string{"vdso.c": vdsoProg})
	gccRun(t, dir, []string{"-O1", "-fno-omit-frame-pointer", "-o", "vdso", "vdso.c"})
	cmd := startReady(t, filepath.Join(dir, "vdso"))
	for _, debug := range [][]string{{filepath.Join(dir, "nodebug")}, nil} {
		t.Setenv("PERF_BUILDID_DIR", t.TempDir())
		res := sampleFor(t, NewPerf(), cmd.Process.Pid, Options{FrequencyHz: 199, CallGraph: "dwarf", DebugDirs: debug}, time.Second)
		total, n := res.Profile.Total(), valueWith(res.Profile, "in_vdso")
		if total < 50 || n < total*98/100 {
			t.Errorf("debug dirs %q: %d of %d samples have in_vdso on their stack, want at least 98%%; stacks %v", debug, n, total, res.Profile.Stacks)
		}
	}
}
