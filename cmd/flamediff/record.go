package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/record"
)

// RecordOptions are the options of `flamediff record`: the session's
// record.Config, which the flags fill, and how to print.
type RecordOptions struct {
	IO *streams
	record.Config
	Quiet bool
}

func newRecordCmd(s *streams, runF func(*RecordOptions) error) *cobra.Command {
	opts := &RecordOptions{IO: s, Config: record.Config{ProcRoot: "/proc"}}
	cmd := &cobra.Command{
		Use:     "record [flags] [-- WORKLOAD COMMAND...]",
		Short:   "Sample a running server while a workload drives it; write a run directory",
		Long:    help.Long("record"),
		Example: help.Example("record"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if n := cmd.ArgsLenAtDash(); n > 0 {
				return cli.UsageError("record takes no arguments before --; the workload command goes after -- (got %q)", args[:n])
			}
			opts.Workload = args
			if err := opts.validate(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runRecord(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Target.PID, "pid", 0, "sample process `N`")
	f.StringVar(&opts.Target.PIDFile, "pidfile", "", "read the pid from `FILE`")
	f.StringVar(&opts.Target.Process, "process", "", "sample the single process named `NAME` (default: the running mariadbd or mysqld)")
	cli.EnumFlag(cmd, &opts.Sampler, "sampler", "auto", "sampler: perf, bpf, or auto (bpf where the kernel and privileges allow it, else perf; run.json says which ran and why); none measures the window without a sampler (throughput and per-op figures of the server alone, no stacks: run.json \"window\": \"unprofiled\")", "perf", "bpf", "auto", record.SamplerNone)
	f.IntVar(&opts.Freq, "freq", 99, "sampling frequency in Hz")
	cli.EnumFlag(cmd, &opts.Event, "event", "auto", "perf event: auto (cycles when the machine has a hardware cycle counter, else cpu-clock), cycles or cpu-clock", "auto", "cycles", "cpu-clock")
	// Not an enumFlag: dwarf takes a size (validate checks it).
	f.StringVar(&opts.CallGraph, "call-graph", record.CallGraphAuto, fmt.Sprintf("stack walking: auto (whole stacks with either sampler: dwarf with perf; frame pointers and --stack-copy with bpf), fp (frame pointers; perf's stop in code without them, as glibc) or dwarf (perf: %d bytes of each sample's stack copied and unwound with its CFI, through code without frame pointers; dwarf,SIZE copies SIZE bytes, a multiple of 8 up to %d)", capture.DefaultDwarfStackBytes, capture.MaxDwarfStackBytes))
	cli.EnumFlag(cmd, &opts.StackCopy, "stack-copy", capture.DefaultStackCopy, "BPF sampler: which samples carry a copy of their user stack, unwound with the CFI of the mapped objects (through code without frame pointers, as glibc): never (frame pointers only), auto (samples in objects without frame pointers or whose frame-pointer walk misses the thread's root) or always", capture.StackCopies...)
	_ = cmd.RegisterFlagCompletionFunc("call-graph", cli.FixedCompletion(record.CallGraphAuto, "fp", "dwarf"))
	f.BoolVar(&opts.SwitchFix, "switch-fix", true, "BPF sampler: correct what its cpu-clock events miss (per-thread events: samples whose timer expired during a switch-out, CPU of the switches themselves; --per-cpu: each sample weighted by its thread's run time); on by default where the kernel allows it, --switch-fix requires it, --switch-fix=false turns it off; see docs/fidelity.md")
	f.BoolVar(&opts.OffCPU, "off-cpu", false, "BPF sampler: also record where the server's threads wait off the CPU (offcpu.folded in microseconds, offcpu-switches.folded in switches, each stack's leaf [voluntary] or [involuntary]; run.json's off_cpu compares the switches with /proc's); see docs/recording.md")
	f.DurationVar(&opts.OffCPUMin, "off-cpu-min", 0, "with --off-cpu: leave out the stretches off the CPU shorter than this (their switches too)")
	f.BoolVar(&opts.Kernel, "kernel", false, "keep kernel frames (default: samples in the kernel count for their user-space caller)")
	f.BoolVar(&opts.PerCPU, "per-cpu", false, "sample with one event per CPU filtered to the target (perf record -a) instead of events on the target's threads (perf record -p): cheaper for a server that switches context often, but on some kernels (seen on VMs) CPUs that idle between short queries lose 5-50% of the samples; run.json then warns")
	var perThread bool
	f.BoolVar(&perThread, "per-thread", false, "")
	_ = f.MarkDeprecated("per-thread", "per-thread events are the default now (--per-cpu for per-CPU events)")
	f.DurationVar(&opts.Warmup, "warmup", 5*time.Second, "with a workload: wait this long before sampling")
	f.DurationVar(&opts.Duration, "duration", 0, "sampling window (default with sysbench --time=T: until T - margin after the workload's start; a sampler slow to start shortens it)")
	f.DurationVar(&opts.Margin, "margin", 2*time.Second, "stop sampling this long before the workload's end")
	f.StringVar(&opts.Socket, "socket", "", "server unix `SOCKET`: read operations (and the version) from its counters")
	f.StringVar(&opts.DSN, "dsn", "", "server DSN (go-sql-driver form, e.g. root@tcp(127.0.0.1:3306)/) instead of --socket")
	f.StringVar(&opts.User, "user", "root", "user for --socket")
	f.StringSliceVar(&opts.OpsCounter, "ops-counter", []string{"Questions"}, "status counter(s) whose sum is the operation count (e.g. Com_update)")
	f.StringVar(&opts.Label, "label", "", "the run's label in reports (default: the server version, else the directory name)")
	f.StringVarP(&opts.Out, "out", "o", "", "run directory to write (created; must be empty or absent)")
	f.BoolVar(&opts.KeepRaw, "keep-raw", false, "keep perf.data in the run directory")
	f.StringArrayVar(&opts.DebugDirs, "debug-dir", nil, "also look up separate debug files by build id under `DIR` (DIR/.build-id/xx/yyyy.debug, as in a -dbg package), before /usr/lib/debug: for a server run with its own libc (repeatable)")
	f.StringVar(&opts.Placement, "placement", record.PlacementNone, "where the server's threads and the workload run: none (left to the scheduler), same (both on the last CPU), separate (server on the last CPU, workload on the first), or server=CPUS,client=CPUS (CPU lists, e.g. server=1,client=0); the server's threads are pinned before the workload starts and stay pinned; run.json says what was asked and found (docs/recording.md)")
	_ = cmd.RegisterFlagCompletionFunc("placement", cli.FixedCompletion(record.PlacementNone, record.PlacementSame, record.PlacementSeparate))
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

func (o *RecordOptions) validate(cmd *cobra.Command) error {
	if err := cli.Exclusive(cmd, "pid", "pidfile", "process"); err != nil {
		return err
	}
	if err := cli.Exclusive(cmd, "socket", "dsn"); err != nil {
		return err
	}
	cg, err := record.ParseCallGraph(o.CallGraph)
	if err != nil {
		return cli.UsageError("--call-graph %v", err)
	}
	if _, err := record.ParsePlacement(o.Placement); err != nil {
		return cli.UsageError("--placement %v", err)
	}
	// --switch-fix is on by default, as record.Config's zero value is;
	// given, it is required (true) or off (false).
	if given := cmd.Flags().Changed("switch-fix"); !given || !o.SwitchFix {
		o.NoSwitchFix = given
		o.SwitchFix = false
	}
	switch {
	case o.Target.PID < 0:
		return cli.UsageError("--pid %d: want a process id", o.Target.PID)
	case o.Out == "":
		return cli.UsageError("--out DIR is required: the run directory to write")
	case o.Freq <= 0 || o.Freq > 10000:
		return cli.UsageError("--freq %d: want 1 to 10000 Hz", o.Freq)
	case o.Sampler == record.SamplerNone && (o.SwitchFix || o.PerCPU || o.KeepRaw):
		return cli.UsageError("--sampler none samples nothing: --switch-fix, --per-cpu and --keep-raw need a sampler")
	case o.Sampler == "bpf" && cg.Method == capture.CallGraphDwarf:
		return cli.UsageError("--sampler bpf walks frame pointers: --call-graph dwarf needs --sampler perf")
	case o.SwitchFix && (o.Sampler == "perf" || cg.Method == capture.CallGraphDwarf || o.Event == "cycles"):
		return cli.UsageError("--switch-fix corrects the BPF sampler's cpu-clock events: drop --sampler perf, --call-graph dwarf and --event cycles")
	case o.OffCPU && (o.Sampler == "perf" || o.Sampler == record.SamplerNone || cg.Method == capture.CallGraphDwarf || o.Event == "cycles"):
		return cli.UsageError("--off-cpu needs the BPF sampler: drop --sampler perf or none, --call-graph dwarf and --event cycles")
	case o.OffCPUMin < 0 || o.OffCPUMin > 0 && !o.OffCPU:
		return cli.UsageError("--off-cpu-min %s: want 0 or more, with --off-cpu", o.OffCPUMin)
	case o.Warmup < 0 || o.Duration < 0 || o.Margin < 0:
		return cli.UsageError("--warmup, --duration and --margin cannot be negative")
	case len(o.Workload) == 0 && o.Duration == 0:
		return cli.UsageError("without a workload command, give --duration")
	}
	return cli.CheckNewDir("--out", o.Out, "run")
}

// errEndedEarly is record.ErrEndedEarly in the words of the flags.
var errEndedEarly = errors.New("it exited 0 too early; make it run longer than --warmup")

func runRecord(ctx context.Context, opts *RecordOptions) error {
	w := opts.IO.ErrOut
	p := &recordProgress{w: w, quiet: opts.Quiet, tty: cli.IsTerminal(w)}
	res, err := record.Run(ctx, opts.Config, p.report)
	if res != nil && !opts.Quiet {
		res.WriteSummary(w, unwindHint)
	}
	return recordError(err, opts.Warmup)
}

// recordError words the errors of record.Run in terms of the flags of
// `flamediff record` (warmup is --warmup's value).
func recordError(err error, warmup time.Duration) error {
	var fe *record.FieldError
	var nw *record.NoWindowError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &nw):
		return cli.UsageError("sysbench --time=%s leaves no window after --warmup %s and --margin %s", nw.SysbenchTime, nw.Warmup, nw.Margin)
	case errors.Is(err, record.ErrEndedEarly):
		return fmt.Errorf("record: the workload ended during the %s warmup, before sampling started: %w", warmup, errEndedEarly)
	case !errors.As(err, &fe):
		return err
	}
	switch fe.Field {
	case record.FieldOut:
		return fmt.Errorf("record: --out %w", fe.Err)
	case record.FieldPID:
		return fmt.Errorf("record: --pid %s: %w", fe.Value, fe.Err)
	case record.FieldProcess:
		if len(fe.Candidates) > 0 {
			return fmt.Errorf("record: --process %s: %w; choose one with --pid:%s", fe.Value, fe.Err, fe.CandidateList())
		}
		return fmt.Errorf("record: --process %s: %w", fe.Value, fe.Err)
	case record.FieldTarget:
		return fmt.Errorf("record: %w (name the process with --pid, --pidfile or --process)", fe.Err)
	case record.FieldSampler:
		return fmt.Errorf("record: --sampler %s: %w (--sampler perf uses perf record instead)", fe.Value, fe.Err)
	case record.FieldOpsCounter:
		return fmt.Errorf("record: --ops-counter: %w", fe.Err)
	case record.FieldPlacement:
		return fmt.Errorf("record: --placement %s: %w", fe.Value, fe.Err)
	}
	return err
}

// recordProgress prints record.Run's progress on stderr: the phases as
// "flamediff: ..." lines, warnings even when quiet, and on a terminal a
// progress bar during the window.
type recordProgress struct {
	w          io.Writer
	quiet, tty bool
}

func (p *recordProgress) report(st record.Status) {
	switch st.Phase {
	case record.PhaseWarning:
		fmt.Fprintf(p.w, "flamediff: warning: %s\n", st.Message)
	case record.PhasePlacement:
		// Even when quiet: the server is left pinned.
		fmt.Fprintf(p.w, "flamediff: %s\n", st.Message)
	case record.PhaseWarmup, record.PhaseSampling:
		if !p.quiet {
			fmt.Fprintf(p.w, "flamediff: %s\n", st.Message)
		}
	case record.PhaseTick:
		if p.tty && !p.quiet {
			bar := ""
			if st.Window > 0 {
				n := min(int(30*st.Elapsed/st.Window), 30)
				bar = "[" + strings.Repeat("#", n) + strings.Repeat(".", 30-n) + "] "
			}
			fmt.Fprintf(p.w, "\r\033[Ksampling %s%s, ~%d samples", bar, st.Elapsed.Round(time.Second), st.Samples)
		}
	case record.PhaseWindowEnd:
		if p.tty && !p.quiet {
			fmt.Fprint(p.w, "\r\033[K")
		}
	}
}
