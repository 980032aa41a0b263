package lab

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/benchreport"
	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/recordtest"
	"github.com/flamediff/flamediff/rundir"
	"github.com/flamediff/flamediff/symbolmap"
)

// The known-answer tests of the lab (issue #16): matrices whose right
// answer is known before they run, so that the report's verdicts (rQPS,
// cpu/o, the attribution of a change to subsystems, "significant" or
// "within noise") are checked against a truth that does not come from the
// lab. Both run the installed MariaDB 10.11 twice, as two servers of one
// config with their own datadirs and sockets.

// kaMatrix is a known-answer matrix as it ran: its config and
// measurements.
type kaMatrix struct {
	cfg    *Config
	rounds int
	runs   []Measurement
}

// runKnownAnswer runs the config yaml's matrix for rounds rounds as
// flamediff bench does (lab.Run, record.Run with the config's capture) in
// a new directory under /tmp (short, for the sockets). It is the one place
// the known-answer tests run a matrix. It skips the test (fails it with
// MARIADBTEST_REQUIRE set) without root, the installed mariadbd or
// sysbench, skips it when neither sampler can run, and fails it when a
// cell is missing.
func runKnownAnswer(t *testing.T, yaml string, rounds int) *kaMatrix {
	t.Helper()
	requireRoot(t)
	requireTool(t, "sysbench")
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		skipOrFail(t, "lab: no /usr/sbin/mariadbd (apt-get install mariadb-server)")
	}
	if capture.CheckBPF() != nil { // the config's sampler, auto, falls back to perf
		recordtest.RequireSampler(t, "perf")
	}
	cfg := parseTestConfig(t, yaml)
	out, err := os.MkdirTemp("/tmp", "flamediff-ka-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("run directories kept in %s", out)
			return
		}
		os.RemoveAll(out)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, cfg, RunOptions{Out: out, Cache: t.TempDir(), Repeat: rounds, Log: &logWriter{t: t}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("matrix of %d cells in %s, load %s", len(res.Runs), time.Since(start).Round(time.Second), loadavg())
	if len(res.Failed) > 0 {
		t.Fatalf("servers failed: %+v", res.Failed)
	}
	for _, r := range res.Runs {
		if r.Missing != "" {
			t.Fatalf("%s on %s repeat %d is missing: %s", r.Workload, r.Server, r.Repeat, r.Missing)
		}
	}
	return &kaMatrix{cfg: cfg, rounds: rounds, runs: res.Runs}
}

// kaSubsystem is one subsystem's CPU µs per operation in every repeat of
// the base and of the target, and whether they differ by more than noise.
type kaSubsystem struct {
	Name         string
	Base, Target []float64
	Test         diff.Significance
}

// Delta is the change of the medians, target − base, in µs per operation.
func (s kaSubsystem) Delta() float64 {
	return diff.SampleOf(s.Target).Median - diff.SampleOf(s.Base).Median
}

// kaVerdict is what the known-answer tests judge of a two-server report:
// the base's and the target's cells, the attribution of the change in CPU
// per operation (Δµs/op by subsystem) and each subsystem's repeats with
// their significance test.
type kaVerdict struct {
	Report       *benchreport.Report
	Base, Target *benchreport.Version
	Attribution  *benchreport.Attribution
	Subsystems   []kaSubsystem
}

// Part returns the attribution's Δµs/op of subsystem name (0 when absent).
func (v *kaVerdict) Part(name string) float64 {
	for _, p := range v.Attribution.Parts {
		if p.Subsystem == name {
			return p.DeltaMicrosPerOp
		}
	}
	return 0
}

// Subsystem returns the repeats of subsystem name.
func (v *kaVerdict) Subsystem(name string) kaSubsystem {
	for _, s := range v.Subsystems {
		if s.Name == name {
			return s
		}
	}
	return kaSubsystem{Name: name}
}

// readKnownAnswer writes the report of the matrix as flamediff bench does
// (lab.WriteReport, with the project's MariaDB symbol map) and returns
// what the tests judge. It is the one place the known-answer tests read
// the report. The subsystems' µs/op per repeat are computed here from each
// repeat's run directory (the map's subsystems times the run's cpu/o) and
// checked against the report's attribution parts, which carry the same
// repeats. It also checks the report's rQPS against the run directories'
// run.json.
func readKnownAnswer(t *testing.T, m *kaMatrix) *kaVerdict {
	t.Helper()
	sm, _, err := symbolmap.Load(filepath.Join("..", "examples", "symbolmaps", "mariadb.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := WriteReport(filepath.Join(t.TempDir(), "report"), m.cfg, sm, m.runs)
	if err != nil {
		t.Fatalf("WriteReport: %v", err)
	}
	if len(rep.Workloads) != 1 || len(rep.Servers) != 2 {
		t.Fatalf("report of %d workloads and servers %q, want one workload and two servers", len(rep.Workloads), rep.Servers)
	}
	w := rep.Workloads[0]
	v := &kaVerdict{Report: rep}
	for _, ver := range w.Versions {
		if ver.Missing != "" || ver.Repeats != m.rounds {
			t.Fatalf("%s: missing %q, %d repeats; want %d", ver.Server, ver.Missing, ver.Repeats, m.rounds)
		}
		if ver.Server == rep.Base {
			v.Base = ver
		} else {
			v.Target = ver
		}
	}
	if len(w.Comparisons) != 1 || w.Comparisons[0].Attribution == nil {
		t.Fatalf("report has %d comparisons, want one with an attribution", len(w.Comparisons))
	}
	v.Attribution = w.Comparisons[0].Attribution

	// rQPS from run.json, read here without package rundir: the median
	// QPS of the target's repeats over the base's, in the windows without
	// a sampler.
	medianQPS := func(ver *benchreport.Version) float64 {
		if len(ver.MeasureDirs) != m.rounds {
			t.Fatalf("%s: unprofiled windows %q, want %d", ver.Server, ver.MeasureDirs, m.rounds)
		}
		var qps []float64
		for _, d := range ver.MeasureDirs {
			meta, _ := recordtest.ReadRun(t, d)
			if meta.Window != fold.WindowUnprofiled || meta.Sampler != "none" {
				t.Errorf("%s: window %q, sampler %q; want unprofiled, none", d, meta.Window, meta.Sampler)
			}
			qps = append(qps, meta.QPS)
		}
		return diff.SampleOf(qps).Median
	}
	// The placement held in every window of every repeat: the server's
	// threads and sysbench pinned to one CPU (the default) and found there
	// at the window's end.
	for _, ver := range []*benchreport.Version{v.Base, v.Target} {
		for _, d := range append(slices.Clone(ver.Dirs), ver.MeasureDirs...) {
			meta, _ := recordtest.ReadRun(t, d)
			if p := meta.Placement; p == nil || p.Asked != DefaultPlacement || p.ServerCPUs == "" || p.ClientCPUs != p.ServerCPUs || len(p.Mismatched) > 0 {
				t.Errorf("%s: run.json placement %+v; want %s, held", d, p, DefaultPlacement)
			}
		}
	}
	want := medianQPS(v.Target) / medianQPS(v.Base)
	if v.Target.RQPS == nil || !closeTo(*v.Target.RQPS, want, 1e-9) {
		t.Errorf("rQPS of %s = %v, want %.4f from run.json", v.Target.Server, v.Target.RQPS, want)
	}

	perRepeat := func(ver *benchreport.Version) map[string][]float64 {
		out := map[string][]float64{}
		for _, d := range ver.Dirs {
			p, err := rundir.Read(d, false)
			if err != nil {
				t.Fatal(err)
			}
			p.Meta.Label = ver.Server
			mp, _ := sm.Apply(p)
			sum := 0.0
			for _, s := range diff.Subsystems(mp, sm.Subsystem, sm.Subsystems()) {
				out[s.Name] = append(out[s.Name], s.MicrosPerOp)
				sum += s.MicrosPerOp
			}
			// Every sample is in one subsystem: they add up to the run's
			// cpu/o, from run.json as read without package rundir.
			meta, _ := recordtest.ReadRun(t, d)
			if cpu := 1e6 * meta.CPUSeconds() / float64(meta.Operations); !closeTo(sum, cpu, 1e-9) {
				t.Errorf("%s: the subsystems add up to %.4f µs/op, run.json says %.4f", d, sum, cpu)
			}
		}
		return out
	}
	bs, ts := perRepeat(v.Base), perRepeat(v.Target)
	names := sm.Subsystems()
	for n := range bs {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names[len(sm.Subsystems()):])
	for _, n := range names {
		b, tg := bs[n], ts[n]
		if len(b) != m.rounds || len(tg) != m.rounds {
			continue // a subsystem found in one version only: the attribution has it
		}
		v.Subsystems = append(v.Subsystems, kaSubsystem{Name: n, Base: b, Target: tg, Test: diff.Compare(b, tg, rep.Alpha)})
		// The report's attribution holds the same repeats.
		for _, p := range v.Attribution.Parts {
			if p.Subsystem != n {
				continue
			}
			if p.Base == nil || p.Target == nil || !slices.EqualFunc(p.Base.Values, b, approx) || !slices.EqualFunc(p.Target.Values, tg, approx) {
				t.Errorf("attribution part %s: the report's repeats %v → %v, recomputed from the run directories %v → %v", n, p.Base, p.Target, b, tg)
			}
		}
	}
	logVerdict(t, v)
	return v
}

// logVerdict logs the figures a known-answer test judges, so that a
// failure (and -v) shows them.
func logVerdict(t *testing.T, v *kaVerdict) {
	t.Helper()
	var b strings.Builder
	fig := func(name string, base, target *benchreport.Figure, test *benchreport.Test) {
		b.WriteString("\n  " + name + ":")
		for _, f := range []*benchreport.Figure{base, target} {
			b.WriteString(" [")
			for i, x := range f.Values {
				if i > 0 {
					b.WriteString(" ")
				}
				b.WriteString(formatF(x))
			}
			b.WriteString("]")
		}
		if test != nil {
			b.WriteString(" welch p " + formatF(test.WelchP) + " perm p " + formatF(test.PermutationP))
			if test.Significant {
				b.WriteString(" SIGNIFICANT")
			} else {
				b.WriteString(" ≈")
			}
		}
	}
	b.WriteString(v.Base.Server + " (base) vs " + v.Target.Server + ", repeats base | target:")
	fig("QPS", v.Base.QPS, v.Target.QPS, v.Target.QPSTest)
	fig("cpu/o µs", v.Base.CPUPerOp, v.Target.CPUPerOp, v.Target.CPUPerOpTest)
	b.WriteString("\n  " + v.Attribution.Sentence)
	for _, s := range v.Subsystems {
		fig("  "+s.Name+" µs/op", &benchreport.Figure{Values: s.Base}, &benchreport.Figure{Values: s.Target},
			&benchreport.Test{WelchP: s.Test.WelchP, PermutationP: s.Test.PermutationP, Significant: s.Test.Significant})
	}
	t.Log(b.String())
}

// aaAlpha is the significance level at which the A/A test judges the
// report's tests, stricter than the report's own (diff.DefaultAlpha,
// 0.05). A test at level α calls two sets of repeats of the same thing
// different in up to α of tries (diff.Compare, 4 repeats a side: 2.4% at
// 0.05, 0.67% at 0.01). An A/A judged on QPS, cpu/o and six subsystems,
// all at 0.05, failed 17% of 20,000 simulated runs of normal noise: one
// CI run in six. At 0.005, with the subsystems judged as one family at
// aaAlpha/k (Bonferroni), 0.84%. A systematic difference the lab makes
// between two servers (runs mislabelled, an order that favours one) of
// three times the noise still shows at that level.
const aaAlpha = 0.005

// significantAt applies diff.Significance's rule to a report's test at
// level alpha: Welch's p below alpha, and the permutation p at most alpha
// or, when so few repeats cannot go that low, at its floor.
func significantAt(tt *benchreport.Test, alpha float64) bool {
	return tt.WelchP < alpha && tt.PermutationP <= math.Max(alpha, tt.MinPermutationP)
}

// TestKnownAnswerAA runs the same server binary (the installed 10.11)
// under two labels, four interleaved rounds of point-select: nothing
// differs but the noise, so the report must not find the QPS (rQPS) or
// the cpu/o of one different from the other's, nor any subsystem's µs/op
// (at aaAlpha). Four rounds, an even number: each label runs first as
// often as second, so an effect of the order (the other server's
// background work after its run) cannot favour one; and with four
// repeats a side the permutation test can reach 0.029 (0.1 with three).
func TestKnownAnswerAA(t *testing.T) {
	m := runKnownAnswer(t, `servers:
  - label: "10.11"
    path: /usr/sbin/mariadbd
    base: true
  - label: "10.11-copy"
    path: /usr/sbin/mariadbd
workloads:
  - name: point-select
    test: oltp_point_select
    table_size: 10000
    duration: 6s
    warmup: 2s
`, 4)
	v := readKnownAnswer(t, m)
	if tt := v.Target.QPSTest; tt == nil || significantAt(tt, aaAlpha) {
		t.Errorf("A/A: the QPS of the same binary differs at level %.2f (rQPS %.3f): %+v", aaAlpha, *v.Target.RQPS, tt)
	} else if tt.Significant {
		t.Logf("A/A: the report calls rQPS %.3f significant at its level %.2f (Welch p %.4f), not at %.2f: a false alarm its level allows", *v.Target.RQPS, v.Report.Alpha, tt.WelchP, aaAlpha)
	}
	if tt := v.Target.CPUPerOpTest; tt == nil || significantAt(tt, aaAlpha) {
		t.Errorf("A/A: the cpu/o of the same binary differs at level %.2f: %+v", aaAlpha, tt)
	}
	var judged []kaSubsystem
	for _, s := range v.Subsystems {
		if slices.Max(s.Base) > 0 || slices.Max(s.Target) > 0 {
			judged = append(judged, s)
		}
	}
	if len(judged) < 3 {
		t.Fatalf("A/A: %d subsystems with CPU in point-select, want at least 3 (network, select, tables...)", len(judged))
	}
	family := aaAlpha / float64(len(judged))
	for _, s := range judged {
		if c := diff.Compare(s.Base, s.Target, family); c.Significant {
			t.Errorf("A/A: subsystem %s differs at level %.4f (%.2f/%d): %v → %v µs/op, Welch p %.5f", s.Name, family, aaAlpha, len(judged), s.Base, s.Target, c.WelchP)
		} else if s.Test.Significant {
			t.Logf("A/A: subsystem %s differs at the report's level %.2f (Welch p %.4f), not at %.4f: a false alarm that level allows", s.Name, v.Report.Alpha, s.Test.WelchP, family)
		}
	}
}

// TestKnownAnswerPlanted plants a cost in one place: the same binary with
// innodb_flush_log_at_trx_commit=0 as the base and =1 as the target, on
// update-nonindex (one autocommit UPDATE per transaction). With 1, every
// commit writes the redo log and waits for it to be on disk in the
// connection's own thread, under trans_commit_stmt → ha_commit_trans
// (__libc_pwrite of the O_DIRECT log and fdatasync); with 0, InnoDB's
// background thread does it once a second. So the report must find the
// target slower (QPS down) and dearer per operation (cpu/o up), both
// significant at its own level, and most of the change of cpu/o in the
// symbol map's "commit" subsystem, with a plus sign, the largest part.
//
// Why this plant: its cost is known in kind and place, it needs no other
// binary, and on these VMs its effect dwarfs the noise. The fsync's wait
// is off CPU, but the log write and flush system calls cost 60–120 µs of
// CPU per commit here, so the plant shows in cpu/o as well as in QPS.
// Measured on this 2-vCPU VM (virtio disk, load 1.4–6.7 from other
// tests), 8 runs of 3–5 rounds, one under -race beside the capture and
// record server tests: QPS 7,070–18,700 → 380–5,100, cpu/o 33–70 →
// 94–315 µs, commit 0.6–2.8 → 52–165 µs/op, 62–98% of the change (98% at
// load 1.4; the rest, update, network and other, grows with the machine's
// load: at a few thousand QPS each statement waits for the disk and runs
// again on cold caches). The target's cpu/o is noisy (CV up to 40% in a run),
// which leaves Welch's test little room with few repeats (p 0.028 with 4
// a side in one run): hence five rounds, where it has more degrees of
// freedom and the permutation test reaches 0.008.
func TestKnownAnswerPlanted(t *testing.T) {
	m := runKnownAnswer(t, `servers:
  - label: trx-commit-0
    path: /usr/sbin/mariadbd
    base: true
    options: [innodb_flush_log_at_trx_commit=0]
  - label: trx-commit-1
    path: /usr/sbin/mariadbd
    options: [innodb_flush_log_at_trx_commit=1]
workloads:
  - name: update-nonindex
    test: oltp_update_non_index
    table_size: 10000
    duration: 6s
    warmup: 2s
`, 5)
	v := readKnownAnswer(t, m)
	bq, tq := v.Base.QPS.Median, v.Target.QPS.Median
	if tt := v.Target.QPSTest; tt == nil || !tt.Significant || tq >= bq {
		t.Errorf("planted: QPS %.0f → %.0f, test %+v; want a significant fall", bq, tq, tt)
	}
	bc, tc := v.Base.CPUPerOp.Median, v.Target.CPUPerOp.Median
	if tt := v.Target.CPUPerOpTest; tt == nil || !tt.Significant || tc <= bc {
		t.Errorf("planted: cpu/o %.2f → %.2f µs, test %+v; want a significant rise", bc, tc, tt)
	}
	commit := v.Subsystem("commit")
	if !commit.Test.Significant || commit.Delta() <= 0 {
		t.Errorf("planted: commit µs/op %v → %v (Welch p %.4f); want a significant rise", commit.Base, commit.Target, commit.Test.WelchP)
	}
	// The report marks it so, its parts judged as one family.
	for _, p := range v.Attribution.Parts {
		if p.Subsystem == "commit" && (p.Test == nil || !p.Test.Significant) {
			t.Errorf("planted: the report's commit part %+.2f µs/op, test %+v; want significant", p.DeltaMicrosPerOp, p.Test)
		}
	}
	total, part := v.Attribution.DeltaMicrosPerOp, v.Part("commit")
	if total <= 0 || part < total/2 {
		t.Errorf("planted: commit has %+.2f of the %+.2f µs/op change (%s); want most of a rise", part, total, v.Attribution.Sentence)
	}
	for _, p := range v.Attribution.Parts {
		if p.Subsystem != "commit" && math.Abs(p.DeltaMicrosPerOp) >= part {
			t.Errorf("planted: %s changes by %+.2f µs/op, as much as commit (%+.2f): %s", p.Subsystem, p.DeltaMicrosPerOp, part, v.Attribution.Sentence)
		}
	}
}

// approx says two figures computed along different paths are equal.
func approx(a, b float64) bool { return closeTo(a, b, 1e-9) }

func closeTo(a, b, tol float64) bool {
	if b == 0 {
		return a == 0
	}
	return math.Abs(a/b-1) <= tol
}

func formatF(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// loadavg is /proc/loadavg's first three figures, for the log.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
