package record

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/cputruth"
	"github.com/flamediff/flamediff/internal/recordtest"
	"github.com/flamediff/flamediff/workload/procstat"
)

func TestOffCPUGap(t *testing.T) {
	for _, tt := range []struct {
		name string
		t    fold.OffCPU
		want string // "" or part of the warning
	}{
		{"equal", fold.OffCPU{Voluntary: 1000, ProcVoluntary: 1000, Involuntary: 10, ProcInvoluntary: 10}, ""},
		{"within 3%", fold.OffCPU{Voluntary: 1029, ProcVoluntary: 1000, Involuntary: 97, ProcInvoluntary: 100}, ""},
		{"voluntary off", fold.OffCPU{Voluntary: 1040, ProcVoluntary: 1000}, "voluntary 1040 against /proc's 1000"},
		{"involuntary off", fold.OffCPU{Voluntary: 5, ProcVoluntary: 5, Involuntary: 90, ProcInvoluntary: 100}, "involuntary 90 against /proc's 100"},
		{"a few apart", fold.OffCPU{Voluntary: 5, ProcVoluntary: 5, Involuntary: 32, ProcInvoluntary: 31}, ""},
		{"none in /proc", fold.OffCPU{Involuntary: 6}, "involuntary 6 against /proc's 0"},
		{"minimum", fold.OffCPU{Voluntary: 10, ProcVoluntary: 1000, MinBlockMicros: 100}, ""},
	} {
		got := offCPUGap(&tt.t)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: offCPUGap(%+v) = %q, want %q", tt.name, tt.t, got, tt.want)
		}
	}
}

func TestOffCPUFigures(t *testing.T) {
	m := &fold.Meta{WindowSeconds: 2, VoluntaryCtxSwitches: 70, InvoluntaryCtxSwitches: 3}
	in := fold.OffCPU{Seconds: 3.5, Voluntary: 69, Threads: []fold.OffCPUThread{{Name: "a", Threads: 2, Seconds: 3.5}, {Name: "b"}}}
	got := offCPUFigures(in, m, []procstat.ThreadCPU{{Name: "a", Threads: 2, Seconds: 0.4}}, 50*time.Microsecond)
	if got.ProcVoluntary != 70 || got.ProcInvoluntary != 3 || got.MinBlockMicros != 50 ||
		got.Threads[0].WallMinusCPUSeconds != 3.6 || got.Threads[1].WallMinusCPUSeconds != 0 || in.Threads[0].WallMinusCPUSeconds != 0 {
		t.Errorf("offCPUFigures = %+v: want /proc's 70 and 3, minimum 50 µs, a's 2 x 2 s - 0.4 = 3.6 s, b unknown, the input untouched", got)
	}
}

// record with OffCPU writes the two off-CPU files beside stacks.folded and
// run.json's off_cpu, whose switches are within 3% of /proc's over the
// window (run.json's voluntary_ctxt_switches, read by package procstat),
// on a thread that sleeps 100 µs between bursts of work.
func TestRunOffCPU(t *testing.T) {
	recordtest.RequireSampler(t, "bpf")
	bin, dir := cputruth.BuildT(t)
	p := cputruth.StartT(t, bin, dir, cputruth.Scenarios[1]) // bursty 50 µs, sleep 100 µs
	out := filepath.Join(dir, "run")
	res, err := Run(context.Background(), Config{Target: Target{PID: p.PID()}, Duration: 2 * time.Second, Out: out, OffCPU: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := recordtest.ReadRun(t, out)
	o := m.OffCPU
	if o == nil || m.Sampler != "bpf" {
		t.Fatalf("run.json: sampler %s, off_cpu %+v: want bpf and the off-CPU totals", m.Sampler, o)
	}
	t.Logf("off_cpu %+v; warnings %q", *o, res.Warnings)
	// With the switch fix the samples leave out the off-CPU program's
	// time charged to the threads, and run.json says how much
	// (docs/fidelity.md, "The off-CPU program's cost").
	charged, ok := m.SamplerHealth["offcpu_charged_ns"]
	if m.SwitchFix && !ok {
		t.Errorf("sampler_health %v: no offcpu_charged_ns with the switch fix", m.SamplerHealth)
	}
	t.Logf("sampled %.3f s, accounted %.3f s, of it the off-CPU program's %.3f s", m.SampledCPUSeconds, m.CPUSeconds(), float64(charged)/1e9)
	if o.ProcVoluntary != m.VoluntaryCtxSwitches || o.ProcVoluntary < 5000 {
		t.Errorf("proc_voluntary %d, voluntary_ctxt_switches %d: want the same, thousands", o.ProcVoluntary, m.VoluntaryCtxSwitches)
	}
	if d := float64(o.Voluntary-o.ProcVoluntary) / float64(o.ProcVoluntary); d < -0.03 || d > 0.03 {
		t.Errorf("voluntary switches %d, /proc %d: want within 3%%", o.Voluntary, o.ProcVoluntary)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "OFF-CPU") {
			t.Errorf("warning %q", w)
		}
	}
	for _, f := range []string{fold.OffCPUFile, fold.OffCPUSwitchesFile} {
		data, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !strings.Contains(string(data), "bursty;") || !strings.Contains(string(data), fold.OffCPUVoluntary+" ") {
			t.Errorf("%s: %v; want the bursty thread's stacks with [voluntary] leaves:\n%.500s", f, err, data)
		}
	}
}
