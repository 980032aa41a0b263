package record

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/cputruth"
	"github.com/flamediff/flamediff/internal/recordtest"
	"github.com/flamediff/flamediff/symbolmap"
	"github.com/flamediff/flamediff/workload/procstat"
)

// forEachSampler runs f as a subtest for each sampler that can run here
// (perf, bpf), skipping the others with the reason.
func forEachSampler(t *testing.T, f func(t *testing.T, sampler string)) {
	t.Helper()
	for _, sampler := range []string{"perf", "bpf"} {
		t.Run(sampler, func(t *testing.T) {
			recordtest.RequireSampler(t, sampler)
			f(t, sampler)
		})
	}
}

// statuses collects what Run reports.
type statuses struct {
	mu   sync.Mutex
	list []Status
}

func (s *statuses) add(st Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, st)
}

func (s *statuses) phases() map[Phase]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := map[Phase]int{}
	for _, st := range s.list {
		n[st.Phase]++
	}
	return n
}

func TestRunWorkloadFails(t *testing.T) {
	forEachSampler(t, func(t *testing.T, sampler string) {
		target := recordtest.Burner(t)
		out := filepath.Join(t.TempDir(), "run")
		var got statuses
		start := time.Now()
		res, err := Run(context.Background(), Config{Sampler: sampler, Target: Target{PID: target.Process.Pid},
			Warmup: 500 * time.Millisecond, Duration: 10 * time.Second, Out: out,
			// The workload fails 4 s in: the BPF sampler with the switch
			// fix (record's default) takes 0.7-1.2 s to start here, more
			// on a loaded machine, and a workload that failed at 2 s left
			// no window in one CI run.
			Workload: []string{"sh", "-c", "sleep 4; echo boom; exit 3"}}, got.add)
		if !errors.Is(err, ErrIncomplete) || res == nil {
			t.Fatalf("Run = %v, %v; want a result and an error wrapping ErrIncomplete", res, err)
		}
		if !strings.Contains(err.Error(), "incomplete run written to "+out) {
			t.Errorf("error %q does not say where the incomplete run is", err)
		}
		// It stopped when the workload ended, 4 s in: the window is
		// shorter than the 10 s asked for (a window that ran its course
		// is 10 s). The whole run's wall time only guards against a hang:
		// starting and stopping the sampler and writing the run take
		// seconds of their own on a loaded machine (8.4 s in all in one
		// CI run).
		if took := time.Since(start); took > 30*time.Second {
			t.Errorf("record took %s: it should stop when the workload ends", took)
		}
		m, stacks := recordtest.ReadRun(t, out)
		if m.WindowSeconds <= 0 || m.WindowSeconds > 5 {
			t.Errorf("window %.2f s: want it ended with the workload, 4 s after the start", m.WindowSeconds)
		}
		if m.Complete == nil || *m.Complete || !strings.Contains(m.Incomplete, "workload") {
			t.Errorf("complete = %v, reason %q: want false, naming the workload", m.Complete, m.Incomplete)
		}
		if m.WorkloadExitCode == nil || *m.WorkloadExitCode != 3 {
			t.Errorf("workload exit code = %v, want 3", m.WorkloadExitCode)
		}
		if stacks == "" || m.Samples == 0 || res.Meta.Samples != m.Samples {
			t.Errorf("the samples taken before the failure were not kept (samples %d, result %d)", m.Samples, res.Meta.Samples)
		}
		log, _ := os.ReadFile(filepath.Join(out, "workload.log"))
		if !strings.Contains(string(log), "boom") {
			t.Errorf("workload.log = %q, want the workload's output", log)
		}
		if n := got.phases(); n[PhaseWarmup] != 1 || n[PhaseSampling] != 1 || n[PhaseWindowEnd] != 1 {
			t.Errorf("progress phases %v: want one warmup, one sampling and one window end", n)
		}
		recordtest.NoPerfLeft(t, target.Process.Pid)
	})
}

func TestRunTargetDies(t *testing.T) {
	forEachSampler(t, func(t *testing.T, sampler string) {
		target := recordtest.Burner(t)
		out := filepath.Join(t.TempDir(), "run")
		// The burner's CPU time in the window, the truth the samples are
		// held to: its total when it died less what it had used when
		// sampling started (however much CPU a loaded machine gave it).
		died := make(chan float64, 1)
		kill := func() {
			_ = target.Process.Kill()
			_ = target.Wait()
			died <- (target.ProcessState.UserTime() + target.ProcessState.SystemTime()).Seconds()
		}
		var got statuses
		var atStart float64
		progress := func(st Status) {
			if st.Phase == PhaseSampling {
				if ps, err := procstat.Read("/proc", target.Process.Pid); err == nil {
					atStart = ps.CPUSeconds()
				}
				// Killed 2 s into the window, counted from the
				// window's start: a fixed time from the test's start
				// (2.5 s) fell before the window in a CI run whose
				// BPF sampler took longer than that to start.
				time.AfterFunc(2*time.Second, kill)
			}
			got.add(st)
		}
		_, err := Run(context.Background(), Config{Sampler: sampler, Target: Target{PID: target.Process.Pid},
			Duration: 20 * time.Second, Freq: 199, Out: out}, progress)
		if !errors.Is(err, ErrIncomplete) {
			t.Fatalf("Run: %v, want an error wrapping ErrIncomplete", err)
		}
		m, stacks := recordtest.ReadRun(t, out)
		if m.Complete == nil || *m.Complete || !strings.Contains(m.Incomplete, "died") {
			t.Errorf("complete = %v, reason %q: want false, saying the process died", m.Complete, m.Incomplete)
		}
		inWindow := <-died - atStart
		if sampled := float64(m.Samples) / 199; inWindow <= 0 || sampled < 0.5*inWindow || sampled > 1.2*inWindow || !strings.Contains(stacks, "sh") {
			t.Errorf("samples = %d (%.2f CPU-s), stacks %q: want what was sampled before the process died, the %.2f CPU-s it used in the window", m.Samples, sampled, stacks, inWindow)
		}
		if m.Sampler != sampler {
			t.Errorf("run.json sampler = %q, want %q", m.Sampler, sampler)
		}
		want := "sampling pid " + strconv.Itoa(target.Process.Pid) + " at 199 Hz for 20s"
		got.mu.Lock()
		if len(got.list) == 0 || got.list[0].Phase != PhaseSampling || got.list[0].Message != want {
			t.Errorf("first status %+v, want %q", got.list, want)
		}
		for _, st := range got.list {
			if st.Phase == PhaseTick && (st.Window != 20*time.Second || st.Elapsed <= 0 || st.Elapsed > 5*time.Second) {
				t.Errorf("tick %+v: want the 20s window and the time into it", st)
			}
		}
		got.mu.Unlock()
		recordtest.NoPerfLeft(t, target.Process.Pid)
	})
}

// TestRunInterrupt cancels the context 3 s into the window, as Ctrl-C does.
func TestRunInterrupt(t *testing.T) {
	forEachSampler(t, func(t *testing.T, sampler string) {
		target := recordtest.Burner(t)
		out := filepath.Join(t.TempDir(), "run")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		progress := func(st Status) {
			if st.Phase == PhaseSampling {
				time.AfterFunc(3*time.Second, cancel)
			}
		}
		start := time.Now()
		_, err := Run(ctx, Config{Sampler: sampler, Target: Target{PID: target.Process.Pid},
			Duration: 30 * time.Second, Freq: 199, Out: out}, progress)
		if !errors.Is(err, ErrIncomplete) || time.Since(start) > 25*time.Second {
			t.Fatalf("Run: %v after %s; want an incomplete run soon after the cancel", err, time.Since(start))
		}
		m, stacks := recordtest.ReadRun(t, out)
		if m.Complete == nil || *m.Complete || !strings.Contains(m.Incomplete, "interrupted") {
			t.Errorf("complete = %v, reason %q: want false, interrupted", m.Complete, m.Incomplete)
		}
		if m.Samples < 100 || stacks == "" {
			t.Errorf("samples = %d: the ~3 s sampled before the cancel were not kept", m.Samples)
		}
		var raw map[string]any
		data, _ := os.ReadFile(filepath.Join(out, fold.MetaFile))
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Errorf("run.json is not valid JSON after an interrupt: %v", err)
		}
		recordtest.NoPerfLeft(t, target.Process.Pid)
	})
}

// TestRunInterruptTakesServer: an interrupt that also ends the server and,
// with it, the workload (the lab starts its servers under the context it
// cancels) is recorded as an interrupt. Before, the window's wait chose
// at random between the interrupt and the workload's end, both ready when
// it looked, and a lab run cancelled this way said "the workload ended".
func TestRunInterruptTakesServer(t *testing.T) {
	forEachSampler(t, func(t *testing.T, sampler string) {
		// Three times: each one was a coin toss before.
		for i := range 3 {
			target := recordtest.Burner(t)
			pid := target.Process.Pid
			out := filepath.Join(t.TempDir(), "run")
			ctx, cancel := context.WithCancel(context.Background())
			// The workload lives as long as the server does.
			workload := []string{"sh", "-c", "while kill -0 " + strconv.Itoa(pid) + " 2>/dev/null; do sleep 0.02; done"}
			progress := func(st Status) {
				if st.Phase != PhaseSampling {
					return
				}
				cancel()
				_ = target.Process.Kill()
				_ = target.Wait()
				time.Sleep(300 * time.Millisecond) // the workload sees it and ends
			}
			_, err := Run(ctx, Config{Sampler: sampler, Target: Target{PID: pid}, Workload: workload,
				Duration: 20 * time.Second, Freq: 199, Out: out}, progress)
			cancel()
			if !errors.Is(err, ErrIncomplete) {
				t.Fatalf("try %d: Run: %v, want an error wrapping ErrIncomplete", i, err)
			}
			if m, _ := recordtest.ReadRun(t, out); !strings.Contains(m.Incomplete, "interrupted") {
				t.Errorf("try %d: reason %q: want interrupted, the cause of the server's and the workload's end", i, m.Incomplete)
			}
		}
	})
}

func TestRunWorkloadEndsInWarmup(t *testing.T) {
	forEachSampler(t, func(t *testing.T, sampler string) {
		target := recordtest.Burner(t)
		out := filepath.Join(t.TempDir(), "run")
		start := time.Now()
		res, err := Run(context.Background(), Config{Sampler: sampler, Target: Target{PID: target.Process.Pid},
			Warmup: 5 * time.Second, Duration: 5 * time.Second, Out: out, Workload: []string{"sh", "-c", "exit 0"}}, nil)
		if res != nil || !errors.Is(err, ErrEndedEarly) || !strings.Contains(err.Error(), "during the 5s warmup") {
			t.Fatalf("Run = %v, %v; want no result and an error wrapping ErrEndedEarly naming the 5s warmup", res, err)
		}
		if time.Since(start) > 4*time.Second {
			t.Errorf("record took %s: it should stop as soon as the workload ends", time.Since(start))
		}
		m, _ := recordtest.ReadRun(t, out)
		if m.Complete == nil || *m.Complete || !strings.Contains(m.Incomplete, "warmup") {
			t.Errorf("complete = %v, reason %q: want false, naming the warmup", m.Complete, m.Incomplete)
		}
		recordtest.NoPerfLeft(t, target.Process.Pid)
	})
}

// The window derived from sysbench's --time must leave room for the
// warmup and the margin.
func TestRunNoWindow(t *testing.T) {
	recordtest.RequireSampler(t, "perf")
	target := recordtest.Burner(t)
	out := filepath.Join(t.TempDir(), "run")
	// A stand-in named sysbench that outlives the warmup.
	sysbench := filepath.Join(t.TempDir(), "sysbench")
	if err := os.WriteFile(sysbench, []byte("#!/bin/sh\nsleep 5\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Run(context.Background(), Config{Sampler: "perf", Target: Target{PID: target.Process.Pid}, Out: out,
		Warmup: 100 * time.Millisecond, Margin: 2 * time.Second, Workload: []string{sysbench, "--time=2", "run"}}, nil)
	var nw *NoWindowError
	if !errors.As(err, &nw) || nw.SysbenchTime != 2*time.Second || nw.Margin != 2*time.Second {
		t.Fatalf("Run: %v, want a *NoWindowError of --time=2s and the 2s margin", err)
	}
}

// slowStart is a sampler that takes delay to start, as on a loaded machine.
type slowStart struct {
	capture.Sampler
	delay time.Duration
}

func (s slowStart) Start(ctx context.Context, pid int, opts capture.Options) error {
	time.Sleep(s.delay)
	return s.Sampler.Start(ctx, pid, opts)
}

// A sampler slow to start shortens the window derived from sysbench's
// --time instead of pushing it past the workload's end (which marked the
// run incomplete on a loaded machine); too slow leaves no window, said so.
func TestRunSlowSamplerStart(t *testing.T) {
	recordtest.RequireSampler(t, "perf")
	target := recordtest.Burner(t)
	// A stand-in named sysbench that runs for its --time: 8 s, which
	// leaves a window after the 2 s sampler's start and perf's own start
	// under the suite's load (a 6 s one did not, in a run beside a second
	// suite: 5.1 s).
	sysbench := filepath.Join(t.TempDir(), "sysbench")
	if err := os.WriteFile(sysbench, []byte("#!/bin/sh\nsleep 8\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		delay time.Duration
		ok    bool
	}{{2 * time.Second, true}, {8 * time.Second, false}} {
		out := filepath.Join(t.TempDir(), "run")
		cfg := Config{Sampler: "perf", Target: Target{PID: target.Process.Pid}, Out: out,
			Warmup: 500 * time.Millisecond, Margin: time.Second, Workload: []string{sysbench, "--time=8", "run"},
			NewSampler: func(string) (capture.Sampler, error) { return slowStart{capture.NewPerf(), tt.delay}, nil }}
		res, err := Run(context.Background(), cfg, nil)
		m, _ := recordtest.ReadRun(t, out)
		if !tt.ok {
			if err == nil || !strings.Contains(err.Error(), "starting the sampler and reading the window's first figures took until") ||
				!strings.Contains(err.Error(), "no window is left") || !strings.Contains(err.Error(), "sampler start 8.") || m.Complete == nil || *m.Complete {
				t.Errorf("sampler %s slow: Run = %v, complete %v; want an error saying the sampler's start (8.x s, among the steps it names) left no window, the run incomplete", tt.delay, err, m.Complete)
			}
			continue
		}
		if err != nil || res == nil {
			t.Fatalf("sampler %s slow: Run = %v, %v; want a complete run", tt.delay, res, err)
		}
		// The window ends by the workload's 8 s less the 1 s margin,
		// counted from the workload's start: at most 4.5 s after the
		// warmup and the 2 s start, not the 6.5 s it would be had the
		// sampler started at once.
		if m.Complete == nil || !*m.Complete || m.WindowSeconds <= 0 || m.WindowSeconds > 4.6 {
			t.Errorf("sampler %s slow: complete %v (%q), window %.2f s; want complete, at most 4.5 s", tt.delay, m.Complete, m.Incomplete, m.WindowSeconds)
		}
	}
	recordtest.NoPerfLeft(t, target.Process.Pid)
}

// run.json says how the BPF sampler unwound the stacks: with stack copies
// (always: every sample copied, as the health counters count them) or by
// frame pointers (never).
func TestRunUnwindRecorded(t *testing.T) {
	recordtest.RequireSampler(t, "bpf")
	target := recordtest.Burner(t)
	for _, tt := range []struct {
		stackCopy, method string
	}{
		{"always", "cfi+fp"},
		{"never", "fp"},
	} {
		out := filepath.Join(t.TempDir(), "run")
		_, err := Run(context.Background(), Config{Sampler: "bpf", StackCopy: tt.stackCopy, Target: Target{PID: target.Process.Pid},
			Duration: time.Second, Out: out}, nil)
		if err != nil {
			t.Fatalf("%s: Run: %v", tt.stackCopy, err)
		}
		m, _ := recordtest.ReadRun(t, out)
		u := m.Unwind
		if u == nil || u.Method != tt.method || u.StackCopy != tt.stackCopy {
			t.Fatalf("%s: run.json unwind %+v, want method %s, stack_copy %s", tt.stackCopy, u, tt.method, tt.stackCopy)
		}
		copied := m.SamplerHealth["copied"]
		if uint64(u.CopiedSamples) != copied || (tt.stackCopy == "always") != (copied > 0) {
			t.Errorf("%s: copied_samples %d, sampler_health.copied %d: want equal, and copies only with always", tt.stackCopy, u.CopiedSamples, copied)
		}
		// Every sample taken: the timer's, less those the switch fix
		// (on by default) skipped, plus those it took at switch-outs;
		// a timer sample it counted twice (switch_dense) is one copy.
		h := m.SamplerHealth
		taken := h["samples"] - h["switch_skipped"] + h["switch_deferred"] + h["switch_owed"] + h["switch_blind"]
		if tt.stackCopy == "always" && (copied+h["ringbuf_full"] != taken || len(u.Objects) == 0 || u.WindowBytes == 0) {
			t.Errorf("always: %d copied + %d dropped of %d samples taken (health %v), objects %+v, window %d: want every sample copied, objects and a window",
				copied, h["ringbuf_full"], taken, h, u.Objects, u.WindowBytes)
		}
	}
}

// The switch fix reaches the BPF sampler by default, when required
// (SwitchFix) and not with NoSwitchFix: a thread that blocks every 150 µs
// gets samples taken at its switch-outs, counted in run.json's
// sampler_health, and run.json's switch_fix says whether it ran.
func TestRunSwitchFix(t *testing.T) {
	recordtest.RequireSampler(t, "bpf")
	bin, dir := cputruth.BuildT(t)
	p := cputruth.StartT(t, bin, dir, cputruth.Scenarios[1])
	for _, tt := range []struct {
		name string
		set  func(*Config)
		want bool
	}{
		{"default", func(*Config) {}, true},
		{"required", func(c *Config) { c.SwitchFix = true }, true},
		{"off", func(c *Config) { c.NoSwitchFix = true }, false},
	} {
		out := filepath.Join(dir, tt.name)
		c := Config{Freq: 499, Target: Target{PID: p.PID()}, Duration: 2 * time.Second, Out: out}
		tt.set(&c)
		if _, err := Run(context.Background(), c, nil); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		m, _ := recordtest.ReadRun(t, out)
		h := m.SamplerHealth
		took := h["switch_owed"] > 0 && h["switch_deferred"] > 0 && h["switch_skipped"] >= h["switch_deferred"]
		if m.Sampler != "bpf" || m.SwitchFix != tt.want || took != tt.want {
			t.Errorf("%s: sampler %s, switch_fix %v, health %v: want the fix %v (samples taken at switch-outs, the late ones skipped)", tt.name, m.Sampler, m.SwitchFix, h, tt.want)
		}
		// run.json's fidelity says it per thread name: the bursty
		// thread's samples were corrected.
		var corrected bool
		for _, f := range m.Fidelity {
			corrected = corrected || f.Thread == "bursty" && f.Corrections["switch_owed"] > 0
		}
		if corrected != tt.want {
			t.Errorf("%s: fidelity %+v: want the bursty thread's corrections %v", tt.name, m.Fidelity, tt.want)
		}
	}
	// How well the samples stand for the CPU is capture.TestSwitchFixTruth's
	// (against schedstat: /proc's tick-based figures here are too coarse
	// for a 2 s window).
}

// noFix is a BPF sampler on a kernel that cannot run the switch fix.
type noFix struct{ capture.Sampler }

func (s noFix) Start(ctx context.Context, pid int, opts capture.Options) error {
	if opts.SwitchFix {
		return fmt.Errorf("bpf: load profiler with the switch fix (needs the kernel's BTF): %w", errors.ErrUnsupported)
	}
	return s.Sampler.Start(ctx, pid, opts)
}

// Where the kernel cannot run the switch fix, the default samples without
// it and says so; a required fix is an error.
func TestRunSwitchFixUnsupported(t *testing.T) {
	recordtest.RequireSampler(t, "bpf")
	target := recordtest.Burner(t)
	dir := t.TempDir()
	newSampler := func(string) (capture.Sampler, error) { return noFix{capture.NewBPF()}, nil }
	c := Config{Sampler: "bpf", Freq: 99, Target: Target{PID: target.Process.Pid}, Duration: time.Second, Out: filepath.Join(dir, "default"), NewSampler: newSampler}
	if _, err := Run(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	m, _ := recordtest.ReadRun(t, c.Out)
	if m.SwitchFix || len(m.Warnings) == 0 || !strings.Contains(strings.Join(m.Warnings, "\n"), "sampling without the switch fix") {
		t.Errorf("default on a kernel without the fix: switch_fix %v, warnings %q; want it off and said", m.SwitchFix, m.Warnings)
	}
	c.SwitchFix, c.Out = true, filepath.Join(dir, "required")
	if _, err := Run(context.Background(), c, nil); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("required fix on a kernel without it: %v, want ErrUnsupported", err)
	}
}

// run.json records the call graph perf used, method and stack size, and the
// size is the one in perf.data's event attributes (perf evlist -v:
// sample_stack_user), not only what record meant to ask for. With the
// auto sampler, a dwarf call graph (with or without a size) chooses perf;
// the default call graph (auto) is dwarf with perf, and run.json's
// sampler_reason says so.
func TestRunCallGraphRecorded(t *testing.T) {
	recordtest.RequireSampler(t, "perf")
	target := recordtest.Burner(t)
	for _, tt := range []struct {
		sampler, callGraph string
		wantMethod         string
		wantBytes          int // run.json and perf.data's sample_stack_user; 0: none
	}{
		{"auto", "dwarf", "dwarf", capture.DefaultDwarfStackBytes},
		{"auto", "dwarf,4096", "dwarf", 4096},
		{"auto", "fp", "fp", 0},
		{"perf", "", "dwarf", capture.DefaultDwarfStackBytes},
		{"perf", "fp", "fp", 0},
	} {
		out := filepath.Join(t.TempDir(), "run")
		_, err := Run(context.Background(), Config{Sampler: tt.sampler, CallGraph: tt.callGraph, Target: Target{PID: target.Process.Pid},
			Duration: time.Second, Out: out, KeepRaw: true}, nil)
		if err != nil {
			t.Fatalf("%s: Run: %v", tt.callGraph, err)
		}
		m, _ := recordtest.ReadRun(t, out)
		if m.CallGraph != tt.wantMethod || m.CallGraphStackBytes != tt.wantBytes {
			t.Errorf("%s: run.json call_graph %q, call_graph_stack_bytes %d; want %q, %d", tt.callGraph, m.CallGraph, m.CallGraphStackBytes, tt.wantMethod, tt.wantBytes)
		}
		if u := m.Unwind; m.Sampler == "perf" && (u == nil || u.Method != tt.wantMethod || u.WindowBytes != tt.wantBytes) {
			t.Errorf("%s: run.json unwind %+v, want method %s, window %d bytes", tt.callGraph, u, tt.wantMethod, tt.wantBytes)
		}
		if tt.wantMethod == "dwarf" && m.Sampler != "perf" {
			t.Errorf("%s: auto chose %q, want perf", tt.callGraph, m.Sampler)
		}
		if auto := strings.Contains(m.SamplerReason, "call graph auto: dwarf"); auto != (tt.callGraph == "") {
			t.Errorf("%s %q: sampler_reason %q: want it to say that auto chose dwarf exactly when the call graph was left to auto", tt.sampler, tt.callGraph, m.SamplerReason)
		}
		if m.Sampler != "perf" {
			continue // no perf.data to check
		}
		ev, err := exec.Command("perf", "evlist", "-v", "-i", filepath.Join(out, "perf.data")).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: perf evlist: %v: %s", tt.callGraph, err, ev)
		}
		got := 0
		if _, v, ok := strings.Cut(string(ev), "sample_stack_user: "); ok {
			v, _, _ = strings.Cut(strings.TrimSpace(v), ",")
			got, _ = strconv.Atoi(strings.Fields(v)[0])
		}
		if got != tt.wantBytes {
			t.Errorf("%s: perf.data's sample_stack_user = %d, want %d (evlist: %s)", tt.callGraph, got, tt.wantBytes, ev)
		}
	}
	recordtest.NoPerfLeft(t, target.Process.Pid)
}

// threeThreads burns CPU in three threads: main, whose frame-pointer
// chain reaches __libc_start_call_main (a thread root), a pthread whose
// chain reaches start_thread, and one spinning in zerobp with a zero frame
// pointer, whose walk stops at its first frame.
const threeThreads = `#include <pthread.h>
#include <stdio.h>
__asm__(".text\n.globl zerobp\n.type zerobp,@function\nzerobp:\n\txor %ebp,%ebp\n1:\tjmp 1b\n.size zerobp,.-zerobp\n");
void zerobp(void);
volatile unsigned long sink;
__attribute__((noinline)) void burn(void) { for (unsigned long i = 0; i < 100000; i++) sink += i; }
void *spin(void *arg) { for (;;) burn(); return arg; }
void *cut(void *arg) { zerobp(); return arg; }
int main(void) {
	pthread_t t, u;
	pthread_create(&t, 0, spin, 0);
	pthread_create(&u, 0, cut, 0);
	printf("ready\n");
	fflush(stdout);
	for (;;) burn();
}
`

// startThreeThreads builds threeThreads with gcc (frame pointers kept) and runs it.
func startThreeThreads(t *testing.T) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed: the test builds its program")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "three.c"), filepath.Join(dir, "three")
	if err := os.WriteFile(src, []byte(threeThreads), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-fno-omit-frame-pointer", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("%s: read %q, %v; want ready", bin, line, err)
	}
	return cmd
}

// run.json's stack_completeness is the share of the samples of
// stacks.folded whose stack reaches a thread root, recomputed here from the
// file as a report without a map computes it; its unwind block says how the
// stacks were walked.
func TestRunStackCompleteness(t *testing.T) {
	forEachSampler(t, func(t *testing.T, sampler string) {
		target := startThreeThreads(t)
		out := filepath.Join(t.TempDir(), "run")
		if _, err := Run(context.Background(), Config{Sampler: sampler, Target: Target{PID: target.Process.Pid},
			Duration: time.Second, Out: out}, nil); err != nil {
			t.Fatalf("Run: %v", err)
		}
		m, stacks := recordtest.ReadRun(t, out)
		p, err := fold.ParseFolded(strings.NewReader(stacks), true)
		if err != nil {
			t.Fatalf("stacks.folded: %v", err)
		}
		sm := symbolmap.Default()
		mp, _ := sm.Apply(p)
		c := diff.StackCompleteness(mp, sm.IsThreadRoot)
		if c.Total == 0 {
			t.Fatal("stacks.folded has no samples")
		}
		want := float64(c.Total-c.Incomplete) / float64(c.Total)
		// The program's truth: the stacks cut are those of zerobp's
		// thread, and only those.
		var zero int64
		for _, st := range p.Stacks {
			if slices.Contains(st.Frames, "zerobp") {
				zero += st.Value
			}
		}
		if zero == 0 || zero != c.Incomplete {
			t.Errorf("%d samples in zerobp, %d cut of %d: want the cut ones to be zerobp's, and some\n%s", zero, c.Incomplete, c.Total, stacks)
		}
		if m.StackCompleteness == nil {
			t.Fatalf("run.json has no stack_completeness; stacks.folded gives %v", want)
		}
		t.Logf("stack_completeness %v (%d of %d samples cut), unwind %+v", *m.StackCompleteness, c.Incomplete, c.Total, m.Unwind)
		if got := *m.StackCompleteness; math.Abs(got-want) > 1e-12 {
			t.Errorf("run.json stack_completeness %v; stacks.folded gives %v (%d of %d samples cut)", got, want, c.Incomplete, c.Total)
		}
		if m.Unwind == nil || m.Unwind.Method == "" {
			t.Errorf("run.json unwind %+v, want a method", m.Unwind)
		} else if m.Unwind.Method != m.CallGraph && m.Unwind.Method != "cfi+fp" {
			t.Errorf("run.json unwind method %q, call_graph %q: want the call graph, or cfi+fp", m.Unwind.Method, m.CallGraph)
		}
	})
}

// slowPrepare is a sampler whose setup takes delay, as loading the BPF
// program does on a loaded machine, and can be done before Start
// (capture.Preparer).
type slowPrepare struct {
	capture.Sampler
	delay    time.Duration
	prepared bool
}

func (s *slowPrepare) Prepare(ctx context.Context, pid int, opts capture.Options) error {
	time.Sleep(s.delay)
	s.prepared = true
	return nil
}

func (s *slowPrepare) Start(ctx context.Context, pid int, opts capture.Options) error {
	if !s.prepared {
		return errors.New("started before it was prepared")
	}
	return s.Sampler.Start(ctx, pid, opts)
}

// A sampler that can be prepared is prepared before the workload starts, so
// that its slow setup costs no window: with a 3.5 s setup, sysbench
// --time=6, 0.5 s warmup and 1 s margin, the window is still about 4.5 s
// (it would be at most 1 s had the setup been part of starting).
func TestRunPreparesSampler(t *testing.T) {
	recordtest.RequireSampler(t, "perf")
	target := recordtest.Burner(t)
	sysbench := filepath.Join(t.TempDir(), "sysbench")
	if err := os.WriteFile(sysbench, []byte("#!/bin/sh\nsleep 6\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	s := &slowPrepare{Sampler: capture.NewPerf(), delay: 3500 * time.Millisecond}
	cfg := Config{Sampler: "perf", Target: Target{PID: target.Process.Pid}, Out: out,
		Warmup: 500 * time.Millisecond, Margin: time.Second, Workload: []string{sysbench, "--time=6", "run"},
		NewSampler: func(string) (capture.Sampler, error) { return s, nil }}
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	m, _ := recordtest.ReadRun(t, out)
	if m.WindowSeconds < 2.5 {
		t.Errorf("window %.2f s with a sampler that takes 3.5 s to prepare, want about 4.5 s: the setup was not done before the workload", m.WindowSeconds)
	}
	recordtest.NoPerfLeft(t, target.Process.Pid)
}

// noFixPrepare is a BPF sampler prepared on a kernel that cannot run the
// switch fix: Prepare refuses it.
type noFixPrepare struct{ *capture.BPF }

func (s noFixPrepare) Prepare(ctx context.Context, pid int, opts capture.Options) error {
	if opts.SwitchFix {
		return fmt.Errorf("bpf: load profiler with the switch fix (needs the kernel's BTF): %w", errors.ErrUnsupported)
	}
	return s.BPF.Prepare(ctx, pid, opts)
}

// The fallback without the switch fix works when the refusal comes at
// Prepare, and the sampler then starts without it.
func TestRunSwitchFixUnsupportedAtPrepare(t *testing.T) {
	recordtest.RequireSampler(t, "bpf")
	target := recordtest.Burner(t)
	c := Config{Sampler: "bpf", Freq: 99, Target: Target{PID: target.Process.Pid}, Duration: time.Second, Out: filepath.Join(t.TempDir(), "run"),
		NewSampler: func(string) (capture.Sampler, error) { return noFixPrepare{capture.NewBPF().(*capture.BPF)}, nil }}
	if _, err := Run(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	m, _ := recordtest.ReadRun(t, c.Out)
	if m.SwitchFix || !strings.Contains(strings.Join(m.Warnings, "\n"), "sampling without the switch fix") || m.Samples == 0 {
		t.Errorf("switch_fix %v, warnings %q, %d samples; want it off, said, and samples", m.SwitchFix, m.Warnings, m.Samples)
	}
}
