package record

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/flamediff/flamediff/capture"
)

// Defaults Run uses for zero fields of Config.
const (
	DefaultFreq      = 99
	DefaultProcRoot  = "/proc"
	DefaultUser      = "root"
	DefaultCounter   = "Questions"
	defaultSampler   = "auto"
	defaultEvent     = "auto"
	defaultCallGraph = CallGraphAuto
)

// SamplerNone is the Sampler of a window measured without a sampler: the
// workload, the /proc, schedstat and server-counter deltas as with one,
// but no stacks, so that throughput and per-op figures are those of the
// server alone (run.json "window": "unprofiled").
const SamplerNone = "none"

// CallGraphAuto is the default CallGraph: the stack walking that gives
// whole stacks with the sampler Run chose. The BPF sampler walks frame
// pointers and unwinds its stack copies with CFI (StackCopy); perf gets
// dwarf, as its frame-pointer walk stops in code without frame pointers
// (glibc).
const CallGraphAuto = "auto"

// Target says which process to sample: at most one of its fields is set.
// The zero Target is the single running mariadbd or mysqld.
type Target struct {
	// PID is the process id.
	PID int
	// PIDFile is a file holding the process id (a server's pid-file).
	PIDFile string
	// Process is the name of the single process to sample.
	Process string
}

// Config is one recording session. Zero fields take the defaults their
// comments give.
type Config struct {
	// Target is the process to sample.
	Target Target

	// Sampler is "perf", "bpf" or "auto" (""): the BPF sampler where the
	// kernel and privileges allow it and CallGraph and Event do not need
	// perf, else perf. run.json says which ran and why. "none" measures
	// the window without a sampler (SamplerNone): run.json with the
	// throughput, /proc and counter figures, no stacks.
	Sampler string
	// Event is the perf event: "auto" (""; cycles when the machine has a
	// hardware cycle counter, else cpu-clock), "cycles" or "cpu-clock".
	Event string
	// Freq is the sampling frequency in Hz, 1 to 10000 (DefaultFreq when 0).
	Freq int
	// CallGraph is the stack walking: "auto" ("", CallGraphAuto: dwarf
	// with perf, frame pointers and stack copies with BPF), "fp" (frame
	// pointers only with perf; with BPF the same as auto), or "dwarf" or
	// "dwarf,SIZE" (perf only: SIZE bytes of user stack copied per sample,
	// capture.DefaultDwarfStackBytes without SIZE); see ParseCallGraph.
	CallGraph string
	// StackCopy is the BPF sampler's stack copies: "never", "auto" (""),
	// or "always" (capture.Options.StackCopy): copied samples are unwound
	// with the CFI of the mapped objects, through code without frame
	// pointers. The perf sampler ignores it.
	StackCopy string
	// The BPF sampler corrects what its cpu-clock events miss
	// (capture.Options.SwitchFix, docs/fidelity.md): at context switches
	// with per-thread events, by weighting each sample with its thread's
	// run time with PerCPU. It does so by default whenever the BPF sampler
	// runs and the kernel allows it (its BTF); the perf sampler cannot.
	// SwitchFix requires it: Sampler auto then picks bpf, and a kernel
	// without it is an error. NoSwitchFix turns it off.
	SwitchFix, NoSwitchFix bool
	// Kernel keeps kernel frames; else samples in the kernel count for
	// their user-space caller.
	Kernel bool
	// PerCPU samples with one event per CPU filtered to the target instead
	// of events on the target's threads.
	PerCPU bool
	// OffCPU also records where the target's threads wait off the CPU
	// (the BPF sampler only: Sampler auto then picks bpf): offcpu.folded
	// and offcpu-switches.folded beside stacks.folded, voluntary and
	// involuntary switches apart, and run.json's off_cpu with /proc's
	// switches over the window (capture.Options.OffCPU).
	OffCPU bool
	// OffCPUMin leaves out the stretches off the CPU shorter than it
	// (with OffCPU).
	OffCPUMin time.Duration

	// Warmup is how long to let the workload run before sampling.
	Warmup time.Duration
	// Duration is the window; 0 with a sysbench workload is its --time
	// less Warmup and Margin, 0 with another workload is until it ends.
	Duration time.Duration
	// Margin is how long before the workload's end sampling stops when the
	// window is derived from sysbench's --time.
	Margin time.Duration

	// Socket is the server's unix socket: operations (and the version)
	// are read from its status counters as User (DefaultUser when "").
	Socket string
	// DSN is a go-sql-driver DSN of the server, instead of Socket.
	DSN  string
	User string
	// OpsCounter are the status counters whose sum is the operation count
	// ([DefaultCounter] when empty).
	OpsCounter []string

	// Label is the run's label in reports (default: the server's version
	// as MAJOR.MINOR, else the base name of Out).
	Label string
	// Out is the run directory to write: created, or an empty directory.
	Out string
	// KeepRaw keeps perf.data in Out.
	KeepRaw bool
	// DebugDirs are extra roots of separate debug files by build id.
	DebugDirs []string

	// Workload is the command that drives the server (none when empty).
	Workload []string
	// WorkloadEnv is more environment for the workload ("NAME=value",
	// such as sysbench's LUA_PATH), added to this process's; run.json's
	// workload puts it before the command.
	WorkloadEnv []string
	// WorkloadLimit, when not 0, is how long the workload may run from
	// its start: one still running after the window at that time is
	// stopped (its process group sent SIGTERM, SIGKILL 5 s later) and
	// run.json's warnings say so; a workload stopped so has not failed.
	// 0 waits for the workload to end by itself.
	WorkloadLimit time.Duration
	// Placement is where the server's threads and the workload run
	// (ParsePlacement): "none" ("": left to the scheduler), "same" (one
	// CPU), "separate" (two), or "server=CPUS,client=CPUS". Run pins the
	// server's threads before the workload starts and leaves them pinned
	// (it says so), starts the workload on the client's CPUs, checks both
	// at the end of the window, and records it in run.json (placement).
	Placement string

	// ProcRoot is /proc (DefaultProcRoot when ""); tests may point it
	// elsewhere.
	ProcRoot string
	// NewSampler makes the sampler Run chose ("perf" or "bpf"); nil for
	// capture.NewPerf and capture.NewBPF. Tests may inject one.
	NewSampler func(name string) (capture.Sampler, error)
}

// ErrInvalidConfig is wrapped by the errors of Config.Validate.
var ErrInvalidConfig = errors.New("invalid config")

// withDefaults returns c with the defaults in its zero fields.
func (c Config) withDefaults() Config {
	if c.Sampler == "" {
		c.Sampler = defaultSampler
	}
	if c.Event == "" {
		c.Event = defaultEvent
	}
	if c.Freq == 0 {
		c.Freq = DefaultFreq
	}
	if c.CallGraph == "" {
		c.CallGraph = defaultCallGraph
	}
	if c.StackCopy == "" {
		c.StackCopy = capture.DefaultStackCopy
	}
	if c.User == "" {
		c.User = DefaultUser
	}
	if len(c.OpsCounter) == 0 {
		c.OpsCounter = []string{DefaultCounter}
	}
	if c.ProcRoot == "" {
		c.ProcRoot = DefaultProcRoot
	}
	return c
}

// Validate checks the values of c (with the defaults of its zero fields)
// that do not depend on the machine: one target at most, the enumerated
// fields, the frequency, durations that are not negative, a window that
// ends. Its errors wrap ErrInvalidConfig and name the fields. Run calls it.
func (c Config) Validate() error {
	c = c.withDefaults()
	n := 0
	for _, set := range []bool{c.Target.PID != 0, c.Target.PIDFile != "", c.Target.Process != ""} {
		if set {
			n++
		}
	}
	cg, cgErr := ParseCallGraph(c.CallGraph)
	_, placeErr := ParsePlacement(c.Placement)
	var msg string
	switch {
	case n > 1:
		msg = "Target: set one of PID, PIDFile and Process"
	case c.Target.PID < 0:
		msg = fmt.Sprintf("Target.PID %d is not a process id", c.Target.PID)
	case c.Out == "":
		msg = "Out: no run directory"
	case c.Freq < 0 || c.Freq > 10000:
		msg = fmt.Sprintf("Freq %d: want 1 to 10000 Hz", c.Freq)
	case cgErr != nil:
		msg = "CallGraph " + cgErr.Error()
	case !oneOf(c.StackCopy, capture.StackCopies...):
		msg = fmt.Sprintf("StackCopy %q: want never, auto or always", c.StackCopy)
	case !oneOf(c.Sampler, "perf", "bpf", "auto", SamplerNone):
		msg = fmt.Sprintf("Sampler %q: want perf, bpf, auto or none", c.Sampler)
	case c.Sampler == SamplerNone && (c.SwitchFix || c.PerCPU || c.KeepRaw):
		msg = "Sampler none samples nothing: SwitchFix, PerCPU and KeepRaw need a sampler"
	case c.Sampler == "bpf" && cg.Method == capture.CallGraphDwarf:
		msg = "Sampler bpf walks frame pointers: CallGraph dwarf needs Sampler perf"
	case c.SwitchFix && c.NoSwitchFix:
		msg = "SwitchFix and NoSwitchFix: set one"
	case c.SwitchFix && (c.Sampler == "perf" || cg.Method == capture.CallGraphDwarf || c.Event == "cycles"):
		msg = "SwitchFix corrects the BPF sampler's cpu-clock events: it needs Sampler bpf or auto, no CallGraph dwarf, no Event cycles"
	case !oneOf(c.Event, "auto", "cycles", "cpu-clock"):
		msg = fmt.Sprintf("Event %q: want auto, cycles or cpu-clock", c.Event)
	case c.OffCPU && (c.Sampler == "perf" || c.Sampler == SamplerNone || cg.Method == capture.CallGraphDwarf || c.Event == "cycles"):
		msg = "OffCPU needs the BPF sampler: Sampler bpf or auto, no CallGraph dwarf, no Event cycles"
	case c.OffCPUMin < 0 || c.OffCPUMin > 0 && !c.OffCPU:
		msg = "OffCPUMin: want 0 or more, with OffCPU"
	case c.Socket != "" && c.DSN != "":
		msg = "Socket and DSN: set one"
	case c.Warmup < 0 || c.Duration < 0 || c.Margin < 0:
		msg = "Warmup, Duration and Margin cannot be negative"
	case len(c.Workload) == 0 && c.Duration == 0:
		msg = "Duration: without a Workload the window needs a duration"
	case placeErr != nil:
		msg = "Placement " + placeErr.Error()
	default:
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalidConfig, msg)
}

// ParseCallGraph parses a CallGraph value as Run uses it: "auto" (or
// "", Method CallGraphAuto), "fp", "dwarf" or "dwarf,SIZE"; beyond auto it
// is capture.ParseCallGraph, for the callers of record (its errors start
// with the quoted value).
func ParseCallGraph(s string) (capture.CallGraph, error) {
	if s == "" || s == CallGraphAuto {
		return capture.CallGraph{Method: CallGraphAuto}, nil
	}
	if method, _, _ := strings.Cut(s, ","); method != capture.CallGraphFP && method != capture.CallGraphDwarf {
		return capture.CallGraph{}, fmt.Errorf("%q: want auto, fp or dwarf (or dwarf,SIZE: SIZE bytes of stack per sample)", s)
	}
	return capture.ParseCallGraph(s)
}

// resolveCallGraph returns the call graph of g with the sampler Run chose:
// auto is dwarf (the default size) for perf and fp for bpf.
func resolveCallGraph(g capture.CallGraph, sampler string) capture.CallGraph {
	if g.Method != CallGraphAuto {
		return g
	}
	if sampler == "perf" {
		return capture.CallGraph{Method: capture.CallGraphDwarf, StackBytes: capture.DefaultDwarfStackBytes}
	}
	return capture.CallGraph{Method: capture.CallGraphFP}
}

func oneOf(s string, values ...string) bool {
	for _, v := range values {
		if s == v {
			return true
		}
	}
	return false
}

// Fields a FieldError names.
const (
	FieldOut        = "Out"
	FieldPID        = "Target.PID"
	FieldProcess    = "Target.Process"
	FieldTarget     = "Target"
	FieldSampler    = "Sampler"
	FieldOpsCounter = "OpsCounter"
	FieldPlacement  = "Placement"
)

// FieldError is an error about the value of one Config field that shows
// only when Run uses it on this machine: the process is not running, the
// sampler asked for cannot run, the server lacks the counters, the run
// directory cannot be made. A command may word it in terms of its flags.
type FieldError struct {
	// Field is one of the Field constants. FieldTarget means that no
	// target was given and no single server was found.
	Field string
	// Value is the field's value as text ("" for FieldTarget and
	// FieldOpsCounter).
	Value string
	// Candidates are, with capture.ErrAmbiguous, the processes that match
	// Target.Process.
	Candidates []capture.Process
	// Err is the cause.
	Err error
}

func (e *FieldError) Error() string {
	switch e.Field {
	case FieldOut:
		return fmt.Sprintf("run directory %v", e.Err)
	case FieldPID:
		return fmt.Sprintf("pid %s: %v", e.Value, e.Err)
	case FieldProcess:
		if len(e.Candidates) > 0 {
			return fmt.Sprintf("process %s: %v; choose one by pid:%s", e.Value, e.Err, e.CandidateList())
		}
		return fmt.Sprintf("process %s: %v", e.Value, e.Err)
	case FieldTarget:
		return fmt.Sprintf("%v (name the process to sample by pid, pid file or name)", e.Err)
	case FieldSampler:
		return fmt.Sprintf("sampler %s: %v (the perf sampler uses perf record instead)", e.Value, e.Err)
	case FieldOpsCounter:
		return fmt.Sprintf("operation counters: %v", e.Err)
	case FieldPlacement:
		return fmt.Sprintf("placement %s: %v", e.Value, e.Err)
	}
	return fmt.Sprintf("%s %s: %v", e.Field, e.Value, e.Err)
}

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

// CandidateList returns the candidates one a line, each line starting
// with a newline and two spaces: "\n  PID COMMAND LINE".
func (e *FieldError) CandidateList() string {
	var b strings.Builder
	for _, p := range e.Candidates {
		fmt.Fprintf(&b, "\n  %d %s", p.PID, strings.Join(p.Cmdline, " "))
	}
	return b.String()
}

// NoWindowError says that the window derived from sysbench's --time is
// empty once the warmup and the margin are taken off. It is found after
// the workload started; the workload is stopped and nothing is written.
type NoWindowError struct {
	SysbenchTime, Warmup, Margin time.Duration
}

func (e *NoWindowError) Error() string {
	return fmt.Sprintf("sysbench --time=%s leaves no window after a warmup of %s and a margin of %s", e.SysbenchTime, e.Warmup, e.Margin)
}

// ErrEndedEarly is the cause given when the workload exited with status 0
// during the warmup.
var ErrEndedEarly = errors.New("it exited 0 too early; make it run longer than the warmup")

// ErrIncomplete is wrapped by the error of a run that was written with
// what was sampled but did not run its course (interrupted, the server
// died, the workload failed); Run returns its Result too.
var ErrIncomplete = errors.New("incomplete run written")
