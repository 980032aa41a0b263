package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/rundir"
	"github.com/flamediff/flamediff/workload"
)

// RecordOptions are the options of `flamediff record`.
type RecordOptions struct {
	Streams *streams

	PID     int
	PIDFile string
	Process string

	Sampler   string
	Event     string
	Freq      int
	CallGraph string
	Kernel    bool
	PerCPU    bool

	Warmup   time.Duration
	Duration time.Duration
	Margin   time.Duration

	Socket     string
	DSN        string
	User       string
	OpsCounter []string

	Label   string
	Out     string
	KeepRaw bool
	// DebugDirs are extra roots of debug files by build id (--debug-dir).
	DebugDirs []string
	Quiet     bool

	Workload []string

	// ProcRoot is /proc; tests may point it elsewhere.
	ProcRoot string
	// NewSampler makes the sampler; tests may inject one.
	NewSampler func(name string) (capture.Sampler, error)
}

func newRecordCmd(s *streams, runF func(*RecordOptions) error) *cobra.Command {
	opts := &RecordOptions{Streams: s, ProcRoot: "/proc"}
	cmd := &cobra.Command{
		Use:   "record [flags] [-- WORKLOAD COMMAND...]",
		Short: "Sample a running server while a workload drives it; write a run directory",
		Long: `Record samples the on-CPU stacks of a running mysqld/mariadbd at --freq Hz
(--sampler: the BPF sampler where the kernel allows it, else perf record; on
the server's threads, or on every CPU with --per-cpu) while a workload drives
it, and measures the same window: process CPU (user+system, all threads),
context switches, storage I/O, and operations (from the server's counters
with --socket/--dsn, else from sysbench's report).
It writes a run directory (--out): stacks.folded, profile.pb.gz, run.json and
workload.log, which report and diff read, with CPU per operation.

With a workload command, record starts it, waits --warmup, samples for
--duration (default: sysbench's --time less the warmup and --margin, so the
window is steady state), and lets the workload finish. Without one it samples
for --duration.

Whatever happens (Ctrl-C, the server dying, the workload failing), what was
sampled is kept: the run directory is written with "complete": false and the
reason, and no perf or workload process is left behind.`,
		Example: `  # The single running mariadbd, driven by sysbench, operations from the server:
  flamediff record --socket /run/mysqld/mysqld.sock --label 10.11 --out runs/10.11 -- \
      sysbench oltp_update_non_index --db-driver=mysql --mysql-socket=/run/mysqld/mysqld.sock \
      --mysql-user=root --tables=1 --table-size=10000 --time=30 run
  # A given pid, 20 s, no workload:
  flamediff record --pid 4242 --duration 20s --out runs/now
  # perf instead of BPF, DWARF call graphs, kernel frames kept:
  flamediff record --sampler perf --call-graph dwarf --kernel --duration 10s --out runs/dwarf
  flamediff report --root mysqld_stmt_execute runs/10.11`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); n > 0 {
				return usageError("record takes no arguments before --; the workload command goes after -- (got %q)", args[:n])
			}
			opts.Workload = args
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runRecord(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.PID, "pid", 0, "sample process `N`")
	f.StringVar(&opts.PIDFile, "pidfile", "", "read the pid from `FILE`")
	f.StringVar(&opts.Process, "process", "", "sample the single process named `NAME` (default: the running mariadbd or mysqld)")
	f.StringVar(&opts.Sampler, "sampler", "auto", "sampler: perf, bpf, or auto (bpf where the kernel and privileges allow it, else perf; run.json says which ran and why)")
	_ = cmd.RegisterFlagCompletionFunc("sampler", fixedCompletion("auto", "perf", "bpf"))
	f.IntVar(&opts.Freq, "freq", 99, "sampling frequency in Hz")
	f.StringVar(&opts.Event, "event", "auto", "perf event: auto (cycles when the machine has a hardware cycle counter, else cpu-clock), cycles or cpu-clock")
	f.StringVar(&opts.CallGraph, "call-graph", "fp", "stack walking: fp (frame pointers) or dwarf")
	f.BoolVar(&opts.Kernel, "kernel", false, "keep kernel frames (default: samples in the kernel count for their user-space caller)")
	f.BoolVar(&opts.PerCPU, "per-cpu", false, "sample with one event per CPU filtered to the target (perf record -a) instead of events on the target's threads (perf record -p): cheaper for a server that switches context often, but on some kernels (seen on VMs) CPUs that idle between short queries lose 5-50% of the samples; run.json then warns")
	var perThread bool
	f.BoolVar(&perThread, "per-thread", false, "")
	_ = f.MarkDeprecated("per-thread", "per-thread events are the default now (--per-cpu for per-CPU events)")
	f.DurationVar(&opts.Warmup, "warmup", 5*time.Second, "with a workload: wait this long before sampling")
	f.DurationVar(&opts.Duration, "duration", 0, "sampling window (default with sysbench --time=T: T - warmup - margin)")
	f.DurationVar(&opts.Margin, "margin", 2*time.Second, "stop sampling this long before the workload's end")
	f.StringVar(&opts.Socket, "socket", "", "server unix `SOCKET`: read operations (and the version) from its counters")
	f.StringVar(&opts.DSN, "dsn", "", "server DSN (go-sql-driver form, e.g. root@tcp(127.0.0.1:3306)/) instead of --socket")
	f.StringVar(&opts.User, "user", "root", "user for --socket")
	f.StringSliceVar(&opts.OpsCounter, "ops-counter", []string{"Questions"}, "status counter(s) whose sum is the operation count (e.g. Com_update)")
	f.StringVar(&opts.Label, "label", "", "the run's label in reports (default: the server version, else the directory name)")
	f.StringVarP(&opts.Out, "out", "o", "", "run directory to write (created; must be empty or absent)")
	f.BoolVar(&opts.KeepRaw, "keep-raw", false, "keep perf.data in the run directory")
	f.StringArrayVar(&opts.DebugDirs, "debug-dir", nil, "also look up separate debug files by build id under `DIR` (DIR/.build-id/xx/yyyy.debug, as in a -dbg package), before /usr/lib/debug: for a server run with its own libc (repeatable)")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

func (o *RecordOptions) validate() error {
	n := 0
	for _, set := range []bool{o.PID != 0, o.PIDFile != "", o.Process != ""} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return usageError("give one of --pid, --pidfile and --process")
	case o.PID < 0:
		return usageError("--pid %d: want a process id", o.PID)
	case o.Out == "":
		return usageError("--out DIR is required: the run directory to write")
	case o.Freq <= 0 || o.Freq > 10000:
		return usageError("--freq %d: want 1 to 10000 Hz", o.Freq)
	case o.CallGraph != "fp" && o.CallGraph != "dwarf":
		return usageError("--call-graph %q: want fp or dwarf", o.CallGraph)
	case o.Sampler != "perf" && o.Sampler != "bpf" && o.Sampler != "auto":
		return usageError("--sampler %q: want perf, bpf or auto", o.Sampler)
	case o.Sampler == "bpf" && o.CallGraph == "dwarf":
		return usageError("--sampler bpf walks frame pointers: --call-graph dwarf needs --sampler perf")
	case o.Event != "auto" && o.Event != "cycles" && o.Event != "cpu-clock":
		return usageError("--event %q: want auto, cycles or cpu-clock", o.Event)
	case o.Socket != "" && o.DSN != "":
		return usageError("give --socket or --dsn, not both")
	case o.Warmup < 0 || o.Duration < 0 || o.Margin < 0:
		return usageError("--warmup, --duration and --margin cannot be negative")
	case len(o.Workload) == 0 && o.Duration == 0:
		return usageError("without a workload command, give --duration")
	}
	if st, err := os.Stat(o.Out); err == nil {
		if !st.IsDir() {
			return usageError("--out %s exists and is not a directory", o.Out)
		}
		if ents, _ := os.ReadDir(o.Out); len(ents) > 0 {
			return usageError("--out %s is not empty: choose a new directory so that no earlier run is overwritten", o.Out)
		}
	}
	return nil
}

// sysbenchTime returns sysbench's --time value from its arguments (10 when
// the command is sysbench without --time, its default), or 0.
func sysbenchTime(args []string) time.Duration {
	if len(args) == 0 || filepath.Base(args[0]) != "sysbench" {
		return 0
	}
	secs := 10
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--time=")
		if !ok && a == "--time" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			if n, err := strconv.Atoi(v); err == nil {
				secs = n
			}
		}
	}
	if secs == 0 {
		return 0 // --time=0: runs until --events; unknown length
	}
	return time.Duration(secs) * time.Second
}

// recorder holds one recording's state, so that every exit path can
// write what it has and stop what it started.
type recorder struct {
	opts    *RecordOptions
	s       *streams
	meta    *fold.Meta
	run     *workload.Run
	logFile *os.File
	sampler capture.Sampler
	server  *workload.Server
	pid     int
	// runStart is when the workload started; threads notes when sysbench
	// said "Threads started!", the zero of its interim reports' clock.
	runStart time.Time
	threads  *markWriter
}

// markWriter passes writes through and notes when a marker first appears.
type markWriter struct {
	w    io.Writer
	mark []byte
	mu   sync.Mutex
	seen time.Time
	tail []byte
}

func (m *markWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	if m.seen.IsZero() {
		buf := append(m.tail, p...)
		if bytes.Contains(buf, m.mark) {
			m.seen = time.Now()
		}
		if n := len(m.mark) - 1; len(buf) > n {
			buf = buf[len(buf)-n:]
		}
		m.tail = append(m.tail[:0], buf...)
	}
	m.mu.Unlock()
	return m.w.Write(p)
}

// at returns when the marker was seen, or zero.
func (m *markWriter) at() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen
}

func runRecord(ctx context.Context, opts *RecordOptions) (err error) {
	r := &recorder{opts: opts, s: opts.Streams, meta: &fold.Meta{Format: 1}}
	// The output directory first: a wrong --out fails before anything starts.
	if err := rundir.Create(opts.Out); err != nil {
		return fmt.Errorf("record: --out %w", err)
	}
	pid, err := r.target()
	if err != nil {
		return err
	}
	r.pid = pid
	r.meta.PID = pid
	sampler, reason, err := chooseSampler(opts)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	r.meta.Sampler, r.meta.SamplerReason = sampler, reason
	r.meta.FrequencyHz = float64(opts.Freq)
	r.meta.CallGraph = opts.CallGraph
	r.meta.SamplerScope = "thread"
	if opts.PerCPU {
		r.meta.SamplerScope = "cpu"
	}
	r.meta.Unit = fold.UnitSamples
	r.meta.Event = opts.Event
	switch {
	case sampler == "bpf":
		r.meta.Event = capture.DefaultEvent
	case opts.Event == "auto":
		ev, why := capture.DetectEvent(ctx)
		r.meta.Event = ev
		r.meta.SamplerReason = strings.TrimPrefix(r.meta.SamplerReason+"; event "+ev+": "+why, "; ")
	}
	r.meta.Label = opts.Label
	if len(opts.Workload) > 0 {
		r.meta.Workload = strings.Join(opts.Workload, " ")
	}
	if err := r.openServer(ctx); err != nil {
		return err
	}
	defer r.cleanup()
	return r.record(ctx)
}

// target resolves the process to sample.
func (r *recorder) target() (int, error) {
	o := r.opts
	switch {
	case o.PID != 0:
		if _, err := os.Stat(filepath.Join(o.ProcRoot, strconv.Itoa(o.PID))); err != nil {
			return 0, fmt.Errorf("record: --pid %d: %w", o.PID, capture.ErrProcessGone)
		}
		return o.PID, nil
	case o.PIDFile != "":
		pid, err := capture.ReadPIDFile(o.PIDFile)
		if err != nil {
			return 0, fmt.Errorf("record: %w", err)
		}
		return pid, nil
	case o.Process != "":
		ps, err := capture.FindProcesses(o.ProcRoot, o.Process)
		if err != nil {
			return 0, fmt.Errorf("record: %w", err)
		}
		switch len(ps) {
		case 0:
			return 0, fmt.Errorf("record: --process %s: %w", o.Process, capture.ErrNoProcess)
		case 1:
			return ps[0].PID, nil
		}
		var b strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&b, "\n  %d %s", p.PID, strings.Join(p.Cmdline, " "))
		}
		return 0, fmt.Errorf("record: --process %s: %w; choose one with --pid:%s", o.Process, capture.ErrAmbiguous, b.String())
	}
	p, err := capture.FindServer(o.ProcRoot)
	if err != nil {
		return 0, fmt.Errorf("record: %w (name the process with --pid, --pidfile or --process)", err)
	}
	return p.PID, nil
}

func (r *recorder) openServer(ctx context.Context) error {
	o := r.opts
	dsn := o.DSN
	if o.Socket != "" {
		dsn = workload.SocketDSN(o.Socket, o.User, "")
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
	if _, err := srv.Counters(ctx, o.OpsCounter...); err != nil {
		return fmt.Errorf("record: --ops-counter: %w", err)
	}
	return nil
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

func (r *recorder) progress(format string, a ...any) {
	if !r.opts.Quiet {
		fmt.Fprintf(r.s.ErrOut, "flamediff: "+format+"\n", a...)
	}
}

// record runs the window and writes the run directory. An error after the
// window started still writes what was sampled, marked incomplete.
func (r *recorder) record(ctx context.Context) error {
	o := r.opts
	// The workload, its output going to workload.log.
	if len(o.Workload) > 0 {
		f, err := rundir.CreateLog(o.Out)
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		r.logFile = f
		// The workload and the sampler outlive a Ctrl-C (ctx) until they are
		// stopped in order, so that what was sampled can be written.
		r.threads = &markWriter{w: f, mark: []byte("Threads started!")}
		run, err := workload.Start(context.WithoutCancel(ctx), o.Workload, r.threads)
		if err != nil {
			return fmt.Errorf("record: workload: %w", err)
		}
		r.run = run
		r.runStart = time.Now()
		r.progress("workload started (pid %d); warming up for %s", run.PID(), o.Warmup)
		select {
		case <-time.After(o.Warmup):
		case <-run.Done():
			err := run.Wait()
			code := run.ExitCode()
			r.meta.WorkloadExitCode = &code
			return r.fail("the workload ended during the warmup; nothing was sampled",
				fmt.Errorf("record: the workload ended during the %s warmup, before sampling started: %w", o.Warmup, errOr(err, "it exited 0 too early; make it run longer than --warmup")))
		case <-ctx.Done():
			return r.fail("interrupted (Ctrl-C) during the warmup; nothing was sampled",
				fmt.Errorf("record: interrupted during the warmup; nothing was sampled"))
		}
	}
	window := o.Duration
	if window == 0 {
		if t := sysbenchTime(o.Workload); t > 0 {
			window = t - o.Warmup - o.Margin
			if window <= 0 {
				return usageError("sysbench --time=%s leaves no window after --warmup %s and --margin %s", t, o.Warmup, o.Margin)
			}
		}
	}

	if _, err := workload.ReadProc(o.ProcRoot, r.pid); err != nil {
		return fmt.Errorf("record: pid %d: %w", r.pid, err)
	}
	sampler, err := r.newSampler()
	if err != nil {
		return err
	}
	workDir := o.Out
	if err := sampler.Start(context.WithoutCancel(ctx), r.pid, capture.Options{
		FrequencyHz: o.Freq, CallGraph: o.CallGraph, Kernel: o.Kernel, SystemWide: o.PerCPU, Event: r.meta.Event,
		WorkDir: workDir, KeepRaw: o.KeepRaw, Stderr: io.Discard, DebugDirs: o.DebugDirs,
	}); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	r.sampler = sampler
	// The window starts once the sampler runs: figures from here on.
	before, err := workload.ReadProc(o.ProcRoot, r.pid)
	if err != nil {
		return r.fail("", fmt.Errorf("record: pid %d: %w", r.pid, err))
	}
	var cBefore map[string]int64
	if r.server != nil {
		if cBefore, err = r.server.Counters(ctx, o.OpsCounter...); err != nil {
			return r.fail("", fmt.Errorf("record: server counters: %w", err))
		}
	}
	start := time.Now()
	r.meta.StartTime = start.UTC().Format(time.RFC3339Nano)
	if window > 0 {
		r.progress("sampling pid %d at %d Hz for %s", r.pid, o.Freq, window.Round(time.Second))
	} else {
		r.progress("sampling pid %d at %d Hz until the workload ends", r.pid, o.Freq)
	}

	reason := r.wait(ctx, start, window)

	// The window's figures, before the sampler is stopped.
	after, procErr := workload.ReadProc(o.ProcRoot, r.pid)
	var cAfter map[string]int64
	if r.server != nil && procErr == nil {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cAfter, _ = r.server.Counters(cctx, o.OpsCounter...)
		cancel()
	}
	end := time.Now()
	res, stopErr := sampler.Stop(context.Background())
	r.sampler = nil
	r.meta.EndTime = end.UTC().Format(time.RFC3339Nano)
	r.meta.WindowSeconds = end.Sub(start).Seconds()
	if procErr != nil {
		if reason == "" {
			reason = fmt.Sprintf("the server (pid %d) died during the window", r.pid)
		}
	} else {
		w := workload.Diff(before, after)
		r.meta.WindowSeconds = w.Seconds
		r.meta.CPUUserSeconds, r.meta.CPUSystemSeconds = w.CPUUser, w.CPUSystem
		r.meta.CPUSecondsTotal = w.CPUUser + w.CPUSystem
		r.meta.VoluntaryCtxSwitches, r.meta.InvoluntaryCtxSwitches = w.Voluntary, w.Involuntary
		r.meta.ReadOps, r.meta.WriteOps = w.ReadOps, w.WriteOps
		r.meta.ReadKB, r.meta.WriteKB = w.ReadKB, w.WriteKB
	}
	if cBefore != nil && cAfter != nil {
		var ops int64
		for _, n := range o.OpsCounter {
			ops += cAfter[n] - cBefore[n]
		}
		// The counter query itself is one Question.
		if len(o.OpsCounter) == 1 && o.OpsCounter[0] == "Questions" && ops > 0 {
			ops--
		}
		r.meta.Operations = ops
		r.meta.OpsCounter = strings.Join(o.OpsCounter, "+")
	}

	// Let the workload finish on its own (its report covers the whole run),
	// unless we are stopping early.
	if r.run != nil {
		if reason != "" {
			_ = r.run.Stop(5 * time.Second)
		}
		select {
		case <-r.run.Done():
		case <-ctx.Done():
			_ = r.run.Stop(5 * time.Second)
			if reason == "" {
				reason = "interrupted (Ctrl-C) after the window, while the workload was finishing"
			}
		}
		werr := r.run.Wait()
		code := r.run.ExitCode()
		r.meta.WorkloadExitCode = &code
		if werr != nil && reason == "" {
			reason = fmt.Sprintf("the workload failed: %v", werr)
		}
		if rep, err := workload.ParseSysbench(bytes.NewReader(r.run.Output())); err == nil {
			r.meta.WorkloadQPS, r.meta.WorkloadTPS = rep.QPS, rep.TPS
			r.meta.WorkloadLatencyAvgMs, r.meta.WorkloadLatencyP95Ms, r.meta.WorkloadLatencyMaxMs = rep.LatencyAvgMs, rep.LatencyP95Ms, rep.LatencyMaxMs
			t0 := r.runStart
			if t := r.threads.at(); !t.IsZero() {
				t0 = t
			}
			if q, cov := rep.QPSBetween(start.Sub(t0).Seconds(), end.Sub(t0).Seconds()); cov > 0 {
				r.meta.WorkloadWindowQPS = q
			}
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
		}
	}
	if r.meta.WindowSeconds > 0 && r.meta.Operations > 0 {
		r.meta.QPS = float64(r.meta.Operations) / r.meta.WindowSeconds
	}
	if r.meta.Label == "" {
		r.meta.Label = labelFromVersion(r.meta.ServerVersion, o.Out)
	}

	if res == nil {
		if stopErr == nil {
			stopErr = errors.New("the sampler returned nothing")
		}
		return r.fail(reason, fmt.Errorf("record: sampler: %w", stopErr))
	}
	r.meta.Samples = res.Samples
	r.meta.LostSamples = res.Lost
	r.meta.SampledCPUSeconds = float64(res.Samples) / float64(o.Freq)
	r.meta.SamplerHealth = res.Health
	r.meta.Warnings = append(r.meta.Warnings, res.Warnings...)
	if w := sampledGap(res.Samples, o.Freq, r.meta.CPUSeconds(), o.PerCPU); w != "" {
		res.Warnings = append(res.Warnings, w)
		r.meta.Warnings = append(r.meta.Warnings, w)
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(r.s.ErrOut, "flamediff: warning: %s\n", w)
	}
	if stopErr != nil && reason == "" {
		reason = fmt.Sprintf("sampler: %v", stopErr)
	}
	complete := reason == ""
	r.meta.Complete = &complete
	r.meta.Incomplete = reason
	res.Profile.Meta = r.meta
	if err := rundir.Write(o.Out, res.Profile, r.meta); err != nil {
		return fmt.Errorf("record: writing %s: %w", o.Out, err)
	}
	r.summary(res)
	if !complete {
		return fmt.Errorf("record: incomplete run written to %s: %s", o.Out, reason)
	}
	return nil
}

// fail writes run.json alone (no stacks) with the reason, and returns err.
func (r *recorder) fail(reason string, err error) error {
	f := false
	r.meta.Complete = &f
	if reason == "" {
		reason = err.Error()
	}
	r.meta.Incomplete = reason
	_ = rundir.WriteMeta(r.opts.Out, r.meta)
	return err
}

func (r *recorder) newSampler() (capture.Sampler, error) {
	if r.opts.NewSampler != nil {
		return r.opts.NewSampler(r.meta.Sampler)
	}
	if r.meta.Sampler == "bpf" {
		return capture.NewBPF(), nil
	}
	return capture.NewPerf(), nil
}

// chooseSampler picks the sampler for --sampler and says why.
func chooseSampler(o *RecordOptions) (name, why string, err error) {
	switch o.Sampler {
	case "perf":
		return "perf", "", capture.CheckPerf()
	case "bpf":
		if err := capture.CheckBPF(); err != nil {
			return "", "", fmt.Errorf("--sampler bpf: %w (--sampler perf uses perf record instead)", err)
		}
		return "bpf", "", nil
	}
	// auto
	if o.CallGraph == "dwarf" {
		return "perf", "auto: --call-graph dwarf needs perf (the BPF sampler walks frame pointers)", capture.CheckPerf()
	}
	if o.Event == "cycles" {
		return "perf", "auto: --event cycles needs perf (the BPF sampler uses cpu-clock)", capture.CheckPerf()
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

// wait blocks until the window ends and says why it ended early ("" when
// it ran its course).
func (r *recorder) wait(ctx context.Context, start time.Time, window time.Duration) string {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var done <-chan struct{}
	if r.run != nil {
		done = r.run.Done()
	}
	var deadline <-chan time.Time
	if window > 0 {
		t := time.NewTimer(window)
		defer t.Stop()
		deadline = t.C
	}
	tty := isTerminal(r.s.ErrOut)
	defer func() {
		if tty && !r.opts.Quiet {
			fmt.Fprint(r.s.ErrOut, "\r\033[K")
		}
	}()
	for {
		select {
		case <-deadline:
			return ""
		case <-done:
			if window > 0 {
				return fmt.Sprintf("the workload ended %s into the %s window", time.Since(start).Round(time.Second), window)
			}
			return ""
		case <-ctx.Done():
			return fmt.Sprintf("interrupted (Ctrl-C) %s into the window", time.Since(start).Round(time.Second))
		case <-tick.C:
			if _, err := workload.ReadProc(r.opts.ProcRoot, r.pid); errors.Is(err, workload.ErrProcessGone) {
				return fmt.Sprintf("the server (pid %d) died %s into the window", r.pid, time.Since(start).Round(time.Second))
			}
			if tty && !r.opts.Quiet {
				el := time.Since(start)
				bar := ""
				if window > 0 {
					n := int(30 * el / window)
					bar = "[" + strings.Repeat("#", min(n, 30)) + strings.Repeat(".", 30-min(n, 30)) + "] "
				}
				fmt.Fprintf(r.s.ErrOut, "\r\033[Ksampling %s%s, ~%d samples", bar, el.Round(time.Second), r.sampler.SamplesSoFar())
			}
		}
	}
}

func (r *recorder) summary(res *capture.Result) {
	m := r.meta
	if r.opts.Quiet {
		return
	}
	w := r.s.ErrOut
	fmt.Fprintf(w, "flamediff: wrote %s (label %q)\n", r.opts.Out, m.Label)
	fmt.Fprintf(w, "  window %.1f s, %d samples (%d lost), sampled CPU %.2f s vs accounted %.2f s\n",
		m.WindowSeconds, m.Samples, m.LostSamples, m.SampledCPUSeconds, m.CPUSeconds())
	if m.Operations > 0 {
		fmt.Fprintf(w, "  %d operations (%s): %.1f o/s, cpu/o %.1f µs, cs/o %.2f\n",
			m.Operations, m.OpsCounter, m.QPS, m.CPUMicrosPerOp(), m.CtxSwitchesPerOp())
		if ops := float64(m.Operations); m.ReadOps+m.WriteOps > 0 || m.ReadKB+m.WriteKB > 0 {
			fmt.Fprintf(w, "  r/o %.3f, w/o %.3f (read/write calls), rKB/o %.3f, wKB/o %.3f (storage)\n",
				float64(m.ReadOps)/ops, float64(m.WriteOps)/ops, m.ReadKB/ops, m.WriteKB/ops)
		}
		if m.WorkloadWindowQPS > 0 {
			fmt.Fprintf(w, "  the workload's own report for the window: %.1f o/s\n", m.WorkloadWindowQPS)
		}
	} else {
		fmt.Fprintf(w, "  no operation count: give --socket (or run sysbench as the workload) for per-op figures\n")
	}
}

// sampledGap returns a warning when the samples taken are too few or too
// many for the CPU the process was accounted: more than 15% apart, and
// more than three standard deviations of the count (sqrt of the expected
// samples) apart, so that short windows at low frequencies do not cry wolf.
func sampledGap(samples int64, freq int, cpu float64, perCPU bool) string {
	want := cpu * float64(freq)
	if want <= 0 {
		return ""
	}
	gap := float64(samples)/want - 1
	if math.Abs(gap) <= 0.15 || math.Abs(float64(samples)-want) <= 3*math.Sqrt(want) {
		return ""
	}
	what := "fewer"
	if gap > 0 {
		what = "more"
	}
	hint := "try the other --sampler"
	if perCPU {
		hint = "per-CPU events lose samples on some kernels when CPUs idle between short queries: record without --per-cpu"
	}
	return fmt.Sprintf("SAMPLED CPU DIFFERS: %d samples at %d Hz are %.2f CPU-s, %.0f%% %s than the %.2f CPU-s the process was accounted in the window; shares may be skewed (%s)",
		samples, freq, float64(samples)/float64(freq), 100*math.Abs(gap), what, cpu, hint)
}

// labelFromVersion turns "10.11.19-MariaDB-0+deb12u1" into "10.11"; without
// a version, the directory name.
func labelFromVersion(v, dir string) string {
	if v != "" {
		parts := strings.SplitN(v, ".", 3)
		if len(parts) >= 2 {
			return parts[0] + "." + strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
		}
	}
	return filepath.Base(filepath.Clean(dir))
}

func errOr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

// isTerminal reports whether w is a terminal (for the progress bar).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
