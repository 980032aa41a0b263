package record

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/rundir"
	"github.com/flamediff/flamediff/workload"
	"github.com/flamediff/flamediff/workload/procstat"
)

// recorder holds one recording's state, so that every exit path can
// write what it has and stop what it started.
type recorder struct {
	cfg      Config
	progress func(Status)
	ticks    bool // progress wants PhaseTick (asks the sampler for its count)
	meta     *fold.Meta
	run      *workload.Run
	logFile  *os.File
	sampler  capture.Sampler
	// opts are the sampler's options (samplerOptions), as the fallback
	// without the switch fix left them.
	opts capture.Options
	// callGraph is the sampler's call graph, CallGraph resolved for the
	// chosen sampler (resolveCallGraph).
	callGraph string
	server    *workload.Server
	pid       int
	// runStart is when the workload started; threads notes when sysbench
	// said "Threads started!", the zero of its interim reports' clock.
	runStart time.Time
	threads  *markWriter
	// accounted is the window's run time by thread name (schedstat).
	accounted []procstat.ThreadCPU
	// alive holds the ids of the server's threads alive at the window's end
	// (procstat.Window.Alive): /proc counts their switches only.
	alive map[int]bool
	// outer is /proc's window around the sampler's, from just before it
	// started to just after it stopped (zero when not read).
	outer procstat.Window
	// env is the placement of the server and the client, and the host's
	// figures (environment.go).
	env *environment
}

// window is the sampled window: when it started and ended, and the
// figures read at its start.
type window struct {
	length time.Duration // 0: until the workload ends
	// deadline, when set, is when the window must end: the workload's
	// end (sysbench --time) less the margin. The window's length is then
	// what is left of it once the sampler runs, however long that took.
	deadline   time.Time
	start, end time.Time
	before     *procstat.Snapshot
	cBefore    map[string]int64
	// outerBefore is /proc read just before the sampler starts: with a
	// read just after it stops, a window around the sampler's, whose
	// switch counts bound the off-CPU program's from above.
	outerBefore *procstat.Snapshot
}

// cleanup stops whatever is still running. Safe to call more than once.
func (r *recorder) cleanup() {
	if r.sampler != nil {
		_, _ = r.sampler.Stop(context.Background())
	}
	if r.run != nil {
		_ = r.run.Stop(5 * time.Second)
	}
	if r.logFile != nil {
		_ = r.logFile.Close()
	}
	if r.server != nil {
		_ = r.server.Close()
	}
}

// record runs the window and writes the run directory. An error after the
// window started still writes what was sampled, marked incomplete.
func (r *recorder) record(ctx context.Context) (*Result, error) {
	c := r.cfg
	if err := r.placeServer(); err != nil {
		return nil, err
	}
	if err := r.prepareSampler(ctx); err != nil {
		return nil, err
	}
	if len(c.Workload) > 0 {
		if err := r.startWorkload(ctx); err != nil {
			return nil, err
		}
	}
	win := &window{length: c.Duration}
	if win.length == 0 {
		if t := sysbenchTime(c.Workload); t > 0 {
			if t-c.Warmup-c.Margin <= 0 {
				return nil, fmt.Errorf("record: %w", &NoWindowError{SysbenchTime: t, Warmup: c.Warmup, Margin: c.Margin})
			}
			win.deadline = r.runStart.Add(t - c.Margin)
			win.length = t - c.Warmup - c.Margin
		}
	}
	if err := r.startSampling(ctx, win); err != nil {
		return nil, err
	}

	reason := r.wait(ctx, win)

	// The window's figures, before the sampler is stopped.
	after, procErr := procstat.Read(c.ProcRoot, r.pid)
	r.windowEnd(r.workloadPID())
	var cAfter map[string]int64
	if r.server != nil && procErr == nil {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cAfter, _ = r.server.Counters(cctx, c.OpsCounter...)
		cancel()
	}
	win.end = time.Now()
	var res *capture.Result
	var stopErr error
	if r.sampler != nil {
		res, stopErr = r.sampler.Stop(context.Background())
		r.sampler = nil
		// Only the off-CPU switch check uses the window around the
		// sampler's.
		if res != nil && res.OffCPU != nil && procErr == nil {
			if outerAfter, err := procstat.Read(c.ProcRoot, r.pid); err == nil {
				r.outer = procstat.Diff(win.outerBefore, outerAfter)
			}
		}
	}
	r.meta.EndTime = win.end.UTC().Format(time.RFC3339Nano)
	r.meta.WindowSeconds = win.end.Sub(win.start).Seconds()
	if procErr != nil {
		if reason == "" {
			reason = fmt.Sprintf("the server (pid %d) died during the window", r.pid)
		}
	} else {
		r.procFigures(procstat.Diff(win.before, after))
	}
	if win.cBefore != nil && cAfter != nil {
		r.operations(win.cBefore, cAfter)
	}
	// Let the workload finish on its own (its report covers the whole run),
	// unless we are stopping early.
	if r.run != nil {
		reason = r.finishWorkload(ctx, win, reason)
	}
	if r.meta.WindowSeconds > 0 && r.meta.Operations > 0 {
		r.meta.QPS = float64(r.meta.Operations) / r.meta.WindowSeconds
	}
	r.hostFigures()
	if r.meta.Label == "" {
		r.meta.Label = labelFromVersion(r.meta.ServerVersion, c.Out)
	}
	if r.meta.Sampler == SamplerNone {
		return r.writeUnprofiled(reason)
	}
	if res == nil {
		return nil, r.fail(reason, fmt.Errorf("record: sampler: %w", errOr(stopErr, errNothingSampled)))
	}
	return r.write(res, stopErr, reason)
}

// startWorkload starts the workload, its output going to workload.log,
// and waits out the warmup.
func (r *recorder) startWorkload(ctx context.Context) error {
	c := r.cfg
	f, err := rundir.CreateLog(c.Out)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	r.logFile = f
	// The workload and the sampler outlive a Ctrl-C (ctx) until they are
	// stopped in order, so that what was sampled can be written.
	r.threads = &markWriter{w: f, mark: []byte("Threads started!")}
	var run *workload.Run
	err = r.startClient(func() (err error) {
		run, err = workload.StartEnv(context.WithoutCancel(ctx), c.Workload, c.WorkloadEnv, r.threads)
		return err
	})
	if err != nil {
		return fmt.Errorf("record: workload: %w", err)
	}
	r.run = run
	r.runStart = time.Now()
	r.progress(Status{Phase: PhaseWarmup, Message: fmt.Sprintf("workload started (pid %d); warming up for %s", run.PID(), c.Warmup)})
	select {
	case <-time.After(c.Warmup):
		return nil
	case <-run.Done():
		err := run.Wait()
		code := run.ExitCode()
		r.meta.WorkloadExitCode = &code
		return r.fail("the workload ended during the warmup; nothing was sampled",
			fmt.Errorf("record: the workload ended during the %s warmup, before sampling started: %w", c.Warmup, errOr(err, ErrEndedEarly)))
	case <-ctx.Done():
		return r.fail("interrupted (Ctrl-C) during the warmup; nothing was sampled",
			fmt.Errorf("record: interrupted during the warmup; nothing was sampled"))
	}
}

// prepareSampler makes the sampler and, when it can be (capture.Preparer),
// prepares it before the workload starts: its slow setup (loading and
// verifying a BPF program takes seconds on a loaded machine) then costs no
// window.
func (r *recorder) prepareSampler(ctx context.Context) error {
	c := r.cfg
	if r.meta.Sampler == SamplerNone {
		return nil
	}
	sampler, err := r.newSampler()
	if err != nil {
		return err
	}
	r.sampler = sampler
	r.opts = capture.Options{
		FrequencyHz: c.Freq, CallGraph: r.callGraph, StackCopy: c.StackCopy, Kernel: c.Kernel, SystemWide: c.PerCPU, Event: r.meta.Event,
		WorkDir: c.Out, KeepRaw: c.KeepRaw, Stderr: io.Discard, DebugDirs: c.DebugDirs,
		SwitchFix: r.meta.Sampler == "bpf" && !c.NoSwitchFix,
		OffCPU:    c.OffCPU, OffCPUMin: c.OffCPUMin,
	}
	p, ok := sampler.(capture.Preparer)
	if !ok {
		return nil
	}
	if err := r.withFallback(func(o capture.Options) error { return p.Prepare(context.WithoutCancel(ctx), r.pid, o) }); err != nil {
		return r.fail("", fmt.Errorf("record: %w", err))
	}
	return nil
}

// withFallback calls start with the sampler's options and, when the switch
// fix is on by default only and the kernel lacks what it needs (its BTF),
// again without it, which it says in a warning.
func (r *recorder) withFallback(start func(capture.Options) error) error {
	err := start(r.opts)
	if err != nil && r.opts.SwitchFix && !r.cfg.SwitchFix && errors.Is(err, errors.ErrUnsupported) {
		w := fmt.Sprintf("sampling without the switch fix: %v; samples may stand for less CPU than the threads used (docs/fidelity.md)", err)
		r.meta.Warnings = append(r.meta.Warnings, w)
		r.progress(Status{Phase: PhaseWarning, Message: w})
		r.opts.SwitchFix = false
		err = start(r.opts)
	}
	return err
}

// startSampling starts the sampler and reads the figures at the window's
// start.
func (r *recorder) startSampling(ctx context.Context, win *window) error {
	c := r.cfg
	var err error
	// How long each step took, for the error when they leave no window.
	var steps []string
	mark := time.Now()
	step := func(name string) {
		now := time.Now()
		steps = append(steps, fmt.Sprintf("%s %s", name, now.Sub(mark).Round(10*time.Millisecond)))
		mark = now
	}
	if win.outerBefore, err = procstat.Read(c.ProcRoot, r.pid); err != nil {
		return fmt.Errorf("record: pid %d: %w", r.pid, err)
	}
	step("/proc")
	if r.sampler != nil {
		if err := r.withFallback(func(o capture.Options) error { return r.sampler.Start(context.WithoutCancel(ctx), r.pid, o) }); err != nil {
			return fmt.Errorf("record: %w", err)
		}
		r.meta.SwitchFix = r.opts.SwitchFix
		step("sampler start")
	}
	// The window starts once the sampler runs: figures from here on.
	if win.before, err = procstat.Read(c.ProcRoot, r.pid); err != nil {
		return r.fail("", fmt.Errorf("record: pid %d: %w", r.pid, err))
	}
	step("/proc")
	if r.server != nil {
		if win.cBefore, err = r.server.Counters(ctx, c.OpsCounter...); err != nil {
			return r.fail("", fmt.Errorf("record: server counters: %w", err))
		}
		step("server counters")
	}
	r.hostStart()
	step("host figures")
	win.start = time.Now()
	if !win.deadline.IsZero() {
		// A sampler slow to start (a loaded machine) shortens the window
		// rather than pushing it past the workload's end.
		if win.length = win.deadline.Sub(win.start); win.length <= 0 {
			who := "starting the sampler and reading the window's first figures"
			if r.sampler == nil {
				who = "reading the window's first figures (/proc, the server's counters)"
			}
			return r.fail("", fmt.Errorf("record: %s took until %s after the workload started (warmup %s; %s), past its end less the %s margin: no window is left; the machine is overloaded, or give the workload more time",
				who, win.start.Sub(r.runStart).Round(100*time.Millisecond), c.Warmup, strings.Join(steps, ", "), c.Margin))
		}
	}
	r.meta.StartTime = win.start.UTC().Format(time.RFC3339Nano)
	what := fmt.Sprintf("sampling pid %d at %d Hz", r.pid, c.Freq)
	if r.sampler == nil {
		what = fmt.Sprintf("measuring pid %d without a sampler", r.pid)
	}
	msg := what + " until the workload ends"
	if win.length > 0 {
		msg = fmt.Sprintf("%s for %s", what, win.length.Round(time.Second))
	}
	r.progress(Status{Phase: PhaseSampling, Message: msg})
	return nil
}

// wait blocks until the window ends and says why it ended early ("" when
// it ran its course).
func (r *recorder) wait(ctx context.Context, win *window) string {
	defer r.progress(Status{Phase: PhaseWindowEnd})
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var done <-chan struct{}
	if r.run != nil {
		done = r.run.Done()
	}
	var deadline <-chan time.Time
	if win.length > 0 {
		t := time.NewTimer(win.length)
		defer t.Stop()
		deadline = t.C
	}
	interrupted := func() string {
		return fmt.Sprintf("interrupted (Ctrl-C) %s into the window", time.Since(win.start).Round(time.Second))
	}
	for {
		// An interrupt that also ends the workload or the server (a
		// server started under the same context, as the lab's are) is
		// an interrupt: ctx is asked before those are blamed.
		select {
		case <-deadline:
			return ""
		case <-done:
			if ctx.Err() != nil {
				return interrupted()
			}
			if win.length > 0 {
				return fmt.Sprintf("the workload ended %s into the %s window", time.Since(win.start).Round(time.Second), win.length)
			}
			return ""
		case <-ctx.Done():
			return interrupted()
		case <-tick.C:
			if _, err := procstat.Read(r.cfg.ProcRoot, r.pid); errors.Is(err, procstat.ErrProcessGone) {
				if ctx.Err() != nil {
					return interrupted()
				}
				return fmt.Sprintf("the server (pid %d) died %s into the window", r.pid, time.Since(win.start).Round(time.Second))
			}
			if r.ticks {
				var n int64
				if r.sampler != nil {
					n = r.sampler.SamplesSoFar()
				}
				r.progress(Status{Phase: PhaseTick, Elapsed: time.Since(win.start), Window: win.length, Samples: n})
			}
		}
	}
}

// procFigures fills the metadata from the window's /proc deltas.
func (r *recorder) procFigures(w procstat.Window) {
	r.meta.WindowSeconds = w.Seconds
	r.meta.CPUUserSeconds, r.meta.CPUSystemSeconds = w.CPUUser, w.CPUSystem
	r.meta.CPUSecondsTotal = w.CPUUser + w.CPUSystem
	r.meta.VoluntaryCtxSwitches, r.meta.InvoluntaryCtxSwitches = w.Voluntary, w.Involuntary
	r.meta.ExitedThreads, r.alive = w.ExitedThreads, w.Alive
	r.meta.ReadOps, r.meta.WriteOps = w.ReadOps, w.WriteOps
	r.meta.ReadKB, r.meta.WriteKB = w.ReadKB, w.WriteKB
	r.accounted = w.Threads
}

// operations fills the operation count from the server's counters.
func (r *recorder) operations(before, after map[string]int64) {
	counters := r.cfg.OpsCounter
	var ops int64
	for _, n := range counters {
		ops += after[n] - before[n]
	}
	// The counter query itself is one Question.
	if len(counters) == 1 && counters[0] == "Questions" && ops > 0 {
		ops--
	}
	r.meta.Operations = ops
	r.meta.OpsCounter = strings.Join(counters, "+")
}

// finishWorkload waits for the workload to end (stopping it when the
// session is ending early or is interrupted), reads its report, and
// returns the reason the run is incomplete ("" when it is not).
func (r *recorder) finishWorkload(ctx context.Context, win *window, reason string) string {
	if reason != "" {
		_ = r.run.Stop(5 * time.Second)
	}
	var limit <-chan time.Time
	if c := r.cfg; c.WorkloadLimit > 0 {
		t := time.NewTimer(max(time.Until(r.runStart.Add(c.WorkloadLimit)), 0))
		defer t.Stop()
		limit = t.C
	}
	stopped := false
	select {
	case <-r.run.Done():
	case <-limit:
		_ = r.run.Stop(5 * time.Second)
		stopped = true
		w := fmt.Sprintf("the workload was still running %s after its start (its limit) and was stopped", r.cfg.WorkloadLimit)
		r.meta.Warnings = append(r.meta.Warnings, w)
		r.progress(Status{Phase: PhaseWarning, Message: w})
	case <-ctx.Done():
		_ = r.run.Stop(5 * time.Second)
		if reason == "" {
			reason = "interrupted (Ctrl-C) after the window, while the workload was finishing"
		}
	}
	werr := r.run.Wait()
	code := r.run.ExitCode()
	r.meta.WorkloadExitCode = &code
	if werr != nil && reason == "" && !stopped {
		reason = fmt.Sprintf("the workload failed: %v", werr)
	}
	rep, err := workload.ParseSysbench(bytes.NewReader(r.run.Output()))
	if err != nil {
		r.superSmack()
		return reason
	}
	r.meta.WorkloadReport = "sysbench"
	r.meta.WorkloadQPS, r.meta.WorkloadTPS = rep.QPS, rep.TPS
	r.meta.WorkloadLatencyAvgMs, r.meta.WorkloadLatencyP95Ms, r.meta.WorkloadLatencyMaxMs = rep.LatencyAvgMs, rep.LatencyP95Ms, rep.LatencyMaxMs
	t0 := r.runStart
	if t := r.threads.at(); !t.IsZero() {
		t0 = t
	}
	from, to := win.start.Sub(t0).Seconds(), win.end.Sub(t0).Seconds()
	if q, cov := rep.QPSOver(from, to); cov > 0 {
		r.meta.WorkloadWindowQPS = q
	}
	r.meta.WorkloadIntervalQPS = intervalQPS(rep, from, to)
	if r.meta.Operations == 0 && r.meta.WindowSeconds > 0 {
		// No server counters: sysbench's own rate, over the window
		// when its interim reports cover it, else over its run.
		q, what := r.meta.WorkloadWindowQPS, "sysbench queries (its interim reports' QPS over the window x window)"
		if q == 0 {
			q, what = rep.QPS, "sysbench queries (its whole-run QPS x window)"
		}
		r.meta.Operations = int64(q*r.meta.WindowSeconds + 0.5)
		r.meta.OpsCounter = what
	}
	return reason
}

// superSmack reads the workload's output as super-smack's query barrel
// reports, when it is one: its throughput is the sum of every client's
// query rates (each client's types ran over the same wall time, clients
// side by side), over its whole run; without server counters it gives
// the window's operations, as sysbench's does.
func (r *recorder) superSmack() {
	rep, err := workload.ParseSuperSmack(bytes.NewReader(r.run.Output()))
	if err != nil {
		return
	}
	var qps float64
	for i := range rep.Barrels {
		_, q := rep.Barrels[i].Total()
		qps += q
	}
	r.meta.WorkloadReport, r.meta.WorkloadQPS = "super-smack", qps
	if r.meta.Operations == 0 && r.meta.WindowSeconds > 0 && qps > 0 {
		r.meta.Operations = int64(qps*r.meta.WindowSeconds + 0.5)
		r.meta.OpsCounter = "super-smack queries (its whole-run q_per_s summed over clients and query types x window)"
	}
}

// write writes the run directory from what the sampler returned.
func (r *recorder) write(res *capture.Result, stopErr error, reason string) (*Result, error) {
	c := r.cfg
	r.meta.Samples = res.Samples
	r.meta.LostSamples = res.Lost
	r.meta.SampledCPUSeconds = float64(res.Samples) / float64(c.Freq)
	r.meta.SamplerHealth = res.Health
	r.meta.Unwind = res.Unwind
	if r.meta.Unwind == nil {
		// perf: its call graph (its dwarf copies are unwound by perf).
		r.meta.Unwind = &fold.Unwind{Method: r.meta.CallGraph, WindowBytes: r.meta.CallGraphStackBytes}
	}
	r.meta.Warnings = append(r.meta.Warnings, res.Warnings...)
	for _, w := range []string{
		sampledGap(res.Samples, c.Freq, r.meta.CPUSeconds(), r.meta.ProfilerChargedSeconds(), c.PerCPU),
		diff.MetaSwitchWarning(r.meta),
	} {
		if w != "" {
			res.Warnings = append(res.Warnings, w)
			r.meta.Warnings = append(r.meta.Warnings, w)
		}
	}
	for _, w := range res.Warnings {
		r.progress(Status{Phase: PhaseWarning, Message: w})
	}
	if stopErr != nil && reason == "" {
		reason = fmt.Sprintf("sampler: %v", stopErr)
	}
	complete := reason == ""
	r.meta.Complete = &complete
	r.meta.Incomplete = reason
	stackFigures(r.meta, res.Profile)
	r.meta.Fidelity = threadFidelity(res.Profile, res.Samples, r.meta.SampledCPUSeconds, r.accounted, res.Corrections)
	res.Profile.Meta = r.meta
	if res.OffCPU != nil {
		r.meta.OffCPU = offCPUFigures(res.OffCPU, r.meta, r.outer, r.accounted, r.alive, c.OffCPUMin)
		if w := r.meta.OffCPU.SwitchGap(); w != "" {
			res.Warnings = append(res.Warnings, w)
			r.meta.Warnings = append(r.meta.Warnings, w)
			r.progress(Status{Phase: PhaseWarning, Message: w})
		}
		if err := rundir.WriteOffCPU(c.Out, res.OffCPU.Time, res.OffCPU.Switches); err != nil {
			return nil, fmt.Errorf("record: writing %s: %w", c.Out, err)
		}
	}
	if err := rundir.Write(c.Out, res.Profile, r.meta); err != nil {
		return nil, fmt.Errorf("record: writing %s: %w", c.Out, err)
	}
	result := &Result{Dir: c.Out, Meta: r.meta, Warnings: res.Warnings}
	if !complete {
		return result, fmt.Errorf("record: %w to %s: %s", ErrIncomplete, c.Out, reason)
	}
	return result, nil
}

// writeUnprofiled writes the run.json of a window measured without a
// sampler (no stacks; the sampled-versus-accounted check has nothing to
// compare).
func (r *recorder) writeUnprofiled(reason string) (*Result, error) {
	c := r.cfg
	complete := reason == ""
	r.meta.Complete = &complete
	r.meta.Incomplete = reason
	if err := rundir.WriteMeta(c.Out, r.meta); err != nil {
		return nil, fmt.Errorf("record: writing %s: %w", c.Out, err)
	}
	result := &Result{Dir: c.Out, Meta: r.meta}
	if !complete {
		return result, fmt.Errorf("record: %w to %s: %s", ErrIncomplete, c.Out, reason)
	}
	return result, nil
}

// intervalQPS returns the QPS of rep's interim reports that lie wholly
// within [from, to] seconds since sysbench started its threads, in order.
func intervalQPS(rep *workload.SysbenchReport, from, to float64) []float64 {
	var out []float64
	for _, iv := range rep.Intervals {
		if iv.At-iv.Every >= from-1e-9 && iv.At <= to+1e-9 {
			out = append(out, iv.QPS)
		}
	}
	return out
}

// fail writes run.json alone (no stacks) with the reason, and returns err.
func (r *recorder) fail(reason string, err error) error {
	f := false
	r.meta.Complete = &f
	if reason == "" {
		reason = err.Error()
	}
	r.meta.Incomplete = reason
	_ = rundir.WriteMeta(r.cfg.Out, r.meta)
	return err
}
