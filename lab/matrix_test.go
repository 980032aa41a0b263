package lab

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/recordtest"
	"github.com/flamediff/flamediff/record"
)

func parseTestConfig(t *testing.T, yaml string) *Config {
	t.Helper()
	cfg, err := ParseConfig(strings.NewReader(yaml), "lab.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Servers that cannot be resolved leave every cell of theirs missing with
// the reason, in the rotating order of the rounds, and record is never
// called.
func TestRunMissingServers(t *testing.T) {
	cfg := parseTestConfig(t, `servers:
  - label: a
    path: /no/such/a/mariadbd
    base: true
  - label: b
    path: /no/such/b/mariadbd
workloads:
  - name: w1
    test: oltp_point_select
  - name: w2
    test: oltp_read_only
`)
	var log bytes.Buffer
	res, err := Run(context.Background(), cfg, RunOptions{Out: t.TempDir(), Cache: t.TempDir(), Repeat: 2, Log: &log,
		Record: func(context.Context, record.Config) (*record.Result, error) {
			t.Error("record was called for a server that does not run")
			return nil, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range res.Runs {
		got = append(got, r.Workload+"/"+r.Server+"/"+strconv.Itoa(r.Repeat))
		for _, w := range [][2]string{{r.Dir, r.Missing}, {r.MeasureDir, r.MeasureMissing}} {
			if w[0] != "" || !strings.HasPrefix(w[1], "server binary: installed server /no/such/"+r.Server+"/mariadbd") {
				t.Errorf("%s %s %d: dir %q, missing %q; want no directory and the binary's error", r.Workload, r.Server, r.Repeat, w[0], w[1])
			}
		}
	}
	want := "w1/a/1 w1/b/1 w1/b/2 w1/a/2 w2/a/1 w2/b/1 w2/b/2 w2/a/2"
	if strings.Join(got, " ") != want {
		t.Errorf("runs %s, want %s", got, want)
	}
	if len(res.Failed) != 2 || res.Failed[0].Server != "a" || res.Failed[1].Server != "b" {
		t.Errorf("Failed = %+v, want a and b", res.Failed)
	}
	if !strings.HasPrefix(log.String(), "bench: a: resolving /no/such/a/mariadbd\nbench: a: server binary: installed server") {
		t.Errorf("log:\n%s\nwant the resolving line and the reason", log.String())
	}
}

// The record config of a measurement: the server's pid and socket, the
// config's capture, a window from the warmup to a margin before the end.
func TestRecordConfig(t *testing.T) {
	cfg := parseTestConfig(t, `servers:
  - label: "10.11"
    path: /usr/sbin/mariadbd
workloads:
  - name: ps
    test: oltp_point_select
    duration: 10s
    warmup: 2s
capture: {sampler: perf, frequency: 199, events: cpu}
`)
	s := &Session{cfg: cfg}
	b := &labServer{spec: cfg.Servers[0], bin: &Binary{LibcDebugDir: "/d/usr/lib/debug/.build-id"},
		srv: &Server{Socket: "/tmp/s.sock", cmd: &exec.Cmd{Process: &os.Process{Pid: 4242}}}}
	c := s.recordConfig(cfg.Workloads[0], b, "/out/runs/ps/10.11/1")
	if c.Target.PID != 4242 || c.Socket != "/tmp/s.sock" || c.Sampler != "perf" || c.Freq != 199 || !c.PerCPU ||
		c.Warmup != 2*time.Second || c.Margin != 2*time.Second || c.Label != "10.11" || c.Out != "/out/runs/ps/10.11/1" {
		t.Errorf("record config %+v", c)
	}
	if len(c.DebugDirs) != 1 || c.DebugDirs[0] != "/d/usr/lib/debug" {
		t.Errorf("debug dirs %q, want the root above .build-id", c.DebugDirs)
	}
	if c.Placement != DefaultPlacement {
		t.Errorf("placement %q, want the config's (the default, %q)", c.Placement, DefaultPlacement)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	// The unprofiled window: the same workload and window, no sampler.
	u := unprofiled(c)
	if u.Sampler != record.SamplerNone || u.PerCPU || u.SwitchFix || u.DebugDirs != nil ||
		u.Warmup != c.Warmup || u.Margin != c.Margin || u.Socket != c.Socket || u.Target != c.Target || strings.Join(u.Workload, " ") != strings.Join(c.Workload, " ") {
		t.Errorf("unprofiled record config %+v", u)
	}
	if err := u.Validate(); err != nil {
		t.Errorf("unprofiled: Validate() = %v", err)
	}
}

// requireLab skips unless a real matrix can run here: root, perf,
// sysbench and the installed mariadbd.
func requireLab(t *testing.T) {
	t.Helper()
	requireRoot(t)
	if err := capture.CheckPerf(); err != nil {
		t.Skipf("perf cannot sample here: %v", err)
	}
	requireTool(t, "sysbench")
	requireTool(t, "/usr/sbin/mariadbd")
}

// labConfig is the installed 10.11 (base) and, when second is not empty,
// a second server block; one short point-select.
func labConfig(t *testing.T, second string) *Config {
	return parseTestConfig(t, `servers:
  - label: "10.11"
    path: /usr/sbin/mariadbd
    base: true
`+second+`workloads:
  - name: point-select
    test: oltp_point_select
    table_size: 1000
    duration: 8s
    warmup: 2s
capture: {sampler: perf, frequency: 99}
`)
}

// readMeta returns the run metadata of run directory dir.
func readMeta(t *testing.T, dir string) *fold.Meta {
	t.Helper()
	m, _ := recordtest.ReadRun(t, dir)
	return m
}

// noneLeft fails when a process still runs from dir, or a perf process
// started by this test process.
func noneLeft(t *testing.T, dir string) {
	t.Helper()
	if ps, err := exec.Command("pgrep", "-f", dir).Output(); err == nil && len(bytes.TrimSpace(ps)) > 0 {
		t.Errorf("processes still running from %s: %s", dir, ps)
	}
	if ps, err := exec.Command("pgrep", "-P", strconv.Itoa(os.Getpid()), "perf").Output(); err == nil && len(bytes.TrimSpace(ps)) > 0 {
		t.Errorf("perf processes left: %s", ps)
	}
}

// A server that does not start is reported with its error log, its cells
// are missing with the reason, and the other version still runs.
func TestRunServerFails(t *testing.T) {
	requireLab(t)
	cfg := labConfig(t, `  - label: broken
    path: /usr/sbin/mariadbd
    options: [no_such_option_at_all=1]
`)
	out := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	var log markLog
	res, err := Run(context.Background(), cfg, RunOptions{Out: out, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failed) != 1 || res.Failed[0].Server != "broken" || !strings.Contains(res.Failed[0].Reason, "no_such_option_at_all") {
		t.Errorf("Failed = %+v, want broken with the error log's complaint", res.Failed)
	}
	if !strings.Contains(log.String(), "bench: broken: server did not start") {
		t.Errorf("the log does not say the broken server did not start:\n%s", log.String())
	}
	if len(res.Runs) != 2 {
		t.Fatalf("runs %+v, want two", res.Runs)
	}
	for _, r := range res.Runs {
		switch r.Server {
		case "broken":
			if r.Dir != "" || !strings.Contains(r.Missing, "did not start") {
				t.Errorf("broken: dir %q, missing %q", r.Dir, r.Missing)
			}
		case "10.11":
			if r.Missing != "" || r.Dir != filepath.Join(out, "runs", "point-select", "10.11", "1") ||
				r.MeasureMissing != "" || r.MeasureDir != filepath.Join(out, "measure", "point-select", "10.11", "1") {
				t.Fatalf("10.11: dir %q, missing %q, measure dir %q, missing %q", r.Dir, r.Missing, r.MeasureDir, r.MeasureMissing)
			}
			m, stacks := recordtest.ReadRun(t, r.Dir)
			if m.QPS == 0 || m.Complete == nil || !*m.Complete || m.Label != "10.11" || m.Window != fold.WindowProfiled || stacks == "" {
				t.Errorf("10.11 profiled window: qps %.1f, complete %v, label %q, window %q, %d bytes of stacks", m.QPS, m.Complete, m.Label, m.Window, len(stacks))
			}
			m, stacks = recordtest.ReadRun(t, r.MeasureDir)
			if m.QPS == 0 || m.Complete == nil || !*m.Complete || m.Sampler != record.SamplerNone || m.Window != fold.WindowUnprofiled || stacks != "" || len(m.WorkloadIntervalQPS) == 0 {
				t.Errorf("10.11 unprofiled window: qps %.1f, complete %v, sampler %q, window %q, %d bytes of stacks, interval qps %v",
					m.QPS, m.Complete, m.Sampler, m.Window, len(stacks), m.WorkloadIntervalQPS)
			}
			// The default placement held: every server and sysbench
			// thread on one CPU at the end of the window.
			for _, d := range []string{r.Dir, r.MeasureDir} {
				m, _ := recordtest.ReadRun(t, d)
				if p := m.Placement; p == nil || p.Asked != DefaultPlacement || p.ServerCPUs == "" || p.ClientCPUs != p.ServerCPUs ||
					len(p.Server) != 1 || p.Server[0].CPUs != p.ServerCPUs || len(p.Client) != 1 || p.Client[0].CPUs != p.ClientCPUs || len(p.Mismatched) > 0 {
					t.Errorf("%s: run.json placement %+v; want %s, held", d, p, DefaultPlacement)
				}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(out, "servers", "10.11", "data")); err == nil {
		t.Errorf("the datadir of 10.11 was left")
	}
	noneLeft(t, out)
}

// A cancelled context in the middle of a measurement (Ctrl-C): the
// servers and the sampler stop, the finished runs are kept and the others
// say they were interrupted.
func TestRunInterrupt(t *testing.T) {
	requireLab(t)
	cfg := labConfig(t, "")
	out := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Ctrl-C as the second measurement's profiled window (the fourth
	// window: each measurement is an unprofiled then a profiled one)
	// starts, however long the server, the warmup and the sampler took to
	// get there (a loaded machine): a fixed delay from the run's start
	// could land before its window (in the sampler's start) or after it (a
	// sampler slow to start shortens the window).
	var runs atomic.Int32
	rec := func(ctx context.Context, c record.Config) (*record.Result, error) {
		var progress func(record.Status)
		if runs.Add(1) == 4 {
			progress = func(st record.Status) {
				if st.Phase == record.PhaseSampling {
					cancel()
				}
			}
		}
		return record.Run(ctx, c, progress)
	}
	res, err := Run(ctx, cfg, RunOptions{Out: out, Repeat: 3, Log: io.Discard, Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 3 {
		t.Fatalf("runs %+v, want three", res.Runs)
	}
	if m := readMeta(t, res.Runs[0].Dir); m.QPS == 0 {
		t.Errorf("the first, finished run has no figures")
	}
	if r := res.Runs[1]; r.MeasureDir == "" || readMeta(t, r.MeasureDir).QPS == 0 {
		t.Errorf("the second run's unprofiled window, finished before the interrupt: %+v", r)
	}
	if r := res.Runs[1]; r.Dir == "" || !strings.Contains(readMeta(t, r.Dir).Incomplete, "interrupted") {
		t.Errorf("the second run, interrupted: %+v", r)
	}
	// The third did not start: the bench was interrupted, or the server,
	// started under ctx, was killed with it.
	if r := res.Runs[2]; r.Dir != "" || r.MeasureDir != "" || (r.Missing != "bench was interrupted before this run" && !strings.Contains(r.Missing, "context canceled")) {
		t.Errorf("the third run, not started: %+v", r)
	}
	noneLeft(t, out)
}

// markLog is a log safe for concurrent writes; it calls seen once when
// mark first appears.
type markLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	mark string
	seen func()
}

func (b *markLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	if b.seen != nil && strings.Contains(b.buf.String(), b.mark) {
		b.seen()
		b.seen = nil
	}
	return n, err
}

func (b *markLog) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
