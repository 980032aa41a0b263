//go:build linux

package bpf

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
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

	mu      sync.Mutex
	objs    *profileObjects // nil once closed
	events  []perfEvent     // open perf events, nil before Start
	running bool
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
	case o.MaxStacks < 0 || o.MaxStacks > 1<<24:
		return fmt.Errorf("bpf: max stacks %d out of range [0, %d]", o.MaxStacks, 1<<24)
	}
	if o.FrequencyHz == 0 {
		o.FrequencyHz = DefaultFrequencyHz
	}
	if o.MaxStacks == 0 {
		o.MaxStacks = DefaultMaxStacks
	}
	return nil
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
	spec.Maps[profileMapCounts].MaxEntries = uint32(opts.MaxStacks)
	stacks := opts.MaxStacks
	if opts.Kernel {
		stacks *= 2
	}
	spec.Maps[profileMapStacks].MaxEntries = uint32(stacks)
	if opts.PreallocStacks {
		spec.Maps[profileMapStacks].Flags &^= unix.BPF_F_NO_PREALLOC
	}

	var objs profileObjects
	err := spec.LoadAndAssign(&objs, copts)
	if ve := (*ebpf.VerifierError)(nil); errors.As(err, &ve) && strings.Contains(strings.Join(ve.Log, "\n"), "preallocated") {
		spec.Maps[profileMapStacks].Flags &^= unix.BPF_F_NO_PREALLOC
		err = spec.LoadAndAssign(&objs, copts)
	}
	if err != nil {
		return nil, classify("bpf: load profiler", err)
	}
	return &objs, nil
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
	stacks := map[uint64][]uint64{0: nil}
	stack := func(hash uint64) ([]uint64, error) {
		if s, ok := stacks[hash]; ok {
			return s, nil
		}
		var st profileStack
		if err := p.objs.Stacks.Lookup(hash, &st); err != nil {
			return nil, fmt.Errorf("bpf: counts: stack %#x: %w", hash, err)
		}
		s := slices.Clone(st.Ips[:min(int(st.Depth), len(st.Ips))])
		stacks[hash] = s
		return s, nil
	}

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

// RunTime returns the program's total run time and run count as counted by
// the kernel while statistics were enabled (EnableStats), and true; or
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
	return st.Runtime, st.RunCount, true
}
