//go:build linux

package capture

import (
	"math"
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/cputruth"
)

// The warning about samples not corrected at context switches
// (diff.SwitchWarning) is checked against the truth on both sides of its
// threshold, with the perf sampler (uncorrected) at 499 Hz on the bursty
// thread of internal/cputruth. With bursts of 400 µs around sleeps of
// 100 µs (about 1,150 switches per CPU-second on a quiet machine) there is
// no warning, and then the functions' shares must be within 2 points of
// the truth, plus three standard errors. Preemptions by other processes
// add switches that hardly bias the shares (docs/fidelity.md); on a
// loaded machine they may bring the warning here, which the test then only
// logs: no warning where the shares are off is what must not happen. With
// bursts of 50 µs (about 8,000) the warning is given, and it is due: the
// worst function is more than 2 points off.
func TestUncorrectedSwitchWarningTruth(t *testing.T) {
	requirePerf(t)
	bin, dir := cputruth.BuildT(t)
	for _, tt := range []struct {
		burst string
		warn  bool
	}{{"400", false}, {"50", true}} {
		sc := cputruth.Scenario{Name: "bursty-jitter-" + tt.burst + "us-100us", Args: []string{"bursty-jitter", tt.burst, "100"}, Funcs: []string{"after_wakeup", "before_sleep"}}
		t.Run(sc.Name, func(t *testing.T) {
			truth, res, w := sampleTruthWindow(t, cputruth.StartT(t, bin, dir, sc), NewPerf(), Options{FrequencyHz: 499})
			m := fold.Meta{Sampler: "perf", Samples: res.Samples, CPUUserSeconds: w.CPUUser, CPUSystemSeconds: w.CPUSystem,
				VoluntaryCtxSwitches: w.Voluntary, InvoluntaryCtxSwitches: w.Involuntary}
			warning := diff.MetaSwitchWarning(&m)
			t.Logf("%.0f switches per CPU-second (%d in %.2f CPU-s); warning: %q", m.SwitchesPerCPUSecond(), w.Voluntary+w.Involuntary, m.CPUSeconds(), warning)
			if tt.warn && warning == "" {
				t.Fatalf("no warning at %.0f switches per CPU-second, want one", m.SwitchesPerCPUSecond())
			}
			total := res.Profile.Total()
			worst, worstSE := 0.0, 0.0
			for _, fn := range sc.Funcs {
				got, want := sampledShare(res.Profile, fn), truth.Share(fn)
				se := shareError(want, total)
				t.Logf("%s: sampled %.2f%%, true %.2f%%, off %+.2f points (standard error %.2f, %d samples)", fn, got, want, got-want, se, total)
				if math.Abs(got-want) > math.Abs(worst) {
					worst, worstSE = got-want, se
				}
			}
			switch {
			case warning == "" && math.Abs(worst) > 2+3*worstSE:
				t.Errorf("no warning, but a function is %+.2f points off: want within 2 points plus 3 standard errors (%.2f)", worst, 2+3*worstSE)
			case tt.warn && math.Abs(worst) <= 2:
				t.Errorf("a warning, but the worst function is only %+.2f points off (the threshold is too low?)", worst)
			}
		})
	}
}

// The warning about corrected samples at many context switches
// (diff.SwitchWarning with a corrected run, diff.CorrectedPointsPerKSwitch)
// is checked against the truth with the BPF sampler's switch fix at 499 Hz
// on the bursty thread. With bursts of 400 µs around sleeps of 100 µs
// (about 1,150 switches per CPU-second) there is no warning, and then the
// functions and the rest of the thread's CPU (mostly its blocking call)
// must be within 2 points of the truth, plus three standard errors. With
// bursts of 20 µs (about 15,000) the warning is given, and it must not
// understate: the rest is within the points it names, plus three standard
// errors (docs/fidelity.md, where the rest came out 1.9 to 4.8 points low
// at this rate).
func TestCorrectedSwitchWarningTruth(t *testing.T) {
	requireBPF(t)
	bin, dir := cputruth.BuildT(t)
	for _, burst := range []string{"400", "20"} {
		sc := cputruth.Scenario{Name: "bursty-jitter-" + burst + "us-100us", Args: []string{"bursty-jitter", burst, "100"}, Funcs: []string{"after_wakeup", "before_sleep"}}
		t.Run(sc.Name, func(t *testing.T) {
			truth, res, w := sampleTruthWindow(t, cputruth.StartT(t, bin, dir, sc), NewBPF(), Options{FrequencyHz: 499, SwitchFix: true})
			m := fold.Meta{Sampler: "bpf", SamplerScope: "thread", SwitchFix: true, Samples: res.Samples, CPUUserSeconds: w.CPUUser, CPUSystemSeconds: w.CPUSystem,
				VoluntaryCtxSwitches: w.Voluntary, InvoluntaryCtxSwitches: w.Involuntary}
			rate := m.SwitchesPerCPUSecond()
			warning := diff.MetaSwitchWarning(&m)
			t.Logf("%.0f switches per CPU-second; warning: %q", rate, warning)
			total := res.Profile.Total()
			restTrue, restSampled := 100.0, 100.0
			for _, fn := range sc.Funcs {
				got, want := sampledShare(res.Profile, fn), truth.Share(fn)
				restTrue -= want
				restSampled -= got
				se := shareError(want, total)
				t.Logf("%s: sampled %.2f%%, true %.2f%%, off %+.2f points (standard error %.2f, %d samples)", fn, got, want, got-want, se, total)
				if warning == "" && math.Abs(got-want) > 2+3*se {
					t.Errorf("no warning, but %s is %+.2f points off: want within 2 points plus 3 standard errors (%.2f)", fn, got-want, 2+3*se)
				}
			}
			off, se := restSampled-restTrue, shareError(restTrue, total)
			t.Logf("the rest (blocking call and loop): sampled %.2f%%, true %.2f%%, off %+.2f points (standard error %.2f)", restSampled, restTrue, off, se)
			switch bound := diff.CorrectedPointsPerKSwitch * rate / 1000; {
			case warning == "" && math.Abs(off) > 2+3*se:
				t.Errorf("no warning, but the rest is %+.2f points off: want within 2 points plus 3 standard errors (%.2f)", off, 2+3*se)
			case warning != "" && math.Abs(off) > bound+3*se:
				t.Errorf("the warning names up to %.1f points, but the rest is %+.2f points off (plus 3 standard errors: %.2f)", bound, off, bound+3*se)
			}
		})
	}
}
