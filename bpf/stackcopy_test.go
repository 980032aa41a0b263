//go:build linux

package bpf

import (
	"bufio"
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// spinSource spins in spin() over a local array of spinWords words, word i
// holding spinMarker+i; it prints the array's address first. With CLEAR_BP
// it zeroes rbp in the loop, so that a frame-pointer walk stops at the
// leaf (built with -fomit-frame-pointer).
const spinSource = `
#include <stdint.h>
#include <stdio.h>

volatile uint64_t sink;

__attribute__((noinline)) void spin(void) {
	volatile uint64_t buf[1024];
	for (int i = 0; i < 1024; i++)
		buf[i] = 0x6d61726b65723134ULL + i;
	printf("%p\n", (void *)buf);
	fflush(stdout);
	for (;;) {
#ifdef CLEAR_BP
		__asm__ volatile("xor %%ebp, %%ebp" ::: "rbp");
#endif
		sink += buf[sink & 1023];
	}
}

int main(void) {
	spin();
	return 0;
}
`

const (
	spinWords  = 1024
	spinMarker = 0x6d61726b65723134
)

// spinner is a running spin program.
type spinner struct {
	pid       int
	buf       uint64 // address of spin's array
	spin      Range  // spin's code, from the ELF symbol table
	stack     Range  // the [stack] mapping
	libc      Range  // libc's executable mapping
	binary    string // path
	comm      string
	withoutFP bool
}

// buildSpin compiles spinSource (without frame pointers and with rbp
// cleared when noFP), or skips the test without gcc.
func buildSpin(t *testing.T, noFP bool) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "spin.c"), filepath.Join(dir, "spinfp")
	args := []string{"-O1", "-no-pie", "-fno-omit-frame-pointer"}
	if noFP {
		bin = filepath.Join(dir, "spinnofp")
		args = []string{"-O1", "-no-pie", "-fomit-frame-pointer", "-DCLEAR_BP"}
	}
	if err := os.WriteFile(src, []byte(spinSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", append(args, "-o", bin, src)...).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// startSpin builds and starts the spin program, with an empty environment
// (so that its stack is short), and reads what it is from its ELF file and
// /proc/PID/maps.
func startSpin(t *testing.T, noFP bool) *spinner {
	t.Helper()
	bin := buildSpin(t, noFP)
	s := &spinner{binary: bin, comm: filepath.Base(bin), withoutFP: noFP}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, sym := range syms {
		if sym.Name == "spin" && elf.ST_TYPE(sym.Info) == elf.STT_FUNC {
			s.spin = Range{sym.Value, sym.Value + sym.Size}
		}
	}
	if s.spin.End == 0 {
		t.Fatalf("%s: no symbol spin", bin)
	}

	cmd := exec.Command(bin)
	cmd.Env = []string{}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start(t, cmd)
	s.pid = cmd.Process.Pid
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("spin program: %v", err)
	}
	if s.buf, err = strconv.ParseUint(strings.TrimPrefix(strings.TrimSpace(line), "0x"), 16, 64); err != nil {
		t.Fatalf("spin program printed %q: %v", line, err)
	}

	maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", s.pid))
	if err != nil {
		t.Fatal(err)
	}
	for l := range strings.Lines(string(maps)) {
		fields := strings.Fields(l)
		if len(fields) < 5 {
			continue
		}
		var r Range
		if _, err := fmt.Sscanf(fields[0], "%x-%x", &r.Start, &r.End); err != nil {
			t.Fatalf("maps line %q: %v", l, err)
		}
		switch last := fields[len(fields)-1]; {
		case last == "[stack]":
			s.stack = r
		case strings.Contains(filepath.Base(last), "libc.so") && strings.Contains(fields[1], "x"):
			s.libc = r
		}
	}
	if s.stack.End == 0 || s.libc.End == 0 {
		t.Fatalf("no [stack] or no executable libc mapping in /proc/%d/maps:\n%s", s.pid, maps)
	}
	if !s.stack.contains(s.buf) {
		t.Fatalf("spin's array at %#x is not in the stack mapping %#x-%#x", s.buf, s.stack.Start, s.stack.End)
	}
	return s
}

func (r Range) contains(a uint64) bool { return a >= r.Start && a < r.End }

// sampleCopies starts p, reads its samples while it samples for d, stops
// it and returns the samples, counts and health.
func sampleCopies(t *testing.T, p *Profiler, d time.Duration) ([]RawSample, []Count, Health) {
	t.Helper()
	var (
		samples []RawSample
		wg      sync.WaitGroup
		readErr error
	)
	ctx, cancel := context.WithCancel(context.Background())
	wg.Go(func() {
		readErr = p.ReadSamples(ctx, func(s RawSample) error {
			s.Stack = slices.Clone(s.Stack)
			s.User = slices.Clone(s.User)
			s.Kernel = slices.Clone(s.Kernel)
			samples = append(samples, s)
			return nil
		})
	})
	counts, h := sample(t, p, d)
	cancel()
	wg.Wait()
	if readErr != nil {
		t.Fatalf("ReadSamples: %v", readErr)
	}
	return samples, counts, h
}

func countSum(counts []Count) uint64 {
	var n uint64
	for _, c := range counts {
		n += c.Samples
	}
	return n
}

// checkAccounts checks that every sample is counted once: in the counts,
// copied, or dropped.
func checkAccounts(t *testing.T, samples []RawSample, counts []Count, h Health) {
	t.Helper()
	if uint64(len(samples)) != h.Copied {
		t.Errorf("ReadSamples gave %d samples, Health.Copied = %d", len(samples), h.Copied)
	}
	if sum := countSum(counts); h.Samples != sum+h.MapFull+h.Copied+h.RingbufFull {
		t.Errorf("Health.Samples = %d, want counts %d + MapFull %d + Copied %d + RingbufFull %d",
			h.Samples, sum, h.MapFull, h.Copied, h.RingbufFull)
	}
}

// presentEnd returns the end of the run of pages of process pid, from
// from's page up to at most end, that are in memory (/proc/PID/pagemap's
// present bit): a copy of the stack reads pages without faulting them in,
// so it stops at the first page the process never touched. The kernel
// puts a random gap of up to 8 KiB below the arguments at the top of the
// stack (arch_align_stack), so a whole page there may never be touched.
// Read it before anything reads the process's memory through /proc/PID/mem,
// which maps such a page.
func presentEnd(t *testing.T, pid int, from, end uint64) uint64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var e [8]byte
	for page := from &^ (PageSize - 1); page < end; page += PageSize {
		if _, err := f.ReadAt(e[:], int64(page/PageSize*8)); err != nil {
			t.Fatalf("pagemap of %d at %#x: %v", pid, page, err)
		}
		if binary.LittleEndian.Uint64(e[:])&(1<<63) == 0 {
			return page
		}
	}
	return end
}

// checkCopy checks a copied sample of the spin program against the truth:
// the ELF symbol of spin, the [stack] mapping, the pages in memory
// (readable, from presentEnd), the array's address and content, and the
// process's memory read through /proc/PID/mem.
func checkCopy(t *testing.T, s *spinner, mem *os.File, r RawSample, readable uint64, wantFull bool) {
	t.Helper()
	if r.PID != uint32(s.pid) || r.TID != uint32(s.pid) || r.Comm != s.comm {
		t.Errorf("sample of %d/%d %q, want %d/%d %q", r.PID, r.TID, r.Comm, s.pid, s.pid, s.comm)
	}
	if !s.spin.contains(r.Regs.IP) {
		t.Errorf("ip %#x not in spin %#x-%#x", r.Regs.IP, s.spin.Start, s.spin.End)
	}
	if !s.stack.contains(r.Regs.SP) || r.Regs.SP > s.buf {
		t.Errorf("sp %#x not in [stack] %#x-%#x below spin's array %#x", r.Regs.SP, s.stack.Start, s.stack.End, s.buf)
		return
	}
	if len(r.User) == 0 || r.User[0] != r.Regs.IP && r.Flags&SampleKernelMode == 0 {
		t.Errorf("frame-pointer walk %#x does not start at ip %#x", r.User, r.Regs.IP)
	}
	// The window: from SP to the end of its page plus whole pages, up to
	// the end of the mapping or the first page not in memory.
	end := min(s.stack.End, r.Regs.SP&^(PageSize-1)+MaxStackPages*PageSize, readable)
	if wantFull {
		end = r.Regs.SP&^(PageSize-1) + PageSize
	}
	if r.StackBase != r.Regs.SP&^(PageSize-1) {
		t.Errorf("sp %#x: stack copied from %#x, want from its page %#x", r.Regs.SP, r.StackBase, r.Regs.SP&^(PageSize-1))
	}
	if got, want := uint64(len(r.Stack)), end-r.StackBase; got != want {
		t.Errorf("sp %#x: %d bytes copied, want %d (to %#x)", r.Regs.SP, got, want, end)
	}
	if full := r.Flags&SampleWindowFull != 0; full != wantFull {
		t.Errorf("sp %#x: window full %v, want %v", r.Regs.SP, full, wantFull)
	}
	for i := range spinWords {
		off := s.buf - r.StackBase + 8*uint64(i)
		if off+8 > uint64(len(r.Stack)) {
			if !wantFull { // the copy reaches the end of the stack
				t.Errorf("sp %#x: word %d of the array (offset %d) beyond the %d bytes copied", r.Regs.SP, i, off, len(r.Stack))
			}
			break
		}
		if v := binary.LittleEndian.Uint64(r.Stack[off:]); v != spinMarker+uint64(i) {
			t.Errorf("sp %#x: word %d of the array (offset %d) is %#x, want %#x", r.Regs.SP, i, off, v, spinMarker+uint64(i))
			break
		}
	}
	// From SP up (below it the running program writes on).
	above := r.Stack[min(uint64(len(r.Stack)), r.Regs.SP-r.StackBase):]
	truth := make([]byte, len(above))
	if _, err := mem.ReadAt(truth, int64(r.Regs.SP)); err != nil {
		t.Fatalf("read /proc/%d/mem at %#x: %v", s.pid, r.Regs.SP, err)
	}
	if i := firstDiff(truth, above); i >= 0 {
		t.Errorf("sp %#x: copy differs from /proc/%d/mem at offset %d of %d", r.Regs.SP, s.pid, i, len(truth))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// TestStackCopy samples a program spinning over a known array on its
// stack: with StackCopy always every sample comes copied and the copy is
// the process's stack; with never none does and the counts are as before.
func TestStackCopy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  Options
		full  bool // every copy fills its window
		never bool
	}{
		{name: "always", opts: Options{StackCopy: StackCopyAlways}},
		{name: "always/one page", opts: Options{StackCopy: StackCopyAlways, StackPages: 1}, full: true},
		{name: "never", opts: Options{}, never: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSpin(t, false)
			mem, err := os.Open(fmt.Sprintf("/proc/%d/mem", s.pid))
			if err != nil {
				t.Fatal(err)
			}
			defer mem.Close()
			opts := tc.opts
			opts.PID, opts.FrequencyHz = s.pid, 199
			p := load(t, opts)
			samples, counts, h := sampleCopies(t, p, time.Second)
			t.Logf("%d copied samples, %d counted; health %+v", len(samples), countSum(counts), h)
			checkAccounts(t, samples, counts, h)
			if h.Samples < 20 {
				t.Fatalf("%d samples of a spinning program at 199 Hz in 1 s", h.Samples)
			}
			if h.RingbufFull != 0 || h.UserRegsErrors != 0 || h.MapFull != 0 {
				t.Errorf("health %+v: want no drops and no user register errors", h)
			}
			if tc.never {
				if len(samples) != 0 || h.Copied != 0 || countSum(counts) != h.Samples {
					t.Errorf("never: %d samples copied, %d counted of %d", len(samples), countSum(counts), h.Samples)
				}
				for _, c := range counts {
					if len(c.User) == 0 || !s.spin.contains(c.User[0]) {
						t.Errorf("count %+v: want a stack with its leaf in spin", c)
					}
				}
				return
			}
			if len(counts) != 0 {
				t.Errorf("%d counts with every sample copied: %+v", len(counts), counts)
			}
			if want := h.Copied; !tc.full && h.WindowFull != 0 || tc.full && h.WindowFull != want {
				t.Errorf("Health.WindowFull = %d of %d copied, want %v", h.WindowFull, h.Copied, tc.full)
			}
			readable := s.stack.End
			if len(samples) > 0 {
				if readable = presentEnd(t, s.pid, samples[0].Regs.SP, s.stack.End); readable < s.stack.End {
					t.Logf("page %#x of the stack (%#x-%#x) not in memory: copies end there", readable, s.stack.Start, s.stack.End)
				}
			}
			for _, r := range samples {
				checkCopy(t, s, mem, r, readable, tc.full)
			}
		})
	}
}

// TestStackCopyAuto checks StackCopy auto's choice against its rule, on
// programs with and without frame pointers: a sample is copied when its
// leaf is in a no-frame-pointer range or its frame-pointer walk does not
// end in a root range, else counted in the kernel.
func TestStackCopyAuto(t *testing.T) {
	for _, tc := range []struct {
		name string
		noFP bool
		// ranges from the running program
		ranges func(s *spinner) (noFP, roots []Range)
		// every sample copied with these flags, or none copied (0)
		want SampleFlags
	}{
		{name: "fp/no ranges", ranges: func(*spinner) ([]Range, []Range) { return nil, nil }, want: SampleNoRoot},
		{name: "fp/root libc", ranges: func(s *spinner) ([]Range, []Range) { return nil, []Range{s.libc} }, want: 0},
		{name: "nofp/root libc", noFP: true, ranges: func(s *spinner) ([]Range, []Range) { return nil, []Range{s.libc} }, want: SampleNoRoot},
		{name: "fp/root libc, leaf nofp", ranges: func(s *spinner) ([]Range, []Range) {
			return []Range{{1, 2}, s.spin}, []Range{{1, 2}, s.libc}
		}, want: SampleLeafNoFP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startSpin(t, tc.noFP)
			p := load(t, Options{PID: s.pid, FrequencyHz: 199, StackCopy: StackCopyAuto})
			noFP, roots := tc.ranges(s)
			if err := p.SetRanges(noFP, roots); err != nil {
				t.Fatalf("SetRanges: %v", err)
			}
			samples, counts, h := sampleCopies(t, p, time.Second)
			t.Logf("%d copied samples, %d counted; health %+v", len(samples), countSum(counts), h)
			for i, r := range samples[:min(len(samples), 2)] {
				t.Logf("copied sample %d: regs %+v flags %b, frame-pointer walk %#x", i, r.Regs, r.Flags, r.User)
			}
			for i, c := range counts[:min(len(counts), 2)] {
				t.Logf("count %d: frame-pointer walk %#x", i, c.User)
			}
			checkAccounts(t, samples, counts, h)
			if h.Samples < 20 {
				t.Fatalf("%d samples of a spinning program at 199 Hz in 1 s", h.Samples)
			}
			// The rule, sample by sample.
			in := func(rs []Range, a uint64) bool {
				return slices.ContainsFunc(rs, func(r Range) bool { return r.contains(a) })
			}
			for _, c := range counts {
				if len(c.User) == 0 || in(noFP, c.User[0]) || !in(roots, c.User[len(c.User)-1]) {
					t.Errorf("counted in the kernel, want copied: leaf in a no-FP range or walk not ending in a root: %#x", c.User)
				}
			}
			for _, r := range samples {
				leafNoFP, noRoot := in(noFP, r.Regs.IP), len(r.User) == 0 || !in(roots, r.User[len(r.User)-1])
				if !leafNoFP && !noRoot {
					t.Errorf("copied, want counted: ip %#x, walk %#x", r.Regs.IP, r.User)
				}
				if got := r.Flags & (SampleLeafNoFP | SampleNoRoot); (got&SampleLeafNoFP != 0) != leafNoFP || (got&SampleNoRoot != 0) != noRoot {
					t.Errorf("copied with flags %b, want leaf no-FP %v, no root %v: ip %#x, walk %#x", got, leafNoFP, noRoot, r.Regs.IP, r.User)
				}
			}
			// What the programs do: the walk of the frame-pointer build
			// ends in libc (its caller), the other stops at the leaf.
			switch {
			case tc.want == 0 && h.Copied != 0:
				t.Errorf("%d samples copied, want none", h.Copied)
			case tc.want != 0 && len(counts) != 0:
				t.Errorf("%d counts, want every sample copied with flags %b", len(counts), tc.want)
			}
			for _, r := range samples {
				if r.Flags&tc.want != tc.want {
					t.Errorf("sample flags %b, want %b", r.Flags, tc.want)
					break
				}
			}
		})
	}
}

// TestStackCopyRingbufFull copies every sample into a ring buffer of 16
// pages that nobody reads while sampling: the first samples fill it, the
// others are dropped and counted, and ReadSamples then drains the ones
// kept.
func TestStackCopyRingbufFull(t *testing.T) {
	const ring = 16 * PageSize
	s := startSpin(t, false)
	p := load(t, Options{PID: s.pid, FrequencyHz: 199, StackCopy: StackCopyAlways, RingBufferBytes: ring})
	// The window lasts until 20 samples (about 100 ms of the spinner's
	// CPU at 199 Hz), at least 500 ms: a ring of 16 pages holds 3, and
	// under the suite's load 500 ms of wall time gave just 3.
	if err := p.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		h, err := p.Health()
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) >= 500*time.Millisecond && h.Samples >= 20 {
			break
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("%d samples in a minute, want 20", h.Samples)
		}
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	h, err := p.Health()
	if err != nil {
		t.Fatal(err)
	}
	var (
		samples []RawSample
		sizes   []int // of the records in the ring: 8 bytes of header, data rounded up to 8
	)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // pass what the ring buffer holds, then return
	if err := p.ReadSamples(ctx, func(r RawSample) error {
		samples = append(samples, r)
		pages := uint64(len(r.Stack)) / PageSize
		sizes = append(sizes, 8+(sampleStackOff+int(pages)*PageSize+7)&^7)
		return nil
	}); err != nil {
		t.Fatalf("ReadSamples: %v", err)
	}
	counts, err := p.Counts()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d samples read, records of %v bytes; health %+v", len(samples), sizes, h)
	checkAccounts(t, samples, counts, h)
	if h.Copied == 0 || h.RingbufFull == 0 || h.RingbufFull+h.Copied != h.Samples {
		t.Fatalf("health %+v: want some samples copied and the others dropped for a full ring buffer", h)
	}
	// The ring holds the records kept, and no room for one more (of the
	// same size: the program's stack does not change).
	total := 0
	for _, n := range sizes {
		total += n
	}
	if total > ring || total+sizes[len(sizes)-1] <= ring {
		t.Errorf("records of %d bytes in all (%v) kept in a ring of %d: want it full", total, sizes, ring)
	}
}

// TestStackCopyKernelMode samples a shell loop that spends most of its
// time in the kernel (opening /dev/null): samples taken in kernel mode
// carry the task's user registers; without bpf_task_pt_regs (kernels
// before 5.15, simulated) they are counted in the kernel instead.
func TestStackCopyKernelMode(t *testing.T) {
	for _, taskRegs := range []bool{true, false} {
		t.Run(fmt.Sprintf("task regs %v", taskRegs), func(t *testing.T) {
			if !taskRegs {
				saved := taskRegsAvailable
				taskRegsAvailable = func() bool { return false }
				t.Cleanup(func() { taskRegsAvailable = saved })
			} else if !haveTaskRegs() {
				t.Skip("the kernel lacks bpf_task_pt_regs or BTF (needs Linux 5.15 with BTF)")
			}
			cmd := exec.Command("sh", "-c", "while :; do echo >/dev/null; done")
			start(t, cmd)
			pid := cmd.Process.Pid
			p := load(t, Options{PID: pid, FrequencyHz: 199, StackCopy: StackCopyAlways, Kernel: true})
			samples, counts, h := sampleCopies(t, p, time.Second)
			t.Logf("%d copied samples, %d counted; health %+v", len(samples), countSum(counts), h)
			checkAccounts(t, samples, counts, h)

			maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid))
			if err != nil {
				t.Fatal(err)
			}
			var exec []Range
			var stack Range
			for l := range strings.Lines(string(maps)) {
				var r Range
				var perms string
				if _, err := fmt.Sscanf(l, "%x-%x %s", &r.Start, &r.End, &perms); err != nil {
					t.Fatalf("maps line %q: %v", l, err)
				}
				if strings.Contains(perms, "x") {
					exec = append(exec, r)
				}
				if strings.HasSuffix(strings.TrimSpace(l), "[stack]") {
					stack = r
				}
			}
			var kernelMode int
			for _, r := range samples {
				if r.Flags&SampleKernelMode != 0 {
					kernelMode++
					if len(r.Kernel) == 0 {
						t.Errorf("kernel-mode sample without a kernel stack: %+v", r.Regs)
					}
				}
				if !slices.ContainsFunc(exec, func(e Range) bool { return e.contains(r.Regs.IP) }) || !stack.contains(r.Regs.SP) {
					t.Errorf("sample (flags %b): ip %#x in no executable mapping or sp %#x not in [stack] %#x-%#x",
						r.Flags, r.Regs.IP, r.Regs.SP, stack.Start, stack.End)
				}
				if len(r.User) == 0 || r.User[0] != r.Regs.IP {
					t.Errorf("sample (flags %b): frame-pointer walk %#x does not start at ip %#x", r.Flags, r.User, r.Regs.IP)
				}
			}
			if taskRegs {
				if kernelMode == 0 || h.UserRegsErrors != 0 || len(counts) != 0 {
					t.Errorf("%d kernel-mode samples copied, %d counts, health %+v: want some copied, none counted, no user register errors",
						kernelMode, len(counts), h)
				}
				return
			}
			var withKernel uint64
			for _, c := range counts {
				if len(c.Kernel) > 0 {
					withKernel += c.Samples
				}
			}
			if kernelMode != 0 || h.UserRegsErrors == 0 || h.UserRegsErrors != countSum(counts)+h.MapFull || withKernel != countSum(counts) {
				t.Errorf("%d kernel-mode samples copied, %d counted (%d with a kernel stack), health %+v: want none copied, every one counted (or dropped: MapFull) with its kernel stack and in UserRegsErrors",
					kernelMode, countSum(counts), withKernel, h)
			}
		})
	}
}

func TestStackCopyOptions(t *testing.T) {
	for _, tc := range []struct {
		opts      Options
		err       bool
		pages     int
		ringBytes int
	}{
		{opts: Options{}, pages: MaxStackPages, ringBytes: PageSize},
		{opts: Options{StackCopy: StackCopyAuto}, pages: MaxStackPages, ringBytes: DefaultRingBufferBytes},
		{opts: Options{StackCopy: StackCopyAlways, StackPages: 2, RingBufferBytes: 1 << 20}, pages: 2, ringBytes: 1 << 20},
		{opts: Options{StackCopy: 3}, err: true},
		{opts: Options{StackCopy: -1}, err: true},
		{opts: Options{StackPages: MaxStackPages + 1}, err: true},
		{opts: Options{StackPages: -1}, err: true},
		{opts: Options{RingBufferBytes: 3 * PageSize}, err: true},
		{opts: Options{RingBufferBytes: PageSize / 2}, err: true},
		{opts: Options{RingBufferBytes: 1 << 31}, err: true},
	} {
		opts := tc.opts
		err := opts.fill()
		switch {
		case tc.err && err == nil:
			t.Errorf("fill(%+v) = nil, want an error", tc.opts)
		case !tc.err && err != nil:
			t.Errorf("fill(%+v): %v", tc.opts, err)
		case !tc.err && (opts.StackPages != tc.pages || opts.RingBufferBytes != tc.ringBytes):
			t.Errorf("fill(%+v): %d pages, ring of %d bytes; want %d, %d", tc.opts, opts.StackPages, opts.RingBufferBytes, tc.pages, tc.ringBytes)
		}
	}
}

func TestSetRangesErrors(t *testing.T) {
	p := load(t, Options{PID: 1, FrequencyHz: 1, MaxStacks: 16, StackCopy: StackCopyAuto})
	many := make([]Range, MaxRanges+1)
	for i := range many {
		many[i] = Range{uint64(i + 1), uint64(i + 2)}
	}
	for _, tc := range []struct {
		noFP, roots []Range
		err         bool
	}{
		{noFP: many[:MaxRanges], roots: many[:1]},
		{noFP: nil, roots: nil},
		{noFP: many, err: true},
		{roots: many, err: true},
		{roots: []Range{{2, 2}}, err: true},
		{noFP: []Range{{3, 2}}, err: true},
	} {
		if err := p.SetRanges(tc.noFP, tc.roots); (err != nil) != tc.err {
			t.Errorf("SetRanges(%d ranges, %d ranges) = %v, want error %v", len(tc.noFP), len(tc.roots), err, tc.err)
		}
	}
	var v profileRanges
	if err := p.objs.NofpRanges.Lookup(uint32(0), &v); err != nil {
		t.Fatal(err)
	}
	if v.N != 0 {
		t.Errorf("no-FP ranges after SetRanges(nil, nil) and failures: %d entries, want 0", v.N)
	}
	p.Close()
	if err := p.SetRanges(nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("SetRanges after Close: %v, want ErrClosed", err)
	}
	if err := p.ReadSamples(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("ReadSamples after Close: %v, want ErrClosed", err)
	}
}

// FuzzDecodeSample feeds arbitrary records to the decoder: it returns an
// error or a sample whose slices lie within the record.
func FuzzDecodeSample(f *testing.F) {
	rec := make([]byte, sampleStackOff+2*PageSize)
	var hdr profileSample
	binary.LittleEndian.PutUint64(rec[unsafe.Offsetof(hdr.Sp):], 0x7ffd0010)
	binary.LittleEndian.PutUint64(rec[unsafe.Offsetof(hdr.Base):], 0x7ffd0000)
	binary.LittleEndian.PutUint32(rec[unsafe.Offsetof(hdr.Len):], 2*PageSize)
	binary.LittleEndian.PutUint32(rec[sampleUserOff:], 3)
	copy(rec[unsafe.Offsetof(hdr.Comm):], "spin")
	f.Add(rec)
	f.Add(rec[:sampleStackOff])
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d sampleDecoder
		s, err := d.decode(b)
		if err != nil {
			return
		}
		if len(s.Stack) > len(b)-sampleStackOff || len(s.User) > MaxDepth || len(s.Kernel) > MaxDepth || len(s.Comm) > 16 {
			t.Errorf("record of %d bytes: %d stack bytes, %d+%d frames, comm %q", len(b), len(s.Stack), len(s.User), len(s.Kernel), s.Comm)
		}
	})
}
