//go:build linux

package bpf

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/features"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"
)

const onlineCPUsPath = "/sys/devices/system/cpu/online"

// procRoot is where threads lists /proc/PID/task.
var procRoot = "/proc"

// Profiler is the loaded sampler: the program and its maps, and, once
// started, one perf event per online CPU with the program attached. Its
// methods are safe for concurrent use.
type Profiler struct {
	opts Options

	mu     sync.Mutex
	objs   *profileObjects // nil once closed
	events []perfEvent     // open perf events, nil before Start
	fix    link.Link       // switch_fix on sched_switch, nil without SwitchFix or before Start
	off    link.Link       // offcpu on sched_switch, nil without OffCPU or before Start
	// offStop is CLOCK_MONOTONIC (bpf_ktime_get_ns) when offcpu was
	// detached: threads still off the CPU are counted up to it.
	offStop uint64
	running bool
	reading bool // a ReadSamples runs
}

// perfEvent is one cpu-clock event (of a CPU, or of a thread) and the
// program's attachment to it (a BPF link, or nil when attached with
// PERF_EVENT_IOC_SET_BPF).
type perfEvent struct {
	where string // "cpu 3", "thread 4242": for errors
	fd    int
	link  link.Link
}

// Load loads and verifies the program and creates its maps; it does not
// sample yet (see Start). The target PID and Options.Kernel are fixed in
// the program at load time.
//
// Errors wrap ErrPermission when the process may not load BPF programs,
// and errors.ErrUnsupported when the kernel lacks BPF or a feature the
// program needs; their messages say what to do.
func Load(opts Options) (*Profiler, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	// Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK; later
	// ones make this a no-op.
	if err := rlimit.RemoveMemlock(); err != nil {
		return nil, classify("bpf: load profiler: remove memlock limit", err)
	}
	spec, err := loadProfile()
	if err != nil {
		return nil, fmt.Errorf("bpf: load profiler: %w", err)
	}
	objs, err := loadObjects(spec, opts, nil)
	if err != nil {
		return nil, err
	}
	return &Profiler{opts: opts, objs: objs}, nil
}

func (o *Options) fill() error {
	switch {
	case o.PID < 0 || int64(o.PID) > int64(^uint32(0)):
		return fmt.Errorf("bpf: pid %d out of range", o.PID)
	case o.FrequencyHz < 0:
		return fmt.Errorf("bpf: frequency %d Hz negative", o.FrequencyHz)
	case o.PerThread && o.PID == 0:
		return fmt.Errorf("bpf: per-thread events need a target pid")
	case o.SwitchFix && o.PID == 0:
		return fmt.Errorf("bpf: the switch fix needs a target pid")
	case o.OffCPU && o.PID == 0:
		return fmt.Errorf("bpf: off-CPU counts need a target pid")
	case o.OffCPUMin < 0:
		return fmt.Errorf("bpf: off-CPU minimum %s negative", o.OffCPUMin)
	case o.MaxStacks < 0 || o.MaxStacks > 1<<24:
		return fmt.Errorf("bpf: max stacks %d out of range [0, %d]", o.MaxStacks, 1<<24)
	}
	if o.FrequencyHz == 0 {
		o.FrequencyHz = DefaultFrequencyHz
	}
	if o.MaxStacks == 0 {
		o.MaxStacks = DefaultMaxStacks
	}
	return o.fillStackCopy()
}

func (o *Options) fillStackCopy() error {
	switch {
	case o.StackCopy < StackCopyNever || o.StackCopy > StackCopyAlways:
		return fmt.Errorf("bpf: stack copy %d out of range", int(o.StackCopy))
	case o.StackPages < 0 || o.StackPages > MaxStackPages:
		return fmt.Errorf("bpf: stack pages %d out of range [0, %d]", o.StackPages, MaxStackPages)
	case o.RingBufferBytes < 0 || o.RingBufferBytes > 1<<30 ||
		o.RingBufferBytes != 0 && (o.RingBufferBytes < PageSize || o.RingBufferBytes&(o.RingBufferBytes-1) != 0):
		return fmt.Errorf("bpf: ring buffer of %d bytes: want a power of two in [%d, %d]", o.RingBufferBytes, PageSize, 1<<30)
	case o.StackCopy != StackCopyNever && (runtime.GOARCH != "amd64" || os.Getpagesize() != PageSize):
		return fmt.Errorf("bpf: stack copy %s: %w: needs amd64 with %d-byte pages", o.StackCopy, errors.ErrUnsupported, PageSize)
	}
	if o.StackPages == 0 {
		o.StackPages = MaxStackPages
	}
	if o.RingBufferBytes == 0 {
		o.RingBufferBytes = DefaultRingBufferBytes
		if o.StackCopy == StackCopyNever {
			o.RingBufferBytes = PageSize
		}
	}
	return nil
}

// taskRegsAvailable is haveTaskRegs; tests replace it to check what older
// kernels do.
var taskRegsAvailable = haveTaskRegs

// haveTaskRegs says whether perf_event programs may call
// bpf_get_current_task_btf and bpf_task_pt_regs (Linux 5.15 with BTF).
func haveTaskRegs() bool {
	if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
		return false
	}
	return features.HaveProgramHelper(ebpf.PerfEvent, asm.FnGetCurrentTaskBtf) == nil &&
		features.HaveProgramHelper(ebpf.PerfEvent, asm.FnTaskPtRegs) == nil
}

// loadObjects sets the constants and map sizes in spec and loads it. If the
// kernel refuses a non-preallocated stacks map in a perf_event program
// (before 6.1), it loads again with a preallocated one.
func loadObjects(spec *ebpf.CollectionSpec, opts Options, copts *ebpf.CollectionOptions) (*profileObjects, error) {
	if err := spec.Variables[profileVarTargetTgid].Set(uint32(opts.PID)); err != nil {
		return nil, fmt.Errorf("bpf: load profiler: set target: %w", err)
	}
	kernel := uint32(0)
	if opts.Kernel {
		kernel = 1
	}
	if err := spec.Variables[profileVarKernelStacks].Set(kernel); err != nil {
		return nil, fmt.Errorf("bpf: load profiler: set kernel: %w", err)
	}
	// Stack copies and the off-CPU CFI walk read the task's saved user
	// registers (user_regs).
	taskRegs := uint32(0)
	if (opts.StackCopy != StackCopyNever || opts.OffCPU && opts.OffCPUCFI) && taskRegsAvailable() {
		taskRegs = 1
	}
	period, timerCost := uint64(0), uint64(0)
	if opts.SwitchFix && opts.PerThread && opts.TimerProgramCost > 0 {
		timerCost = uint64(opts.TimerProgramCost)
	}
	if opts.SwitchFix {
		// The kernel turns a cpu-clock frequency into this fixed period
		// (perf_swevent_init_hrtimer).
		period = uint64(time.Second) / uint64(opts.FrequencyHz)
	}
	for name, v := range map[string]any{
		profileVarStackCopy:      uint32(opts.StackCopy),
		profileVarStackPages:     uint32(opts.StackPages),
		profileVarTaskRegs:       taskRegs,
		profileVarWakeupBytes:    uint64(opts.RingBufferBytes / 4),
		profileVarPeriodNs:       period,
		profileVarTimerProgramNs: timerCost,
		profileVarOffcpuMinNs:    uint64(opts.OffCPUMin),
		profileVarOffcpuCfi:      boolU32(opts.OffCPU && opts.OffCPUCFI),
	} {
		if err := spec.Variables[name].Set(v); err != nil {
			return nil, fmt.Errorf("bpf: load profiler: set %s: %w", name, err)
		}
	}
	spec.Maps[profileMapSamples].MaxEntries = uint32(opts.RingBufferBytes)
	spec.Maps[profileMapCounts].MaxEntries = uint32(opts.MaxStacks)
	stacks := opts.MaxStacks
	if opts.Kernel {
		stacks *= 2
	}
	spec.Maps[profileMapStacks].MaxEntries = uint32(stacks)
	if opts.PreallocStacks {
		spec.Maps[profileMapStacks].Flags &^= unix.BPF_F_NO_PREALLOC
	}
	// The off-CPU maps are created in any case (the object declares
	// them), as small as they can be when they stay unused.
	spec.Maps[profileMapOffcpuCounts].MaxEntries, spec.Maps[profileMapOffcpuStarts].MaxEntries = 1, 1
	if opts.OffCPU {
		spec.Maps[profileMapOffcpuCounts].MaxEntries = uint32(opts.MaxStacks)
		spec.Maps[profileMapOffcpuStarts].MaxEntries = maxThreads
	}
	if !opts.OffCPU || !opts.OffCPUCFI {
		spec.Maps[profileMapCfiRules].MaxEntries, spec.Maps[profileMapCfiWanted].MaxEntries = 1, 1
	}

	// Only the programs the options need are loaded: the switch fix's
	// (which need the kernel's BTF for CO-RE) not at all without it.
	load := func(objs *profileObjects) error {
		switch {
		case opts.SwitchFix && opts.PerThread:
			var o struct {
				profileMaps
				Profile   *ebpf.Program `ebpf:"profile"`
				SwitchFix *ebpf.Program `ebpf:"switch_fix"`
			}
			err := spec.LoadAndAssign(&o, copts)
			objs.profileMaps, objs.Profile, objs.SwitchFix = o.profileMaps, o.Profile, o.SwitchFix
			return err
		case opts.SwitchFix:
			// Per-CPU events: the weighted program takes the
			// sampling program's place.
			var o struct {
				profileMaps
				Profile *ebpf.Program `ebpf:"profile_weighted"`
			}
			err := spec.LoadAndAssign(&o, copts)
			objs.profileMaps, objs.Profile = o.profileMaps, o.Profile
			return err
		}
		var o struct {
			profileMaps
			Profile *ebpf.Program `ebpf:"profile"`
		}
		err := spec.LoadAndAssign(&o, copts)
		objs.profileMaps, objs.Profile = o.profileMaps, o.Profile
		return err
	}
	var objs profileObjects
	err := load(&objs)
	if ve := (*ebpf.VerifierError)(nil); errors.As(err, &ve) && strings.Contains(strings.Join(ve.Log, "\n"), "preallocated") {
		spec.Maps[profileMapStacks].Flags &^= unix.BPF_F_NO_PREALLOC
		err = load(&objs)
	}
	if err != nil {
		ctx := "bpf: load profiler"
		if opts.SwitchFix {
			ctx = "bpf: load profiler with the switch fix (needs the kernel's BTF)"
		}
		return nil, classify(ctx, err)
	}
	if opts.OffCPU {
		// A second load of the one program, on the maps of the first:
		// the off-CPU program needs the kernel's BTF, which the
		// sampler alone does not.
		if err := loadOffCPU(spec, &objs, copts); err != nil {
			_ = objs.Close()
			return nil, classify("bpf: load the off-CPU program (needs Linux 5.18 and the kernel's BTF)", err)
		}
	}
	if objs.Stacks.Flags()&unix.BPF_F_NO_PREALLOC != 0 {
		warmStackCache(objs.Stacks)
	}
	return &objs, nil
}

// warmStackCache fills the kernel's per-CPU element cache of the stacks
// map (not preallocated) on every CPU this process may run on, by
// inserting and deleting one entry from each. The kernel creates the map
// with one element per CPU for values of this size (1 KiB), and an
// insert with interrupts off cannot refill the cache: the off-CPU
// program's first switch-out on a CPU with a new user and a new kernel
// stack found it empty for the second and lost that switch (-ENOMEM,
// one "off-CPU: 1 switches were not counted" warning in every lab run).
// An insert from here, a system call, is followed by the refill
// (irq_work) to the cache's batch. Best effort: a CPU this process may
// not run on keeps its single element.
func warmStackCache(m *ebpf.Map) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var allowed unix.CPUSet
	if unix.SchedGetaffinity(0, &allowed) != nil {
		return
	}
	defer func() { _ = unix.SchedSetaffinity(0, &allowed) }()
	value := make([]byte, m.ValueSize())
	key := ^uint64(0) // not a hash store_stack makes in practice; removed at once
	for cpu := 0; cpu < len(allowed)*64; cpu++ {
		if !allowed.IsSet(cpu) {
			continue
		}
		var one unix.CPUSet
		one.Set(cpu)
		if unix.SchedSetaffinity(0, &one) != nil {
			continue
		}
		if m.Update(key, value, ebpf.UpdateNoExist) == nil {
			_ = m.Delete(key)
		}
	}
}

// maxThreads is the capacity of offcpu_starts: the target's threads off
// the CPU at one time.
const maxThreads = 16384

// loadOffCPU loads the offcpu program into objs, on objs' maps.
func loadOffCPU(spec *ebpf.CollectionSpec, objs *profileObjects, copts *ebpf.CollectionOptions) error {
	o := ebpf.CollectionOptions{}
	if copts != nil {
		o = *copts
	}
	o.MapReplacements = map[string]*ebpf.Map{}
	v := reflect.ValueOf(objs.profileMaps)
	t := v.Type()
	for i := range t.NumField() {
		if m, ok := v.Field(i).Interface().(*ebpf.Map); ok && m != nil {
			o.MapReplacements[t.Field(i).Tag.Get("ebpf")] = m
		}
	}
	var p struct {
		Offcpu *ebpf.Program `ebpf:"offcpu"`
	}
	if err := spec.LoadAndAssign(&p, &o); err != nil {
		return err
	}
	objs.Offcpu = p.Offcpu
	return nil
}

// classify wraps err with context and, where it applies, ErrPermission or
// errors.ErrUnsupported and a hint.
func classify(context string, err error) error {
	var ve *ebpf.VerifierError
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return fmt.Errorf("%s: %w: run as root, or grant CAP_BPF and CAP_PERFMON (and check kernel.perf_event_paranoid, kernel.unprivileged_bpf_disabled): %w",
			context, ErrPermission, err)
	case errors.Is(err, ebpf.ErrNotSupported), errors.Is(err, unix.ENOSYS),
		errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%s: %w: the kernel lacks BPF or perf events support (needs Linux 5.8 or later with CONFIG_BPF_SYSCALL, CONFIG_PERF_EVENTS and CONFIG_BPF_EVENTS): %w",
			context, errors.ErrUnsupported, err)
	case errors.As(err, &ve) && verifierTooOld(ve):
		return fmt.Errorf("%s: %w: the kernel's verifier is too old for this program (needs Linux 5.8 or later): %w",
			context, errors.ErrUnsupported, err)
	}
	return fmt.Errorf("%s: %w", context, err)
}

func verifierTooOld(ve *ebpf.VerifierError) bool {
	log := strings.Join(ve.Log, "\n")
	for _, s := range []string{"back-edge", "unknown func", "invalid func", "program is too large"} {
		if strings.Contains(log, s) {
			return true
		}
	}
	return false
}

// onlineCPUs returns the CPUs listed in /sys/devices/system/cpu/online.
func onlineCPUs() ([]int, error) {
	b, err := os.ReadFile(onlineCPUsPath)
	if err != nil {
		return nil, fmt.Errorf("bpf: online cpus: %w", err)
	}
	cpus, err := parseCPUList(string(b))
	if err != nil {
		return nil, fmt.Errorf("bpf: online cpus: %s: %w", onlineCPUsPath, err)
	}
	return cpus, nil
}

// Start opens one cpu-clock perf event per online CPU, or per thread of
// the target with Options.PerThread (disabled), attaches the program to
// each (a BPF link, or PERF_EVENT_IOC_SET_BPF on kernels before 5.15) and
// then enables them all. After Stop it enables the events again; counts
// keep accumulating. Starting a running profiler does nothing. On error
// nothing is left open.
//
// A CPU that went offline, or a thread that exited, since the list was
// read is skipped.
func (p *Profiler) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.objs == nil:
		return fmt.Errorf("bpf: start: %w", ErrClosed)
	case p.running:
		return nil
	case p.events == nil:
		if err := p.open(); err != nil {
			return err
		}
	}
	if p.objs.SwitchFix != nil && p.fix == nil {
		l, err := link.AttachTracing(link.TracingOptions{Program: p.objs.SwitchFix})
		if err != nil {
			return errors.Join(classify("bpf: start: attach the switch fix to sched_switch", err), p.closeEvents())
		}
		p.fix = l
	}
	if p.objs.Offcpu != nil && p.off == nil {
		l, err := link.AttachTracing(link.TracingOptions{Program: p.objs.Offcpu})
		if err != nil {
			return errors.Join(classify("bpf: start: attach the off-CPU program to sched_switch", err), p.closeEvents())
		}
		p.off, p.offStop = l, 0
	}
	for _, ev := range p.events {
		if err := unix.IoctlSetInt(ev.fd, unix.PERF_EVENT_IOC_ENABLE, 0); err != nil {
			err = fmt.Errorf("bpf: start: enable perf event on %s: %w", ev.where, err)
			return errors.Join(err, p.closeEvents())
		}
	}
	p.running = true
	return nil
}

// eventTarget is where one event is opened: a CPU (pid -1) or a thread
// (cpu -1).
type eventTarget struct {
	pid, cpu int
	where    string
}

// open opens and attaches the events: one per online CPU, or one per
// thread of the target with Options.PerThread. A CPU that went offline
// (ENODEV) or a thread that exited (ESRCH) since the list was read is
// skipped.
//
// Per-thread events are inherited: a thread that a thread creates after
// that thread's event is open carries the event (and the program). A
// thread created in between, during open, by a thread whose event is not
// open yet is not sampled: perf record -p has the same window.
func (p *Profiler) open() error {
	var targets []eventTarget
	attr, gone := p.attr(0), unix.ENODEV
	if p.opts.PerThread {
		tids, err := threads(procRoot, p.opts.PID)
		if err != nil {
			return fmt.Errorf("bpf: start: %w", err)
		}
		for _, tid := range tids {
			targets = append(targets, eventTarget{pid: tid, cpu: -1, where: fmt.Sprintf("thread %d", tid)})
		}
		attr, gone = p.attr(unix.PerfBitInherit), unix.ESRCH
	} else {
		cpus, err := onlineCPUs()
		if err != nil {
			return err
		}
		for _, cpu := range cpus {
			targets = append(targets, eventTarget{pid: -1, cpu: cpu, where: fmt.Sprintf("cpu %d", cpu)})
		}
	}
	for _, t := range targets {
		fd, err := unix.PerfEventOpen(&attr, t.pid, t.cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if errors.Is(err, gone) {
			continue
		}
		if err != nil {
			return errors.Join(p.openError(t.where, err), p.closeEvents())
		}
		if err := p.add(perfEvent{where: t.where, fd: fd}); err != nil {
			return err
		}
	}
	switch {
	case len(p.events) > 0:
		return nil
	case p.opts.PerThread:
		return fmt.Errorf("bpf: start: process %d: no thread left to sample (did it exit?)", p.opts.PID)
	default:
		return fmt.Errorf("bpf: start: no online cpu in %s", onlineCPUsPath)
	}
}

// attr is the cpu-clock event's attributes, opened disabled, plus bits.
func (p *Profiler) attr(bits uint64) unix.PerfEventAttr {
	return unix.PerfEventAttr{
		Type:   unix.PERF_TYPE_SOFTWARE,
		Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Sample: uint64(p.opts.FrequencyHz),
		Bits:   unix.PerfBitFreq | unix.PerfBitDisabled | bits,
	}
}

func (p *Profiler) openError(where string, err error) error {
	err = fmt.Errorf("open cpu-clock perf event on %s at %d Hz: %w", where, p.opts.FrequencyHz, err)
	if errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("bpf: start: %w (is the frequency above kernel.perf_event_max_sample_rate?)", err)
	}
	return classify("bpf: start", err)
}

// add attaches the program to ev and keeps it; on error it closes ev and
// every event kept so far.
func (p *Profiler) add(ev perfEvent) error {
	var err error
	ev.link, err = p.attach(ev.fd)
	if err != nil {
		err = classify("bpf: start: attach program to perf event on "+ev.where, err)
		return errors.Join(err, unix.Close(ev.fd), p.closeEvents())
	}
	p.events = append(p.events, ev)
	return nil
}

// attach attaches the program to the perf event fd with a BPF link (Linux
// 5.15), else with PERF_EVENT_IOC_SET_BPF; the link is nil then, and closing
// fd detaches.
func (p *Profiler) attach(fd int) (link.Link, error) {
	l, err := link.AttachRawLink(link.RawLinkOptions{
		Target:  fd,
		Program: p.objs.Profile,
		Attach:  ebpf.AttachPerfEvent,
	})
	if err == nil {
		return l, nil
	}
	if ierr := unix.IoctlSetInt(fd, unix.PERF_EVENT_IOC_SET_BPF, p.objs.Profile.FD()); ierr != nil {
		return nil, fmt.Errorf("bpf link: %w; PERF_EVENT_IOC_SET_BPF: %w", err, ierr)
	}
	return nil, nil
}

// Stop disables the perf events. When it returns no sample is in flight
// (disabling a cpu-clock event waits for its timer), so the counts are
// stable. Stopping a stopped or closed profiler does nothing.
func (p *Profiler) Stop() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stop()
}

func (p *Profiler) stop() error {
	if !p.running {
		return nil
	}
	var errs []error
	// The switch fix first: it takes samples at switch-outs, which must
	// end with the window.
	if p.fix != nil {
		if err := p.fix.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: stop: detach the switch fix: %w", err))
		}
		p.fix = nil
	}
	if p.off != nil {
		if err := p.off.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: stop: detach the off-CPU program: %w", err))
		}
		p.off, p.offStop = nil, monotonicNs()
	}
	for _, ev := range p.events {
		if err := unix.IoctlSetInt(ev.fd, unix.PERF_EVENT_IOC_DISABLE, 0); err != nil {
			errs = append(errs, fmt.Errorf("bpf: stop: disable perf event on %s: %w", ev.where, err))
		}
	}
	p.running = false
	return errors.Join(errs...)
}

// closeEvents detaches the program and closes the perf events.
func (p *Profiler) closeEvents() error {
	var errs []error
	for _, ev := range p.events {
		if ev.link != nil {
			if err := ev.link.Close(); err != nil {
				errs = append(errs, fmt.Errorf("bpf: close link on %s: %w", ev.where, err))
			}
		}
		if err := unix.Close(ev.fd); err != nil {
			errs = append(errs, fmt.Errorf("bpf: close perf event on %s: %w", ev.where, err))
		}
	}
	p.events = nil
	p.running = false
	if p.fix != nil {
		if err := p.fix.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: close the switch fix's link: %w", err))
		}
		p.fix = nil
	}
	if p.off != nil {
		if err := p.off.Close(); err != nil {
			errs = append(errs, fmt.Errorf("bpf: close the off-CPU program's link: %w", err))
		}
		p.off = nil
	}
	return errors.Join(errs...)
}

// Close stops sampling, detaches the program and closes the perf events,
// the program and the maps. Closing a closed profiler does nothing.
func (p *Profiler) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objs == nil {
		return nil
	}
	err := errors.Join(p.stop(), p.closeEvents())
	if cerr := p.objs.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("bpf: close objects: %w", cerr))
	}
	p.objs = nil
	return err
}

// Counts reads the aggregated stacks, sorted by PID, TID, comm and stack.
// Call it after Stop: while sampling, counts keep moving and a map walk may
// see a key twice or miss one.
func (p *Profiler) Counts() ([]Count, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objs == nil {
		return nil, fmt.Errorf("bpf: counts: %w", ErrClosed)
	}
	stack := p.stackReader("counts")

	var (
		out []Count
		key profileCountKey
		n   uint64
	)
	it := p.objs.Counts.Iterate()
	for it.Next(&key, &n) {
		c := Count{PID: key.Tgid, TID: key.Tid, Comm: comm(key.Comm), Samples: n}
		var err error
		if c.User, err = stack(key.UserHash); err != nil {
			return nil, err
		}
		if c.Kernel, err = stack(key.KernelHash); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("bpf: counts: %w", err)
	}
	slices.SortFunc(out, func(a, b Count) int {
		return cmp.Or(
			cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.TID, b.TID),
			strings.Compare(a.Comm, b.Comm),
			slices.Compare(a.User, b.User),
			slices.Compare(a.Kernel, b.Kernel),
		)
	})
	return out, nil
}

func comm(b [16]int8) string {
	s := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		s = append(s, byte(c))
	}
	return string(s)
}

// ThreadCorrections returns what Options.SwitchFix did to each target
// thread's samples, by thread id (threads it did nothing to are left out).
// It reads the counters as they are: call it after Stop for a window's.
func (p *Profiler) ThreadCorrections() (map[uint32]ThreadCorrection, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objs == nil {
		return nil, fmt.Errorf("bpf: thread corrections: %w", ErrClosed)
	}
	out := map[uint32]ThreadCorrection{}
	var tid uint32
	var st profileThreadState
	it := p.objs.Threads.Iterate()
	for it.Next(&tid, &st) {
		c := ThreadCorrection{Deferred: uint64(st.Deferred), Owed: uint64(st.Owed), Skipped: uint64(st.Skipped), Blind: uint64(st.Blind), Dense: uint64(st.Densed),
			WeightedExtra: uint64(st.Extra), WeightedZero: uint64(st.Zero),
			OffCPUChargedNs: st.ProgNs, OffCPUTimerSkipped: uint64(st.ProgSkipped)}
		if c != (ThreadCorrection{}) {
			out[tid] = c
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("bpf: thread corrections: %w", err)
	}
	return out, nil
}

// Health sums the health counters of all CPUs.
func (p *Profiler) Health() (Health, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objs == nil {
		return Health{}, fmt.Errorf("bpf: health: %w", ErrClosed)
	}
	var perCPU []profileHealthCounters
	if err := p.objs.Health.Lookup(uint32(0), &perCPU); err != nil {
		return Health{}, fmt.Errorf("bpf: health: %w", err)
	}
	h := Health{UserStackErrors: map[int64]uint64{}, KernelStackErrors: map[int64]uint64{}}
	for _, c := range perCPU {
		h.Samples += c.Samples
		h.Idle += c.Idle
		h.MapFull += c.MapFull
		h.StackMapFull += c.StackMapFull
		h.StackNoMem += c.StackNomem
		h.Truncated += c.Truncated
		h.Collisions += c.Collisions
		h.Copied += c.Copied
		h.RingbufFull += c.RingbufFull
		h.WindowFull += c.WindowFull
		h.UserRegsErrors += c.UserRegsErr
		h.SwitchDeferred += c.SwitchDeferred
		h.SwitchOwed += c.SwitchOwed
		h.SwitchSkipped += c.SwitchSkipped
		h.SwitchSurplus += c.SwitchSurplus
		h.SwitchLate += c.SwitchLate
		h.SwitchBlind += c.SwitchBlind
		h.SwitchBlindSkipped += c.SwitchBlindSkipped
		h.SwitchDense += c.SwitchDense
		h.WeightedExtra += c.WeightedExtra
		h.WeightedZero += c.WeightedZero
		h.OffCPUDropped += c.OffcpuDropped
		h.OffCPUShort += c.OffcpuShort
		h.OffCPUUnended += c.OffcpuUnended
		h.OffCPUCFIWalks += c.OffcpuCfiWalks
		h.OffCPUCFIMissing += c.OffcpuCfiMissing
		h.OffCPUCFIUnsupported += c.OffcpuCfiUnsupported
		h.OffCPUChargedNs += c.OffcpuChargedNs
		h.OffCPUTimerSkipped += c.OffcpuTimerSkipped
		for _, errs := range [][64]uint64{c.OffcpuUserErr, c.OffcpuKernelErr} {
			for errno, n := range errs {
				if n != 0 {
					if h.OffCPUStackErrors == nil {
						h.OffCPUStackErrors = map[int64]uint64{}
					}
					h.OffCPUStackErrors[int64(errno)] += n
				}
			}
		}
		for errno, n := range c.OffcpuDeleteErr {
			if n != 0 {
				if h.OffCPUDeleteErrors == nil {
					h.OffCPUDeleteErrors = map[int64]uint64{}
				}
				h.OffCPUDeleteErrors[int64(errno)] += n
			}
		}
		for errno, n := range c.UserErr {
			if n != 0 {
				h.UserStackErrors[int64(errno)] += n
			}
		}
		for errno, n := range c.KernelErr {
			if n != 0 {
				h.KernelStackErrors[int64(errno)] += n
			}
		}
	}
	if p.objs.Offcpu != nil {
		if st, err := p.objs.Offcpu.Stats(); err == nil {
			h.OffCPURecursionMisses = st.RecursionMisses
		}
	}
	return h, nil
}

// EnableStats turns on the kernel's BPF run-time statistics
// (BPF_STATS_RUN_TIME) until the returned Closer is closed; RunTime reports
// them. Collecting them costs two clock reads per program run.
func EnableStats() (io.Closer, error) {
	c, err := ebpf.EnableStats(uint32(unix.BPF_STATS_RUN_TIME))
	if err != nil {
		return nil, classify("bpf: enable run-time stats", err)
	}
	return c, nil
}

// RunTime returns the programs' total run time and run count (the sampling
// program's and, with Options.SwitchFix, the switch program's, which runs
// at every context switch) as counted by the kernel while statistics were
// enabled (EnableStats), and true; or
// (0, 0, false) when none were counted (statistics off) or the profiler is
// closed.
func (p *Profiler) RunTime() (time.Duration, uint64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objs == nil {
		return 0, 0, false
	}
	st, err := p.objs.Profile.Stats()
	if err != nil || st.RunCount == 0 {
		return 0, 0, false
	}
	if p.objs.SwitchFix != nil {
		// The switch fix runs at every context switch of the machine
		// (it returns at once for other processes): its time counts.
		if fs, err := p.objs.SwitchFix.Stats(); err == nil {
			st.Runtime += fs.Runtime
			st.RunCount += fs.RunCount
		}
	}
	if p.objs.Offcpu != nil {
		// So does the off-CPU program.
		if fs, err := p.objs.Offcpu.Stats(); err == nil {
			st.Runtime += fs.Runtime
			st.RunCount += fs.RunCount
		}
	}
	return st.Runtime, st.RunCount, true
}

// SetRanges sets the address ranges that Options.StackCopy auto decides
// with: a sample is copied when its leaf IP is in one of noFP (code without
// frame pointers), or when its frame-pointer walk is empty or ends at an
// address in none of roots (the walk missed the thread's root). Each list
// holds at most MaxRanges ranges, unsorted; both are empty after Load, so
// auto then copies every sample. Call it before Start: samples taken while
// the ranges change may see some of the old and some of the new.
func (p *Profiler) SetRanges(noFP, roots []Range) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objs == nil {
		return fmt.Errorf("bpf: set ranges: %w", ErrClosed)
	}
	for _, m := range []struct {
		name   string
		ranges []Range
		m      *ebpf.Map
	}{{"no-frame-pointer", noFP, p.objs.NofpRanges}, {"root", roots, p.objs.RootRanges}} {
		if len(m.ranges) > MaxRanges {
			return fmt.Errorf("bpf: set ranges: %d %s ranges, at most %d", len(m.ranges), m.name, MaxRanges)
		}
		v := profileRanges{N: uint32(len(m.ranges))}
		for i, r := range m.ranges {
			if r.Start >= r.End {
				return fmt.Errorf("bpf: set ranges: %s range %#x-%#x empty", m.name, r.Start, r.End)
			}
			v.R[i].Start, v.R[i].End = r.Start, r.End
		}
		if err := m.m.Update(uint32(0), &v, ebpf.UpdateAny); err != nil {
			return fmt.Errorf("bpf: set %s ranges: %w", m.name, err)
		}
	}
	return nil
}

// CFIWanted returns the pcs at which off-CPU walks stopped for want of a
// CFI rule since the last call (Options.OffCPUCFI), and forgets them: the
// leaf's ip, or a caller's return address minus one. Answer them with
// SetCFIRules.
func (p *Profiler) CFIWanted() ([]uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objs == nil {
		return nil, fmt.Errorf("bpf: CFI wanted: %w", ErrClosed)
	}
	var (
		pcs []uint64
		k   uint64
		one uint8
	)
	it := p.objs.CfiWanted.Iterate()
	for it.Next(&k, &one) {
		pcs = append(pcs, k)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("bpf: CFI wanted: %w", err)
	}
	for _, k := range pcs {
		if err := p.objs.CfiWanted.Delete(k); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
			return nil, fmt.Errorf("bpf: CFI wanted: delete %#x: %w", k, err)
		}
	}
	slices.Sort(pcs)
	return pcs, nil
}

// SetCFIRules gives the off-CPU walk (Options.OffCPUCFI) the rules of the
// pcs CFIWanted returned. A pc whose CFI cannot be followed gets CFA
// CFAUnsupported, so that it is not asked for again.
func (p *Profiler) SetCFIRules(rules map[uint64]CFIRule) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objs == nil {
		return fmt.Errorf("bpf: set CFI rules: %w", ErrClosed)
	}
	for pc, r := range rules {
		if r.CFA < CFASP || r.CFA > CFAUnsupported {
			return fmt.Errorf("bpf: set CFI rules: pc %#x: CFA rule %d unknown", pc, r.CFA)
		}
		v := profileCfiRule{Cfa: uint32(r.CFA), CfaOff: r.CFAOffset, BpSaved: boolU32(r.BPSaved), BpOff: r.BPOffset}
		if err := p.objs.CfiRules.Update(pc, &v, ebpf.UpdateAny); err != nil {
			return fmt.Errorf("bpf: set CFI rules: pc %#x: %w", pc, err)
		}
	}
	return nil
}

func boolU32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// readPoll is how often ReadSamples drains the ring buffer. It does not
// wait in the kernel for the program's wake-ups: a goroutine parked in
// epoll_wait keeps the Go runtime's monitor thread (sysmon) waking every
// few microseconds, which cost the recording process 1.4% of a core at
// 99 Hz on MariaDB (0.2% without copies); between drains it sleeps on a Go
// timer. The ring buffer (16 MiB by default) holds far more than a
// period's samples.
const readPoll = 100 * time.Millisecond

// ReadSamples passes each copied sample (Options.StackCopy) to fn, in the
// order the ring buffer holds them, until ctx is done: then it passes the
// samples still in the ring buffer and returns nil. Call it in its own
// goroutine during sampling, and cancel ctx after Stop to get every
// sample. It returns the first error of fn, or of the ring buffer; only
// one ReadSamples may run at a time. Close does not end it: cancel ctx.
//
// fn runs in ReadSamples' goroutine; the slices of its RawSample are valid
// until it returns. A slow fn makes the ring buffer fill up: samples are
// then dropped (Health.RingbufFull).
func (p *Profiler) ReadSamples(ctx context.Context, fn func(RawSample) error) (err error) {
	p.mu.Lock()
	switch {
	case p.objs == nil:
		p.mu.Unlock()
		return fmt.Errorf("bpf: read samples: %w", ErrClosed)
	case p.reading:
		p.mu.Unlock()
		return errors.New("bpf: read samples: already reading")
	}
	rd, err := ringbuf.NewReader(p.objs.Samples)
	if err != nil {
		p.mu.Unlock()
		return fmt.Errorf("bpf: read samples: %w", err)
	}
	p.reading = true
	p.mu.Unlock()
	defer func() {
		if cerr := rd.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("bpf: read samples: close reader: %w", cerr))
		}
		p.mu.Lock()
		p.reading = false
		p.mu.Unlock()
	}()
	var (
		rec ringbuf.Record
		d   sampleDecoder
	)
	// A deadline in the past: ReadInto returns what the ring buffer
	// holds, then os.ErrDeadlineExceeded, without waiting.
	rd.SetDeadline(time.Unix(1, 0))
	tick := time.NewTicker(readPoll)
	defer tick.Stop()
	for {
		done := ctx.Err() != nil
		for {
			err := rd.ReadInto(&rec)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break // drained
			}
			if err != nil {
				return fmt.Errorf("bpf: read samples: %w", err)
			}
			s, err := d.decode(rec.RawSample)
			if err != nil {
				return err
			}
			if err := fn(s); err != nil {
				return err
			}
		}
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// Offsets in a sample record (struct sample in profile.bpf.c).
var (
	sampleStackOff = int(unsafe.Offsetof(profileSample{}.Stack))
	sampleUserOff  = int(unsafe.Offsetof(profileSample{}.User))
	sampleKernOff  = int(unsafe.Offsetof(profileSample{}.Kern))
	stackIPsOff    = int(unsafe.Offsetof(profileStack{}.Ips))
)

// sampleDecoder decodes sample records into RawSamples, reusing its frame
// slices and interning thread names.
type sampleDecoder struct {
	user, kernel []uint64
	comms        map[[16]byte]string
}

func (d *sampleDecoder) decode(b []byte) (RawSample, error) {
	if len(b) < sampleStackOff {
		return RawSample{}, fmt.Errorf("bpf: read samples: record of %d bytes, want at least %d", len(b), sampleStackOff)
	}
	le := binary.LittleEndian
	var hdr profileSample // the fixed fields only
	hdr.Tgid, hdr.Tid = le.Uint32(b[0:]), le.Uint32(b[4:])
	off := int(unsafe.Offsetof(hdr.Ip))
	hdr.Ip, hdr.Sp, hdr.Bp, hdr.Base = le.Uint64(b[off:]), le.Uint64(b[off+8:]), le.Uint64(b[off+16:]), le.Uint64(b[off+24:])
	off = int(unsafe.Offsetof(hdr.Len))
	hdr.Len, hdr.Flags, hdr.Weight = le.Uint32(b[off:]), le.Uint32(b[off+4:]), le.Uint32(b[off+8:])
	if int(hdr.Len) > len(b)-sampleStackOff || hdr.Sp < hdr.Base || hdr.Sp-hdr.Base >= PageSize {
		return RawSample{}, fmt.Errorf("bpf: read samples: record of %d bytes: %d stack bytes from %#x for sp %#x", len(b), hdr.Len, hdr.Base, hdr.Sp)
	}

	var comm [16]byte
	copy(comm[:], b[8:24])
	name, ok := d.comms[comm]
	if !ok {
		name = string(comm[:indexZero(comm[:])])
		if d.comms == nil {
			d.comms = map[[16]byte]string{}
		}
		d.comms[comm] = name
	}
	d.user = frames(d.user[:0], b[sampleUserOff:])
	d.kernel = frames(d.kernel[:0], b[sampleKernOff:])
	stack := b[sampleStackOff : sampleStackOff+int(hdr.Len)]
	return RawSample{
		PID: hdr.Tgid, TID: hdr.Tid, Comm: name,
		Regs:  Regs{IP: hdr.Ip, SP: hdr.Sp, BP: hdr.Bp},
		Flags: SampleFlags(hdr.Flags), Weight: max(hdr.Weight, 1),
		Stack: stack, StackBase: hdr.Base, User: d.user, Kernel: d.kernel,
	}, nil
}

func indexZero(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return len(b)
}

// frames appends the frames of the struct stack at the start of b to dst.
func frames(dst []uint64, b []byte) []uint64 {
	depth := min(int(binary.LittleEndian.Uint32(b)), MaxDepth)
	for i := range depth {
		dst = append(dst, binary.LittleEndian.Uint64(b[stackIPsOff+8*i:]))
	}
	return dst
}

// stackReader returns a function that reads a stack of the stack map by
// its hash (0: none), each once; errors name what, the caller's step.
func (p *Profiler) stackReader(what string) func(hash uint64) ([]uint64, error) {
	stacks := map[uint64][]uint64{0: nil}
	return func(hash uint64) ([]uint64, error) {
		if s, ok := stacks[hash]; ok {
			return s, nil
		}
		var st profileStack
		if err := p.objs.Stacks.Lookup(hash, &st); err != nil {
			return nil, fmt.Errorf("bpf: %s: stack %#x: %w", what, hash, err)
		}
		s := slices.Clone(st.Ips[:min(int(st.Depth), len(st.Ips))])
		stacks[hash] = s
		return s, nil
	}
}
