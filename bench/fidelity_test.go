package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/cputruth"
)

// BenchmarkFidelity samples programs whose true CPU per function is known
// (internal/cputruth) with each sampler and prints, per scenario, each
// function's sampled share against its true share, the CPU the samples
// stand for against the threads' run time (schedstat), and the share of
// samples taken in the kernel's switch-in path (finish_task_switch: skid
// to the moment a thread is switched back in). Each error comes with the
// share's binomial standard error for the run's samples; an error beyond
// 2 points by more than two of them is flagged. Kernel frames are kept so
// that the switch-in samples can be told apart; the shares of the user
// functions are inclusive, so kernel frames below them do not change them.
// Stacks are walked as flamediff record walks them by default: perf with
// dwarf, the BPF sampler with frame pointers and stack copies.
//
// FLAMEDIFF_FIDELITY_SECONDS (default 8) seconds per run,
// FLAMEDIFF_FIDELITY_TIMER_COST (nanoseconds; default: measured at start,
// negative: no timer-programming correction; capture.Options.TimerProgramCost),
// FLAMEDIFF_FIDELITY_SCENARIOS (default: all; names of cputruth.Scenarios),
// FLAMEDIFF_FIDELITY_CONFIGS (default bpf-99Hz,bpf-499Hz,perf-99Hz,perf-499Hz,
// bpf-fix-99Hz,bpf-fix-499Hz: the BPF sampler with capture.Options.SwitchFix;
// also bpf-a-99Hz, perf-a-99Hz: per-CPU events; bpf-a-fix-99Hz,
// bpf-a-fix-499Hz: per-CPU events with the switch fix, weighted samples). Run with `make
// bench-fidelity` (root, gcc, perf).
func BenchmarkFidelity(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root: samples with perf and BPF")
	}
	secs := envInt("FLAMEDIFF_FIDELITY_SECONDS", 8)
	bin, _ := cputruth.BuildT(b)
	scenarios := cputruth.Scenarios
	if list := os.Getenv("FLAMEDIFF_FIDELITY_SCENARIOS"); list != "" {
		scenarios = slices.DeleteFunc(slices.Clone(scenarios), func(s cputruth.Scenario) bool {
			return !slices.Contains(strings.Split(list, ","), s.Name)
		})
	}
	configs := []fidelityConfig{{"bpf-99Hz", "bpf", 99, false, false}, {"bpf-499Hz", "bpf", 499, false, false},
		{"perf-99Hz", "perf", 99, false, false}, {"perf-499Hz", "perf", 499, false, false},
		{"bpf-a-99Hz", "bpf", 99, true, false}, {"perf-a-99Hz", "perf", 99, true, false},
		{"bpf-fix-99Hz", "bpf", 99, false, true}, {"bpf-fix-499Hz", "bpf", 499, false, true},
		{"bpf-a-fix-99Hz", "bpf", 99, true, true}, {"bpf-a-fix-499Hz", "bpf", 499, true, true}}
	list := os.Getenv("FLAMEDIFF_FIDELITY_CONFIGS")
	if list == "" {
		list = "bpf-99Hz,bpf-499Hz,perf-99Hz,perf-499Hz,bpf-fix-99Hz,bpf-fix-499Hz"
	}
	configs = slices.DeleteFunc(configs, func(c fidelityConfig) bool { return !slices.Contains(strings.Split(list, ","), c.name) })
	for i := 0; i < b.N; i++ {
		for _, sc := range scenarios {
			fmt.Printf("\n%s (%s):\n", sc.Name, strings.Join(sc.Args, " "))
			for _, c := range configs {
				if err := checkSampler(c.sampler); err != nil {
					fmt.Printf("  %-12s skipped: %v\n", c.name, err)
					continue
				}
				f, err := measureFidelity(bin, b.TempDir(), sc, c, time.Duration(secs)*time.Second)
				if err != nil {
					b.Fatalf("%s, %s: %v", sc.Name, c.name, err)
				}
				fmt.Printf("  %-12s %s\n", c.name, f)
			}
		}
	}
}

func checkSampler(name string) error {
	if name == "bpf" {
		return capture.CheckBPF()
	}
	return capture.CheckPerf()
}

// fidelityConfig is one sampler configuration of BenchmarkFidelity.
type fidelityConfig struct {
	name    string
	sampler string
	freq    int
	perCPU  bool
	fix     bool // capture.Options.SwitchFix
}

// fidelity is what one run measured.
type fidelity struct {
	funcs          []string
	sampled, truth map[string]float64 // inclusive share, percent
	sampledCPU     float64            // samples / frequency, seconds
	accountedCPU   float64            // schedstat, seconds
	switchIn       float64            // percent of samples with finish_task_switch as the leaf
	samples        int64
}

func (f *fidelity) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sampled/accounted CPU %.3f (%.2f/%.2f s, %d samples), switch-in %.1f%%;", f.sampledCPU/f.accountedCPU, f.sampledCPU, f.accountedCPU, f.samples, f.switchIn)
	worst, beyond := 0.0, false
	for _, fn := range f.funcs {
		d := f.sampled[fn] - f.truth[fn]
		worst = math.Max(worst, math.Abs(d))
		se := shareSE(f.truth[fn], f.samples)
		beyond = beyond || math.Abs(d) > 2+2*se
		fmt.Fprintf(&b, " %s %.1f%% (true %.1f%%, %+.1f ± %.1f)", fn, f.sampled[fn], f.truth[fn], d, se)
	}
	fmt.Fprintf(&b, "; worst %.1f pp", worst)
	if beyond {
		b.WriteString(", beyond 2 pp by more than 2 SE")
	}
	return b.String()
}

// shareSE is the standard error, in points, of a share of n samples whose
// true value is pct percent, were the samples drawn independently: what a
// sampled share's error is to be read against ("± SE" in the output; 2 SE
// beyond 2 points is flagged).
func shareSE(pct float64, n int64) float64 {
	if n <= 0 {
		return math.Inf(1)
	}
	p := pct / 100
	return 100 * math.Sqrt(p*(1-p)/float64(n))
}

// measureFidelity runs sc, samples it for window with c and compares.
func measureFidelity(bin, dir string, sc cputruth.Scenario, c fidelityConfig, window time.Duration) (*fidelity, error) {
	p, err := cputruth.Start(bin, dir, sc)
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	time.Sleep(500 * time.Millisecond) // past start-up and calibration
	s := newSampler(c.sampler)
	ctx := context.Background()
	o := capture.Options{FrequencyHz: c.freq, Kernel: true, SystemWide: c.perCPU, SwitchFix: c.fix, WorkDir: dir}
	if c.sampler == "perf" {
		// What `flamediff record --sampler perf` walks stacks with by
		// default (--call-graph auto): perf's frame-pointer walk loses
		// the caller of a sample in glibc, built without frame pointers
		// (syscall(2) in the syscalls scenario's syswork).
		o.CallGraph = "dwarf"
	}
	if v, err := strconv.Atoi(os.Getenv("FLAMEDIFF_FIDELITY_TIMER_COST")); err == nil {
		o.TimerProgramCost = time.Duration(v)
	}
	if err := s.Start(ctx, p.PID(), o); err != nil {
		return nil, err
	}
	before, err := p.Snapshot()
	if err != nil {
		_, _ = s.Stop(ctx)
		return nil, err
	}
	time.Sleep(window)
	after, err := p.Snapshot()
	if err != nil {
		_, _ = s.Stop(ctx)
		return nil, err
	}
	res, err := s.Stop(ctx)
	if err != nil {
		return nil, err
	}
	truth := after.Sub(before)
	f := &fidelity{funcs: sc.Funcs, sampled: map[string]float64{}, truth: map[string]float64{},
		accountedCPU: float64(truth.TotalNs()) / 1e9}
	for _, fn := range sc.Funcs {
		f.truth[fn] = truth.Share(fn)
	}
	f.samples = res.Profile.Total()
	f.sampledCPU = float64(f.samples) / float64(c.freq)
	inclusive, switchIn := sharesOf(res.Profile, sc.Funcs)
	for fn, v := range inclusive {
		f.sampled[fn] = v
	}
	f.switchIn = switchIn
	return f, nil
}

// sharesOf returns the inclusive share (percent of samples) of each of
// funcs, and the share of samples whose leaf is the kernel's switch-in
// path.
func sharesOf(p *fold.Profile, funcs []string) (map[string]float64, float64) {
	total := float64(p.Total())
	out := map[string]float64{}
	var sw int64
	for _, st := range p.Stacks {
		leaf := st.Frames[len(st.Frames)-1]
		if strings.HasPrefix(leaf, "finish_task_switch") {
			sw += st.Value
		}
		for _, fn := range funcs {
			if slices.Contains(st.Frames[1:], fn) {
				out[fn] += float64(st.Value)
			}
		}
	}
	if total == 0 {
		return out, 0
	}
	for k := range out {
		out[k] = 100 * out[k] / total
	}
	return out, 100 * float64(sw) / total
}

func newSampler(name string) capture.Sampler {
	if name == "bpf" {
		return capture.NewBPF()
	}
	return capture.NewPerf()
}
