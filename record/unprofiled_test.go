package record

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/recordtest"
)

// fakeSysbench writes a script named sysbench into a new directory: it
// prints sysbench's header, one interim report a second for secs seconds
// with qps 1001, 1002, ... and the final report of the fixture
// local-read-write-4threads.
func fakeSysbench(t *testing.T, secs int) string {
	t.Helper()
	fixture, err := os.ReadFile("../workload/testdata/sysbench/local-read-write-4threads.sysbench")
	if err != nil {
		t.Fatal(err)
	}
	text := string(fixture)
	i := strings.Index(text, "SQL statistics:")
	if i < 0 {
		t.Fatal("fixture lacks its final report")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "final.txt"), []byte(text[i:]), 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho 'Report intermediate results every 1 second(s)'\necho 'Threads started!'\n"
	for n := 1; n <= secs; n++ {
		q := strconv.Itoa(1000 + n)
		script += "sleep 1\necho '[ " + strconv.Itoa(n) + "s ] thds: 1 tps: " + q + ".00 qps: " + q + ".00 (r/w/o: " + q + ".00/0.00/0.00) lat (ms,95%): 1.00 err/s: 0.00 reconn/s: 0.00'\n"
	}
	script += "cat " + filepath.Join(dir, "final.txt") + "\n"
	path := filepath.Join(dir, "sysbench")
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// cpuSeconds is the CPU time (user + system) of pid from /proc/PID/stat,
// read here rather than by package procstat, as the truth the window's
// figure must not exceed.
func cpuSeconds(t *testing.T, pid int) float64 {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100 // USER_HZ
}

// TestRunUnprofiled records a window without a sampler on a CPU burner
// driven by a fake sysbench whose interim reports are known: run.json says
// sampler none and window unprofiled, has no stacks and no sampler
// figures, its CPU is at most what /proc says the burner used over the
// whole call, and its interval QPS are the script's reports that lie in
// the window, in order.
func TestRunUnprofiled(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("recording reads /proc: Linux only")
	}
	target := recordtest.Burner(t)
	sb := fakeSysbench(t, 6)
	out := filepath.Join(t.TempDir(), "run")
	var st statuses
	before := cpuSeconds(t, target.Process.Pid)
	start := time.Now()
	res, err := Run(context.Background(), Config{
		Sampler: SamplerNone, Target: Target{PID: target.Process.Pid}, Warmup: time.Second, Margin: time.Second,
		Out: out, Workload: []string{sb, "--time=6"},
	}, st.add)
	wall := time.Since(start).Seconds()
	used := cpuSeconds(t, target.Process.Pid) - before
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	m, stacks := recordtest.ReadRun(t, out)
	if m.Sampler != SamplerNone || m.Window != fold.WindowUnprofiled || res.Meta.Window != fold.WindowUnprofiled {
		t.Errorf("run.json sampler %q window %q, want none and %q", m.Sampler, m.Window, fold.WindowUnprofiled)
	}
	if stacks != "" || m.Samples != 0 || m.SampledCPUSeconds != 0 || m.Fidelity != nil {
		t.Errorf("an unprofiled window wrote stacks (%d bytes), samples %d, sampled CPU %v, fidelity %v", len(stacks), m.Samples, m.SampledCPUSeconds, m.Fidelity)
	}
	for _, f := range []string{fold.StacksFile, "profile.pb.gz"} {
		if _, err := os.Stat(filepath.Join(out, f)); err == nil {
			t.Errorf("%s written for an unprofiled window", f)
		}
	}
	if m.Complete == nil || !*m.Complete || len(m.Warnings) != 0 {
		t.Errorf("complete %v, warnings %q; want a complete run without warnings", m.Complete, m.Warnings)
	}
	if m.WorkloadReport != "sysbench" {
		t.Errorf("workload_report %q, want sysbench", m.WorkloadReport)
	}
	// The window is 6 s less the warmup and the margin.
	if m.WindowSeconds < 3.5 || m.WindowSeconds > 4.5 || m.WindowSeconds > wall {
		t.Errorf("window %.2f s, want about 4 s (the call took %.2f s)", m.WindowSeconds, wall)
	}
	if m.CPUSeconds() <= 0 || m.CPUSeconds() > used+0.02 {
		t.Errorf("cpu_seconds %.3f, want more than 0 and at most the %.3f s the burner used over the call", m.CPUSeconds(), used)
	}
	// The script reports qps 1000+N at N s: the window (1 s to 5 s after
	// "Threads started!") holds the reports of 2 s to 5 s, or fewer at its
	// edges when the script's sleeps drift.
	q := m.WorkloadIntervalQPS
	if len(q) < 2 || len(q) > 4 {
		t.Fatalf("workload_interval_qps %v: want 2 to 4 of the script's reports", q)
	}
	for i, v := range q {
		if v < 1002 || v > 1005 || (i > 0 && v != q[i-1]+1) {
			t.Errorf("workload_interval_qps %v: want consecutive reports among 1002 to 1005", q)
			break
		}
	}
	if p := st.phases(); p[PhaseSampling] != 1 || p[PhaseWindowEnd] != 1 {
		t.Errorf("phases %v: want one window", p)
	}
	var b strings.Builder
	res.WriteSummary(&b, nil)
	if !strings.Contains(b.String(), "without a sampler") || strings.Contains(b.String(), "samples") {
		t.Errorf("summary of an unprofiled window:\n%s", b.String())
	}
}

// TestRunSuperSmack records a window without a sampler on a CPU burner
// whose workload prints a real super-smack report (hidba.org, 2011: four
// query types of one client) after the window, and one whose workload
// prints no report: the first run's run.json reads the report (format,
// the q_per_s of its rows summed) and, without server counters, takes its
// operations from that rate over the window; the second reads none.
func TestRunSuperSmack(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("recording reads /proc: Linux only")
	}
	fixture, err := filepath.Abs("../workload/testdata/supersmack/hidba-2011-my-smack.supersmack")
	if err != nil {
		t.Fatal(err)
	}
	const want = 497.42 + 4974.16 + 2487.08 + 746.12 // the report's q_per_s column
	for _, tc := range []struct {
		name, script, format string
		qps                  float64
	}{
		{"report", "sleep 3; cat " + fixture, "super-smack", want},
		{"no report", "sleep 3; echo done", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := recordtest.Burner(t)
			out := filepath.Join(t.TempDir(), "run")
			_, err := Run(context.Background(), Config{
				Sampler: SamplerNone, Target: Target{PID: target.Process.Pid}, Warmup: 500 * time.Millisecond, Duration: time.Second,
				Out: out, Workload: []string{"sh", "-c", tc.script},
			}, nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			m, _ := recordtest.ReadRun(t, out)
			if m.WorkloadReport != tc.format || math.Abs(m.WorkloadQPS-tc.qps) > 1e-6 {
				t.Errorf("workload_report %q, workload_qps %v; want %q, %v", m.WorkloadReport, m.WorkloadQPS, tc.format, tc.qps)
			}
			if tc.qps == 0 {
				if m.Operations != 0 {
					t.Errorf("operations %d (%s) without a report or counters, want 0", m.Operations, m.OpsCounter)
				}
				return
			}
			if ops := int64(want*m.WindowSeconds + 0.5); m.Operations != ops || !strings.Contains(m.OpsCounter, "super-smack") {
				t.Errorf("operations %d counted by %q; want %d (the report's rate x the %.3f s window), by super-smack queries", m.Operations, m.OpsCounter, ops, m.WindowSeconds)
			}
		})
	}
}

// TestRunWorkloadLimit records a window of a workload that would run for
// a minute with a limit of 3 s: Run stops it then, and the run is
// complete (the window was whole), with a warning saying the workload was
// stopped and the stopped command's exit status.
func TestRunWorkloadLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("recording reads /proc: Linux only")
	}
	target := recordtest.Burner(t)
	out := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	_, err := Run(context.Background(), Config{
		Sampler: SamplerNone, Target: Target{PID: target.Process.Pid}, Warmup: 500 * time.Millisecond, Duration: time.Second,
		Out: out, Workload: []string{"sh", "-c", "echo started; sleep 60"}, WorkloadLimit: 3 * time.Second,
	}, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if took > 20*time.Second {
		t.Errorf("Run took %s: the workload was not stopped at its 3 s limit", took.Round(time.Second))
	}
	m, _ := recordtest.ReadRun(t, out)
	if m.Complete == nil || !*m.Complete {
		t.Errorf("complete %v (%s): a workload stopped at its limit after a whole window is no failure", m.Complete, m.Incomplete)
	}
	if len(m.Warnings) != 1 || !strings.Contains(m.Warnings[0], "was stopped") {
		t.Errorf("warnings %q, want one saying the workload was stopped", m.Warnings)
	}
	if m.WorkloadExitCode == nil || *m.WorkloadExitCode == 0 {
		t.Errorf("workload exit code %v, want the stopped command's (not 0)", m.WorkloadExitCode)
	}
}
