package record

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/internal/cputruth"
	"github.com/flamediff/flamediff/internal/recordtest"
)

// A perf run (not corrected at context switches) of a thread that
// switches about 8,000 times per CPU-second says in run.json that its
// shares may be off (diff.SwitchWarning, validated against the truth in
// capture.TestUncorrectedSwitchWarningTruth); a perf run of a thread that
// never blocks says it exactly when its preemptions by other processes
// pass the threshold (none on a quiet machine, some on a loaded one).
func TestRunUncorrectedSwitchWarning(t *testing.T) {
	recordtest.RequireSampler(t, "perf")
	bin, dir := cputruth.BuildT(t)
	bursty := cputruth.StartT(t, bin, dir, cputruth.Scenario{Name: "bursty", Args: []string{"bursty-jitter", "50", "100"}})
	steady := recordtest.Burner(t)
	for _, tt := range []struct {
		name string
		pid  int
		warn bool
	}{{"bursty", bursty.PID(), true}, {"steady", steady.Process.Pid, false}} {
		t.Run(tt.name, func(t *testing.T) {
			c := Config{Sampler: "perf", Freq: 99, Target: Target{PID: tt.pid}, Duration: 2 * time.Second, Out: filepath.Join(t.TempDir(), "run")}
			if _, err := Run(context.Background(), c, nil); err != nil {
				t.Fatal(err)
			}
			m, _ := recordtest.ReadRun(t, c.Out)
			warned := strings.Contains(strings.Join(m.Warnings, "\n"), "not corrected at context switches (the perf sampler)")
			t.Logf("%.0f switches per CPU-second; warnings %q", m.SwitchesPerCPUSecond(), m.Warnings)
			want := diff.MetaSwitchWarning(m) != ""
			if warned != want || tt.warn && !warned {
				t.Errorf("%.0f switches per CPU-second, warnings %q: want the switch warning: %v", m.SwitchesPerCPUSecond(), m.Warnings, want || tt.warn)
			}
		})
	}
}

// A BPF run with the switch fix (record's default where the kernel allows
// it) of a thread that switches about 15,000 times per CPU-second says in
// run.json that even corrected shares may be off there (diff.SwitchWarning
// with a corrected run, validated against the truth in
// capture.TestCorrectedSwitchWarningTruth), and says it exactly when the
// rule does.
func TestRunCorrectedSwitchWarning(t *testing.T) {
	recordtest.RequireSampler(t, "bpf")
	bin, dir := cputruth.BuildT(t)
	bursty := cputruth.StartT(t, bin, dir, cputruth.Scenario{Name: "bursty", Args: []string{"bursty-jitter", "20", "100"}})
	c := Config{Sampler: "bpf", SwitchFix: true, Freq: 99, Target: Target{PID: bursty.PID()}, Duration: 2 * time.Second, Out: filepath.Join(t.TempDir(), "run")}
	if _, err := Run(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	m, _ := recordtest.ReadRun(t, c.Out)
	if !m.SwitchCorrected() {
		t.Fatalf("run.json: sampler %q, scope %q, switch_fix %v, %d samples: want a corrected run", m.Sampler, m.SamplerScope, m.SwitchFix, m.Samples)
	}
	warned := strings.Contains(strings.Join(m.Warnings, "\n"), "were corrected at context switches, but the process switched")
	want := diff.MetaSwitchWarning(m) != ""
	t.Logf("%.0f switches per CPU-second; warnings %q", m.SwitchesPerCPUSecond(), m.Warnings)
	if warned != want || !warned {
		t.Errorf("%.0f switches per CPU-second, warnings %q: want the corrected switch warning (the rule says %v)", m.SwitchesPerCPUSecond(), m.Warnings, want)
	}
}
