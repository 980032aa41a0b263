package record

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/rundir"
	"github.com/flamediff/flamediff/workload"
)

// Phase says what a Status reports.
type Phase int

// The phases of a session, in order.
const (
	// PhaseWarmup: the workload started; Message says its pid and the
	// warmup.
	PhaseWarmup Phase = iota + 1
	// PhaseSampling: the window started; Message says the pid, the
	// frequency and the window.
	PhaseSampling
	// PhaseTick: once a second during the window while the target runs;
	// Elapsed, Window and Samples say how far it is.
	PhaseTick
	// PhaseWindowEnd: the window ended (the sampler is stopped next).
	PhaseWindowEnd
	// PhaseWarning: Message is a warning about the samples (also in
	// Result.Warnings and run.json).
	PhaseWarning
	// PhasePlacement: the server's threads were pinned (Config.Placement);
	// Message says where, and that they stay there after the run.
	PhasePlacement
)

// Status is one report of progress.
type Status struct {
	Phase   Phase
	Message string
	// Elapsed is the time since the window started (PhaseTick).
	Elapsed time.Duration
	// Window is the window's length, 0 when it lasts until the workload
	// ends (PhaseTick).
	Window time.Duration
	// Samples is the sampler's estimate of the samples so far (PhaseTick).
	Samples int64
}

// Result is a run written with its stacks.
type Result struct {
	// Dir is the run directory.
	Dir string
	// Meta is what run.json holds.
	Meta *fold.Meta
	// Warnings are the sampler's warnings and the check of the sampled
	// against the accounted CPU (also in Meta.Warnings, with the
	// sampler's own).
	Warnings []string
}

// Run records one session as cfg says and writes the run directory
// cfg.Out. It blocks until the window is over and the workload has
// finished (or was stopped). progress, when not nil, is called from Run's
// goroutine with each Status.
//
// A cancelled ctx (Ctrl-C) ends the warmup or the window early: the
// workload and the sampler are stopped in order and what was sampled is
// written. The errors: ErrInvalidConfig (Validate), a *FieldError for a
// value that does not fit this machine, a *NoWindowError, and errors of
// the sampler, the server and the workload. Once the run directory exists,
// a session that fails still writes run.json with "complete": false and
// the reason; one that sampled returns its Result with an error wrapping
// ErrIncomplete.
func Run(ctx context.Context, cfg Config, progress func(Status)) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	cfg = cfg.withDefaults()
	r := &recorder{cfg: cfg, progress: progress, ticks: progress != nil, meta: &fold.Meta{Format: 1}}
	if progress == nil {
		r.progress = func(Status) {}
	}
	// The output directory first: a wrong Out fails before anything starts.
	if err := rundir.Create(cfg.Out); err != nil {
		return nil, fmt.Errorf("record: %w", &FieldError{Field: FieldOut, Value: cfg.Out, Err: err})
	}
	pid, err := r.target()
	if err != nil {
		return nil, err
	}
	r.pid = pid
	if err := r.resolvePlacement(); err != nil {
		return nil, err
	}
	if err := r.describe(ctx); err != nil {
		return nil, err
	}
	if err := r.openServer(ctx); err != nil {
		return nil, err
	}
	defer r.cleanup()
	return r.record(ctx)
}

// describe chooses the sampler and fills the metadata that the config
// decides.
func (r *recorder) describe(ctx context.Context) error {
	c := r.cfg
	r.meta.PID = r.pid
	sampler, reason, err := chooseSampler(c)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	r.meta.Sampler, r.meta.SamplerReason = sampler, reason
	r.meta.Label = c.Label
	if len(c.Workload) > 0 {
		r.meta.Workload = strings.Join(append(slices.Clone(c.WorkloadEnv), c.Workload...), " ")
	}
	if sampler == SamplerNone {
		r.meta.Window = fold.WindowUnprofiled
		return nil
	}
	r.meta.Window = fold.WindowProfiled
	r.meta.FrequencyHz = float64(c.Freq)
	// Validate parsed it already; the copy size goes in run.json as the
	// sampler will use it.
	cg, err := ParseCallGraph(c.CallGraph)
	if err != nil {
		return fmt.Errorf("record: call graph %w", err)
	}
	if cg.Method == CallGraphAuto && sampler == "perf" {
		r.meta.SamplerReason = strings.TrimPrefix(r.meta.SamplerReason+"; call graph auto: dwarf, as perf's frame-pointer walk stops in code without frame pointers (glibc)", "; ")
	}
	cg = resolveCallGraph(cg, sampler)
	r.callGraph = cg.String()
	r.meta.CallGraph, r.meta.CallGraphStackBytes = cg.Method, cg.StackBytes
	r.meta.SamplerScope = "thread"
	if c.PerCPU {
		r.meta.SamplerScope = "cpu"
	}
	r.meta.Unit = fold.UnitSamples
	r.meta.Event = c.Event
	switch {
	case sampler == "bpf":
		r.meta.Event = capture.DefaultEvent
	case c.Event == "auto":
		ev, why := capture.DetectEvent(ctx)
		r.meta.Event = ev
		r.meta.SamplerReason = strings.TrimPrefix(r.meta.SamplerReason+"; event "+ev+": "+why, "; ")
	}
	return nil
}

// target resolves the process to sample.
func (r *recorder) target() (int, error) {
	c := r.cfg
	switch {
	case c.Target.PID != 0:
		if _, err := os.Stat(filepath.Join(c.ProcRoot, strconv.Itoa(c.Target.PID))); err != nil {
			return 0, fmt.Errorf("record: %w", &FieldError{Field: FieldPID, Value: strconv.Itoa(c.Target.PID), Err: capture.ErrProcessGone})
		}
		return c.Target.PID, nil
	case c.Target.PIDFile != "":
		pid, err := capture.ReadPIDFile(c.Target.PIDFile)
		if err != nil {
			return 0, fmt.Errorf("record: %w", err)
		}
		return pid, nil
	case c.Target.Process != "":
		ps, err := capture.FindProcesses(c.ProcRoot, c.Target.Process)
		if err != nil {
			return 0, fmt.Errorf("record: %w", err)
		}
		switch len(ps) {
		case 0:
			return 0, fmt.Errorf("record: %w", &FieldError{Field: FieldProcess, Value: c.Target.Process, Err: capture.ErrNoProcess})
		case 1:
			return ps[0].PID, nil
		}
		return 0, fmt.Errorf("record: %w", &FieldError{Field: FieldProcess, Value: c.Target.Process, Err: capture.ErrAmbiguous, Candidates: ps})
	}
	p, err := capture.FindServer(c.ProcRoot)
	if err != nil {
		return 0, fmt.Errorf("record: %w", &FieldError{Field: FieldTarget, Err: err})
	}
	return p.PID, nil
}

func (r *recorder) openServer(ctx context.Context) error {
	c := r.cfg
	dsn := c.DSN
	if c.Socket != "" {
		dsn = workload.SocketDSN(c.Socket, c.User, "")
	}
	if dsn == "" {
		return nil
	}
	srv, err := workload.OpenServer(ctx, dsn)
	if err != nil {
		return fmt.Errorf("record: server: %w", err)
	}
	r.server = srv
	if v, err := srv.Version(ctx); err == nil {
		r.meta.ServerVersion = v
	}
	if _, err := srv.Counters(ctx, c.OpsCounter...); err != nil {
		return fmt.Errorf("record: %w", &FieldError{Field: FieldOpsCounter, Err: err})
	}
	return nil
}

// chooseSampler picks the sampler for c.Sampler and says why.
func chooseSampler(c Config) (name, why string, err error) {
	switch c.Sampler {
	case SamplerNone:
		return SamplerNone, "none: a window measured without a sampler (throughput and per-op figures of the server alone, no stacks)", nil
	case "perf":
		return "perf", "", capture.CheckPerf()
	case "bpf":
		if err := capture.CheckBPF(); err != nil {
			return "", "", &FieldError{Field: FieldSampler, Value: "bpf", Err: err}
		}
		return "bpf", "", nil
	}
	// auto
	if cg, _ := ParseCallGraph(c.CallGraph); cg.Method == capture.CallGraphDwarf {
		return "perf", "auto: --call-graph dwarf needs perf (the BPF sampler walks frame pointers)", capture.CheckPerf()
	}
	if c.Event == "cycles" {
		return "perf", "auto: --event cycles needs perf (the BPF sampler uses cpu-clock)", capture.CheckPerf()
	}
	if c.SwitchFix {
		if err := capture.CheckBPF(); err != nil {
			return "", "", &FieldError{Field: FieldSampler, Value: "bpf", Err: err}
		}
		return "bpf", "auto: bpf (the switch fix corrects the BPF sampler's events)", nil
	}
	if c.OffCPU {
		if err := capture.CheckBPF(); err != nil {
			return "", "", &FieldError{Field: FieldSampler, Value: "bpf", Err: err}
		}
		return "bpf", "auto: bpf (off-CPU profiles need the BPF sampler)", nil
	}
	berr := capture.CheckBPF()
	if berr == nil {
		return "bpf", "auto: bpf (the kernel and privileges allow it: stacks counted in the kernel, no perf binary or perf.data)", nil
	}
	if perr := capture.CheckPerf(); perr != nil {
		return "", "", fmt.Errorf("no sampler can run here: bpf: %w; perf: %w", berr, perr)
	}
	return "perf", fmt.Sprintf("auto: perf, as the BPF sampler cannot run here (%v)", berr), nil
}

func (r *recorder) newSampler() (capture.Sampler, error) {
	if r.cfg.NewSampler != nil {
		return r.cfg.NewSampler(r.meta.Sampler)
	}
	if r.meta.Sampler == "bpf" {
		return capture.NewBPF(), nil
	}
	return capture.NewPerf(), nil
}

func errOr(err error, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

// errNothingSampled is the sampler's error when Stop returned nothing.
var errNothingSampled = errors.New("the sampler returned nothing")
