// Package capture samples the on-CPU call stacks of one running process
// (a mysqld or mariadbd server) and hands them over as a *fold.Profile. It
// also finds the server process to sample (FindServer, FindProcesses,
// ReadPIDFile).
//
// The perf sampler (NewPerf) runs Linux's perf record against the process
// and folds perf script's output with fold.ParsePerfScript, so its stacks
// are those stackcollapse-perf.pl would print. Sampling needs Linux: on other
// systems every function returns an error wrapping errors.ErrUnsupported.
//
// Errors that a caller can act on wrap the sentinels below; test them with
// errors.Is. Their messages say what to do.
package capture

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/flamediff/flamediff/fold"
)

// Sentinel errors, wrapped with context (and perf's own words) by the
// functions of this package.
var (
	// ErrPermission: this user may not sample the process (not root and
	// kernel.perf_event_paranoid too high, or the process belongs to
	// another user). Run as root or lower the setting:
	// sysctl kernel.perf_event_paranoid=1.
	ErrPermission = errors.New("not permitted to sample")
	// ErrNotInstalled: the sampler (perf) is missing or does not run; on
	// Debian and Ubuntu install it with apt-get install linux-perf
	// (linux-tools-$(uname -r) on Ubuntu).
	ErrNotInstalled = errors.New("sampler not installed")
	// ErrProcessGone: the process to sample does not exist (any more).
	ErrProcessGone = errors.New("target process is gone")
	// ErrAmbiguous: more than one process matches; pick one by PID.
	ErrAmbiguous = errors.New("more than one matching process")
	// ErrNoProcess: no process matches.
	ErrNoProcess = errors.New("no matching process")
)

// Options for a sampler. The zero value samples on cpu-clock at 99 Hz with
// frame-pointer call graphs, drops kernel frames and removes perf.data
// after folding it.
type Options struct {
	FrequencyHz int // samples per second per thread; default 99
	// CallGraph is "fp" (frame pointers, the default), "dwarf" or
	// "dwarf,SIZE" (perf only: SIZE bytes of user stack copied per
	// sample, DefaultDwarfStackBytes without SIZE); see ParseCallGraph.
	CallGraph string
	// Kernel keeps kernel frames (with stackcollapse-perf.pl's "_[k]"
	// suffix). By default they are dropped and their samples are
	// attributed to the user-space frames beneath them (the caller of the
	// system call).
	Kernel bool
	// SystemWide samples every CPU (perf record -a) and keeps the target's
	// samples when folding, instead of per-thread events on the target
	// (perf record -p). Per-thread events are switched in and out at every
	// context switch of the target's threads, which costs a server doing
	// tens of thousands of them per second far more than the sampling;
	// per-CPU events are not (see `make bench-overhead`).
	SystemWide bool
	Event      string // perf event; default "cpu-clock"
	WorkDir    string // directory for perf.data; a new temporary directory when ""
	// KeepRaw keeps perf.data after folding (Result.RawPath); otherwise it
	// is removed (and the temporary directory with it).
	KeepRaw bool
	// Stderr receives the sampler's own diagnostics (perf's stderr) as
	// they come; nil discards them (the tail still appears in errors).
	Stderr io.Writer
	// DebugDirs are directories of separate debug files by build id
	// (<dir>/.build-id/xx/yyyy.debug, as Debian's libc6-dbg installs
	// them), looked up before /usr/lib/debug: a server run from a private
	// tree with its own libc names libc's frames with that libc's debug
	// files. perf finds them through a private build-id directory
	// made for perf script (perf --buildid-dir); the BPF sampler directly.
	DebugDirs []string
	// StackCopy says which samples the BPF sampler copies with their user
	// stack to unwind them in user space with the CFI of the mapped
	// objects (their .eh_frame), so that stacks are whole through code
	// without frame pointers: "never" (frame pointers only, aggregated in
	// the kernel), "auto" (samples whose leaf is in an object without
	// frame pointers, or whose frame-pointer walk misses a thread root,
	// ThreadRootSymbols), "always"; DefaultStackCopy when "". The perf
	// sampler ignores it (see CallGraph).
	StackCopy string
	// SwitchFix has the BPF sampler correct what its cpu-clock events
	// miss (bpf.Options.SwitchFix, docs/fidelity.md): at context switches
	// with per-thread events; with SystemWide, by weighting each sample
	// with its thread's run time. The perf sampler ignores it.
	SwitchFix bool
	// TimerProgramCost is what programming the CPU's timer device costs,
	// for the switch fix with per-thread events
	// (bpf.Options.TimerProgramCost): 0 measures it when sampling starts
	// (bpf.MeasureTimerProgramCost), a negative value leaves that
	// correction out.
	TimerProgramCost time.Duration
	// OffCPU has the BPF sampler also count where the target's threads
	// wait off the CPU, voluntary and involuntary switches apart
	// (bpf.Options.OffCPU): Result.OffCPU. The perf sampler refuses it.
	OffCPU bool
	// OffCPUMin leaves out the stretches off the CPU shorter than it.
	OffCPUMin time.Duration
}

// OffCPU is the off-CPU profile of a window (Options.OffCPU).
type OffCPU struct {
	// Time holds the stacks at which the threads left the CPU, weighted
	// by microseconds off the CPU; Switches the same stacks weighted by
	// switch-outs. Frames[0] is the thread name, as in Result.Profile,
	// and each stack's leaf is fold.OffCPUVoluntary or
	// fold.OffCPUInvoluntary. Unit is fold.UnitSamples (counts).
	Time, Switches *fold.Profile
	// Totals are the window's totals and their split by thread name
	// (Seconds, Voluntary, Involuntary, Dropped, Short, Threads; the
	// /proc figures are for the caller to fill).
	Totals fold.OffCPU
	// ByTID holds each thread's switches counted, by thread id, so that
	// the caller can compare them with /proc's over the threads /proc
	// can count (not those that exited in the window).
	ByTID map[int]ThreadSwitches
}

// ThreadSwitches are the switches of one thread, by kind.
type ThreadSwitches struct {
	Voluntary, Involuntary int64
}

// Result is what one sampling window produced.
type Result struct {
	// Profile holds the folded stacks. Unit is fold.UnitSamples: every
	// stack's Value is a number of samples (perf script is run without the
	// period field, so values do not depend on the event's period and
	// Profile.Total() == Profile.Samples). Frames[0] is the thread name
	// (comm), as stackcollapse-perf.pl writes it; Event is the perf event.
	Profile *fold.Profile
	// Samples is the number of samples taken: what perf record reports
	// ("Captured and wrote ... (N samples)"), else Profile.Samples.
	Samples int64
	// Lost counts samples (perf: chunks of samples) the kernel dropped
	// because perf could not keep up, as perf reports them; 0 when none
	// were reported.
	Lost     int64
	RawPath  string // perf.data when Options.KeepRaw, else ""
	Sampler  string // "perf" or "bpf"
	Warnings []string
	// Health holds the BPF sampler's health counters (see
	// fold.Meta.SamplerHealth for the keys); nil for perf.
	Health map[string]uint64
	// Corrections holds, by thread name, what Options.SwitchFix did to
	// the samples (the health counters switch_deferred, switch_owed,
	// switch_skipped, weighted_extra and weighted_zero of that name's
	// threads; names it did nothing to are left out); nil for perf.
	Corrections map[string]map[string]uint64
	// ProgramRunTime and ProgramRuns are the BPF program's run time and
	// run count over the window, as the kernel counted them while its BPF
	// run-time statistics were on (bpf.EnableStats); 0 otherwise. The
	// program runs in the sampled CPU's interrupt, on the target's time.
	ProgramRunTime time.Duration
	ProgramRuns    uint64
	// Unwind says how the stacks were unwound (BPF sampler; nil for
	// perf): the method, the stack copies and, per object, the frames by
	// method.
	Unwind *fold.Unwind
	// OffCPU is the off-CPU profile with Options.OffCPU, else nil.
	OffCPU *OffCPU
}

// Sampler samples one process. A Sampler is used once: Start, then Stop.
type Sampler interface {
	// Name returns the sampler's name ("perf").
	Name() string
	// Start begins sampling pid and returns once sampling is running (the
	// sampler has its events enabled), or with an error wrapping
	// ErrPermission, ErrNotInstalled or ErrProcessGone with context and
	// the sampler's own last words. When ctx is cancelled while sampling,
	// sampling stops; Stop then folds what was sampled so far.
	Start(ctx context.Context, pid int, opts Options) error
	// Stop ends sampling and folds what was sampled. It works after the
	// target died (whatever was sampled is returned, with a warning). It
	// blocks while the sampler writes its data and the stacks are folded;
	// cancelling ctx kills the sampler and returns ctx's error. Calling it
	// again returns the same result and error.
	Stop(ctx context.Context) (*Result, error)
	// SamplesSoFar is a best-effort count of samples taken so far, for
	// progress display (an estimate from the size of perf.data), 0 when
	// unknown.
	SamplesSoFar() int64
}

// Preparer is a Sampler whose slow setup (the BPF sampler: loading and
// verifying its program, reading the target's symbols) can be done before
// Start, so that a window does not wait for it: Start with the same pid
// and options then only enables the events. Start with others prepares
// again; Stop releases a prepared sampler that never started.
type Preparer interface {
	Prepare(ctx context.Context, pid int, opts Options) error
}

// Process is a running process found in a proc tree.
type Process struct {
	PID     int
	Comm    string   // /proc/PID/comm (at most 15 bytes)
	Cmdline []string // /proc/PID/cmdline, split at NUL bytes
}

// serverNames are the process names FindServer looks for.
var serverNames = []string{"mariadbd", "mysqld"}
