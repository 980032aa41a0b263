// Package cputruth runs programs whose true CPU per function is known, as
// ground truth for a sampler: csrc/truth.c, built with gcc (frame
// pointers in every function: -O0, as gcc 12 at -O1 leaves the frame out
// of a leaf loop even with -fno-omit-frame-pointer), measures each working
// function's time on the CPU (CLOCK_MONOTONIC while the thread stays on
// the CPU, CLOCK_THREAD_CPUTIME_ID when it does not; see account in
// truth.c) and adds it to counters in a shared file, and
// the kernel's /proc/PID/task/TID/schedstat gives each thread's run time
// to the nanosecond. A Snapshot at the start and the end of a sampling
// window gives, by Sub, the CPU each function and each thread used in it.
//
// Scenarios (Scenario.Args): steady threads that never block, a bursty
// thread that works right after waking and right before sleeping, and two
// threads handing work to each other through pipes. See csrc/truth.c.
package cputruth

import (
	"bufio"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

//go:embed csrc/truth.c
var source []byte

// Scenario is one way to run the program.
type Scenario struct {
	// Name names the scenario in figures.
	Name string
	// Args are the program's scenario arguments: "steady", "bursty
	// BURST_US SLEEP_US", "bursty-jitter BURST_US SLEEP_US", "pingpong
	// A_US B_US", "syscalls" or "syscalls-jitter".
	Args []string
	// Funcs are the functions that do the work.
	Funcs []string
}

// Scenarios are the suite's scenarios: steady threads, bursts of 20 µs to
// 2 ms after waking and before sleeping 0 to 1 ms (of fixed length, and
// drawn at random around a mean: a loop whose every turn is alike meets a
// sampler's fixed period at the same few points, docs/fidelity.md), a
// pair of threads that wake each other, and a thread that spends half its
// CPU in system calls (in turns of fixed and of random length). Tests
// refer to the first ones by index: append.
var Scenarios = []Scenario{
	{"steady", []string{"steady"}, []string{"work_a", "work_b"}},
	{"bursty-50us-100us", []string{"bursty", "50", "100"}, []string{"after_wakeup", "before_sleep"}},
	{"bursty-20us-1ms", []string{"bursty", "20", "1000"}, []string{"after_wakeup", "before_sleep"}},
	{"bursty-2ms-1ms", []string{"bursty", "2000", "1000"}, []string{"after_wakeup", "before_sleep"}},
	{"bursty-200us-0", []string{"bursty", "200", "0"}, []string{"after_wakeup", "before_sleep"}},
	{"pingpong-30us-60us", []string{"pingpong", "30", "60"}, []string{"produce", "consume"}},
	{"bursty-jitter-50us-100us", []string{"bursty-jitter", "50", "100"}, []string{"after_wakeup", "before_sleep"}},
	{"bursty-jitter-20us-100us", []string{"bursty-jitter", "20", "100"}, []string{"after_wakeup", "before_sleep"}},
	{"syscalls", []string{"syscalls"}, []string{"work_a", "syswork"}},
	{"syscalls-jitter", []string{"syscalls-jitter"}, []string{"work_a", "syswork"}},
}

// Build compiles the program into dir with gcc, frame pointers kept, and
// returns its path.
func Build(dir string) (string, error) {
	src, bin := filepath.Join(dir, "truth.c"), filepath.Join(dir, "truth")
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	out, err := exec.Command("gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-pthread", "-o", bin, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("gcc: %w\n%s", err, out)
	}
	return bin, nil
}

// BuildT builds the program in a temporary directory of tb for a test or
// a benchmark, which it skips when gcc is not installed, and returns the
// program and the directory.
func BuildT(tb testing.TB) (bin, dir string) {
	tb.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		tb.Skip("gcc not installed: the test builds its program")
	}
	dir = tb.TempDir()
	bin, err := Build(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return bin, dir
}

// StartT starts bin with scenario sc for tb and stops it when tb ends.
func StartT(tb testing.TB, bin, dir string, sc Scenario) *Program {
	tb.Helper()
	p, err := Start(bin, dir, sc)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Stop)
	return p
}

// Program is a running truth program.
type Program struct {
	Cmd  *exec.Cmd
	file string
}

// Start runs bin with the scenario's arguments, its counters in a file
// under dir, and waits until it says it is ready.
func Start(bin, dir string, sc Scenario) (*Program, error) {
	file := filepath.Join(dir, "truth-"+sc.Name+".counters")
	cmd := exec.Command(bin, append([]string{file}, sc.Args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("said %q, want ready", line)
		}
		ready <- err
	}()
	select {
	case err = <-ready:
	case <-time.After(10 * time.Second):
		err = errors.New("not ready after 10 s")
	}
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s %s: %w", bin, strings.Join(sc.Args, " "), err)
	}
	return &Program{Cmd: cmd, file: file}, nil
}

// PID is the program's process id.
func (p *Program) PID() int { return p.Cmd.Process.Pid }

// Stop kills the program.
func (p *Program) Stop() {
	_ = p.Cmd.Process.Kill()
	_ = p.Cmd.Wait()
}

// Snapshot is the program's counters at one moment: nanoseconds of CPU
// per function (as it measured them) and per thread (schedstat, by thread
// name; threads of one name are summed).
type Snapshot struct {
	Funcs   map[string]uint64
	Calls   map[string]uint64
	Threads map[string]uint64
	// ClockNs is what one read of the thread clock costs, warm (the
	// program's calibration).
	ClockNs uint64
}

// Snapshot reads the counters and the threads' run times.
func (p *Program) Snapshot() (*Snapshot, error) {
	data, err := os.ReadFile(p.file)
	if err != nil {
		return nil, err
	}
	s, err := ParseCounters(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.file, err)
	}
	s.Threads, err = ThreadRunTimes("/proc", p.PID())
	if err != nil {
		return nil, err
	}
	return s, nil
}

// ParseCounters parses the program's counter file: each counter's
// nanoseconds and calls, and the thread clock's read cost.
func ParseCounters(data []byte) (*Snapshot, error) {
	const head, rec = 24, 48
	if len(data) < head || string(data[:6]) != "TRUTH3" {
		return nil, errors.New("not a truth counter file")
	}
	n := binary.LittleEndian.Uint64(data[8:16])
	if n > 64 || uint64(len(data)) < head+n*rec {
		return nil, fmt.Errorf("counter file holds %d bytes, too short for %d counters", len(data), n)
	}
	s := &Snapshot{Funcs: map[string]uint64{}, Calls: map[string]uint64{}, ClockNs: binary.LittleEndian.Uint64(data[16:24])}
	for i := uint64(0); i < n; i++ {
		r := data[head+i*rec : head+(i+1)*rec]
		name := strings.TrimRight(string(r[:32]), "\x00")
		s.Funcs[name] = binary.LittleEndian.Uint64(r[32:40])
		s.Calls[name] = binary.LittleEndian.Uint64(r[40:48])
	}
	return s, nil
}

// ThreadRunTimes returns the run time in nanoseconds of each thread of pid
// (the first field of /proc/PID/task/TID/schedstat), summed by thread name.
func ThreadRunTimes(procRoot string, pid int) (map[string]uint64, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]uint64{}
	for _, t := range tasks {
		st, err := os.ReadFile(filepath.Join(dir, t.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended
		}
		comm, _ := os.ReadFile(filepath.Join(dir, t.Name(), "comm"))
		f := strings.Fields(string(st))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s/%s/schedstat: %w", dir, t.Name(), err)
		}
		out[strings.TrimSpace(string(comm))] += ns
	}
	return out, nil
}

// Sub returns what s counts beyond before.
func (s *Snapshot) Sub(before *Snapshot) *Snapshot {
	d := &Snapshot{Funcs: map[string]uint64{}, Calls: map[string]uint64{}, Threads: map[string]uint64{}, ClockNs: s.ClockNs}
	for k, v := range s.Funcs {
		d.Funcs[k] = v - before.Funcs[k]
	}
	for k, v := range s.Calls {
		d.Calls[k] = v - before.Calls[k]
	}
	for k, v := range s.Threads {
		d.Threads[k] = v - before.Threads[k]
	}
	return d
}

// TotalNs is the run time of all threads.
func (s *Snapshot) TotalNs() uint64 {
	var t uint64
	for _, v := range s.Threads {
		t += v
	}
	return t
}

// Share returns the share (percent) of all threads' run time that
// function fn used. Share(fn+"@thread") is the same figure by the thread
// clock alone (see account in truth.c).
func (s *Snapshot) Share(fn string) float64 {
	t := s.TotalNs()
	if t == 0 {
		return 0
	}
	return 100 * float64(s.Funcs[fn]) / float64(t)
}
