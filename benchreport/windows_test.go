package benchreport

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// measureRun writes an unprofiled window for the fixture run src into
// dst: its run.json with window "unprofiled", sampler none, no sample
// figures, qps and operations times qpsFactor, cpu_seconds times
// cpuFactor, and the per-second QPS given; no stacks.
func measureRun(t *testing.T, src, dst string, qpsFactor, cpuFactor float64, perSecond []float64) {
	t.Helper()
	copyRun(t, src, dst, func(m map[string]any) {
		for _, k := range []string{"samples", "sampled_cpu_seconds", "frequency_hz", "unwind", "stack_completeness", "fidelity", "sampler_health", "call_graph", "event", "unit"} {
			delete(m, k)
		}
		m["sampler"], m["window"] = "none", "unprofiled"
		m["qps"] = m["qps"].(float64) * qpsFactor
		m["operations"] = math.Round(m["operations"].(float64) * qpsFactor)
		m["cpu_seconds"] = m["cpu_seconds"].(float64) * cpuFactor
		if perSecond != nil {
			m["workload_interval_qps"] = perSecond
		}
	}, nil)
	if err := os.Remove(filepath.Join(dst, fold.StacksFile)); err != nil {
		t.Fatal(err)
	}
}

// windowRuns are three repeats of point-select on 10.11 and 11.8: the
// profiled windows are the fixture runs, the unprofiled ones their
// run.json with the QPS of each repeat times qps[server][k] and the CPU
// times 1.1 (so that cpu/o differs from the profiled window's), and
// per-second QPS with a 2% coefficient of variation.
func windowRuns(t *testing.T, qps map[string][]float64) []Run {
	t.Helper()
	dir := t.TempDir()
	var runs []Run
	for _, s := range []string{"10.11", "11.8"} {
		for k, f := range qps[s] {
			m := filepath.Join(dir, fmt.Sprintf("measure-%s-%d", s, k+1))
			measureRun(t, fixtureDir(s, "point-select"), m, f, 1.1, []float64{980, 1000, 1020, 1000})
			runs = append(runs, Run{Server: s, Workload: "point-select", Repeat: k + 1, Dir: fixtureDir(s, "point-select"), MeasureDir: m})
		}
	}
	return runs
}

// The throughput and per-op figures come from the unprofiled windows
// (recomputed here from their run.json), the comparison's cpu/o from the
// profiled ones, the sampler's effect is the one over the other, and the
// report says which window each comes from.
func TestUnprofiledWindows(t *testing.T) {
	runs := windowRuns(t, map[string][]float64{"10.11": {1.20, 1.22, 1.21}, "11.8": {1.30, 1.31, 1.29}})
	r := mustBuild(t, runs, Options{Base: "10.11", Servers: []string{"10.11", "11.8"}, Map: loadMariaDBMap(t)})
	if r.FiguresWindow != fold.WindowUnprofiled {
		t.Errorf("FiguresWindow = %q, want unprofiled", r.FiguresWindow)
	}
	w := r.Workloads[0]
	med := map[string]float64{}
	for _, s := range []string{"10.11", "11.8"} {
		v := w.version(s)
		prof := rawMeta(t, fixtureDir(s, "point-select"))
		var qps, cpu []float64
		for _, run := range runs {
			if run.Server == s {
				m := rawMeta(t, run.MeasureDir)
				qps = append(qps, m["qps"])
				cpu = append(cpu, m["cpu_seconds"]*1e6/m["operations"])
			}
		}
		if v.FiguresWindow != fold.WindowUnprofiled || len(v.MeasureDirs) != 3 || v.Repeats != 3 {
			t.Fatalf("%s: figures window %q, %d measure dirs, %d repeats", s, v.FiguresWindow, len(v.MeasureDirs), v.Repeats)
		}
		for i := range qps {
			if math.Abs(v.QPS.Values[i]-qps[i]) > 1e-9 || math.Abs(v.CPUPerOp.Values[i]-cpu[i]) > 1e-9 {
				t.Errorf("%s repeat %d: o/s %v, cpu/o %v; the unprofiled run.json says %v, %v", s, i+1, v.QPS.Values[i], v.CPUPerOp.Values[i], qps[i], cpu[i])
			}
			if want := prof["qps"] / qps[i]; math.Abs(v.SamplerEffect.Values[i]-want) > 1e-9 {
				t.Errorf("%s repeat %d: sampler effect %v, want profiled %v / unprofiled %v", s, i+1, v.SamplerEffect.Values[i], prof["qps"], qps[i])
			}
		}
		if want := prof["cpu_seconds"] * 1e6 / prof["operations"]; math.Abs(v.ProfiledCPUPerOp.Median-want) > 1e-9 {
			t.Errorf("%s: profiled cpu/o %v, want %v", s, v.ProfiledCPUPerOp.Median, want)
		}
		// The per-second QPS 980, 1000, 1020, 1000: sd 16.33, mean 1000.
		if v.QPSCVPct == nil || math.Abs(v.QPSCVPct.Median-1.633) > 0.001 {
			t.Errorf("%s: QPS cv %v, want 1.633%%", s, v.QPSCVPct)
		}
		// The profiled window ran at 1/1.2 to 1/1.3 of the unprofiled: a
		// sampler cost, significant over three repeats each.
		if v.SamplerEffectTest == nil || !v.SamplerEffectTest.Significant || v.Outliers != nil || v.Untrusted != "" {
			t.Errorf("%s: sampler effect test %+v, outliers %v", s, v.SamplerEffectTest, v.Outliers)
		}
		med[s] = v.QPS.Median
	}
	if v := w.version("11.8"); v.RQPS == nil || math.Abs(*v.RQPS-med["11.8"]/med["10.11"]) > 1e-12 {
		t.Errorf("rQPS %v, want %v", v.RQPS, med["11.8"]/med["10.11"])
	}
	c := w.Comparisons[0]
	if c.Window != fold.WindowProfiled || math.Abs(c.BaseMicrosPerOp-w.version("10.11").ProfiledCPUPerOp.Median) > 0.01 {
		t.Errorf("comparison window %q, base cpu/o %v; want the profiled %v", c.Window, c.BaseMicrosPerOp, w.version("10.11").ProfiledCPUPerOp.Median)
	}
	md := markdown(t, r)
	for _, want := range []string{"QPS cv %", "| sampler |", "without a sampler (unprofiled)", "the profiled windows' own"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"figures_window": "unprofiled"`, `"measure_dirs"`, `"sampler_effect"`, `"qps_cv_pct"`, `"window": "profiled"`} {
		if !strings.Contains(js.String(), want) {
			t.Errorf("report.json lacks %s", want)
		}
	}
}

// A repeat whose unprofiled QPS is far off the others' (a different
// placement on the CPUs) is flagged, named, and its cell marked in every
// table and in the summary; the rest of the cells are not.
func TestOutlier(t *testing.T) {
	runs := windowRuns(t, map[string][]float64{"10.11": {1.00, 1.01, 0.99}, "11.8": {1.00, 3.00, 1.01}})
	r := mustBuild(t, runs, Options{Base: "10.11", Servers: []string{"10.11", "11.8"}, Map: loadMariaDBMap(t)})
	w := r.Workloads[0]
	v := w.version("11.8")
	// The per-second cv is 1.63%: the limit is the 5% floor.
	if len(v.Outliers) == 0 || v.Outliers[0].Figure != "o/s" || v.Outliers[0].Repeat != 2 || v.Outliers[0].LimitPct != outlierFloorPct {
		t.Fatalf("11.8 outliers %+v, want repeat 2's o/s beyond the 5%% floor", v.Outliers)
	}
	// Repeat 2 alone: 3.00 against the median 1.01 (repeat 3), for o/s
	// and cpu/o (the same CPU over three times the operations).
	if len(v.Outliers) != 2 || v.Outliers[1].Figure != "cpu/o µs" || v.Outliers[1].Repeat != 2 {
		t.Errorf("11.8 outliers %+v, want repeat 2's o/s and cpu/o only", v.Outliers)
	}
	if o := v.Outliers[0]; math.Abs(o.DeviationPct-100*(3.00/1.01-1)) > 0.05 {
		t.Errorf("deviation %.2f%%, want %.2f%%", o.DeviationPct, 100*(3.00/1.01-1))
	}
	if !strings.Contains(v.Untrusted, "repeat 2's o/s") {
		t.Errorf("untrusted %q, want repeat 2's o/s named", v.Untrusted)
	}
	if b := w.version("10.11"); b.Untrusted != "" {
		t.Errorf("10.11 untrusted: %s", b.Untrusted)
	}
	md := markdown(t, r)
	golden(t, "windows.md", []byte(md))
	for _, want := range []string{
		"n=3) " + untrustedMark + " |",     // the rQPS cell
		"| 11.8 " + untrustedMark + " | ",  // the cost, relative, repeats tables
		"Δµs/op 11.8 " + untrustedMark,     // the attribution
		"| 11.8 " + untrustedMark + " % |", // the subtree's column
		untrustedMark + " 11.8: cannot be trusted: repeat 2's o/s",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "10.11 (base) "+untrustedMark) {
		t.Errorf("the base is marked")
	}
	var sum bytes.Buffer
	if err := r.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	golden(t, "windows-summary.txt", sum.Bytes())
	if !strings.Contains(sum.String(), untrustedMark+" cannot be trusted: point-select on 11.8: repeat 2's o/s") {
		t.Errorf("summary does not name the untrusted cell:\n%s", sum.String())
	}
}

// An unprofiled window that is missing, or is in fact a profiled one,
// makes its repeat missing with the reason.
func TestUnprofiledMissing(t *testing.T) {
	runs := windowRuns(t, map[string][]float64{"10.11": {1, 1, 1}, "11.8": {1, 1, 1}})
	runs[3].MeasureDir, runs[3].MeasureMissing = "", "record: the server died"
	runs[4].MeasureDir = fixtureDir("11.8", "point-select")
	r := mustBuild(t, runs, Options{Base: "10.11", Servers: []string{"10.11", "11.8"}, Map: loadMariaDBMap(t)})
	v := r.Workloads[0].version("11.8")
	if v.Repeats != 1 || len(r.Missing) != 2 {
		t.Fatalf("11.8: %d repeats, missing %+v; want 1 and two missing", v.Repeats, r.Missing)
	}
	if got := r.Missing[0].Reason; got != "unprofiled window: record: the server died" {
		t.Errorf("missing[0] = %q", got)
	}
	if got := r.Missing[1].Reason; !strings.Contains(got, `window "" (sampler "perf"), not "unprofiled"`) {
		t.Errorf("missing[1] = %q", got)
	}
}
