//go:build linux

package capture

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flamediff/flamediff/fold"
)

//go:embed testdata/offcpu.c
var offCPUSource []byte

// offCPUProgram builds and starts testdata/offcpu.c, whose threads wait
// for known times (see its comment), and returns it and its counter file.
func offCPUProgram(t *testing.T) (*exec.Cmd, string) {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed: the test builds its program")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "offcpu.c"), filepath.Join(dir, "offcpu")
	if err := os.WriteFile(src, offCPUSource, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "counters")
	cmd := exec.Command(bin, file)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("offcpu said %q (%v), want ready", line, err)
	}
	return cmd, file
}

// offCPUTruth is what the program measured of its waits (ns and calls of
// path_a, path_b and consume_wait) and /proc's switches of its threads, by
// thread name.
type offCPUTruth struct {
	ns, calls              [3]uint64
	voluntary, involuntary map[string]int64
}

// readOffCPUTruth reads the program's counters with the calls in progress
// counted up to at (CLOCK_MONOTONIC ns), each as a call, and /proc's
// switches. The program must be stopped (freezeThreads): its threads are
// off the CPU, so a call in progress is off the CPU up to at.
func readOffCPUTruth(t *testing.T, pid int, file string, at uint64) offCPUTruth {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil || len(data) < 72 {
		t.Fatalf("counters: %d bytes, %v", len(data), err)
	}
	var tr offCPUTruth
	for i := range 3 {
		tr.ns[i] = binary.LittleEndian.Uint64(data[16*i:])
		tr.calls[i] = binary.LittleEndian.Uint64(data[16*i+8:])
		if start := binary.LittleEndian.Uint64(data[48+8*i:]); start != 0 && start < at {
			tr.ns[i] += at - start
			tr.calls[i]++
		}
	}
	tr.voluntary, tr.involuntary = map[string]int64{}, map[string]int64{}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		comm, err1 := os.ReadFile(filepath.Join(dir, task.Name(), "comm"))
		status, err2 := os.ReadFile(filepath.Join(dir, task.Name(), "status"))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		name := strings.TrimSpace(string(comm))
		for _, line := range strings.Split(string(status), "\n") {
			k, v, _ := strings.Cut(line, ":")
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			switch k {
			case "voluntary_ctxt_switches":
				tr.voluntary[name] += n
			case "nonvoluntary_ctxt_switches":
				tr.involuntary[name] += n
			}
		}
	}
	return tr
}

// within says whether got is within frac of want.
func within(got, want, frac float64) bool {
	return math.Abs(got-want) <= frac*math.Abs(want)
}

// TestOffCPUTruth records the off-CPU profile of testdata/offcpu.c, whose
// threads wait in known places for times they measure themselves, and
// checks it against that truth and /proc: the time off the CPU in
// path_a, path_b and consume_wait and path_a's share of the sleeper's
// waits within 3% of what the program measured, one voluntary switch per
// call of each, each thread's voluntary and involuntary switches within 3%
// of /proc's over the window, and the kinds apart (the spinner's
// involuntary).
func TestOffCPUTruth(t *testing.T) {
	requireBPF(t)
	cmd, file := offCPUProgram(t)
	pid := cmd.Process.Pid
	time.Sleep(200 * time.Millisecond)
	s := NewBPF()
	ctx := context.Background()
	// The program is stopped (SIGSTOP) while the sampler starts and its
	// counters and /proc are read, and again while they are read at the
	// end and the sampler stops, so that the program's window and the
	// sampler's hold the same calls and switches: unaligned, the calls
	// made between the reading and Stop were counted by the sampler alone
	// (11 switches of consume_wait beside a CPU hog).
	// The calls in progress at the edges are counted from the thaw and
	// up to the moment Stop counts the threads still off the CPU.
	freezeThreads(t, pid)
	if err := s.Start(ctx, pid, Options{FrequencyHz: 99, OffCPU: true, StackCopy: "never"}); err != nil {
		t.Fatal(err)
	}
	before := readOffCPUTruth(t, pid, file, monotonicNs())
	thawThreads(t, pid)
	// The window ends after 4 s and 400 calls of path_a (about 4 s on
	// a quiet machine): with the other packages' tests beside it, the
	// program's CPU can be so busy that its threads hardly run (3 calls
	// in 4 s were seen at load 12), and counts that small prove nothing.
	start := time.Now()
	for deadline := start.Add(60 * time.Second); time.Since(start) < 4*time.Second || completedCalls(t, file, 0)-before.calls[0] < 400; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the program made %d calls of path_a in a minute, want 400", completedCalls(t, file, 0)-before.calls[0])
		}
	}
	freezeThreads(t, pid)
	res, err := s.Stop(ctx)
	after := readOffCPUTruth(t, pid, file, s.(*BPF).run.prof.OffCPUEnd())
	thawThreads(t, pid)
	if err != nil {
		t.Fatal(err)
	}
	if res.OffCPU == nil {
		t.Fatal("Stop returned no off-CPU profile")
	}
	off := res.OffCPU
	t.Logf("totals %+v", off.Totals)
	// Open (#19): in a clean-clone CI run the program found 3 switch-outs
	// whose previous one no seen switch-in had ended, and the nanosleep
	// threads came out 3 switches short of /proc (of 15,730); in 12 runs
	// here beside six CPU hogs it was 0. The counts below are checked
	// against /proc and the program's calls; this one is logged, with the
	// two causes that would leave a switch-in unseen or its entry behind:
	// the kernel's recursion misses of the program, and failed deletes
	// of the thread's entry at a switch-in, by errno.
	unended := []string{fmt.Sprintf("offcpu_unended %d, offcpu_recursion_misses %d", res.Health["offcpu_unended"], res.Health["offcpu_recursion_misses"])}
	for k, v := range res.Health {
		if strings.HasPrefix(k, "offcpu_delete_errno_") {
			unended = append(unended, fmt.Sprintf("%s %d", k, v))
		}
	}
	t.Log(strings.Join(unended, ", "))

	// Time per path, in µs, with the kind of switch at the leaf.
	inPath := func(p *fold.Profile, fn, kind string) int64 {
		var n int64
		for _, st := range p.Stacks {
			if slices.Contains(st.Frames, fn) && st.Frames[len(st.Frames)-1] == kind {
				n += st.Value
			}
		}
		return n
	}
	// The program times the whole call: the wait (voluntary) and any
	// preemption after the wake-up (involuntary), both in the call's
	// stacks. Each call blocks once.
	var got [3]float64
	for i, fn := range []string{"path_a", "path_b", "consume_wait"} {
		got[i] = float64(inPath(off.Time, fn, fold.OffCPUVoluntary) + inPath(off.Time, fn, fold.OffCPUInvoluntary))
		want := float64(after.ns[i]-before.ns[i]) / 1e3
		blocked, calls := inPath(off.Switches, fn, fold.OffCPUVoluntary), int64(after.calls[i]-before.calls[i])
		t.Logf("%s: off the CPU %.0f µs (%d voluntary switches, %d involuntary), the program measured %.0f µs (%d calls)", fn, got[i],
			blocked, inPath(off.Switches, fn, fold.OffCPUInvoluntary), want, calls)
		if !within(got[i], want, 0.03) {
			t.Errorf("%s: %.0f µs off the CPU, the program measured %.0f µs: want within 3%%", fn, got[i], want)
		}
		if abs(blocked-calls) > 2 {
			t.Errorf("%s: %d voluntary switches, %d calls that each block once", fn, blocked, calls)
		}
	}
	// Stacks through glibc (no frame pointers): path_a and path_b wait in
	// sleep_us, which calls nanosleep. A frame-pointer walk from glibc's
	// leaf skips the caller of the leaf's frame (sleep_us); the CFI walk
	// (bpf.Options.OffCPUCFI) keeps it. Only the first waits, before the
	// rules are learnt, may lack it.
	var whole, all int64
	for _, st := range off.Switches.Stacks {
		for i, f := range st.Frames {
			if f == "path_a" || f == "path_b" {
				all += st.Value
				if i+1 < len(st.Frames) && st.Frames[i+1] == "sleep_us" {
					whole += st.Value
				}
			}
		}
	}
	t.Logf("CFI walks %d (%d before their rules were learnt, %d unsupported); sleeper waits with sleep_us under their path: %d of %d",
		res.Health["offcpu_cfi_walks"], res.Health["offcpu_cfi_missing"], res.Health["offcpu_cfi_unsupported"], whole, all)
	if all == 0 || float64(whole) < 0.97*float64(all) || res.Health["offcpu_cfi_unsupported"] != 0 {
		t.Errorf("%d of %d sleeper waits have sleep_us under path_a or path_b, %d CFI walks unsupported: want at least 97%% whole through glibc, none unsupported",
			whole, all, res.Health["offcpu_cfi_unsupported"])
	}

	share := got[0] / (got[0] + got[1])
	trueShare := float64(after.ns[0]-before.ns[0]) / float64(after.ns[0]-before.ns[0]+after.ns[1]-before.ns[1])
	t.Logf("path_a's share of the sleeper's waits: %.4f, true %.4f (by design 0.25)", share, trueShare)
	if !within(share, trueShare, 0.03) {
		t.Errorf("path_a's share %.4f, true %.4f: want within 3%%", share, trueShare)
	}

	// Switches per thread against /proc.
	byName := map[string]fold.OffCPUThread{}
	for _, th := range off.Totals.Threads {
		byName[th.Name] = th
	}
	var bv, bi, pv, pi int64
	for _, name := range []string{"sleeper", "consumer", "producer", "spinner"} {
		th := byName[name]
		v, i := after.voluntary[name]-before.voluntary[name], after.involuntary[name]-before.involuntary[name]
		bv, bi, pv, pi = bv+th.Voluntary, bi+th.Involuntary, pv+v, pi+i
		t.Logf("%s: voluntary %d (/proc %d), involuntary %d (/proc %d), %.3f s off the CPU", name, th.Voluntary, v, th.Involuntary, i, th.Seconds)
		// Small counts: the edges of the window may differ by a switch or two.
		if !within(float64(th.Voluntary), float64(v), 0.03) && abs(th.Voluntary-v) > 2 {
			t.Errorf("%s: %d voluntary switches, /proc %d: want within 3%%", name, th.Voluntary, v)
		}
		if !within(float64(th.Involuntary), float64(i), 0.03) && abs(th.Involuntary-i) > 2 {
			t.Errorf("%s: %d involuntary switches, /proc %d: want within 3%%", name, th.Involuntary, i)
		}
	}
	if byName["spinner"].Involuntary < 100 || byName["spinner"].Voluntary > byName["spinner"].Involuntary/10 {
		t.Errorf("spinner: %d involuntary, %d voluntary switches: want it preempted (involuntary) hundreds of times", byName["spinner"].Involuntary, byName["spinner"].Voluntary)
	}
	t.Logf("all threads: voluntary %d (/proc %d), involuntary %d (/proc %d)", bv, pv, bi, pi)
	if !within(float64(bv), float64(pv), 0.03) || !within(float64(bi), float64(pi), 0.03) {
		t.Errorf("switches: voluntary %d, involuntary %d; /proc %d, %d: want within 3%%", bv, bi, pv, pi)
	}
	if off.Totals.Voluntary != bv+byName["offcpu"].Voluntary || off.Totals.Dropped != 0 {
		t.Errorf("totals %+v: voluntary should add up over the threads (%d), nothing dropped", off.Totals, bv)
	}
	// The profiles agree with the totals.
	var sw int64
	for _, st := range off.Switches.Stacks {
		sw += st.Value
	}
	if sw != off.Totals.Voluntary+off.Totals.Involuntary {
		t.Errorf("offcpu switches profile totals %d, totals say %d", sw, off.Totals.Voluntary+off.Totals.Involuntary)
	}
	if us := float64(off.Time.Total()); !within(us, off.Totals.Seconds*1e6, 0.001) {
		t.Errorf("offcpu time profile totals %.0f µs, totals say %.0f", us, off.Totals.Seconds*1e6)
	}
}

// freezeThreads stops the process pid (SIGSTOP) and waits until every
// one of its threads is stopped and off the CPU: state T in stat is set
// before the thread switches out (a thread can even be preempted in
// between), so it also waits for a wchan, which the kernel gives only
// for a task taken off its run queue. Beside a heavy load, waiting for T
// alone let Stop detach the sampler before the last switch-out of the
// sleeper thread, which /proc then counted and the sampler did not (3 or
// 4 of its ~850 switches, and the time of the stretch it ended).
func freezeThreads(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		stopped := 0
		for _, task := range tasks {
			stat, err := os.ReadFile(filepath.Join(dir, task.Name(), "stat"))
			if err != nil {
				t.Fatal(err)
			}
			wchan, err := os.ReadFile(filepath.Join(dir, task.Name(), "wchan"))
			if err != nil {
				t.Fatal(err)
			}
			// The state follows the parenthesised comm.
			if i := strings.LastIndexByte(string(stat), ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'T' &&
				len(wchan) > 0 && string(wchan) != "0" {
				stopped++
			}
		}
		if stopped == len(tasks) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d: %d of %d threads stopped after SIGSTOP", pid, stopped, len(tasks))
		}
	}
}

// thawThreads continues the process pid stopped by freezeThreads.
func thawThreads(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// completedCalls is the program's count of ended calls of path i.
func completedCalls(t *testing.T, file string, i int) uint64 {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil || len(data) < 72 {
		t.Fatalf("counters: %d bytes, %v", len(data), err)
	}
	return binary.LittleEndian.Uint64(data[16*i+8:])
}

// monotonicNs is CLOCK_MONOTONIC in nanoseconds, the clock of the
// program's counters and of bpf_ktime_get_ns.
func monotonicNs() uint64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err)
	}
	return uint64(ts.Nano())
}

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}
