//go:build linux

package procstat

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeProc writes a proc tree under a temporary directory: files maps
// paths under procRoot to their contents (a trailing "/" makes a
// directory).
func fakeProc(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

const (
	fakeStat   = "42 (mariadbd) S 1 42 42 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 3 0 100 1000 100 0\n"
	fakeIO     = "rchar: 1\nwchar: 2\nsyscr: 10\nsyscw: 20\nread_bytes: 4096\nwrite_bytes: 8192\ncancelled_write_bytes: 0\n"
	fakeStatus = "Name:\tmariadbd\nvoluntary_ctxt_switches:\t%d\nnonvoluntary_ctxt_switches:\t%d\n"
)

func status(vol, invol int) string {
	return strings.NewReplacer("%d\nnon", strconv.Itoa(vol)+"\nnon", "%d\n", strconv.Itoa(invol)+"\n").Replace(fakeStatus)
}

func TestReadFake(t *testing.T) {
	full := map[string]string{
		"42/stat":              fakeStat,
		"42/io":                fakeIO,
		"42/task/42/status":    status(100, 5),
		"42/task/43/status":    status(20, 1),
		"42/task/44/status":    status(3, 0),
		"42/task/42/schedstat": "5000000 100 7\n",
		"42/task/42/comm":      "mariadbd\n",
		"42/task/43/schedstat": "2000000 0 1\n",
		"42/task/43/comm":      "io_worker\n",
		"1/stat":               "1 (init) S 0 1 1 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0\n",
		"1/task/1/status":      status(1, 1),
	}
	with := func(changes map[string]string, remove ...string) map[string]string {
		m := map[string]string{}
		for k, v := range full {
			m[k] = v
		}
		for k, v := range changes {
			m[k] = v
		}
		for _, k := range remove {
			delete(m, k)
		}
		return m
	}
	tests := []struct {
		name    string
		files   map[string]string
		pid     int
		want    Snapshot // Time is not compared
		wantErr error
	}{
		{
			name:  "three threads",
			files: full,
			pid:   42,
			want: Snapshot{UserTicks: 1234, SystemTicks: 567, ClockTicks: 100, Voluntary: 123, Involuntary: 6,
				Threads: 3, ReadOps: 10, WriteOps: 20, ReadBytes: 4096, WriteBytes: 8192, IOAvailable: true},
		},
		{
			name:  "a thread exited while reading",
			files: with(map[string]string{"42/task/44/": ""}, "42/task/44/status"),
			pid:   42,
			want: Snapshot{UserTicks: 1234, SystemTicks: 567, ClockTicks: 100, Voluntary: 120, Involuntary: 6,
				Threads: 2, ReadOps: 10, WriteOps: 20, ReadBytes: 4096, WriteBytes: 8192, IOAvailable: true},
		},
		{
			name:  "io unreadable",
			files: with(map[string]string{"42/io/": ""}, "42/io"),
			pid:   42,
			want: Snapshot{UserTicks: 1234, SystemTicks: 567, ClockTicks: 100, Voluntary: 123, Involuntary: 6,
				Threads: 3},
		},
		{
			name:  "no io file (no I/O accounting)",
			files: with(nil, "42/io"),
			pid:   42,
			want: Snapshot{UserTicks: 1234, SystemTicks: 567, ClockTicks: 100, Voluntary: 123, Involuntary: 6,
				Threads: 3},
		},
		{name: "no such pid", files: full, pid: 7, wantErr: ErrProcessGone},
		{name: "zombie", files: with(map[string]string{"42/stat": strings.Replace(fakeStat, " S ", " Z ", 1)}), pid: 42, wantErr: ErrProcessGone},
		{name: "no threads left", files: with(map[string]string{"42/task/": ""}, "42/task/42/status", "42/task/43/status", "42/task/44/status"), pid: 42, wantErr: ErrProcessGone},
		{name: "bad stat", files: with(map[string]string{"42/stat": "42 (mariadbd"}), pid: 42, wantErr: ErrBadProcData},
		{name: "bad status", files: with(map[string]string{"42/task/43/status": "Name:\tx\n"}), pid: 42, wantErr: ErrBadProcData},
		{name: "bad io", files: with(map[string]string{"42/io": "syscr: x\n"}), pid: 42, wantErr: ErrBadProcData},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakeProc(t, tt.files)
			before := time.Now()
			got, err := Read(root, tt.pid)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Read(%d) error = %v, want %v", tt.pid, err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("Read(%d) = %+v with an error, want nil", tt.pid, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Read(%d): %v", tt.pid, err)
			}
			if got.Time.Before(before) || got.Time.After(time.Now()) {
				t.Errorf("Read(%d).Time = %v, not during the call", tt.pid, got.Time)
			}
			got.Time = time.Time{}
			// Every snapshot of 42 has its threads with schedstat files
			// (44 has none, and is left out).
			if tt.pid == 42 {
				tt.want.Tasks = map[int]Task{42: {"mariadbd", 5000000}, 43: {"io_worker", 2000000}}
				// Every thread whose status was read has its switches.
				tt.want.TaskSwitches = map[int]Switches{42: {100, 5}, 43: {20, 1}}
				if tt.want.Threads == 3 {
					tt.want.TaskSwitches[44] = Switches{3, 0}
				}
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("Read(%d) = %+v, want %+v", tt.pid, *got, tt.want)
			}
		})
	}
}

func TestReadMissingRoot(t *testing.T) {
	_, err := Read(filepath.Join(t.TempDir(), "nonexistent"), 1)
	if err == nil || errors.Is(err, ErrProcessGone) {
		t.Fatalf("Read(missing root) error = %v, want an error that is not ErrProcessGone", err)
	}
}

// TestReadRealTree reads the copy of a real mariadbd's /proc files in
// testdata (see testdata/README.md).
func TestReadRealTree(t *testing.T) {
	got, err := Read("testdata/proc/mariadbd", 24122)
	if err != nil {
		t.Fatal(err)
	}
	got.Time = time.Time{}
	want := Snapshot{UserTicks: 252, SystemTicks: 189, ClockTicks: 100, Voluntary: 43668, Involuntary: 18661,
		Threads: 17, ReadOps: 486, WriteOps: 2355, ReadBytes: 2969600, WriteBytes: 15671296, IOAvailable: true}
	// The threads' switches add up to the sums, and the busiest are the
	// four connection threads of the copy.
	var sum Switches
	for _, s := range got.TaskSwitches {
		sum.Voluntary += s.Voluntary
		sum.Involuntary += s.Involuntary
	}
	if len(got.TaskSwitches) != 17 || sum != (Switches{43668, 18661}) || got.TaskSwitches[24152] != (Switches{13531, 8363}) {
		t.Errorf("TaskSwitches %v: want 17 threads adding up to 43668 and 18661, 24152 at 13531 and 8363", got.TaskSwitches)
	}
	got.TaskSwitches = nil
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("Read(mariadbd copy) = %+v, want %+v", *got, want)
	}
}

// TestReadLiveThreadExit: a thread that switched 300 times before the
// window and exits in it does not lower the window's switches, which
// count the threads alive at its end: the others' sleeps in the window.
func TestReadLiveThreadExit(t *testing.T) {
	pid := os.Getpid()
	tidc, exit := make(chan int), make(chan struct{})
	var done chan struct{}
	tid := pid
	for tid == pid {
		done = make(chan struct{})
		go func() {
			defer close(done)
			runtime.LockOSThread()
			if unix.Gettid() == pid {
				// The main thread is not terminated but wedged: another.
				runtime.UnlockOSThread()
				tidc <- pid
				return
			}
			// Not unlocked: the thread exits with the goroutine.
			for range 300 {
				time.Sleep(100 * time.Microsecond)
			}
			tidc <- unix.Gettid()
			<-exit
		}()
		tid = <-tidc
	}
	before, err := Read("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	if s := before.TaskSwitches[tid]; s.Voluntary < 300 {
		t.Fatalf("thread %d: %+v switches before the window, want at least 300", tid, s)
	}
	close(exit)
	<-done
	for i := 0; ; i++ {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d", pid, tid)); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if i == 1000 {
			t.Fatalf("thread %d still there", tid)
		}
		time.Sleep(time.Millisecond)
	}
	for range 20 {
		time.Sleep(time.Millisecond)
	}
	after, err := Read("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	w := Diff(before, after)
	t.Logf("window: %d voluntary, %d involuntary, %d threads exited; sums %d -> %d", w.Voluntary, w.Involuntary, w.ExitedThreads, before.Voluntary, after.Voluntary)
	if w.ExitedThreads < 1 || w.Alive[tid] {
		t.Errorf("ExitedThreads %d, thread %d alive %v: want it counted as exited", w.ExitedThreads, tid, w.Alive[tid])
	}
	if w.Voluntary < 20 {
		t.Errorf("%d voluntary switches in a window of 20 sleeps: want at least 20", w.Voluntary)
	}
}

func TestReadLive(t *testing.T) {
	pid := os.Getpid()
	before, err := Read("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	if before.Threads < 1 || before.ClockTicks != DefaultClockTicks || !before.IOAvailable {
		t.Errorf("Read(self) = %+v: want threads, clock ticks %d and I/O figures", before, DefaultClockTicks)
	}
	if before.Voluntary+before.Involuntary == 0 {
		t.Errorf("Read(self) = %+v: no context switches at all", before)
	}
	if before.ReadOps == 0 {
		t.Errorf("Read(self) = %+v: no read system calls (the test binary has read files)", before)
	}

	// Burn at least 300ms of wall time and of this process's CPU (its own
	// rusage: a loaded machine gave 300ms of wall time only 0.12 s of CPU
	// in one CI run), at most 10 s, and sleep a little for voluntary
	// switches.
	cpu := func() time.Duration {
		var ru unix.Rusage
		if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start, cpu0 := time.Now(), cpu()
	x := 0
	for time.Since(start) < 10*time.Second && (time.Since(start) < 300*time.Millisecond || cpu()-cpu0 < 300*time.Millisecond) {
		x++
		if x%1e6 == 0 {
			runtime.Gosched()
		}
	}
	for range 5 {
		time.Sleep(time.Millisecond)
	}
	after, err := Read("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	w := Diff(before, after)
	if w.Seconds < 0.3 || w.Seconds > 10 {
		t.Errorf("Diff().Seconds = %v, want about 0.3", w.Seconds)
	}
	if w.CPU() < 0.15 || w.CPU() > w.Seconds*float64(runtime.NumCPU())+0.1 {
		t.Errorf("Diff().CPU() = %v over %v s, want at least 0.15 s", w.CPU(), w.Seconds)
	}
	if w.ReadOps == 0 {
		t.Errorf("Diff() = %+v: no read system calls in the window (Read itself reads)", w)
	}
	// The threads' run time (schedstat) is the CPU /proc/PID/stat
	// accounts (the kernel scales stat's ticks to it), up to a tick each.
	var run float64
	for _, th := range w.Threads {
		run += th.Seconds
	}
	if len(w.Threads) == 0 || run < w.CPU()-0.05 || run > w.CPU()+0.05 {
		t.Errorf("Diff().Threads = %+v: %.3f s of run time, want the %.3f CPU-s of stat within 0.05 s", w.Threads, run, w.CPU())
	}

	// A process that has exited and been reaped.
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	if _, err := Read("/proc", cmd.Process.Pid); !errors.Is(err, ErrProcessGone) {
		t.Errorf("Read(reaped pid %d) error = %v, want ErrProcessGone", cmd.Process.Pid, err)
	}
}
