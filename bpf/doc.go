// Package bpf is flamediff's in-kernel stack sampler: a BPF program attached
// to cpu-clock perf events (one per online CPU, or one per thread of the
// target with Options.PerThread), which aggregates the call stacks of one
// process in kernel maps, and its loader. capture wraps it as
// a sampler; this package hands over raw addresses (Count) and leaves
// symbolization to its caller.
//
// # Use
//
// Load verifies the program and creates its maps, Start opens and enables
// the perf events, Stop disables them, Counts and Health read the maps, and
// Close releases everything (with stack copies, ReadSamples also reads the
// copied samples while sampling; see "Stack copies"):
//
//	p, err := bpf.Load(bpf.Options{PID: pid, FrequencyHz: 99})
//	if err != nil { ... } // errors.Is(err, bpf.ErrPermission), errors.Is(err, errors.ErrUnsupported)
//	defer p.Close()
//	if err := p.Start(); err != nil { ... }
//	time.Sleep(window)
//	p.Stop()
//	counts, err := p.Counts()
//
// Loading needs root, or CAP_BPF and CAP_PERFMON (and CAP_SYS_RESOURCE on
// kernels before 5.11, which charge BPF maps to RLIMIT_MEMLOCK). It works
// on Linux 5.8 or later (bounded loops, bpf_get_stack, run-time stats);
// Linux 5.15 adds BPF links for perf events (older kernels get the
// PERF_EVENT_IOC_SET_BPF ioctl). Off Linux every function returns an error
// wrapping errors.ErrUnsupported.
//
// # Design
//
// The program (profile.bpf.c) runs on every cpu-clock tick of its events. It
// skips the idle task (pid 0) and every process but the target, then takes
// the user stack with bpf_get_stack(BPF_F_USER_STACK) (frame pointers: code
// built without them yields short stacks) and, with Options.Kernel, the
// kernel stack, each into a per-CPU scratch buffer: 127 frames of 8 bytes do
// not fit the 512-byte BPF stack.
//
// Stacks are not stored in a BPF_MAP_TYPE_STACK_TRACE map. That map keys a
// stack by a 32-bit hash of its frames into a fixed-size table and, when two
// stacks hash to the same bucket, either drops the new stack (the sample is
// lost, with -EEXIST) or, with BPF_F_REUSE_STACKID, overwrites the old one
// (earlier samples now point at the wrong stack). Either way distinct
// stacks are silently lost, more so as the table fills. Instead the program
// computes a 64-bit FNV-1a hash of the stack's frames and keeps the stack
// itself (depth + frames) in a hash map keyed by that hash. Two different
// stacks with the same 64-bit hash are still possible (about n²/2⁶⁵ for n
// distinct stacks, i.e. never in practice); the program checks for it by
// comparing the frames whenever the hash is already present: the stack
// stored first keeps the hash, the sample is counted under it (so it is
// attributed to the first stack), and Health.Collisions counts the event,
// so a profile with collisions can be told apart.
//
// Samples are counted in a hash map keyed by {tgid, tid, comm, user hash,
// kernel hash}, with an atomic add on the count. Hash 0 means "no stack":
// the stack was empty, not asked for, or bpf_get_stack failed.
//
// Every sample is accounted for in the health counters (a per-CPU array,
// summed by Health): Samples counts the target's samples, Idle the skipped
// idle ticks, MapFull the samples dropped because a map was full, and
// bpf_get_stack failures are counted by errno per stack kind. Hence, once
// the events are stopped,
//
//	Health.Samples == sum of Count.Samples + Health.MapFull
//
// (plus the samples copied or dropped with stack copies, below), and a
// profile whose maps filled up, whose stacks hit the depth limit or whose
// stacks could not be read says so instead of being quietly small.
//
// The counts map is preallocated (its size is Options.MaxStacks), so a full
// map is a hard and predictable limit. The stacks map, 1 KiB a value, is
// not (BPF_F_NO_PREALLOC) so that memory follows the stacks actually seen;
// the price is an occasional -ENOMEM on an insert in interrupt context
// (Health.StackNoMem), which the loader makes rarer by filling each CPU's
// element cache before the programs run (the kernel starts it with one
// element of this size: the first switch-out with two new stacks lost a
// switch in every off-CPU run with kernel stacks). Options.PreallocStacks,
// and kernels before 6.1, which refuse non-preallocated maps in
// perf_event programs, get a preallocated one.
//
// # Off-CPU counts
//
// With Options.OffCPU a second program, offcpu, runs on the sched_switch
// tracepoint (tp_btf, beside switch_fix when that runs). It shares the
// sampler's stacks map and hashing, so a stack seen on and off the CPU is
// stored once. When a thread of the target leaves the CPU it walks its
// user (and kernel) stack and keeps {time, thread, stack hashes,
// voluntary} in offcpu_starts under the thread id; voluntary is
// "not preempted and prev_state is not TASK_RUNNING", the kernel's own
// rule for nvcsw against nivcsw. When the thread is switched back in, the
// time since is added to offcpu_counts (nanoseconds and switches per
// {thread, comm, user hash, kernel hash, voluntary}), aggregated in the
// kernel as the samples are. Profiler.OffCPU reads them after Stop and
// adds the threads still off the CPU at Stop, up to Stop, so that the
// switches counted are the switch-outs between Start and Stop, as /proc
// counts them. A thread that left the CPU before Start is not counted.
//
// A thread leaves the CPU in a system call, mostly made in glibc, built
// without frame pointers, where bpf_get_stack's frame-pointer walk skips
// or loses the callers. With Options.OffCPUCFI, a user stack whose leaf is
// in a no-frame-pointer range (SetRanges) is walked by the program itself
// (walk_cfi, in a bpf_loop): a frame in those ranges by its CFI rule from
// cfi_rules (CFA = rsp or rbp + offset, return address at CFA-8, rbp saved
// at CFA+offset or unchanged), other frames by frame pointers. The rules
// are learnt: a pc without one is put in cfi_wanted and that walk falls
// back to bpf_get_stack; user space reads the pcs (CFIWanted) and answers
// from the objects' .eh_frame (SetCFIRules).
//
// The scheduler charges the program's own run time to the thread switched
// in, not to the one whose stack it walks. With Options.SwitchFix, offcpu
// adds that time to the thread_state of a target thread switched in
// (prog_ns), which switch_fix and profile_weighted leave out of the run
// time they count samples for, so no sample stands for the profiler's CPU
// (Health.OffCPUChargedNs); and since the outgoing thread's sample timer
// runs on through the walk, a period that ends in it has its late sample
// skipped (Health.OffCPUTimerSkipped). See docs/fidelity.md.
//
// # Stack copies
//
// A frame-pointer walk stops, or skips frames, in code built without frame
// pointers (glibc's syscall wrappers, for one), so some stacks do not reach
// their thread's root. With Options.StackCopy the program can instead send
// a sample whole to user space, for an unwinder that reads the objects'
// CFI (.eh_frame), as perf --call-graph dwarf does. A copied sample is a
// record in the `samples` ring buffer: the thread (tgid, tid, comm), the
// user registers (ip, sp, bp), the frame-pointer walk (the same frames a
// Count would hold, for comparison), the kernel stack with Options.Kernel,
// flags, and a copy of the user stack. Profiler.ReadSamples decodes them
// into RawSamples. A copied sample is not counted in the kernel's maps;
// the others are, as without stack copies. StackCopyNever (the default)
// copies nothing and is exactly the sampler without this section: its
// switches are read-only constants, so the verifier drops the copy path
// from the loaded program (TestVerifierStats logs the sizes).
//
// StackCopyAlways copies every sample. StackCopyAuto copies a sample when
// its leaf IP is in one of the "no frame pointer" ranges, or when its
// frame-pointer walk is empty or its last address is in none of the
// "root" ranges (the walk missed the thread's root); Profiler.SetRanges
// sets both lists (at most MaxRanges each, scanned linearly by the
// program; both are empty after Load, so auto copies every sample until
// they are set).
//
// The copy starts at the page of the stack pointer and reads whole pages
// of PageSize bytes upwards, up to Options.StackPages (at most
// MaxStackPages, 7: the record, 2,112 bytes of header and frames plus the
// pages, must fit a 32 KiB per-CPU buffer), and stops at the first page
// that cannot be read. A page read is all or nothing and a page-aligned
// read never straddles the end of a mapping, so the copy ends exactly at
// the end of the thread's stack mapping (the next page is a guard page or
// unmapped) when the stack is shorter than the window, or at a page the
// thread never touched, which is not in memory and which a BPF program
// cannot fault in: the kernel leaves a random gap of up to 8 KiB between
// the main thread's first frame and its arguments at the top of the stack
// (arch_align_stack), so that a whole page there is sometimes untouched (1
// run of 40 of TestStackCopy). No frame lies above such a page. The part of
// SP's page below the stack pointer is kept (RawSample.Stack starts at
// RawSample.StackBase, the page's start): an epilogue that has popped a
// saved register still has CFI that finds it there.
// When every page was copied and the stack goes on above, the sample is
// flagged SampleWindowFull and counted in Health.WindowFull: an unwinder
// may run out of stack before the root there. Stacks measured on MariaDB
// 10.11 (point-select) span 2 to 5 pages from SP's page; 7 pages were too
// few for 1 sample in 950.
//
// For a sample taken in user mode the registers are the interrupted ones.
// A sample taken in kernel mode (a system call, a page fault: about 30% of
// a MariaDB server's samples) needs the task's user registers, saved on
// entry to the kernel: the program reads them through
// bpf_task_pt_regs(bpf_get_current_task_btf()), which needs Linux 5.15
// and kernel BTF (/sys/kernel/btf/vmlinux). The register frame is read as
// the uapi struct pt_regs of x86-64 (no vmlinux.h, no CO-RE), which is why
// stack copies need amd64. Without those helpers (the loader probes for
// them) a read-only constant makes the calls dead code, which the verifier
// skips (not tried on such a kernel), and kernel-mode samples have no user
// registers: they are
// counted in the kernel with their frame-pointer stack, as with
// StackCopyNever, and in Health.UserRegsErrors; user-mode samples are
// still copied.
//
// The ring buffer (Options.RingBufferBytes, 16 MiB by default) is shared
// by all CPUs. A sample that finds it full is dropped and counted in
// Health.RingbufFull, so that, once stopped,
//
//	Health.Samples == sum of Count.Samples + MapFull + Copied + RingbufFull
//
// Waking the reader up costs more than copying a sample (measured: one
// wake-up per record cost the reader 0.8% of a core at 99 Hz), so the
// program submits without a wake-up unless the ring buffer is a quarter
// full, and ReadSamples also looks every 100 ms. A copied sample (3 or 4
// page reads and a copy into the ring buffer) cost the program about 20 µs
// on the 2-vCPU VM measured, against 12-14 µs for a sample counted in the
// kernel (Linux 6.18, a loaded machine): at 99 Hz, 0.2% of a core per busy
// CPU.
//
// # Per-CPU or per-thread events
//
// With one event per online CPU (read from /sys/devices/system/cpu/online),
// the timers run whatever the CPU does and the program keeps the target's
// ticks: cheap for a target that switches context often. With PerThread,
// one event per thread of the target (listed from /proc/PID/task), opened
// with inherit so that threads created later by those threads get their
// own copy, program included; the kernel switches each thread's event in
// and out with the thread, so its timer runs only while the thread does.
// That costs a context switch more (on the VMs measured, 5-8% of a
// point-select server's QPS at 99 Hz, where per-CPU events cost 2%), but
// follows the thread's CPU time: on those VMs (Linux 6.18), a CPU that is
// idle when its per-CPU timer expires does not call the event's overflow
// handler at all (perf's or this program), and a thread that runs in short
// bursts between idle periods loses 10-50% of its samples with per-CPU
// events, and about 2% with per-thread ones (TestProfilePerThread checks
// the per-thread side). Per-thread events lose about 3.5 µs of samples per
// context switch on those VMs (perf record -p as much), so a thread that
// switches every 50 µs keeps 85-90% of its samples. A thread created, during Start, by a thread whose event is not
// open yet is not sampled; perf record -p has the same window.
//
// # Regenerating
//
// profile_bpfel.go and profile_bpfel.o are generated from profile.bpf.c by
// bpf2go (gen.go) and committed, so building needs no clang. After editing
// the C file run `go generate ./bpf` (needs clang, llvm and libbpf-dev);
// see README.md.
package bpf

import (
	"errors"
	"time"
)

// Sentinel errors, wrapped with context by the functions of this package;
// test them with errors.Is. A kernel that lacks what the profiler needs
// yields errors wrapping errors.ErrUnsupported.
var (
	// ErrPermission: the process may not load BPF programs or open perf
	// events. Run as root, or grant CAP_BPF and CAP_PERFMON.
	ErrPermission = errors.New("not permitted to load BPF programs")
	// ErrClosed: the Profiler was closed.
	ErrClosed = errors.New("profiler closed")
)

// DefaultMaxStacks is the capacity of the counts map when Options.MaxStacks
// is 0.
const DefaultMaxStacks = 65536

// DefaultFrequencyHz is the sampling frequency when Options.FrequencyHz is 0.
const DefaultFrequencyHz = 99

// MaxDepth is the most frames a stack holds; deeper stacks are cut at the
// root end and counted in Health.Truncated.
const MaxDepth = 127

// Options for the profiler.
type Options struct {
	// PID is the target process (thread group id): only its samples are
	// kept. 0 keeps every process but the idle task (for tests).
	PID int
	// FrequencyHz is the sampling frequency per CPU; DefaultFrequencyHz
	// when 0. It may not exceed kernel.perf_event_max_sample_rate.
	FrequencyHz int
	// Kernel also takes kernel stacks.
	Kernel bool
	// MaxStacks is the capacity of the counts map (distinct {thread,
	// stack} pairs); DefaultMaxStacks when 0. Samples beyond it are
	// dropped and counted in Health.MapFull. The stacks map holds as many
	// stacks (twice as many with Kernel).
	MaxStacks int
	// PreallocStacks preallocates the stacks map: about 1 KiB per stack
	// (MaxStacks of them, twice as many with Kernel) of kernel memory from
	// the start, but no sample is ever dropped for want of memory
	// (Health.StackNoMem). By default the map grows with the stacks seen.
	PreallocStacks bool
	// PerThread opens one cpu-clock event per thread of PID (with
	// inherit, so threads they create are sampled too) instead of one per
	// online CPU: the event's timer then runs only while the thread runs.
	// It needs PID. See "Per-CPU or per-thread events" above.
	PerThread bool
	// StackCopy says which samples are sent to user space with a copy of
	// the user stack (read them with Profiler.ReadSamples) instead of
	// being counted in the kernel. See "Stack copies" above. Other than
	// StackCopyNever, it needs amd64.
	StackCopy StackCopy
	// StackPages is the most pages of PageSize bytes copied per sample,
	// counted from the page of the stack pointer; MaxStackPages when 0.
	StackPages int
	// RingBufferBytes is the size of the ring buffer of copied samples, a
	// power of two of at least PageSize; DefaultRingBufferBytes when 0
	// (one page with StackCopyNever). Samples that find it full are
	// dropped and counted in Health.RingbufFull.
	RingBufferBytes int
	// SwitchFix (Linux with BTF) corrects what per-thread
	// cpu-clock events miss at context switches, with a program on the
	// sched_switch tracepoint: a sample whose timer expired while its
	// thread was being switched out is taken there instead of about
	// 10 µs after the next switch-in, and the thread's run time that no
	// sample stands for (the switches themselves) is sampled at its
	// switch-outs. Without PerThread (per-CPU events, whose timers miss
	// run time of threads that run in short bursts) it needs a target
	// pid, and each sample of a target thread stands for the thread's run
	// time since its previous sample (the scheduler's sum_exec_runtime,
	// in whole periods), so that every thread's samples add up to its
	// run time; no program runs at context switches then. See
	// docs/fidelity.md. Health counts what it did.
	SwitchFix bool
	// TimerProgramCost (with SwitchFix and PerThread) is what
	// programming the CPU's timer device costs on this machine
	// (MeasureTimerProgramCost). The kernel programs it on a thread's
	// way to sleep when the timer the thread arms (a nanosleep's, a
	// timed wait's) fires before every other one, its sample timer's
	// included, so that time never holds a sample; the switch fix then
	// takes a sample at the switch-out for each period of such time and
	// skips a timer sample for it (Health.SwitchBlind); and where perf's
	// restart of the sample timer at a switch-in programs nothing (the
	// timer is not the CPU's next), the return path is that much
	// shorter than where a sample can fall in it, and a timer sample
	// counts twice for each period of such time (Health.SwitchDense),
	// its second period taken from the thread's next owed sample (at
	// most two waiting; beyond, it counts once).
	// 0: no such correction. See docs/fidelity.md, "Timer programming".
	TimerProgramCost time.Duration
	// OffCPU (Linux 5.18 with BTF, needs PID) also counts where the
	// target's threads wait: a program on the sched_switch tracepoint
	// keeps each target thread's stacks (user, and kernel with Kernel)
	// at its switch-out and, at its switch-in, adds the time it was off
	// the CPU and one switch under them, apart for voluntary switches
	// (it blocked) and involuntary ones (it was preempted), as the
	// kernel tells them apart for /proc's voluntary_ctxt_switches and
	// nonvoluntary_ctxt_switches. Read them with Profiler.OffCPU. See
	// "Off-CPU counts" above.
	OffCPU bool
	// OffCPUMin leaves out the stretches off the CPU shorter than it
	// (Health.OffCPUShort counts them); 0 counts every one.
	OffCPUMin time.Duration
	// OffCPUCFI (with OffCPU) walks the user stack at a switch-out whose
	// leaf lies in a no-frame-pointer range of Profiler.SetRanges by CFI
	// rules instead of frame pointers: a thread blocks in glibc, built
	// without them, and a frame-pointer walk ends there. The rules come
	// from the caller, lazily: the program asks for the pcs it meets
	// (Profiler.CFIWanted) and the caller answers from the objects'
	// .eh_frame (Profiler.SetCFIRules); a walk that meets a pc without a
	// rule falls back to the frame-pointer walk (Health.OffCPUCFIMissing)
	// until the answer comes.
	OffCPUCFI bool
}

// OffCPUCount is the time one thread spent off the CPU, and how often it
// left it, with one pair of stacks and one kind of switch.
type OffCPUCount struct {
	PID, TID uint32 // thread group id and thread id
	Comm     string // the thread's name when it left the CPU
	// User and Kernel are the stacks at the switch-out, leaf first, as
	// in Count (Kernel empty unless Options.Kernel).
	User, Kernel []uint64
	// Voluntary: the thread blocked (it was not runnable); else it was
	// preempted while runnable.
	Voluntary bool
	// Nanoseconds is the time off the CPU, from each switch-out to the
	// switch-in that followed, or to Stop for a thread still off the CPU
	// then; Switches counts the switch-outs.
	Nanoseconds, Switches uint64
}

// Count is the number of samples of one thread with one stack.
type Count struct {
	PID, TID uint32 // thread group id and thread id
	Comm     string // the thread's name when sampled
	// User holds user-space return addresses, leaf first: raw virtual
	// addresses in the process. Empty when bpf_get_stack failed (see
	// Health.UserStackErrors).
	User []uint64
	// Kernel holds kernel addresses, leaf first; empty unless
	// Options.Kernel, and for samples taken in user mode. Symbolize them
	// with /proc/kallsyms.
	Kernel  []uint64
	Samples uint64
}

// Health says what became of the samples.
type Health struct {
	// Samples counts the program's invocations that matched the target
	// (every non-idle one when Options.PID is 0). Once stopped it equals
	// the sum of Count.Samples plus MapFull, Copied and RingbufFull.
	Samples uint64
	// Copied counts the samples sent to user space with a stack copy
	// (Options.StackCopy); they are not in the counts.
	Copied uint64
	// RingbufFull counts the samples to copy that were dropped because
	// the ring buffer was full: the reader (Profiler.ReadSamples) fell
	// behind or none runs. Raise Options.RingBufferBytes.
	RingbufFull uint64
	// WindowFull counts the copied samples whose stack goes on above the
	// copied window (SampleWindowFull): raise Options.StackPages.
	WindowFull uint64
	// UserRegsErrors counts the samples to copy that had no user
	// registers: taken in kernel mode on a kernel without
	// bpf_task_pt_regs (before 5.15, or without BTF), or of a kernel
	// thread. They are counted in the kernel with their frame-pointer
	// stack instead, as with StackCopyNever.
	UserRegsErrors uint64
	// UserStackErrors counts failures of bpf_get_stack for user stacks
	// by errno (positive, e.g. 14 for EFAULT); errnos of 63 and above are
	// counted under 63. The sample is still counted, with an empty stack.
	UserStackErrors map[int64]uint64
	// KernelStackErrors is the same for kernel stacks. A sample taken in
	// user mode has no kernel stack: empty (Linux 6.18) or EFAULT (some
	// other kernels), which is normal.
	KernelStackErrors map[int64]uint64
	// MapFull counts samples dropped because an insert into the counts
	// map or the stacks map failed: the map was full (raise
	// Options.MaxStacks) or, for the stacks map, StackNoMem.
	MapFull uint64
	// StackMapFull is the part of MapFull dropped because the stacks map
	// was full.
	StackMapFull uint64
	// StackNoMem is the part of MapFull dropped because the kernel had no
	// memory at hand for a new stack: the stacks map is not preallocated
	// and an insert in interrupt context can fail, mostly on a CPU's first
	// samples with Options.Kernel. Options.PreallocStacks avoids it.
	StackNoMem uint64
	// SwitchDeferred, SwitchOwed and SwitchSkipped count what
	// Options.SwitchFix did: samples taken at a switch-out because the
	// thread's sample timer had expired during it (their late timer
	// sample is skipped), samples taken at a switch-out for run time no
	// sample stood for, and timer samples skipped (the late ones, and
	// SwitchSurplus: samples beyond the thread's run time). With
	// SwitchFix, Samples - SwitchSkipped + SwitchDeferred + SwitchOwed is
	// what Samples is without it. SwitchLate counts, of SwitchSkipped, the
	// late timer samples of periods that ended in a switch-out after
	// switch_fix's check there (seen at the switch-in).
	SwitchDeferred, SwitchOwed, SwitchSkipped, SwitchSurplus, SwitchLate uint64
	// SwitchBlind counts the samples Options.TimerProgramCost had the
	// switch fix take at switch-outs for time spent programming the
	// CPU's timer for the thread's own timer, and SwitchBlindSkipped,
	// of SwitchSkipped, the timer samples skipped for them. SwitchDense
	// counts the timer samples it counted twice for time the timer was
	// not programmed at switch-ins (a period moved out of the blocking
	// calls, where owed samples come one fewer).
	SwitchBlind, SwitchBlindSkipped, SwitchDense uint64
	// WeightedExtra and WeightedZero count what Options.SwitchFix did with
	// per-CPU events (weighted samples): samples added to timer samples
	// for run time no timer sample stood for, and timer samples not
	// counted because their thread had run less than a period since its
	// previous one. With SwitchFix, Samples - WeightedZero +
	// WeightedExtra samples were taken.
	WeightedExtra, WeightedZero uint64
	// Truncated counts stacks that reached MaxDepth frames: their root
	// end may be missing.
	Truncated uint64
	// Collisions counts stacks whose 64-bit hash was already taken by a
	// different stack; their samples were counted under the older stack.
	Collisions uint64
	// Idle counts skipped ticks of the idle task (pid 0).
	Idle uint64
	// OffCPUDropped counts the switches Options.OffCPU did not count: a
	// map was full, or a stack could not be stored. OffCPUShort counts
	// those shorter than Options.OffCPUMin, left out on purpose.
	OffCPUDropped, OffCPUShort uint64
	// OffCPUUnended counts switch-outs of a target thread whose previous
	// switch-out was never ended by a switch-in the program saw: the
	// stretch it began is lost (not counted, neither time nor switch).
	OffCPUUnended uint64
	// OffCPUChargedNs is the off-CPU program's run time (nanoseconds)
	// that the scheduler charged to target threads, with
	// Options.SwitchFix: everything that runs in the scheduler after its
	// clock update, the program included, is charged to the thread
	// switched in, and when that is a target thread the switch fix owes
	// it no sample for that time. The threads' accounted CPU (schedstat)
	// holds it; their samples do not. OffCPUTimerSkipped counts the
	// timer samples (of SwitchSkipped) skipped because their period ended
	// while the program walked the stack of the thread switched out: they
	// would fire after its next switch-in and stand for the program's
	// time. See docs/fidelity.md.
	OffCPUChargedNs, OffCPUTimerSkipped uint64
	// OffCPUDeleteErrors counts, by errno (positive), the switch-ins at
	// which the off-CPU program failed to remove the thread's entry from
	// its map of threads off the CPU (the stretch was counted; the
	// thread's next switch-out then counts OffCPUUnended). With Linux
	// 6.15's resilient queued spinlocks a hash map operation can fail
	// when it cannot take a bucket lock (EDEADLK, ETIMEDOUT).
	OffCPUDeleteErrors map[int64]uint64
	// OffCPURecursionMisses is the kernel's count of the off-CPU
	// program's runs skipped because it was already running on that CPU
	// (bpftool prog show's recursion_misses): a switch it did not see.
	OffCPURecursionMisses uint64
	// OffCPUStackErrors counts failures of bpf_get_stack at switch-outs
	// (Options.OffCPU), user and kernel, by errno as UserStackErrors.
	OffCPUStackErrors map[int64]uint64
	// OffCPUCFIWalks counts the user stacks Options.OffCPUCFI walked by
	// CFI rules; OffCPUCFIMissing those of them that stopped at a pc
	// with no rule yet (cut short), OffCPUCFIUnsupported those that
	// stopped at a rule the walk cannot follow.
	OffCPUCFIWalks, OffCPUCFIMissing, OffCPUCFIUnsupported uint64
}

// ThreadCorrection is what Options.SwitchFix did to one thread's samples:
// its share of Health's SwitchDeferred, SwitchOwed, SwitchSkipped,
// SwitchBlind, SwitchDense, WeightedExtra, WeightedZero, OffCPUChargedNs
// and OffCPUTimerSkipped.
type ThreadCorrection struct {
	Deferred, Owed, Skipped, Blind, Dense, WeightedExtra, WeightedZero uint64
	OffCPUChargedNs, OffCPUTimerSkipped                                uint64
}

// Taken is the number of samples taken: Samples, less the timer samples
// Options.SwitchFix skipped or did not count, plus those it took at
// switch-outs or added to weighted samples.
func (h Health) Taken() uint64 {
	return h.Samples - h.SwitchSkipped + h.SwitchDeferred + h.SwitchOwed + h.SwitchBlind + h.SwitchDense - h.WeightedZero + h.WeightedExtra
}
