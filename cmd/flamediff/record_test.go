package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/internal/recordtest"
	"github.com/flamediff/flamediff/record"
	"github.com/flamediff/flamediff/symbolmap"
)

func TestRecordFlags(t *testing.T) {
	dir := t.TempDir()
	nonEmpty := t.TempDir()
	if err := os.WriteFile(filepath.Join(nonEmpty, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(t *testing.T, o *RecordOptions)
	}{
		{name: "defaults with workload", args: []string{"--out", dir, "--", "sysbench", "x", "run"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.Freq != 99 || o.CallGraph != "auto" || o.Warmup != 5*time.Second || o.Sampler != "auto" || o.PerCPU {
					t.Errorf("defaults = freq %d, call graph %q, warmup %s, sampler %q, per-cpu %v", o.Freq, o.CallGraph, o.Warmup, o.Sampler, o.PerCPU)
				}
				if strings.Join(o.Workload, " ") != "sysbench x run" {
					t.Errorf("workload = %q", o.Workload)
				}
				if len(o.OpsCounter) != 1 || o.OpsCounter[0] != "Questions" {
					t.Errorf("ops counter = %q", o.OpsCounter)
				}
			}},
		{name: "no out", args: []string{"--duration", "1s"}, wantErr: "--out DIR is required"},
		{name: "no duration without workload", args: []string{"--out", dir}, wantErr: "give --duration"},
		{name: "two targets", args: []string{"--out", dir, "--pid", "1", "--process", "x", "--duration", "1s"}, wantErr: "one of --pid"},
		{name: "stack copy", args: []string{"--out", dir, "--stack-copy", "always", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.StackCopy != "always" {
					t.Errorf("--stack-copy always: stack copy %q", o.StackCopy)
				}
			}},
		{name: "bad stack copy", args: []string{"--out", dir, "--stack-copy", "sometimes", "--duration", "1s"}, wantErr: `--stack-copy "sometimes": want never, auto or always`},
		{name: "bad call graph", args: []string{"--out", dir, "--call-graph", "lbr", "--duration", "1s"}, wantErr: `--call-graph "lbr": want auto, fp or dwarf`},
		{name: "dwarf with a size", args: []string{"--out", dir, "--sampler", "perf", "--call-graph", "dwarf,16384", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.CallGraph != "dwarf,16384" {
					t.Errorf("--call-graph dwarf,16384: call graph %q", o.CallGraph)
				}
			}},
		{name: "dwarf size above perf's", args: []string{"--out", dir, "--call-graph", "dwarf,70000", "--duration", "1s"}, wantErr: `--call-graph "dwarf,70000": stack size 70000: want 8 to 65528 bytes`},
		{name: "dwarf size not a multiple of 8", args: []string{"--out", dir, "--call-graph", "dwarf,5001", "--duration", "1s"}, wantErr: "not a multiple of 8 bytes (perf's unit): use 5008"},
		{name: "bpf with dwarf and a size", args: []string{"--out", dir, "--sampler", "bpf", "--call-graph", "dwarf,4096", "--duration", "1s"}, wantErr: "needs --sampler perf"},
		{name: "bad freq", args: []string{"--out", dir, "--freq", "0", "--duration", "1s"}, wantErr: "want 1 to 10000 Hz"},
		{name: "bad sampler", args: []string{"--out", dir, "--sampler", "ebpf", "--duration", "1s"}, wantErr: "want perf, bpf, auto or none"},
		{name: "none with per-cpu", args: []string{"--out", dir, "--sampler", "none", "--per-cpu", "--duration", "1s"}, wantErr: "--sampler none samples nothing"},
		{name: "none", args: []string{"--out", dir, "--sampler", "none", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.Sampler != "none" || o.SwitchFix || o.NoSwitchFix {
					t.Errorf("--sampler none: sampler %q, switch fix %v/%v", o.Sampler, o.SwitchFix, o.NoSwitchFix)
				}
			}},
		{name: "bpf with dwarf", args: []string{"--out", dir, "--sampler", "bpf", "--call-graph", "dwarf", "--duration", "1s"}, wantErr: "needs --sampler perf"},
		{name: "switch fix with perf", args: []string{"--out", dir, "--switch-fix", "--sampler", "perf", "--duration", "1s"}, wantErr: "--switch-fix corrects the BPF sampler's cpu-clock events"},
		{name: "switch fix with cycles", args: []string{"--out", dir, "--switch-fix", "--event", "cycles", "--duration", "1s"}, wantErr: "--switch-fix corrects"},
		{name: "switch fix", args: []string{"--out", dir, "--switch-fix", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if !o.SwitchFix || o.NoSwitchFix {
					t.Errorf("--switch-fix: SwitchFix %v, NoSwitchFix %v; want it required", o.SwitchFix, o.NoSwitchFix)
				}
			}},
		{name: "off-cpu with perf", args: []string{"--out", dir, "--off-cpu", "--sampler", "perf", "--duration", "1s"}, wantErr: "--off-cpu needs the BPF sampler"},
		{name: "off-cpu-min alone", args: []string{"--out", dir, "--off-cpu-min", "1ms", "--duration", "1s"}, wantErr: "--off-cpu-min 1ms: want 0 or more, with --off-cpu"},
		{name: "off-cpu", args: []string{"--out", dir, "--off-cpu", "--off-cpu-min", "50us", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if !o.OffCPU || o.OffCPUMin != 50*time.Microsecond {
					t.Errorf("--off-cpu --off-cpu-min 50us: OffCPU %v, OffCPUMin %s; want true, 50µs", o.OffCPU, o.OffCPUMin)
				}
			}},
		{name: "switch fix by default", args: []string{"--out", dir, "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.SwitchFix || o.NoSwitchFix {
					t.Errorf("default: SwitchFix %v, NoSwitchFix %v; want neither (record's default: on where it can)", o.SwitchFix, o.NoSwitchFix)
				}
			}},
		{name: "switch fix off", args: []string{"--out", dir, "--switch-fix=false", "--sampler", "perf", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.SwitchFix || !o.NoSwitchFix {
					t.Errorf("--switch-fix=false: SwitchFix %v, NoSwitchFix %v; want it off", o.SwitchFix, o.NoSwitchFix)
				}
			}},
		{name: "perf by default has no switch fix", args: []string{"--out", dir, "--sampler", "perf", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.SwitchFix {
					t.Errorf("--sampler perf: SwitchFix required")
				}
			}},
		{name: "bpf per cpu", args: []string{"--out", dir, "--sampler", "bpf", "--per-cpu", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if !o.PerCPU || o.Sampler != "bpf" {
					t.Errorf("--sampler bpf --per-cpu: per-cpu %v, sampler %q", o.PerCPU, o.Sampler)
				}
			}},
		{name: "per-thread is the default", args: []string{"--out", dir, "--per-thread", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.PerCPU {
					t.Error("--per-thread (deprecated) gave per-CPU events")
				}
			}},
		{name: "socket and dsn", args: []string{"--out", dir, "--socket", "s", "--dsn", "d", "--duration", "1s"}, wantErr: "give one of --socket and --dsn"},
		{name: "placement none by default", args: []string{"--out", dir, "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.Placement != "none" {
					t.Errorf("default placement %q, want none (record does not pin a server it did not start unless asked)", o.Placement)
				}
			}},
		{name: "placement list", args: []string{"--out", dir, "--placement", "server=1,client=0", "--duration", "1s"},
			check: func(t *testing.T, o *RecordOptions) {
				if o.Placement != "server=1,client=0" {
					t.Errorf("--placement server=1,client=0: placement %q", o.Placement)
				}
			}},
		{name: "bad placement", args: []string{"--out", dir, "--placement", "apart", "--duration", "1s"}, wantErr: `--placement "apart": want none, same, separate`},
		{name: "out not empty", args: []string{"--out", nonEmpty, "--duration", "1s"}, wantErr: "is not empty"},
		{name: "args before dash", args: []string{"--out", dir, "stray", "--", "sysbench"}, wantErr: "no arguments before --"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *RecordOptions
			s := &streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			cmd := newRecordCmd(s, func(o *RecordOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("record %q: err = %v, want it to contain %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("record %q: %v", tt.args, err)
			}
			tt.check(t, got)
		})
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// buildFlamediff builds the command into a temporary directory, for tests
// that signal a real process.
func buildFlamediff(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "flamediff")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// interruptAt starts argv, waits (at most startWithin) until its stderr
// says marker, lets it run 3 s more, sends SIGINT and checks that it exits
// with status 1 within stopWithin. It returns the pid and what it printed
// on stderr.
func interruptAt(t *testing.T, argv []string, marker string, startWithin, stopWithin time.Duration) (int, string) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(startWithin); !strings.Contains(stderr.String(), marker); {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("%q did not appear within %s; stderr:\n%s", marker, startWithin, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%s after SIGINT: %v, want exit status 1; stderr:\n%s", argv[1], err, stderr.String())
		}
	case <-time.After(stopWithin):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s did not stop within %s of SIGINT; stderr:\n%s", argv[1], stopWithin, stderr.String())
	}
	return cmd.Process.Pid, stderr.String()
}

func within(got, want, frac float64) bool {
	if want == 0 {
		return got == 0
	}
	d := (got - want) / want
	return d <= frac && d >= -frac
}

// TestRecordMariaDB is the end-to-end test: a real MariaDB, a real sysbench
// oltp_update_non_index run, flamediff record around it.
func TestRecordMariaDB(t *testing.T) {
	recordtest.RequireSampler(t, "perf")
	recordtest.RequireSampler(t, "bpf") // --sampler auto is expected to pick it
	srv := mariadbtest.Start(t, mariadbtest.Options{})
	srv.Prepare(t, "oltp_update_non_index", 10000)
	out := filepath.Join(t.TempDir(), "run")
	// 20 s: the window is what is left of 20 - 3 - 2 s once the sampler
	// runs, and the BPF sampler with the switch fix took 8 s to start in
	// one CI run (a 14 s workload left a 1.3 s window, too short for
	// sysbench's per-second reports to cover).
	sb := srv.Sysbench(t, "oltp_update_non_index", "--time=20", "--report-interval=1", "run")
	args := append([]string{"record", "--pid", strconv.Itoa(srv.PID), "--socket", srv.Socket,
		"--freq", "499", "--warmup", "3s", "--margin", "2s", "--out", out, "--"}, sb...)
	var stdout, stderr bytes.Buffer
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("flamediff %q exited %d:\n%s\nserver log:\n%s", args, code, stderr.String(), srv.ErrorLog())
	}
	t.Logf("stderr:\n%s", stderr.String())
	m, stacks := recordtest.ReadRun(t, out)
	for _, fn := range []string{"mysqld_stmt_execute", "mysql_update", "trans_commit_stmt"} {
		if !strings.Contains(stacks, ";"+fn+";") && !strings.Contains(stacks, ";"+fn+" ") {
			t.Errorf("stacks.folded has no %s", fn)
		}
	}
	if m.Complete == nil || !*m.Complete {
		t.Errorf("run.json complete = %v (%s), want true", m.Complete, m.Incomplete)
	}
	if !strings.Contains(m.ServerVersion, "MariaDB") || m.Label == "" {
		t.Errorf("server version %q, label %q", m.ServerVersion, m.Label)
	}
	// The window ends --margin before sysbench's --time is up, counted
	// from the workload's start: at most 20 - 3 - 2 = 15 s, less what the
	// sampler took to start (complete, above: it ended before the
	// workload did).
	if m.WindowSeconds < 1 || m.WindowSeconds > 15.3 {
		t.Errorf("window = %.2f s, want at most 20 - 3 - 2 = 15 s, less the sampler's start", m.WindowSeconds)
	}
	// Operations from the server's Questions counter agree with sysbench's
	// own report of the same window (its per-second reports inside it).
	if m.WorkloadWindowQPS == 0 || !within(m.QPS, m.WorkloadWindowQPS, 0.10) {
		t.Errorf("QPS from the server %.1f vs sysbench's %.1f over the window: want within 10%%", m.QPS, m.WorkloadWindowQPS)
	}
	if m.WorkloadQPS == 0 {
		t.Errorf("sysbench's report was not parsed")
	}
	if m.Operations == 0 || m.OpsCounter != "Questions" {
		t.Errorf("operations %d (%s)", m.Operations, m.OpsCounter)
	}
	// --sampler auto picked the BPF sampler where it can run, said so, and
	// sampled on the server's threads.
	if m.Sampler != "bpf" || !strings.HasPrefix(m.SamplerReason, "auto: bpf") || m.SamplerScope != "thread" {
		t.Errorf("sampler %q (%q), scope %q: want bpf with the auto reason, per-thread", m.Sampler, m.SamplerReason, m.SamplerScope)
	}
	// Every sample counted, none lost: the timer's samples less those
	// the switch fix skipped, plus those it took at switch-outs and the
	// second count of the timer samples it counted twice.
	h := m.SamplerHealth
	if h["samples"]-h["switch_skipped"]+h["switch_deferred"]+h["switch_owed"]+h["switch_blind"]+h["switch_dense"] != uint64(m.Samples) || h["map_full"] != 0 {
		t.Errorf("sampler health %v (samples %d): want every sample counted, none lost", h, m.Samples)
	}
	// The sampler saw the CPU the process used: with the switch fix (on
	// by default) within 3% (without it, per-thread events sampled 10-25%
	// less, more with more context switches; docs/fidelity.md).
	if !m.SwitchFix || !within(m.SampledCPUSeconds, m.CPUSeconds(), 0.03) {
		t.Errorf("switch fix %v, sampled CPU %.2f s vs accounted %.2f s: want the fix, and within 3%%", m.SwitchFix, m.SampledCPUSeconds, m.CPUSeconds())
	}
	if m.VoluntaryCtxSwitches == 0 {
		t.Errorf("no context switches counted")
	}
	// Fidelity per thread name: the names' sampled CPU adds up to the
	// run's, and their run time (schedstat) to the CPU /proc/PID/stat
	// accounted (threads that ran only between the snapshots are missing
	// from it, and stat counts in 10 ms ticks).
	var sampled, accounted float64
	t.Logf("fidelity: %+v", m.Fidelity)
	for _, f := range m.Fidelity {
		sampled += f.SampledCPUSeconds
		accounted += f.AccountedCPUSeconds
	}
	if len(m.Fidelity) == 0 || !within(sampled, m.SampledCPUSeconds, 0.001) || !within(accounted, m.CPUSeconds(), 0.05) {
		t.Errorf("fidelity %+v: sampled %.3f s (run %.3f), accounted %.3f s (stat %.3f): want both to add up",
			m.Fidelity, sampled, m.SampledCPUSeconds, accounted, m.CPUSeconds())
	}
	for _, f := range []string{"profile.pb.gz", "workload.log", "stacks.folded"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v (empty or missing)", f, err)
		}
	}
	// Without server counters, operations come from sysbench's own report.
	out2 := filepath.Join(t.TempDir(), "run2")
	sb2 := srv.Sysbench(t, "oltp_update_non_index", "--time=10", "--report-interval=1", "run")
	// And with the other sampler, at 499 Hz: perf's own dwarf unwinder
	// cuts 0.1-0.3% of this workload's stacks (a sample in an epilogue
	// after `pop %rbp`, whose CFI still finds rbp at CFA-16, below the
	// copy perf takes from the stack pointer: docs/recording.md, "Stacks
	// perf's unwinder cuts"). At 99 Hz the window holds ~320 samples and 4
	// cut ones (0.4-2% of runs) fail the 0.99 below; at 499 Hz, ~1,700
	// samples, it takes 17.
	args2 := append([]string{"record", "--sampler", "perf", "--pid", strconv.Itoa(srv.PID), "--freq", "499", "--warmup", "2s",
		"--margin", "1s", "--out", out2, "--quiet", "--"}, sb2...)
	var stderr2 bytes.Buffer
	if code := run(args2, strings.NewReader(""), &bytes.Buffer{}, &stderr2); code != 0 {
		t.Fatalf("flamediff %q exited %d:\n%s", args2, code, stderr2.String())
	}
	m2, stacks2 := recordtest.ReadRun(t, out2)
	if m2.Sampler != "perf" || strings.HasPrefix(m2.SamplerReason, "auto") || !strings.Contains(stacks2, ";mysqld_stmt_execute;") {
		t.Errorf("--sampler perf: sampler %q (%q), mysqld_stmt_execute in stacks: %v",
			m2.Sampler, m2.SamplerReason, strings.Contains(stacks2, ";mysqld_stmt_execute;"))
	}
	// The perf sampler's default call graph is dwarf (#14): its stacks
	// reach their thread's root through glibc (frame pointers: 38-87% on
	// update-non-index).
	for _, r := range []struct {
		name   string
		m      *fold.Meta
		stacks string
	}{{"bpf", m, stacks}, {"perf", m2, stacks2}} {
		cut := rootless(r.stacks)
		t.Logf("%s: %d samples, %d distinct stacks without a thread root", r.name, r.m.Samples, len(cut))
		if c := r.m.StackCompleteness; c == nil || *c < 0.99 {
			got := "absent"
			if c != nil {
				got = strconv.FormatFloat(*c, 'f', 4, 64)
			}
			t.Errorf("%s with the defaults: stack_completeness %s of %d samples, want at least 0.99; stacks without a thread root (first 20):\n%s",
				r.name, got, r.m.Samples, strings.Join(cut[:min(len(cut), 20)], "\n"))
		}
	}
	if m2.CallGraph != "dwarf" || !strings.Contains(m2.SamplerReason, "call graph auto: dwarf") {
		t.Errorf("--sampler perf: call_graph %q (%q), want dwarf chosen by auto", m2.CallGraph, m2.SamplerReason)
	}
	if !strings.Contains(m2.OpsCounter, "sysbench") || m2.Operations == 0 || m2.ServerVersion != "" {
		t.Errorf("without --socket: operations %d from %q, server version %q; want sysbench's count and no version", m2.Operations, m2.OpsCounter, m2.ServerVersion)
	}
	if !within(m2.QPS, m2.WorkloadWindowQPS, 0.001) {
		t.Errorf("without --socket: QPS %.1f, want sysbench's window QPS %.1f", m2.QPS, m2.WorkloadWindowQPS)
	}

	// report reads it, with per-op figures.
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"report", "--root", "mysqld_stmt_execute", out}, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("report exited %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "µs/op") || !strings.Contains(stdout.String(), "mysqld_stmt_execute") {
		t.Errorf("report of the run has no per-op figures or no subtree:\n%s", stdout.String())
	}
}

// TestRecordInterrupt sends SIGINT to a real flamediff binary mid-window:
// the command's signal handling reaches record.Run (whose own tests cover
// both samplers with a cancelled context).
func TestRecordInterrupt(t *testing.T) {
	recordtest.RequireSampler(t, "perf")
	bin := buildFlamediff(t)
	target := recordtest.Burner(t)
	out := filepath.Join(t.TempDir(), "run")
	// Interrupt 3 s into the window (starting perf may take a while on a
	// loaded machine).
	interruptAt(t, []string{bin, "record", "--sampler", "perf", "--pid", strconv.Itoa(target.Process.Pid), "--duration", "30s", "--freq", "199", "--out", out},
		"sampling pid", 30*time.Second, 20*time.Second)
	m, stacks := recordtest.ReadRun(t, out)
	if m.Complete == nil || *m.Complete || !strings.Contains(m.Incomplete, "interrupted") {
		t.Errorf("complete = %v, reason %q: want false, interrupted", m.Complete, m.Incomplete)
	}
	if m.Samples < 100 || stacks == "" {
		t.Errorf("samples = %d: the ~3 s sampled before Ctrl-C were not kept", m.Samples)
	}
	var raw map[string]any
	data, _ := os.ReadFile(filepath.Join(out, fold.MetaFile))
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Errorf("run.json is not valid JSON after an interrupt: %v", err)
	}
	recordtest.NoPerfLeft(t, target.Process.Pid)
}

// recordError words record's errors with the command's flags, as the
// command always printed them.
func TestRecordErrorWording(t *testing.T) {
	cause := errors.New("cause")
	for _, tt := range []struct {
		err       error
		want      string
		wantUsage bool
	}{
		{fmt.Errorf("record: %w", &record.FieldError{Field: record.FieldOut, Value: "x", Err: errors.New("x: is a file, not a directory")}), "record: --out x: is a file, not a directory", false},
		{fmt.Errorf("record: %w", &record.FieldError{Field: record.FieldPID, Value: "4242", Err: capture.ErrProcessGone}), "record: --pid 4242: " + capture.ErrProcessGone.Error(), false},
		{fmt.Errorf("record: %w", &record.FieldError{Field: record.FieldProcess, Value: "mysqld", Err: capture.ErrNoProcess}), "record: --process mysqld: " + capture.ErrNoProcess.Error(), false},
		{fmt.Errorf("record: %w", &record.FieldError{Field: record.FieldProcess, Value: "mysqld", Err: capture.ErrAmbiguous,
			Candidates: []capture.Process{{PID: 7, Cmdline: []string{"mysqld", "-a"}}}}), "record: --process mysqld: " + capture.ErrAmbiguous.Error() + "; choose one with --pid:\n  7 mysqld -a", false},
		{fmt.Errorf("record: %w", &record.FieldError{Field: record.FieldTarget, Err: cause}), "record: cause (name the process with --pid, --pidfile or --process)", false},
		{fmt.Errorf("record: %w", &record.FieldError{Field: record.FieldSampler, Value: "bpf", Err: cause}), "record: --sampler bpf: cause (--sampler perf uses perf record instead)", false},
		{fmt.Errorf("record: %w", &record.FieldError{Field: record.FieldOpsCounter, Err: cause}), "record: --ops-counter: cause", false},
		{fmt.Errorf("record: the workload ended during the 5s warmup, before sampling started: %w", record.ErrEndedEarly),
			"record: the workload ended during the 5s warmup, before sampling started: it exited 0 too early; make it run longer than --warmup", false},
		{fmt.Errorf("record: %w", &record.NoWindowError{SysbenchTime: 10 * time.Second, Warmup: 5 * time.Second, Margin: 5 * time.Second}),
			"usage: sysbench --time=10s leaves no window after --warmup 5s and --margin 5s", true},
		{fmt.Errorf("record: sampler: %w", cause), "record: sampler: cause", false},
	} {
		got := recordError(tt.err, 5*time.Second)
		if got.Error() != tt.want || errors.Is(got, cli.ErrUsage) != tt.wantUsage {
			t.Errorf("recordError(%q) = %q (usage %v), want %q (usage %v)", tt.err, got, errors.Is(got, cli.ErrUsage), tt.want, tt.wantUsage)
		}
	}
	if recordError(nil, 0) != nil {
		t.Errorf("recordError(nil) is not nil")
	}
}

// The command prints record's errors in its flags' words.
func TestRecordNoSuchTarget(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--pid", "999999999"}, "flamediff: record: --pid 999999999: " + capture.ErrProcessGone.Error() + "\n"},
		{[]string{"--process", "no-such-process-here"}, "flamediff: record: --process no-such-process-here: " + capture.ErrNoProcess.Error() + "\n"},
	} {
		out := filepath.Join(t.TempDir(), "run")
		var stderr bytes.Buffer
		args := append(append([]string{"record"}, tt.args...), "--duration", "1s", "--out", out)
		if code := run(args, strings.NewReader(""), &bytes.Buffer{}, &stderr); code != exitError || stderr.String() != tt.want {
			t.Errorf("flamediff %q: exit %d, stderr %q; want 1 and %q", args, code, stderr.String(), tt.want)
		}
	}
}

func TestRecordSummaryCompleteness(t *testing.T) {
	low, high := 0.62, 0.995
	for _, tt := range []struct {
		meta    fold.Meta
		want    []string
		notWant string
	}{
		{fold.Meta{Label: "a", Sampler: "bpf", StackCompleteness: &low, Unwind: &fold.Unwind{Method: "fp"}},
			[]string{"  stacks reach a thread root in 62.0% of samples (unwinding: fp)\n", "flamediff: warning: stacks reach a thread root in 62.00% of samples", "--stack-copy"}, ""},
		{fold.Meta{Label: "b", Sampler: "bpf", StackCompleteness: &high, Unwind: &fold.Unwind{Method: "cfi+fp"}},
			[]string{"  stacks reach a thread root in 99.5% of samples (unwinding: cfi+fp)\n"}, "warning"},
		{fold.Meta{Label: "c"}, nil, "thread root"},
	} {
		var b bytes.Buffer
		(&record.Result{Dir: "run", Meta: &tt.meta}).WriteSummary(&b, unwindHint)
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: summary %q, want %q", tt.meta.Label, b.String(), w)
			}
		}
		if tt.notWant != "" && strings.Contains(b.String(), tt.notWant) {
			t.Errorf("%s: summary %q, want no %q", tt.meta.Label, b.String(), tt.notWant)
		}
	}
}

// rootless returns the lines of folded stacks (a run's stacks.folded)
// with none of symbolmap.DefaultThreadRoots among their frames, to show
// what a failed completeness check counted.
func rootless(folded string) []string {
	var out []string
	for line := range strings.Lines(folded) {
		line = strings.TrimSpace(line)
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || slices.ContainsFunc(strings.Split(line[:i], ";"), func(f string) bool {
			return slices.Contains(symbolmap.DefaultThreadRoots, f)
		}) {
			continue
		}
		out = append(out, line)
	}
	return out
}
