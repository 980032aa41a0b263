//go:build linux

package capture

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/internal/cputruth"
)

// With the off-CPU program on (Options.OffCPU) beside the switch fix, the
// on-CPU samples keep standing for the program's own CPU, not the
// profiler's. The off-CPU program walks the stack of each target thread
// that leaves the CPU (5-8 µs here), and the scheduler charges that time to
// the thread switched in next; when that is a target thread, the switch
// fix used to owe it samples for it, at the stack where it last blocked
// (docs/fidelity.md, "The off-CPU program's cost"). The fix leaves that
// time (sampler_health offcpu_charged_ns) out of what it owes, and skips
// the timer samples whose period ended during the walk.
//
// Against the truth of internal/cputruth, with the threads' accounted CPU
// less offcpu_charged_ns as the program's CPU, it checks what
// TestSwitchFixTruth checks without the off-CPU program: sampled CPU within
// 3% of it. Two pipe threads pinned to one CPU are the case that charges
// most (each switches to the other: without the fix their samples stood
// for 14-22% more CPU than the program used); a bursty thread, which
// mostly switches to the idle task, the case where prev's sample timer
// runs on through the walk. offcpu_charged_ns itself is bounded by the
// programs' run time as the kernel counts it (BPF_STATS_RUN_TIME, not the
// program's own clock reads). The functions' shares are logged against
// the truth, as in TestSwitchFixTruth.
func TestOffCPUSwitchFixTruth(t *testing.T) {
	requireBPF(t)
	stats, err := bpf.EnableStats()
	if err != nil {
		t.Skipf("no BPF run-time statistics: %v", err)
	}
	defer stats.Close()
	bin, dir := cputruth.BuildT(t)
	scenario := func(name string) cputruth.Scenario {
		for _, sc := range cputruth.Scenarios {
			if sc.Name == name {
				return sc
			}
		}
		t.Fatalf("no scenario %s", name)
		return cputruth.Scenario{}
	}
	for _, tc := range []struct {
		name    string
		sc      cputruth.Scenario
		pin     bool // all threads on one CPU
		kernel  bool
		charged bool // offcpu_charged_ns must be > 0
	}{
		{"pingpong-one-cpu", scenario("pingpong-30us-60us"), true, false, true},
		{"pingpong-one-cpu-kernel", scenario("pingpong-30us-60us"), true, true, true},
		{"bursty", scenario("bursty-50us-100us"), false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := cputruth.StartT(t, bin, dir, tc.sc)
			if tc.pin {
				pinThreads(t, p.PID(), runtime.NumCPU()-1)
			}
			time.Sleep(300 * time.Millisecond)
			// The program is stopped while the sampler starts and stops
			// and the truth is read (as in TestOffCPUTruth): detaching
			// the two sched_switch programs takes tens of milliseconds,
			// which an unaligned window counts as samples without truth.
			freezeThreads(t, p.PID())
			s := NewBPF()
			ctx := context.Background()
			if err := s.Start(ctx, p.PID(), Options{FrequencyHz: 999, SwitchFix: true, OffCPU: true, Kernel: tc.kernel, StackCopy: "never"}); err != nil {
				t.Fatal(err)
			}
			before, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			thawThreads(t, p.PID())
			time.Sleep(6 * time.Second)
			freezeThreads(t, p.PID())
			after, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Stop(ctx)
			thawThreads(t, p.PID())
			if err != nil {
				t.Fatal(err)
			}
			truth := after.Sub(before)
			total := res.Profile.Total()
			charged := time.Duration(res.Health["offcpu_charged_ns"])
			sampled := float64(total) / 999
			accounted := float64(truth.TotalNs()) / 1e9
			own := accounted - charged.Seconds()
			t.Logf("sampled %.3f s (%d samples), accounted %.3f s, of it the off-CPU program's %.3f s (%.1f%%; all BPF programs ran %v); health %v",
				sampled, total, accounted, charged.Seconds(), 100*charged.Seconds()/accounted, res.ProgramRunTime, res.Health)
			if r := sampled / own; r < 0.97 || r > 1.03 {
				t.Errorf("sampled/accounted CPU less the off-CPU program's %.3f (%.3f/(%.3f-%.3f) s), want within 3%%", r, sampled, accounted, charged.Seconds())
			}
			if res.ProgramRunTime > 0 && charged > res.ProgramRunTime {
				t.Errorf("offcpu_charged_ns %v, more than the BPF programs ran (%v)", charged, res.ProgramRunTime)
			}
			// Every switch counted: no insert found the stacks map's
			// element cache empty (bpf's warmStackCache; before it, the
			// first switch-out with a new user and a new kernel stack
			// lost one switch in every run with kernel stacks).
			if d := res.Health["offcpu_dropped"]; d != 0 {
				t.Errorf("offcpu_dropped %d: want every switch counted", d)
			}
			if tc.charged && charged == 0 {
				t.Errorf("offcpu_charged_ns 0: threads that switch to each other were charged nothing")
			}
			for _, k := range []string{"switch_deferred", "switch_owed", "switch_skipped", "switch_blind", "switch_dense", "offcpu_charged_ns", "offcpu_timer_skipped"} {
				var sum uint64
				for _, c := range res.Corrections {
					sum += c[k]
				}
				if sum != res.Health[k] {
					t.Errorf("%s: %d by thread name (%v), %d in health", k, sum, res.Corrections, res.Health[k])
				}
			}
			for _, fn := range tc.sc.Funcs {
				got := sampledShare(res.Profile, fn)
				want := 100 * float64(truth.Funcs[fn]) / 1e9 / own
				t.Logf("%s: sampled %.2f%%, true %.2f%% of the program's own CPU (%.2f%% of the accounted)", fn, got, want, truth.Share(fn))
			}
		})
	}
}

// pinThreads binds every thread of pid to cpu.
func pinThreads(t *testing.T, pid, cpu int) {
	t.Helper()
	var set unix.CPUSet
	set.Set(cpu)
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(filepath.Base(task.Name()))
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil {
			t.Fatalf("pin thread %d to CPU %d: %v", tid, cpu, err)
		}
	}
}
