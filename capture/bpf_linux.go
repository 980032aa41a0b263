//go:build linux

package capture

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/capture/symtab"
	"github.com/flamediff/flamediff/fold"
)

// BPF is the BPF sampler: a perf_event program counts identical stacks in
// the kernel (cpu-clock events on the target's threads, or per CPU
// filtered to the target), and only the totals are read at the end, then
// symbolised in Go against the process's own files. It needs no perf
// binary. With stack copies (Options.StackCopy), the samples that need
// them carry the user registers and a window of the user stack to user
// space instead, where a reader unwinds them while sampling with the CFI
// of the mapped objects (capture/unwind) and counts the walks as the
// kernel counts stacks; Stop merges both.
type BPF struct {
	// ProcRoot is /proc; tests may point it elsewhere.
	ProcRoot string
	// MaxStacks is the counts map's capacity (bpf.DefaultMaxStacks when 0).
	MaxStacks int

	mu  sync.Mutex
	run *bpfRun
	// prepared is a run Prepare set up, for Start with the same pid and
	// options (preparedPID, preparedOpts).
	prepared     *bpfRun
	preparedPID  int
	preparedOpts Options
}

type bpfRun struct {
	opts    Options
	pid     int
	prof    *bpf.Profiler
	syms    *symtab.Process
	kernel  *symtab.Kernel
	res     *Result
	err     error
	stopped chan struct{}
	warn    []string
	// timerCost is bpf.Options.TimerProgramCost as sampled with (0: not
	// corrected).
	timerCost time.Duration
	// Stack copies (Options.StackCopy other than never): the setting, the
	// unwinder of the copies, and the reader's end.
	stackCopy bpf.StackCopy
	pages     int
	copies    *copyUnwinder
	stopRead  context.CancelFunc
	readDone  chan error
	// rangesDone is closed once auto's ranges are set, with rangeNotes,
	// when Start set them while sampling; rangesSet says they are set.
	rangesDone chan struct{}
	rangeNotes []string
	rangesSet  bool
}

// mapsRefresh is how often the BPF sampler re-reads the target's maps.
const mapsRefresh = time.Second

// NewBPF returns the BPF sampler.
func NewBPF() Sampler { return &BPF{ProcRoot: "/proc"} }

// Name implements Sampler.
func (b *BPF) Name() string { return "bpf" }

// CheckBPF loads the program once (without sampling) to tell whether the
// BPF sampler can run here; the error wraps ErrPermission or
// errors.ErrUnsupported with what to do.
func CheckBPF() error {
	p, err := bpf.Load(bpf.Options{PID: 1, FrequencyHz: 1, MaxStacks: 16})
	if err != nil {
		return bpfError(err)
	}
	return p.Close()
}

func bpfError(err error) error {
	if errors.Is(err, bpf.ErrPermission) {
		return fmt.Errorf("%w: %w", ErrPermission, err)
	}
	return err
}

// Prepare implements Preparer: it loads and verifies the program (which
// takes from a fifth of a second to several seconds on a loaded machine,
// longer with the switch fix), reads the target's symbols and, with
// StackCopy auto, which ranges keep no frame pointer, so that Start with
// the same pid and options only opens and enables the events.
func (b *BPF) Prepare(ctx context.Context, pid int, opts Options) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.run != nil || b.prepared != nil {
		return errors.New("bpf sampler: already prepared or started")
	}
	r, err := b.prepare(ctx, pid, opts)
	if err != nil {
		return err
	}
	if r.needRanges() {
		r.setRanges()
	}
	b.prepared, b.preparedPID, b.preparedOpts = r, pid, opts
	return nil
}

// Start implements Sampler.
func (b *BPF) Start(ctx context.Context, pid int, opts Options) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.run != nil {
		return errors.New("bpf sampler: already started")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r := b.prepared
	b.prepared = nil
	if r != nil && (pid != b.preparedPID || !reflect.DeepEqual(opts, b.preparedOpts)) {
		r.release()
		r = nil
	}
	if r == nil {
		var err error
		if r, err = b.prepare(ctx, pid, opts); err != nil {
			return err
		}
	} else if err := processAlive(pid); err != nil {
		r.release()
		return fmt.Errorf("bpf sampler: %w", err)
	} else {
		_ = r.syms.Refresh() // what was mapped since Prepare
	}
	prof, syms := r.prof, r.syms
	if err := prof.Start(); err != nil {
		r.release()
		return fmt.Errorf("bpf sampler: %w", bpfError(err))
	}
	if r.needRanges() && !r.rangesSet {
		// Which ranges keep no frame pointer needs the objects' CFI and
		// symbols (a second for a large binary): sampling runs
		// meanwhile, auto copying every sample until the ranges are set.
		// (Prepare sets them before sampling starts.)
		r.rangesDone = make(chan struct{})
		go func() {
			defer close(r.rangesDone)
			r.setRanges()
		}()
	}
	b.run = r
	// A cancelled ctx stops the counting; Stop still returns the counts.
	// Meanwhile the maps are re-read every second, so that libraries
	// mapped for a moment and the program before an exec are known (and
	// their files held open) when the counts are symbolised.
	go func() {
		tick := time.NewTicker(mapsRefresh)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				_ = prof.Stop()
				return
			case <-r.stopped:
				return
			case <-tick.C:
				_ = syms.Refresh()
			}
		}
	}()
	if r.opts.OffCPU {
		go r.answerCFI(ctx)
	}
	return nil
}

// prepare does what Start does before it enables the events: the target's
// symbols, the program loaded and verified, the reader of stack copies
// running.
func (b *BPF) prepare(ctx context.Context, pid int, opts Options) (*bpfRun, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := processAlive(pid); err != nil {
		return nil, fmt.Errorf("bpf sampler: %w", err)
	}
	if opts.FrequencyHz == 0 {
		opts.FrequencyHz = 99
	}
	syms, err := symtab.NewProcess(b.procRoot(), pid)
	if err != nil {
		return nil, fmt.Errorf("bpf sampler: symbols of process %d: %w", pid, err)
	}
	for i := len(opts.DebugDirs) - 1; i >= 0; i-- {
		syms.AddDebugRoot(opts.DebugDirs[i])
	}
	r := &bpfRun{opts: opts, pid: pid, syms: syms, stopped: make(chan struct{})}
	if opts.Kernel {
		if r.kernel, err = symtab.LoadKernel(); err != nil {
			r.warn = append(r.warn, fmt.Sprintf("kernel frames stay unresolved: %v", err))
		}
	}
	scName := opts.StackCopy
	if scName == "" {
		scName = DefaultStackCopy
	}
	sc, err := bpf.ParseStackCopy(scName)
	if err != nil {
		_ = syms.Close()
		return nil, fmt.Errorf("bpf sampler: %w", err)
	}
	bopts := bpf.Options{PID: pid, FrequencyHz: opts.FrequencyHz, Kernel: opts.Kernel, MaxStacks: b.MaxStacks, PerThread: !opts.SystemWide, StackCopy: sc,
		SwitchFix: opts.SwitchFix, OffCPU: opts.OffCPU, OffCPUMin: opts.OffCPUMin, OffCPUCFI: opts.OffCPU}
	if opts.SwitchFix && !opts.SystemWide {
		bopts.TimerProgramCost = opts.TimerProgramCost
		if bopts.TimerProgramCost == 0 {
			if bopts.TimerProgramCost, err = bpf.MeasureTimerProgramCost(); err != nil {
				r.warn = append(r.warn, fmt.Sprintf("time spent programming the CPU's timer is not corrected: %v", err))
			}
		}
		r.timerCost = max(bopts.TimerProgramCost, 0)
	}
	prof, err := bpf.Load(bopts)
	if err != nil && sc != bpf.StackCopyNever && opts.StackCopy == "" && errors.Is(err, errors.ErrUnsupported) {
		// The default asks for copies where they work: frame pointers
		// only elsewhere, said in a warning.
		r.warn = append(r.warn, fmt.Sprintf("stack copies unavailable (%v): stacks by frame pointers only", err))
		sc, bopts.StackCopy = bpf.StackCopyNever, bpf.StackCopyNever
		prof, err = bpf.Load(bopts)
	}
	if err != nil {
		_ = syms.Close()
		return nil, fmt.Errorf("bpf sampler: %w", bpfError(err))
	}
	r.prof = prof
	r.stackCopy, r.pages = sc, bpf.MaxStackPages
	if sc != bpf.StackCopyNever {
		// The reader runs until Stop has stopped the program: it
		// unwinds the copies as they come, so that the ring buffer
		// does not fill.
		r.copies = newCopyUnwinder(syms)
		r.copies.preload()
		readCtx, cancel := context.WithCancel(context.Background())
		r.stopRead, r.readDone = cancel, make(chan error, 1)
		go func() { r.readDone <- prof.ReadSamples(readCtx, r.copies.add) }()
	} else if opts.OffCPU {
		// The off-CPU walk's CFI rules come from the objects' tables
		// (answerCFI); no copies are read.
		r.copies = newCopyUnwinder(syms)
		r.copies.preload()
	}
	return r, nil
}

// needRanges says whether the program needs the ranges without frame
// pointers: stack copies auto choose by them, and the off-CPU walk goes by
// CFI rules in them.
func (r *bpfRun) needRanges() bool {
	return r.stackCopy == bpf.StackCopyAuto || r.opts.OffCPU
}

// setRanges gives StackCopy auto the ranges without frame pointers and
// the thread roots (noted in rangeNotes).
func (r *bpfRun) setRanges() {
	noFP, roots, notes := r.copies.ranges(ThreadRootSymbols)
	r.rangeNotes = notes
	if err := r.prof.SetRanges(noFP, roots); err != nil {
		r.rangeNotes = append(r.rangeNotes, fmt.Sprintf("stack copies: every sample copied: %v", err))
	}
	r.rangesSet = true
}

// release frees a run that never sampled (or failed to start).
func (r *bpfRun) release() {
	_ = r.endRead()
	_ = r.prof.Close()
	_ = r.syms.Close()
}

func (b *BPF) procRoot() string {
	if b.ProcRoot == "" {
		return "/proc"
	}
	return b.ProcRoot
}

// SamplesSoFar implements Sampler: the program's own count of samples.
func (b *BPF) SamplesSoFar() int64 {
	b.mu.Lock()
	r := b.run
	b.mu.Unlock()
	if r == nil || r.prof == nil {
		return 0
	}
	if r.res != nil {
		return r.res.Samples
	}
	h, err := r.prof.Health()
	if err != nil {
		return 0
	}
	return int64(h.Taken())
}

// Stop implements Sampler: it stops counting, reads the counts, symbolises
// them and folds them exactly as perf script output of the same stacks
// would be folded, so perf and BPF captures of one process have the same
// frame names. Idempotent.
func (b *BPF) Stop(ctx context.Context) (*Result, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r := b.run
	if r == nil {
		if b.prepared != nil {
			b.prepared.release()
			b.prepared = nil
		}
		return nil, errors.New("bpf sampler: not started")
	}
	if r.res != nil || r.err != nil {
		return r.res, r.err
	}
	close(r.stopped)
	defer func() { _ = r.prof.Close(); _ = r.syms.Close() }()
	if err := r.prof.Stop(); err != nil {
		if r.rangesDone != nil {
			<-r.rangesDone
		}
		_ = r.endRead()
		r.err = fmt.Errorf("bpf sampler: %w", err)
		return nil, r.err
	}
	warnings := append([]string(nil), r.warn...)
	if r.rangesDone != nil {
		<-r.rangesDone
		warnings = append(warnings, r.rangeNotes...)
	}
	if err := r.endRead(); err != nil {
		warnings = append(warnings, fmt.Sprintf("stack copies: reading them stopped early (%v): the samples not read are lost", err))
	}
	if err := r.syms.Refresh(); err != nil {
		warnings = append(warnings, fmt.Sprintf("process %d exited during sampling (or its maps could not be read at the end): %v; what was counted is kept, resolved with the maps and files read at the start", r.pid, err))
	}
	counts, err := r.prof.Counts()
	if err != nil {
		r.err = fmt.Errorf("bpf sampler: %w", err)
		return nil, r.err
	}
	if r.copies != nil {
		counts = append(counts, r.copies.result()...)
	}
	health, err := r.prof.Health()
	if err != nil {
		r.err = fmt.Errorf("bpf sampler: %w", err)
		return nil, r.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 256<<10)
		err := renderPerfScript(bw, counts, r.syms, r.kernel, r.opts.Kernel)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	prof, err := fold.ParsePerfScript(pr, fold.PerfOptions{Kernel: r.opts.Kernel, NoKernel: !r.opts.Kernel}, false)
	_ = pr.Close()
	if err != nil {
		r.err = fmt.Errorf("bpf sampler: folding: %w", err)
		return nil, r.err
	}
	prof.Unit = fold.UnitSamples
	prof.Event = DefaultEvent
	res := &Result{Profile: prof, Samples: int64(health.Taken()), Lost: int64(health.MapFull + health.RingbufFull), Sampler: "bpf"}
	res.Health = healthMap(health)
	if r.opts.SwitchFix && !r.opts.SystemWide {
		res.Health["timer_program_ns"] = uint64(r.timerCost)
	}
	if r.opts.SwitchFix {
		if res.Corrections, err = corrections(r.prof, counts); err != nil {
			warnings = append(warnings, fmt.Sprintf("the switch fix's figures per thread: %v", err))
		}
	}
	res.Unwind = &fold.Unwind{Method: "fp", StackCopy: r.stackCopy.String()}
	if r.copies != nil {
		res.Unwind = r.copies.summary(r.stackCopy.String(), r.pages*bpf.PageSize)
		res.Health["copied_spliced"] = uint64(r.copies.spliced)
	}
	if r.opts.OffCPU {
		off, err := r.prof.OffCPU()
		if err == nil {
			res.OffCPU, err = foldOffCPU(off, r.syms, r.kernel, r.opts.Kernel)
		}
		if err != nil {
			r.err = fmt.Errorf("bpf sampler: off-CPU: %w", err)
			return nil, r.err
		}
		res.OffCPU.Totals.Dropped, res.OffCPU.Totals.Short = health.OffCPUDropped, health.OffCPUShort
		res.Health["offcpu_dropped"], res.Health["offcpu_short"] = health.OffCPUDropped, health.OffCPUShort
		res.Health["offcpu_unended"] = health.OffCPUUnended
		res.Health["offcpu_cfi_walks"] = health.OffCPUCFIWalks
		res.Health["offcpu_cfi_missing"] = health.OffCPUCFIMissing
		res.Health["offcpu_cfi_unsupported"] = health.OffCPUCFIUnsupported
		res.Health["offcpu_recursion_misses"] = health.OffCPURecursionMisses
		for errno, c := range health.OffCPUDeleteErrors {
			res.Health[fmt.Sprintf("offcpu_delete_errno_%d", errno)] = c
		}
		if r.opts.SwitchFix {
			res.Health["offcpu_charged_ns"], res.Health["offcpu_timer_skipped"] = health.OffCPUChargedNs, health.OffCPUTimerSkipped
		}
		var n uint64
		for errno, c := range health.OffCPUStackErrors {
			res.Health[fmt.Sprintf("offcpu_stack_errno_%d", errno)] = c
			n += c
		}
		res.Health["offcpu_stack_errors"] = n
		if health.OffCPUDropped > 0 {
			warnings = append(warnings, fmt.Sprintf("off-CPU: %d switches were not counted (a map was full or a stack could not be stored)", health.OffCPUDropped))
		}
	}
	res.ProgramRunTime, res.ProgramRuns, _ = r.prof.RunTime()
	warnings = append(warnings, r.syms.Notes()...)
	warnings = append(warnings, healthWarnings(health)...)
	res.Warnings = warnings
	r.res = res
	return res, nil
}

// endRead stops the reader of stack copies (after the program stopped) and
// waits for it to have unwound what the ring buffer held; it returns the
// reader's error. A no-op without stack copies, or once done.
func (r *bpfRun) endRead() error {
	if r.stopRead == nil {
		return nil
	}
	r.stopRead()
	r.stopRead = nil
	return <-r.readDone
}

// renderPerfScript writes the counts as perf script text (one sample per
// count, its period the count), so that fold.ParsePerfScript folds BPF and
// perf captures with the same rules.
func renderPerfScript(w io.Writer, counts []bpf.Count, syms *symtab.Process, kern *symtab.Kernel, kernel bool) error {
	for _, c := range counts {
		comm := c.Comm
		if comm == "" {
			comm = "[unknown]"
		}
		if _, err := fmt.Fprintf(w, "%s %d/%d 0.000000: %d cpu-clock:\n", comm, c.PID, c.TID, c.Samples); err != nil {
			return err
		}
		if kernel {
			for _, a := range c.Kernel {
				f := symtab.Frame{DSO: "[kernel.kallsyms]"}
				if kern != nil {
					f = kern.Resolve(a)
				}
				if _, err := io.WriteString(w, f.PerfLine(a)+"\n"); err != nil {
					return err
				}
			}
		}
		for i, a := range c.User {
			f := userFrame(syms, a, i > 0)
			// perf prints "(/path (deleted))", which stackcollapse
			// folds into a frame with a trailing space; the capture's
			// warnings say the file was deleted, the frames stay clean.
			f.DSO = strings.TrimSuffix(f.DSO, " (deleted)")
			if _, err := io.WriteString(w, f.PerfLine(a)+"\n"); err != nil {
				return err
			}
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
	}
	return nil
}

// userFrame resolves a user frame at address a. A caller's frame is a
// return address: the instruction after the call, which lies outside the
// caller when the call is its last instruction (a call to a function that
// does not return: a thread's loop, abort), and is then the next
// function's first byte or no function's. It is looked up one byte back,
// inside the call, as perf's DWARF unwinder does; the frame keeps a's
// offset. (A frame below a signal frame is an interrupted pc, not a
// return address; looked up one byte back it changes function only if
// the signal came at the function's first instruction.)
func userFrame(syms *symtab.Process, a uint64, caller bool) symtab.Frame {
	if !caller || a == 0 {
		return syms.Resolve(a)
	}
	f := syms.Resolve(a - 1)
	if f.Sym != "" {
		f.Offset++
	}
	return f
}

// corrections sums what the switch fix did to each thread by thread name,
// the names taken from the counts (a thread without samples is "tid N").
func corrections(prof *bpf.Profiler, counts []bpf.Count) (map[string]map[string]uint64, error) {
	byTID, err := prof.ThreadCorrections()
	if err != nil {
		return nil, err
	}
	names := map[uint32]string{}
	for _, c := range counts {
		names[c.TID] = c.Comm
	}
	out := map[string]map[string]uint64{}
	for tid, c := range byTID {
		name, ok := names[tid]
		if !ok {
			name = fmt.Sprintf("tid %d", tid)
		}
		m := out[name]
		if m == nil {
			m = map[string]uint64{}
			out[name] = m
		}
		for k, v := range map[string]uint64{"switch_deferred": c.Deferred, "switch_owed": c.Owed, "switch_skipped": c.Skipped, "switch_blind": c.Blind, "switch_dense": c.Dense,
			"weighted_extra": c.WeightedExtra, "weighted_zero": c.WeightedZero,
			"offcpu_charged_ns": c.OffCPUChargedNs, "offcpu_timer_skipped": c.OffCPUTimerSkipped} {
			if v > 0 {
				m[k] += v
			}
		}
	}
	return out, nil
}

// healthMap flattens the health counters for run.json.
func healthMap(h bpf.Health) map[string]uint64 {
	m := map[string]uint64{
		"samples": h.Samples, "map_full": h.MapFull, "stack_map_full": h.StackMapFull,
		"stack_nomem": h.StackNoMem, "collisions": h.Collisions, "truncated": h.Truncated,
		"copied": h.Copied, "ringbuf_full": h.RingbufFull, "window_full": h.WindowFull, "user_regs_errors": h.UserRegsErrors,
	}
	if h.SwitchDeferred+h.SwitchOwed+h.SwitchSkipped > 0 {
		m["switch_deferred"], m["switch_owed"], m["switch_skipped"], m["switch_surplus"] = h.SwitchDeferred, h.SwitchOwed, h.SwitchSkipped, h.SwitchSurplus
		m["switch_late"] = h.SwitchLate
		m["switch_blind"], m["switch_blind_skipped"], m["switch_dense"] = h.SwitchBlind, h.SwitchBlindSkipped, h.SwitchDense
	}
	if h.WeightedExtra+h.WeightedZero > 0 {
		m["weighted_extra"], m["weighted_zero"] = h.WeightedExtra, h.WeightedZero
	}
	for kind, errs := range map[string]map[int64]uint64{"user": h.UserStackErrors, "kernel": h.KernelStackErrors} {
		var total uint64
		for errno, n := range errs {
			m[fmt.Sprintf("%s_stack_errno_%d", kind, errno)] = n
			total += n
		}
		m[kind+"_stack_errors"] = total
	}
	return m
}

// healthWarnings turns the program's health counters into warnings; a
// capture that lost more than 0.5% of its samples says so loudly.
func healthWarnings(h bpf.Health) []string {
	var w []string
	if h.Samples > 0 && h.MapFull > 0 {
		pct := 100 * float64(h.MapFull) / float64(h.Samples)
		var why []string
		if full := h.MapFull - h.StackNoMem - h.StackMapFull; full > 0 {
			why = append(why, fmt.Sprintf("%d: the counts map was full", full))
		}
		if h.StackMapFull > 0 {
			why = append(why, fmt.Sprintf("%d: the stacks map was full", h.StackMapFull))
		}
		if h.StackNoMem > 0 {
			why = append(why, fmt.Sprintf("%d: no kernel memory at hand for a new stack", h.StackNoMem))
		}
		msg := fmt.Sprintf("%d of %d samples (%.2f%%) were dropped (%s)", h.MapFull, h.Samples, pct, strings.Join(why, "; "))
		if pct > 0.5 {
			msg = "LOST SAMPLES: " + msg + "; shares are skewed: sample a shorter window or less often"
		}
		w = append(w, msg)
	}
	if h.Samples > 0 && h.RingbufFull > 0 {
		pct := 100 * float64(h.RingbufFull) / float64(h.Samples)
		msg := fmt.Sprintf("%d of %d samples (%.2f%%) were dropped: the ring buffer of stack copies was full (the reader fell behind)", h.RingbufFull, h.Samples, pct)
		if pct > 0.5 {
			msg = "LOST SAMPLES: " + msg + "; shares are skewed: sample less often, or copy fewer stacks (stack copy auto or never)"
		}
		w = append(w, msg)
	}
	if h.UserRegsErrors > 0 {
		w = append(w, fmt.Sprintf("%d samples taken in the kernel had no user registers to copy (kernel before 5.15 or without BTF): their stacks are by frame pointers", h.UserRegsErrors))
	}
	if h.Collisions > 0 {
		w = append(w, fmt.Sprintf("%d samples counted under a colliding stack hash (their stacks are attributed to another stack with the same hash)", h.Collisions))
	}
	var userErr uint64
	for _, n := range h.UserStackErrors {
		userErr += n
	}
	if userErr > 0 {
		w = append(w, fmt.Sprintf("%d samples had no user stack (errors by errno: %v)", userErr, h.UserStackErrors))
	}
	if h.Truncated > 0 {
		w = append(w, fmt.Sprintf("%d stacks hit the maximum depth (%d frames) and lost their outermost frames", h.Truncated, bpf.MaxDepth))
	}
	return w
}
