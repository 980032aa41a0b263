//go:build linux

package procstat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Read takes a snapshot of process pid from the proc file system
// mounted at procRoot (normally "/proc"; tests pass a fake tree). It reads
// PID/stat, every PID/task/TID/status and PID/io; threads that exit while
// it reads are skipped. When the process does not exist or is a zombie,
// the error wraps ErrProcessGone. When PID/io cannot be read for another
// reason (no ptrace access to the process, a kernel without I/O
// accounting), the snapshot has IOAvailable false and no error.
// Read does not block beyond the file reads.
func Read(procRoot string, pid int) (*Snapshot, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid))
	now := time.Now()
	data, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return nil, procError(procRoot, pid, err)
	}
	st, err := parseStat(data)
	if err != nil {
		return nil, fmt.Errorf("pid %d: %w", pid, err)
	}
	if st.state == 'Z' || st.state == 'X' {
		return nil, fmt.Errorf("pid %d: %w (state %c)", pid, ErrProcessGone, st.state)
	}
	snap := &Snapshot{
		Time:        now,
		UserTicks:   st.utime,
		SystemTicks: st.stime,
		ClockTicks:  DefaultClockTicks,
	}

	tasks, err := os.ReadDir(filepath.Join(dir, "task"))
	if err != nil {
		return nil, procError(procRoot, pid, err)
	}
	for _, task := range tasks {
		data, err := os.ReadFile(filepath.Join(dir, "task", task.Name(), "status"))
		if err != nil {
			if gone(err) {
				continue // the thread exited after ReadDir
			}
			return nil, fmt.Errorf("pid %d: %w", pid, err)
		}
		vol, invol, err := ParseStatus(data)
		if err != nil {
			return nil, fmt.Errorf("pid %d task %s: %w", pid, task.Name(), err)
		}
		snap.Voluntary += vol
		snap.Involuntary += invol
		snap.Threads++
		if tid, err := strconv.Atoi(task.Name()); err == nil {
			if snap.TaskSwitches == nil {
				snap.TaskSwitches = map[int]Switches{}
			}
			snap.TaskSwitches[tid] = Switches{Voluntary: vol, Involuntary: invol}
		}
		readTask(snap, filepath.Join(dir, "task", task.Name()), task.Name())
	}
	if snap.Threads == 0 {
		return nil, fmt.Errorf("pid %d: %w (no threads left)", pid, ErrProcessGone)
	}

	data, err = os.ReadFile(filepath.Join(dir, "io"))
	switch {
	case err == nil:
		snap.ReadOps, snap.WriteOps, snap.ReadBytes, snap.WriteBytes, err = ParseIO(data)
		if err != nil {
			return nil, fmt.Errorf("pid %d: %w", pid, err)
		}
		snap.IOAvailable = true
	case gone(err):
		// Gone, or a kernel without I/O accounting: ask stat again.
		if _, serr := os.Stat(filepath.Join(dir, "stat")); serr != nil {
			return nil, procError(procRoot, pid, serr)
		}
	default:
		// Permission denied (no ptrace access): the snapshot goes
		// without I/O figures.
	}
	return snap, nil
}

// readTask adds the thread in dir to snap.Tasks, with its name and run
// time. A thread without a schedstat file (a kernel without
// CONFIG_SCHED_INFO) leaves Tasks nil; one that exited or cannot be parsed
// is left out.
func readTask(snap *Snapshot, dir, name string) {
	tid, err := strconv.Atoi(name)
	if err != nil {
		return
	}
	data, err := os.ReadFile(filepath.Join(dir, "schedstat"))
	if err != nil {
		return
	}
	run, err := ParseSchedstat(data)
	if err != nil {
		return
	}
	comm, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return
	}
	if snap.Tasks == nil {
		snap.Tasks = map[int]Task{}
	}
	snap.Tasks[tid] = Task{Name: strings.TrimSuffix(string(comm), "\n"), RunNs: run}
}

// gone reports whether a read error means the process or thread is gone.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// procError wraps ErrProcessGone when err says the process is gone, unless
// procRoot itself is missing.
func procError(procRoot string, pid int, err error) error {
	if !gone(err) {
		return fmt.Errorf("pid %d: %w", pid, err)
	}
	if _, serr := os.Stat(procRoot); serr != nil {
		return fmt.Errorf("proc file system: %w", serr)
	}
	return fmt.Errorf("pid %d: %w: %w", pid, ErrProcessGone, err)
}
