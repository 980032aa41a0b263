package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultClockTicks is the unit of the CPU times in /proc/PID/stat: ticks
// per second (USER_HZ, what sysconf(_SC_CLK_TCK) and `getconf CLK_TCK`
// return). The kernel exports these times in USER_HZ, which is 100 on every
// architecture Go runs on, whatever the kernel's internal HZ; Read
// assumes it rather than asking libc.
const DefaultClockTicks = 100

// ErrProcessGone is wrapped by Read's error when the process no longer
// exists (or is a zombie that has not been reaped yet).
var ErrProcessGone = errors.New("process is gone")

// ErrBadProcData is wrapped by the errors of ParseStat, ParseStatus and
// ParseIO when the text is not what the kernel writes.
var ErrBadProcData = errors.New("malformed /proc data")

// Snapshot holds the figures of one process at one moment, from /proc.
// Counters are cumulative since the process started; two snapshots make a
// Window (see Diff).
type Snapshot struct {
	// Time is when the snapshot was taken (with a monotonic reading).
	Time time.Time
	// UserTicks and SystemTicks are utime and stime of /proc/PID/stat: CPU
	// time of all threads of the process, including threads that have
	// exited, in ClockTicks per second.
	UserTicks, SystemTicks uint64
	// ClockTicks is the number of ticks per second (DefaultClockTicks).
	ClockTicks int64
	// Voluntary and Involuntary are the sums of voluntary_ctxt_switches and
	// nonvoluntary_ctxt_switches over /proc/PID/task/*/status: the threads
	// alive at the time of the snapshot only (the kernel keeps no total for
	// exited threads).
	Voluntary, Involuntary int64
	// Threads is the number of threads whose status was read.
	Threads int
	// TaskSwitches holds each live thread's voluntary and involuntary
	// context switches, by thread id (the terms of Voluntary and
	// Involuntary), so that a Window counts thread by thread.
	TaskSwitches map[int]Switches
	// ReadOps and WriteOps are syscr and syscw of /proc/PID/io: read and
	// write system calls (of any kind of file, sockets included).
	ReadOps, WriteOps int64
	// ReadBytes and WriteBytes are read_bytes and write_bytes of
	// /proc/PID/io: bytes fetched from and sent to the storage layer.
	ReadBytes, WriteBytes int64
	// IOAvailable is false when /proc/PID/io could not be read (it needs
	// ptrace access to the process); the I/O fields are then zero.
	IOAvailable bool
	// Tasks holds each live thread's name and run time, by thread id, from
	// /proc/PID/task/TID/comm and the first field of
	// /proc/PID/task/TID/schedstat (the scheduler's sum_exec_runtime, in
	// ns, which samplers are checked against). Nil when the kernel has no
	// schedstat files (CONFIG_SCHED_INFO off).
	Tasks map[int]Task
}

// Switches are one thread's context switches: voluntary_ctxt_switches and
// nonvoluntary_ctxt_switches of /proc/PID/task/TID/status.
type Switches struct {
	Voluntary, Involuntary int64
}

// Task is one thread of a Snapshot.
type Task struct {
	Name  string
	RunNs uint64
}

// ThreadCPU is the run time of the threads of one name in a Window.
type ThreadCPU struct {
	Name    string
	Threads int     // threads of that name that ran in the window
	Seconds float64 // their run time in the window (schedstat)
}

// CPUSeconds returns the process's user plus system CPU time in seconds.
func (s *Snapshot) CPUSeconds() float64 {
	return float64(s.UserTicks+s.SystemTicks) / float64(clockTicks(s.ClockTicks))
}

// Window holds what a process did between two snapshots.
type Window struct {
	// Seconds is the wall-clock time between the snapshots.
	Seconds float64
	// CPUUser and CPUSystem are the CPU seconds spent in the window.
	CPUUser, CPUSystem float64
	// Voluntary and Involuntary are the context switches in the window:
	// with both snapshots' TaskSwitches, thread by thread, of the threads
	// alive at the second snapshot (from zero for those started in the
	// window); the kernel keeps no count of a thread that exited, so
	// ExitedThreads threads alive at the first snapshot are left out,
	// with what they switched in the window. Without TaskSwitches, the
	// difference of the snapshots' sums (which an exited thread lowers by
	// all it switched before the window).
	Voluntary, Involuntary int64
	// ExitedThreads counts the threads alive at the first snapshot and
	// gone at the second.
	ExitedThreads int
	// Alive holds the ids of the threads alive at the second snapshot
	// (nil without TaskSwitches), whose switches Voluntary and Involuntary
	// count.
	Alive map[int]bool
	// ReadOps and WriteOps are read and write system calls in the window.
	ReadOps, WriteOps int64
	// ReadKB and WriteKB are storage I/O in the window, in KiB.
	ReadKB, WriteKB float64
	// Threads is the run time of the window by thread name (schedstat),
	// most first (equal ones by name): threads alive at both snapshots,
	// and threads started in the window from zero; threads that exited in
	// the window are missing. Nil unless both snapshots have Tasks.
	Threads []ThreadCPU
}

// CPU returns the CPU seconds of the window, user plus system.
func (w Window) CPU() float64 { return w.CPUUser + w.CPUSystem }

// threadCPU sums the run time of the tasks in after since before by name.
func threadCPU(before, after map[int]Task) []ThreadCPU {
	byName := map[string]*ThreadCPU{}
	for tid, a := range after {
		var d uint64
		if b, ok := before[tid]; ok {
			d = deltaU(b.RunNs, a.RunNs)
		} else {
			d = a.RunNs // started in the window
		}
		if d == 0 {
			continue
		}
		t := byName[a.Name]
		if t == nil {
			t = &ThreadCPU{Name: a.Name}
			byName[a.Name] = t
		}
		t.Threads++
		t.Seconds += float64(d) / 1e9
	}
	out := make([]ThreadCPU, 0, len(byName))
	for _, t := range byName {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Seconds != out[j].Seconds {
			return out[i].Seconds > out[j].Seconds
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// ParseSchedstat returns the first field of /proc/PID/task/TID/schedstat:
// the thread's run time in nanoseconds.
func ParseSchedstat(data []byte) (uint64, error) {
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0, fmt.Errorf("schedstat: empty")
	}
	v, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("schedstat: run time %q: %w", f[0], err)
	}
	return v, nil
}

// Diff returns the window between two snapshots of the same process.
// A counter that went down (snapshots of different processes, or context
// switch sums without TaskSwitches lowered by threads that exited) counts
// as zero, and a
// negative duration as zero seconds. The I/O figures are zero unless both
// snapshots have them. Either snapshot nil gives the zero Window.
func Diff(before, after *Snapshot) Window {
	if before == nil || after == nil {
		return Window{}
	}
	hz := after.ClockTicks
	if hz <= 0 {
		hz = before.ClockTicks
	}
	hz = clockTicks(hz)
	w := Window{
		Seconds:     max(0, after.Time.Sub(before.Time).Seconds()),
		CPUUser:     float64(deltaU(before.UserTicks, after.UserTicks)) / float64(hz),
		CPUSystem:   float64(deltaU(before.SystemTicks, after.SystemTicks)) / float64(hz),
		Voluntary:   deltaI(before.Voluntary, after.Voluntary),
		Involuntary: deltaI(before.Involuntary, after.Involuntary),
	}
	if before.TaskSwitches != nil && after.TaskSwitches != nil {
		w.Voluntary, w.Involuntary, w.ExitedThreads = 0, 0, 0
		w.Alive = make(map[int]bool, len(after.TaskSwitches))
		for tid, a := range after.TaskSwitches {
			b := before.TaskSwitches[tid] // zero: started in the window
			w.Voluntary += deltaI(b.Voluntary, a.Voluntary)
			w.Involuntary += deltaI(b.Involuntary, a.Involuntary)
			w.Alive[tid] = true
		}
		for tid := range before.TaskSwitches {
			if !w.Alive[tid] {
				w.ExitedThreads++
			}
		}
	}
	if before.Tasks != nil && after.Tasks != nil {
		w.Threads = threadCPU(before.Tasks, after.Tasks)
	}
	if before.IOAvailable && after.IOAvailable {
		w.ReadOps = deltaI(before.ReadOps, after.ReadOps)
		w.WriteOps = deltaI(before.WriteOps, after.WriteOps)
		w.ReadKB = float64(deltaI(before.ReadBytes, after.ReadBytes)) / 1024
		w.WriteKB = float64(deltaI(before.WriteBytes, after.WriteBytes)) / 1024
	}
	return w
}

func clockTicks(hz int64) int64 {
	if hz <= 0 {
		return DefaultClockTicks
	}
	return hz
}

func deltaU(a, b uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

func deltaI(a, b int64) int64 {
	if b < a {
		return 0
	}
	return b - a
}

// statFields are the fields of /proc/PID/stat that flamediff uses.
type statFields struct {
	pid          int
	comm         string
	state        byte
	ppid, pgrp   int
	utime, stime uint64
	numThreads   int64
}

// Field numbers of /proc/PID/stat (proc(5), 1-based) after the comm field,
// which is field 2: rest[0] is field 3.
const (
	statState      = 3
	statPPID       = 4
	statPGRP       = 5
	statUTime      = 14
	statSTime      = 15
	statNumThreads = 20
)

// ParseStat parses the text of /proc/PID/stat (or /proc/PID/task/TID/stat)
// and returns utime and stime (clock ticks) and the command name. The name
// is what lies between the first '(' and the last ')', so names with
// spaces and parentheses, such as "(my (weird) proc)", come out whole.
// Errors wrap ErrBadProcData; on error the other results are zero.
func ParseStat(data []byte) (utime, stime uint64, comm string, err error) {
	f, err := parseStat(data)
	if err != nil {
		return 0, 0, "", err
	}
	return f.utime, f.stime, f.comm, nil
}

func parseStat(data []byte) (statFields, error) {
	open := bytes.IndexByte(data, '(')
	closing := bytes.LastIndexByte(data, ')')
	if open < 0 || closing < open {
		return statFields{}, fmt.Errorf("stat: %w: no (command name)", ErrBadProcData)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil || pid < 0 {
		return statFields{}, fmt.Errorf("stat: %w: pid %q is not a number", ErrBadProcData, bytes.TrimSpace(data[:open]))
	}
	rest := bytes.Fields(data[closing+1:])
	if len(rest) < statNumThreads-2 {
		return statFields{}, fmt.Errorf("stat: %w: %d fields after the command name, want at least %d",
			ErrBadProcData, len(rest), statNumThreads-2)
	}
	field := func(n int) string { return string(rest[n-3]) }
	f := statFields{pid: pid, comm: string(data[open+1 : closing])}
	state := field(statState)
	if len(state) != 1 {
		return statFields{}, fmt.Errorf("stat: %w: state %q is not one letter", ErrBadProcData, state)
	}
	f.state = state[0]
	var ppid, pgrp int64
	for _, in := range []struct {
		n    int
		name string
		dst  *int64
	}{{statPPID, "ppid", &ppid}, {statPGRP, "pgrp", &pgrp}, {statNumThreads, "num_threads", &f.numThreads}} {
		v, err := strconv.ParseInt(field(in.n), 10, 32)
		if err != nil {
			return statFields{}, fmt.Errorf("stat: %w: field %d (%s) %q is not a number", ErrBadProcData, in.n, in.name, field(in.n))
		}
		*in.dst = v
	}
	f.ppid, f.pgrp = int(ppid), int(pgrp)
	for _, u := range []struct {
		n    int
		name string
		dst  *uint64
	}{{statUTime, "utime", &f.utime}, {statSTime, "stime", &f.stime}} {
		v, err := strconv.ParseUint(field(u.n), 10, 64)
		if err != nil {
			return statFields{}, fmt.Errorf("stat: %w: field %d (%s) %q is not a number", ErrBadProcData, u.n, u.name, field(u.n))
		}
		*u.dst = v
	}
	return f, nil
}

// ParseStatus parses the text of /proc/PID/status (or
// /proc/PID/task/TID/status) and returns voluntary_ctxt_switches and
// nonvoluntary_ctxt_switches. Both lines must be there; errors wrap
// ErrBadProcData, and on error the counts are zero.
func ParseStatus(data []byte) (vol, invol int64, err error) {
	vals, err := parseKeyValues("status", data, "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")
	if err != nil {
		return 0, 0, err
	}
	return vals[0], vals[1], nil
}

// ParseIO parses the text of /proc/PID/io and returns syscr, syscw,
// read_bytes and write_bytes. All four lines must be there; errors wrap
// ErrBadProcData, and on error the figures are zero.
func ParseIO(data []byte) (syscr, syscw, readBytes, writeBytes int64, err error) {
	vals, err := parseKeyValues("io", data, "syscr", "syscw", "read_bytes", "write_bytes")
	if err != nil {
		return 0, 0, 0, 0, err
	}
	return vals[0], vals[1], vals[2], vals[3], nil
}

// parseKeyValues reads "key: value" lines and returns the non-negative
// integer values of keys, in order. Other lines are ignored; a key given
// twice takes its last value.
func parseKeyValues(file string, data []byte, keys ...string) ([]int64, error) {
	vals := make([]int64, len(keys))
	seen := make([]bool, len(keys))
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		for i, key := range keys {
			if string(k) != key {
				continue
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%s: %w: %s %q is not a count", file, ErrBadProcData, key, bytes.TrimSpace(v))
			}
			vals[i], seen[i] = n, true
		}
	}
	for i, ok := range seen {
		if !ok {
			return nil, fmt.Errorf("%s: %w: no %s line", file, ErrBadProcData, keys[i])
		}
	}
	return vals, nil
}
