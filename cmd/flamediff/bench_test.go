package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/recordtest"
	"github.com/flamediff/flamediff/symbolmap"
)

func TestBenchFlags(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, wantErr string
		args          []string
	}{
		{"no config", "-c CONFIG is required", []string{"bench"}},
		{"bad repeat", "--repeat 0", []string{"bench", "-c", "x.yaml", "--repeat", "0"}},
		{"bad placement", `--placement "server=x": server: CPU list "x"`, []string{"bench", "-c", "x.yaml", "--placement", "server=x"}},
		{"out not empty", "is not empty", []string{"bench", "-c", "x.yaml", "--out", full}},
		{"arguments", "unknown command", []string{"bench", "-c", "x.yaml", "extra"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := run(tt.args, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %s", code, exitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("stderr %q, want it to say %q", stderr.String(), tt.wantErr)
			}
		})
	}
}

// A config error names the file, line and fix, and nothing is started.
func TestBenchBadConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "lab.yaml")
	if err := os.WriteFile(cfg, []byte("servers:\n  - label: a\n    suite: nosuch\nworkloads:\n  - test: oltp_point_select\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	var stderr bytes.Buffer
	if code := run([]string{"bench", "-c", cfg, "--out", out}, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != exitError {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), cfg+":3:") || !strings.Contains(stderr.String(), "fix:") {
		t.Errorf("stderr %q: want FILE:LINE and a fix", stderr.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("--out %s was created for a config that does not parse", out)
	}
}

// TestBenchEndToEnd is issue #6's CI test: MariaDB 10.11 (installed) and
// 11.8 (fetched from Debian trixie into the cache), one workload of a few
// seconds, two rounds, and a report whose rQPS, per-op figures and
// subtree breakdown are recomputed here from the run directories' run.json
// and stacks.folded. Issue #16: the rQPS and per-op figures are those of
// the unprofiled windows (measure/...: sampler none), the subtree shares
// those of the profiled ones (runs/...).
func TestBenchEndToEnd(t *testing.T) {
	recordtest.RequireSampler(t, "perf")
	requireLabTools(t)
	cache := os.Getenv("FLAMEDIFF_LAB_CACHE") // default: ~/.cache/flamediff
	dir := t.TempDir()
	cfg := filepath.Join(dir, "lab.yaml")
	mapPath, err := filepath.Abs("../../examples/symbolmaps/mariadb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	config := `servers:
  - label: "10.11"
    path: /usr/sbin/mariadbd
    base: true
  - label: "11.8"
    suite: trixie
workloads:
  - name: point-select
    test: oltp_point_select
    table_size: 10000
    duration: 7s
    warmup: 2s
capture: {sampler: perf, frequency: 199}
map: ` + mapPath + "\n"
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	const repeats = 2
	args := []string{"bench", "-c", cfg, "--out", out, "--repeat", strconv.Itoa(repeats)}
	if cache != "" {
		args = append(args, "--cache", cache)
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("flamediff %q exited %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout.String(), stderr.String())
	}
	t.Logf("stdout:\n%s", stdout.String())
	if !strings.Contains(stdout.String(), "rQPS") || !strings.Contains(stdout.String(), filepath.Join(out, "index.html")) {
		t.Errorf("summary lacks the rQPS table or the report's path:\n%s", stdout.String())
	}
	for _, f := range []string{"index.html", "report.md", "report.json", "config.yaml",
		"svg/point-select/10.11.svg", "svg/point-select/11.8.svg", "svg/point-select/10.11-vs-11.8.svg"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", f, err)
		}
	}
	// No server is left running, and its datadir is gone.
	if ps, err := exec.Command("pgrep", "-f", out).Output(); err == nil && len(bytes.TrimSpace(ps)) > 0 {
		t.Errorf("processes still running from %s: %s", out, ps)
	}
	if _, err := os.Stat(filepath.Join(out, "servers", "10.11", "data")); err == nil {
		t.Errorf("the datadir of 10.11 was left in the report directory")
	}

	type figure struct {
		Median float64
		Values []float64
	}
	var rep struct {
		Base          string
		FiguresWindow string `json:"figures_window"`
		Workloads     []struct {
			Name     string
			Versions []struct {
				Server        string
				Missing       string
				Dirs          []string
				MeasureDirs   []string `json:"measure_dirs"`
				FiguresWindow string   `json:"figures_window"`
				QPS           *figure
				CPUPerOp      *figure `json:"cpu_us_per_op"`
				SamplerEffect *figure `json:"sampler_effect"`
				RQPS          *float64
			}
			Subtrees []struct {
				Root    string
				Servers []string
				Rows    []struct {
					Level  int
					Label  string
					Shares []struct{ Median float64 }
				}
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("report.json: %v", err)
	}
	if rep.Base != "10.11" || len(rep.Workloads) != 1 || len(rep.Workloads[0].Versions) != 2 || rep.FiguresWindow != fold.WindowUnprofiled {
		t.Fatalf("report.json: base %q, %d workloads, figures from %q; want 10.11, one workload of two versions, unprofiled", rep.Base, len(rep.Workloads), rep.FiguresWindow)
	}
	w := rep.Workloads[0]
	medianQPS := map[string]float64{}
	stacks := map[string][]*fold.Profile{}
	for _, v := range w.Versions {
		if v.Missing != "" || len(v.Dirs) != repeats || len(v.MeasureDirs) != repeats || v.QPS == nil || v.CPUPerOp == nil || v.SamplerEffect == nil || v.FiguresWindow != fold.WindowUnprofiled {
			t.Fatalf("version %s: missing %q, dirs %v, measure dirs %v, figures from %q: want %d measured repeats of two windows", v.Server, v.Missing, v.Dirs, v.MeasureDirs, v.FiguresWindow, repeats)
		}
		var qps []float64
		for k := range repeats {
			// The unprofiled window: the figures, recomputed from its
			// run.json's counts.
			mm, folded := recordtest.ReadRun(t, v.MeasureDirs[k])
			if mm.Sampler != "none" || mm.Window != fold.WindowUnprofiled || folded != "" || mm.Complete == nil || !*mm.Complete || mm.Label != v.Server {
				t.Errorf("%s: sampler %q, window %q, %d bytes of stacks, complete %v, label %q: want a complete unprofiled window of %s",
					v.MeasureDirs[k], mm.Sampler, mm.Window, len(folded), mm.Complete, mm.Label, v.Server)
			}
			q := float64(mm.Operations) / mm.WindowSeconds
			cpu := mm.CPUSeconds() * 1e6 / float64(mm.Operations)
			if !closeRel(v.QPS.Values[k], q, 1e-9) || !closeRel(v.CPUPerOp.Values[k], cpu, 1e-9) {
				t.Errorf("%s repeat %d: report o/s %.3f, cpu/o %.3f; the unprofiled window's run.json %.3f, %.3f", v.Server, k+1, v.QPS.Values[k], v.CPUPerOp.Values[k], q, cpu)
			}
			qps = append(qps, q)
			// The profiled window: the stacks, and its QPS over the
			// unprofiled one's is the sampler's effect.
			pm, folded := recordtest.ReadRun(t, v.Dirs[k])
			if pm.Sampler != "perf" || pm.Window != fold.WindowProfiled || pm.Complete == nil || !*pm.Complete {
				t.Errorf("%s: sampler %q, window %q, complete %v: want a complete profiled window", v.Dirs[k], pm.Sampler, pm.Window, pm.Complete)
			}
			if e := (float64(pm.Operations) / pm.WindowSeconds) / q; !closeRel(v.SamplerEffect.Values[k], e, 1e-9) {
				t.Errorf("%s repeat %d: sampler effect %.4f, want %.4f", v.Server, k+1, v.SamplerEffect.Values[k], e)
			}
			p, err := fold.ParseFolded(strings.NewReader(folded), true)
			if err != nil {
				t.Fatalf("%s: %v", v.Dirs[k], err)
			}
			stacks[v.Server] = append(stacks[v.Server], p)
		}
		medianQPS[v.Server] = (qps[0] + qps[1]) / 2
		if !closeRel(v.QPS.Median, medianQPS[v.Server], 1e-9) {
			t.Errorf("%s: median o/s %.3f, want %.3f", v.Server, v.QPS.Median, medianQPS[v.Server])
		}
	}
	if v := w.Versions[1]; v.RQPS == nil || !closeRel(*v.RQPS, medianQPS["11.8"]/medianQPS["10.11"], 1e-9) {
		t.Errorf("rQPS of 11.8 = %v, want %.4f / %.4f from the unprofiled windows", v.RQPS, medianQPS["11.8"], medianQPS["10.11"])
	}
	// The subtree root's share, recomputed from the profiled windows'
	// stacks.folded: the share of samples whose stack holds
	// mysqld_stmt_execute, the median (mean of two) over the repeats.
	if len(w.Subtrees) == 0 || w.Subtrees[0].Root != "mysqld_stmt_execute" || len(w.Subtrees[0].Rows) == 0 {
		t.Fatalf("no subtree of mysqld_stmt_execute in report.json")
	}
	st := w.Subtrees[0]
	for i, server := range st.Servers {
		want := 0.0
		for _, p := range stacks[server] {
			var in, total int64
			for _, s := range p.Stacks {
				total += s.Value
				for _, f := range s.Frames[1:] {
					if f == "mysqld_stmt_execute" {
						in += s.Value
						break
					}
				}
			}
			if in == 0 {
				t.Errorf("%s: a repeat has no sample in mysqld_stmt_execute", server)
			}
			want += 100 * float64(in) / float64(total) / repeats
		}
		if got := st.Rows[0].Shares[i].Median; math.Abs(got-want) > 0.01 {
			t.Errorf("%s: mysqld_stmt_execute share %.3f%% in report.json, %.3f%% from stacks.folded", server, got, want)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "| point-select |") || !strings.Contains(string(md), "mysqld_stmt_execute") || !strings.Contains(string(md), ", n=2)") {
		t.Errorf("report.md lacks the rQPS row with its spread, or the subtree:\n%s", md)
	}
}

func closeRel(a, b, tol float64) bool {
	if b == 0 {
		return a == 0
	}
	return math.Abs(a/b-1) <= tol
}

// TestBenchWholeStacks is issue #14's lab check: with the default capture
// settings, every version the demo runs (10.5 and 11.8 fetched from Debian
// with their own glibc, 10.11 installed) gives stacks that reach a thread
// root for at least 99% of the samples, on point-select and
// update-non-index. The share is recomputed here from each run's
// stacks.folded, not read from run.json.
func TestBenchWholeStacks(t *testing.T) {
	recordtest.RequireSampler(t, "bpf")
	requireLabTools(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "lab.yaml")
	// 12 s less the 2 s warmup and the 2 s margin: an 8 s window, less
	// the sampler's start (seconds under the race detector, which CI
	// uses), so that each run has hundreds of samples to judge. The redo
	// log is written at every commit but flushed once a second
	// (innodb_flush_log_at_trx_commit=2): with a flush per commit,
	// update-nonindex waits for the disk and, on a loaded machine, left
	// 75 samples in a window (one CI run at load 8); the commit still
	// writes through glibc, whose frames are what the test is about.
	config := `servers:
  - label: "10.5"
    suite: bullseye
    options: [innodb_flush_log_at_trx_commit=2]
  - label: "10.11"
    path: /usr/sbin/mariadbd
    base: true
    options: [innodb_flush_log_at_trx_commit=2]
  - label: "11.8"
    suite: trixie
    options: [innodb_flush_log_at_trx_commit=2]
workloads:
  - name: point-select
    test: oltp_point_select
    table_size: 10000
    duration: 12s
    warmup: 2s
  - name: update-nonindex
    test: oltp_update_non_index
    table_size: 10000
    duration: 12s
    warmup: 2s
`
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	// One round: the test judges each profiled run's stacks.
	args := []string{"bench", "-q", "-c", cfg, "--out", out, "--repeat", "1"}
	if cache := os.Getenv("FLAMEDIFF_LAB_CACHE"); cache != "" {
		args = append(args, "--cache", cache)
	}
	var stdout, stderr bytes.Buffer
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("flamediff %q exited %d\nstdout:\n%s\nstderr:\n%s", args, code, stdout.String(), stderr.String())
	}
	roots := symbolmap.Default()
	n := 0
	for _, w := range []string{"point-select", "update-nonindex"} {
		for _, v := range []string{"10.5", "10.11", "11.8"} {
			rd := filepath.Join(out, "runs", w, v, "1")
			m, folded := recordtest.ReadRun(t, rd)
			p, err := fold.ParseFolded(strings.NewReader(folded), true)
			if err != nil {
				t.Fatalf("%s: %v", rd, err)
			}
			mp, _ := roots.Apply(p)
			c := diff.StackCompleteness(mp, roots.IsThreadRoot)
			t.Logf("%s %s: %.2f%% of %d samples reach a thread root", w, v, 100-c.IncompletePct, m.Samples)
			if m.Samples < 100 || c.IncompletePct > 1 {
				t.Errorf("%s on %s: %.2f%% of %d samples reach a thread root, want at least 99%% of at least 100", w, v, 100-c.IncompletePct, m.Samples)
			}
			if m.Unwind == nil || m.Unwind.Method != "cfi+fp" {
				t.Errorf("%s on %s: unwind %+v, want the default stack copies (cfi+fp)", w, v, m.Unwind)
			}
			n++
		}
	}
	if n != 6 {
		t.Errorf("checked %d runs, want 6", n)
	}
}

// requireLabTools skips the test (fails it with MARIADBTEST_REQUIRE set)
// unless the lab can run here: sysbench, the installed mariadbd, and apt
// and dpkg to fetch other versions.
func requireLabTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"sysbench", "/usr/sbin/mariadbd", "apt-get", "dpkg"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("MARIADBTEST_REQUIRE") != "" {
				t.Fatalf("%s: %v (MARIADBTEST_REQUIRE is set)", tool, err)
			}
			t.Skipf("%s not installed", tool)
		}
	}
}
