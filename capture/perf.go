//go:build linux

package capture

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/flamediff/flamediff/fold"
)

// scriptFields are the perf script fields folded by fold.ParsePerfScript.
// The period is left out on purpose, so that every sample counts 1 and the
// profile's unit is samples; time and event make the header carry the event
// name, which stackcollapse-perf.pl's event filter reads.
const scriptFields = "comm,pid,tid,time,event,ip,sym,dso"

// Perf is the perf record sampler. The zero value is ready to use and runs
// "perf" from PATH; one Perf samples once (Start, then Stop).
type Perf struct {
	// Path is the perf binary; "" means "perf" from PATH.
	Path string
	// StartTimeout bounds how long Start waits for perf to enable its
	// events (default 30s). StopGrace is how long perf may take to write
	// perf.data after SIGINT before it is killed (default 30s).
	StartTimeout time.Duration
	StopGrace    time.Duration

	stopMu  sync.Mutex // serializes Stop
	mu      sync.Mutex // guards the fields below
	run     *perfRun
	stopped bool
	result  *Result
	err     error
}

// NewPerf returns a perf sampler using "perf" from PATH (a *Perf; set its
// fields for another binary or other timeouts).
func NewPerf() Sampler { return &Perf{} }

// Name returns "perf".
func (p *Perf) Name() string { return "perf" }

// perfRun is one running perf record.
type perfRun struct {
	cmd      *exec.Cmd
	done     chan struct{} // closed when perf record has exited
	waitErr  error         // set before done is closed
	stderr   *tailWriter
	opts     Options
	pid      int
	perfPath string
	dir      string // work directory
	ownDir   bool   // dir was created by Start
	data     string // perf.data
	baseSize int64  // perf.data's size when sampling began
	baseCPU  int64  // the target's CPU time (clock ticks) when sampling began; -1 unknown
	started  time.Time
	grace    time.Duration

	// ctlW and ackR are our ends of perf's control descriptors. They stay
	// open while perf runs: perf record exits on a hung-up control fd
	// ("Thread and evlist pollfd index mismatch").
	ctlW, ackR *os.File

	stopWatch chan struct{} // closed by Stop: the ctx watcher may go
	stopOnce  sync.Once
	mu        sync.Mutex
	cancelled bool // Start's ctx ended sampling
	killed    bool // perf record needed SIGKILL
}

// Start runs perf record on pid and returns when its events are enabled
// (perf acknowledged "enable" on its control descriptor), so that every
// sample of the window after Start returns is recorded.
func (p *Perf) Start(ctx context.Context, pid int, opts Options) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.run != nil || p.stopped {
		return errors.New("perf: Start called twice (a Perf samples once)")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	opts, err := withDefaults(opts)
	if err != nil {
		return err
	}
	if pid <= 0 {
		return fmt.Errorf("perf: invalid pid %d", pid)
	}
	if opts.OffCPU {
		return fmt.Errorf("perf: off-CPU profiles: %w: they need the BPF sampler", errors.ErrUnsupported)
	}
	if err := processAlive(pid); err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	perfPath, err := lookPerf(ctx, p.Path)
	if err != nil {
		return err
	}
	if err := checkAccess(currentAccess(pid)); err != nil {
		return fmt.Errorf("perf: sample process %d: %w", pid, err)
	}
	r := &perfRun{opts: opts, pid: pid, perfPath: perfPath, done: make(chan struct{}),
		stopWatch: make(chan struct{}), grace: durationOr(p.StopGrace, 30*time.Second)}
	if opts.WorkDir == "" {
		if r.dir, err = os.MkdirTemp("", "flamediff-perf-"); err != nil {
			return fmt.Errorf("perf: %w", err)
		}
		r.ownDir = true
	} else if r.dir, err = filepath.Abs(opts.WorkDir); err != nil {
		// perf runs in the work directory: a relative path would be
		// taken relative to itself.
		return fmt.Errorf("perf: work directory %s: %w", opts.WorkDir, err)
	}
	r.data = filepath.Join(r.dir, "perf.data")
	if err := r.start(ctx, durationOr(p.StartTimeout, 30*time.Second)); err != nil {
		r.cleanup(false)
		return err
	}
	p.run = r
	go r.watch(ctx)
	return nil
}

func durationOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func withDefaults(o Options) (Options, error) {
	if o.FrequencyHz == 0 {
		o.FrequencyHz = 99
	}
	if o.FrequencyHz < 0 {
		return o, fmt.Errorf("perf: invalid frequency %d Hz", o.FrequencyHz)
	}
	g, err := ParseCallGraph(o.CallGraph)
	if err != nil {
		return o, fmt.Errorf("perf: call graph %w", err)
	}
	o.CallGraph = g.String()
	if o.Event == "" {
		o.Event = "cpu-clock"
	}
	return o, nil
}

// recordArgs returns perf record's arguments. Events start disabled (-D -1)
// and are enabled through the control descriptors 3 (commands) and 4
// (acknowledgements), so Start knows when sampling runs. -N: binaries are
// not copied into ~/.debug.
func recordArgs(o Options, pid int, data string) []string {
	target := []string{"-p", strconv.Itoa(pid)}
	if o.SystemWide {
		target = []string{"-a"}
	}
	args := []string{"record", "-F", strconv.Itoa(o.FrequencyHz), "-e", o.Event,
		"-g", "--call-graph", o.CallGraph}
	if pages := mmapPages(o); pages > 0 {
		args = append(args, "-m", strconv.Itoa(pages))
	}
	args = append(args, target...)
	return append(args, "-o", data, "-N", "-D", "-1", "--control", "fd:3,4")
}

// scriptArgs are perf script's arguments; system-wide captures keep the
// target's samples only.
func scriptArgs(o Options, pid int, data string) []string {
	args := []string{"script", "-i", data, "-F", scriptFields, "--no-inline"}
	if o.SystemWide {
		args = append(args, "--pid", strconv.Itoa(pid))
	}
	return args
}

func (r *perfRun) start(ctx context.Context, timeout time.Duration) error {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("perf: %w", err)
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return fmt.Errorf("perf: %w", err)
	}
	r.ctlW, r.ackR = ctlW, ackR
	r.stderr = newTailWriter(r.opts.Stderr, 64<<10)
	cmd := exec.Command(r.perfPath, recordArgs(r.opts, r.pid, r.data)...)
	cmd.Dir = r.dir
	cmd.Stdout = r.stderr
	cmd.Stderr = r.stderr
	cmd.ExtraFiles = []*os.File{ctlR, ackW}
	// Own process group: signals reach perf (and a wrapper script's
	// children) and not us; perf dies with us.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	ctlR.Close()
	ackW.Close()
	if err != nil {
		ctlW.Close()
		ackR.Close()
		return fmt.Errorf("perf: start %s: %w: %w", r.perfPath, err, ErrNotInstalled)
	}
	r.cmd = cmd
	go func() {
		r.waitErr = cmd.Wait()
		ctlW.Close()
		ackR.Close()
		close(r.done)
	}()

	acked := make(chan error, 1)
	go func() {
		if _, err := ctlW.Write([]byte("enable\n")); err != nil {
			acked <- err
			return
		}
		line, err := bufio.NewReader(ackR).ReadString('\n')
		if err == nil && line != "ack\n" {
			err = fmt.Errorf("unexpected answer %q", line)
		}
		acked <- err
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case err = <-acked:
		if err == nil {
			r.started = time.Now()
			r.baseCPU = cpuTicks(r.pid)
			if fi, err := os.Stat(r.data); err == nil {
				r.baseSize = fi.Size()
			}
			return nil
		}
		// perf exited (EOF on the ack pipe) or misbehaved.
		select {
		case <-r.done:
		case <-time.After(2 * time.Second):
		}
		r.kill()
		return r.startError(err)
	case <-r.done:
		return r.startError(nil)
	case <-timer.C:
		r.kill()
		return fmt.Errorf("perf: perf record did not start sampling within %v: %s", timeout, tail(r.stderr.String(), 5))
	case <-ctx.Done():
		r.kill()
		return fmt.Errorf("perf: %w", ctx.Err())
	}
}

// startError explains why perf record ended before sampling began.
func (r *perfRun) startError(ackErr error) error {
	msg := tail(r.stderr.String(), 5)
	if msg == "" {
		msg = fmt.Sprint(r.waitErr)
		if ackErr != nil {
			msg += "; control: " + ackErr.Error()
		}
	}
	if processAlive(r.pid) != nil {
		return fmt.Errorf("perf: record process %d: %s: %w", r.pid, msg, ErrProcessGone)
	}
	if err := classifyPerfError(r.stderr.String()); err != nil {
		return fmt.Errorf("perf: record process %d: %s: %w", r.pid, msg, err)
	}
	return fmt.Errorf("perf: record process %d: %s", r.pid, msg)
}

// signal sends sig to perf's process group.
func (r *perfRun) signal(sig syscall.Signal) {
	_ = syscall.Kill(-r.cmd.Process.Pid, sig) // ESRCH: already gone
}

// kill ends perf record at once and waits for it.
func (r *perfRun) kill() {
	select {
	case <-r.done:
		return
	default:
	}
	r.mu.Lock()
	r.killed = true
	r.mu.Unlock()
	r.signal(syscall.SIGKILL)
	<-r.done
}

// interrupt asks perf record to finish (SIGINT: it writes perf.data and
// exits), repeats the request every second, and kills it after the grace
// period or when ctx ends. It returns when perf record has exited.
func (r *perfRun) interrupt(ctx context.Context) {
	grace := time.NewTimer(r.grace)
	defer grace.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		r.signal(syscall.SIGINT)
		select {
		case <-r.done:
			return
		case <-tick.C:
		case <-grace.C:
			r.kill()
			return
		case <-ctx.Done():
			r.kill()
			return
		}
	}
}

// watch stops perf record when Start's ctx ends before Stop is called.
func (r *perfRun) watch(ctx context.Context) {
	select {
	case <-ctx.Done():
		r.mu.Lock()
		r.cancelled = true
		r.mu.Unlock()
		r.interrupt(context.Background())
	case <-r.stopWatch:
	case <-r.done:
	}
}

// cleanup removes what Start created, keeping perf.data when keep is set.
func (r *perfRun) cleanup(keep bool) {
	if keep {
		return
	}
	if r.ownDir {
		_ = os.RemoveAll(r.dir)
	} else {
		os.Remove(r.data)
	}
}

// Stop ends perf record (SIGINT, then SIGKILL after StopGrace or when ctx
// ends) and folds perf.data with perf script and fold.ParsePerfScript. It
// can be called again and returns the same result.
func (p *Perf) Stop(ctx context.Context) (*Result, error) {
	p.stopMu.Lock()
	defer p.stopMu.Unlock()
	p.mu.Lock()
	r, stopped := p.run, p.stopped
	p.mu.Unlock()
	if stopped {
		return p.result, p.err
	}
	if r == nil {
		return nil, errors.New("perf: Stop called before Start")
	}
	res, err := r.stop(ctx)
	p.mu.Lock()
	p.result, p.err, p.stopped = res, err, true
	p.mu.Unlock()
	return res, err
}

// disable asks perf, on its control descriptor, to stop sampling and waits
// up to timeout for its acknowledgement. Errors are ignored: the SIGINT that
// follows ends perf anyway.
func (r *perfRun) disable(timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := r.ctlW.Write([]byte("disable\n")); err != nil {
			return
		}
		_, _ = bufio.NewReader(r.ackR).ReadString('\n')
	}()
	select {
	case <-done:
	case <-time.After(timeout):
	case <-r.done:
	}
}

func (r *perfRun) stop(ctx context.Context) (*Result, error) {
	r.stopOnce.Do(func() { close(r.stopWatch) })
	var warnings []string
	select {
	case <-r.done:
		if processAlive(r.pid) != nil {
			warnings = append(warnings, fmt.Sprintf("process %d exited during sampling: the profile covers its life until then", r.pid))
		} else {
			r.mu.Lock()
			cancelled := r.cancelled
			r.mu.Unlock()
			if !cancelled {
				warnings = append(warnings, fmt.Sprintf("perf record ended before Stop (%v): %s", r.waitErr, tail(r.stderr.String(), 3)))
			}
		}
	default:
		// Stop counting first, so that the window ends now and not when
		// perf has finished writing; then let it exit.
		r.disable(time.Second)
		r.interrupt(ctx)
		// perf record may not have noticed yet that its target exited (a
		// loaded machine): the warning is about the target, not perf.
		if processAlive(r.pid) != nil {
			warnings = append(warnings, fmt.Sprintf("process %d exited during sampling: the profile covers its life until then", r.pid))
		}
	}
	r.mu.Lock()
	cancelled, killed := r.cancelled, r.killed
	r.mu.Unlock()
	if cancelled {
		warnings = append(warnings, "sampling was cancelled before Stop: the profile covers the window until then")
	}
	if err := ctx.Err(); err != nil {
		r.cleanup(false)
		return nil, fmt.Errorf("perf: stop: %w", err)
	}
	if killed {
		warnings = append(warnings, fmt.Sprintf("perf record did not finish within %v of SIGINT and was killed: perf.data may be incomplete", r.grace))
	}
	res, err := r.fold(ctx, killed)
	if err != nil {
		r.cleanup(false)
		return nil, err
	}
	rep := parsePerfStderr(r.stderr.String())
	res.Warnings = append(warnings, res.Warnings...)
	res.Warnings = append(res.Warnings, rep.Warnings...)
	res.Lost = max(res.Lost, rep.Lost)
	if rep.Samples >= 0 && !r.opts.SystemWide { // system-wide: perf's count covers every process
		res.Samples = rep.Samples
		if rep.Samples != res.Profile.Samples {
			res.Warnings = append(res.Warnings, fmt.Sprintf("perf record wrote %d samples, perf script showed %d", rep.Samples, res.Profile.Samples))
		}
	}
	if res.Samples == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("no samples: process %d did not run on a CPU while it was sampled", r.pid))
	}
	if r.opts.KeepRaw {
		res.RawPath = r.data
	}
	r.cleanup(r.opts.KeepRaw)
	return res, nil
}

// fold runs perf script on perf.data and folds its output as it streams.
func (r *perfRun) fold(ctx context.Context, killed bool) (*Result, error) {
	fi, err := os.Stat(r.data)
	if err != nil {
		return nil, fmt.Errorf("perf: no perf.data after sampling (%w): %s", err, tail(r.stderr.String(), 5))
	}
	res := &Result{Sampler: "perf"}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("perf: perf.data is empty (perf record killed: %v): %s", killed, tail(r.stderr.String(), 5))
	}
	serr := newTailWriter(r.opts.Stderr, 64<<10)
	cmd := exec.CommandContext(ctx, r.perfPath, scriptArgs(r.opts, r.pid, r.data)...)
	cmd.Dir = r.dir
	// perf script reads objects by build id from a build-id cache of its
	// own: the debug files of DebugDirs, what perf's usual cache holds,
	// and the vDSO (see cacheVDSO).
	{
		bid, err := os.MkdirTemp("", "flamediff-buildid-")
		if err != nil {
			return nil, fmt.Errorf("perf: %w", err)
		}
		defer func() { _ = os.RemoveAll(bid) }()
		if err := linkDebugFiles(bid, r.opts.DebugDirs); err != nil {
			return nil, fmt.Errorf("perf: debug files: %w", err)
		}
		// perf record kept the vDSO (and what else it read) in the usual
		// cache; without it perf script cannot unwind out of the vDSO.
		if err := linkBuildIDCache(bid, defaultBuildIDDir()); err != nil {
			return nil, fmt.Errorf("perf: build-id cache: %w", err)
		}
		if err := cacheVDSO(bid); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("stacks through the vDSO may stop there: %v", err))
		}
		// perf's global option, before the command.
		cmd.Args = append([]string{cmd.Args[0], "--buildid-dir", bid}, cmd.Args[1:]...)
	}
	cmd.Stderr = serr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("perf: script: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf: script: %w", err)
	}
	prof, perr := fold.ParsePerfScript(out, fold.PerfOptions{Kernel: r.opts.Kernel, NoKernel: !r.opts.Kernel}, false)
	_, _ = io.Copy(io.Discard, out) // let perf script finish if folding stopped early
	werr := cmd.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("perf: stop: %w", err)
	}
	if werr != nil {
		return nil, fmt.Errorf("perf: script: %w: %s", werr, tail(serr.String(), 5))
	}
	if perr != nil {
		return nil, fmt.Errorf("perf: fold perf script output: %w", perr)
	}
	prof.Unit = fold.UnitSamples
	if prof.Event == "" {
		prof.Event = r.opts.Event
	}
	if prof.Skipped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d line(s) of perf script output not understood, first %s", prof.Skipped, prof.SkippedFirst))
	}
	rep := parsePerfStderr(serr.String())
	res.Lost = rep.Lost
	res.Warnings = append(res.Warnings, rep.Warnings...)
	res.Profile = prof
	res.Samples = prof.Samples
	return res, nil
}

// Approximate size of one sample record in perf.data, for SamplesSoFar.
const (
	fpSampleBytes = 300 // header, ip, tid, time, period, ~30 frames
	// dwarfSampleOverhead is what a dwarf sample holds besides its stack
	// copy (perf writes the whole copy, however shallow the stack): the
	// fp sample's fields, the user registers and the copy's two size
	// fields. Measured 260-300 bytes on a shallow stack.
	dwarfSampleOverhead = 300
)

// mmapPages is the size in pages of perf's ring buffer per event for
// dwarf call graphs (0: perf's default, for fp): a second of samples at
// the sampling frequency, a power of two from 128 to 8192 pages (512 KiB
// to 32 MiB). perf's default of 516 KiB holds about 15 samples of 32 KiB
// of stack, so a busy machine lost chunks of samples ("the system could
// not keep up") while perf record was waiting for a CPU.
func mmapPages(o Options) int {
	b := sampleBytes(o.CallGraph)
	if b == fpSampleBytes {
		return 0
	}
	want := int64(o.FrequencyHz) * b / 4096
	pages := 128
	for pages < 8192 && int64(pages) < want {
		pages *= 2
	}
	return pages
}

// sampleBytes is the approximate size of a sample record in perf.data
// with the call-graph setting callGraph: it grows with dwarf's stack size.
func sampleBytes(callGraph string) int64 {
	g, err := ParseCallGraph(callGraph)
	if err != nil || g.Method != CallGraphDwarf {
		return fpSampleBytes
	}
	return int64(g.StackBytes) + dwarfSampleOverhead
}

// SamplesSoFar estimates the samples taken so far: the CPU time the target
// used since Start times the frequency (cpu-clock samples each thread at
// that rate while it runs), or, when larger or the CPU time is unknown, the
// growth of perf.data divided by a typical sample size (perf writes in
// bursts, so that figure lags). After Stop it is the result's Samples.
func (p *Perf) SamplesSoFar() int64 {
	p.mu.Lock()
	r, stopped, res := p.run, p.stopped, p.result
	p.mu.Unlock()
	if stopped {
		if res != nil {
			return res.Samples
		}
		return 0
	}
	if r == nil {
		return 0
	}
	var est int64
	if r.baseCPU >= 0 {
		if now := cpuTicks(r.pid); now > r.baseCPU {
			est = (now - r.baseCPU) * int64(r.opts.FrequencyHz) / clockTicks
		}
	}
	if fi, err := os.Stat(r.data); err == nil && fi.Size() > r.baseSize {
		est = max(est, (fi.Size()-r.baseSize)/sampleBytes(r.opts.CallGraph))
	}
	return est
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// cpuTicks returns utime+stime of pid (all its threads) in clock ticks, or
// -1 when /proc/PID/stat cannot be read.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return -1
	}
	return statCPUTicks(b)
}

// statCPUTicks parses utime and stime (fields 14 and 15) of /proc/PID/stat
// text; -1 when malformed.
func statCPUTicks(stat []byte) int64 {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return u + s
}

// defaultBuildIDDir is the build-id cache perf record writes to:
// $PERF_BUILDID_DIR, else ~/.debug ("" when there is no home).
func defaultBuildIDDir() string {
	if d := os.Getenv("PERF_BUILDID_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".debug")
}

// linkBuildIDCache links into dir the entries of perf's build-id cache
// (.build-id/xx/yyyy, symbolic links to the cached objects) that dir
// does not have yet, with absolute targets, so that perf script run with
// --buildid-dir dir still finds what perf record cached there, above all
// the vDSO, which exists nowhere else. A missing cache is no error.
func linkBuildIDCache(dir, cache string) error {
	if cache == "" {
		return nil
	}
	entries, err := filepath.Glob(filepath.Join(cache, ".build-id", "??", "*"))
	if err != nil {
		return err
	}
	for _, e := range entries {
		rel, err := filepath.Rel(cache, e)
		if err != nil {
			return err
		}
		link := filepath.Join(dir, rel)
		if _, err := os.Lstat(link); err == nil {
			continue // a debug file of DebugDirs wins
		}
		target, err := filepath.EvalSymlinks(e)
		if err != nil {
			continue // a cached object since removed
		}
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			return err
		}
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	return nil
}

// linkDebugFiles makes perf's build-id cache layout in dir
// (.build-id/xx/yyyy/debug) point to the debug files of dirs
// (.build-id/xx/yyyy.debug, as -dbg packages install them), so that perf
// script, run with PERF_BUILDID_DIR=dir, reads them. An earlier dir wins.
func linkDebugFiles(dir string, dirs []string) error {
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d, ".build-id", "??", "*.debug"))
		if err != nil {
			return err
		}
		for _, f := range files {
			id := filepath.Base(filepath.Dir(f)) + "/" + strings.TrimSuffix(filepath.Base(f), ".debug")
			target := filepath.Join(dir, ".build-id", id)
			if _, err := os.Lstat(filepath.Join(target, "debug")); err == nil {
				continue
			}
			abs, err := filepath.Abs(f)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			if err := os.Symlink(abs, filepath.Join(target, "debug")); err != nil {
				return err
			}
		}
	}
	return nil
}
