//go:build linux

package workload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// groupMembers returns the live (not zombie) processes of process group
// pgid, and the zombies.
func groupMembers(t *testing.T, pgid int) (live, zombies []int) {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		state, pgrp, ok := stateAndGroup(data)
		if !ok || pgrp != pgid {
			continue
		}
		if state == 'Z' || state == 'X' {
			zombies = append(zombies, pid)
		} else {
			live = append(live, pid)
		}
	}
	return live, zombies
}

// stateAndGroup returns the state and the process group of a
// /proc/PID/stat text: the first and third fields after the command name
// (proc(5)), which is in parentheses and may hold any byte.
func stateAndGroup(stat []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	return f[0][0], pgrp, err == nil
}

// assertGroupGone checks that process group pgid is empty: kill(-pgid, 0)
// fails with ESRCH. Where PID 1 does not reap orphans (some containers),
// children that died after their parent stay zombies in the group; those
// are dead, and accepted with a note.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		live, zombies := groupMembers(t, pgid)
		if time.Now().After(deadline) {
			if len(live) > 0 {
				t.Fatalf("process group %d still has live processes %v (kill(-pgid, 0) = %v)", pgid, live, err)
			}
			t.Logf("process group %d: only unreaped zombies %v are left (PID 1 does not reap orphans here)", pgid, zombies)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitOutput(t *testing.T, r *Run, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !bytes.Contains(r.Output(), []byte(want)) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output after 5s: %q", want, r.Output())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunStop(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		grace      time.Duration
		killed     bool // needs SIGKILL: takes the whole grace
		wantSignal string
		// members is how many live processes the group has once the
		// script is where the test stops it (the shell and its sleeps):
		// stopping it earlier, while the shell forks, tests a race and
		// not the case.
		members int
	}{
		{name: "sleep", script: "echo hi; sleep 30", grace: 5 * time.Second, wantSignal: "interrupt", members: 1},
		{name: "child outlives the shell", script: "echo hi; sleep 30 & sleep 30; echo never", grace: 5 * time.Second, wantSignal: "interrupt", members: 3},
		{name: "SIGINT ignored", script: "trap '' INT; echo hi; sleep 30; echo never", grace: 500 * time.Millisecond, killed: true, wantSignal: "killed", members: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			r, err := Start(context.Background(), []string{"sh", "-c", tt.script}, &log)
			if err != nil {
				t.Fatal(err)
			}
			waitOutput(t, r, "hi\n")
			pgid, err := syscall.Getpgid(r.PID())
			if err != nil || pgid != r.PID() {
				t.Fatalf("Getpgid(%d) = %d, %v: want its own group", r.PID(), pgid, err)
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				live, _ := groupMembers(t, pgid)
				if len(live) >= tt.members {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("process group %d has %v, want %d live processes", pgid, live, tt.members)
				}
			}
			start := time.Now()
			if err := r.Stop(tt.grace); err != nil {
				t.Fatalf("Stop: %v", err)
			}
			took := time.Since(start)
			t.Logf("Stop took %v", took)
			select {
			case <-r.Done():
			default:
				t.Fatal("Done() not closed after Stop returned")
			}
			if took > tt.grace+time.Second {
				t.Errorf("Stop took %v, want at most the grace %v (and a little)", took, tt.grace)
			}
			if tt.killed && took < tt.grace {
				t.Errorf("Stop took %v, less than the grace %v, with SIGINT ignored", took, tt.grace)
			}
			assertGroupGone(t, pgid)

			err = r.Wait()
			if !errors.Is(err, ErrWorkloadFailed) || !errors.Is(err, ErrStopped) {
				t.Fatalf("Wait() = %v, want ErrWorkloadFailed and ErrStopped", err)
			}
			if !strings.Contains(err.Error(), tt.wantSignal) || !strings.Contains(err.Error(), "hi") {
				t.Errorf("Wait() = %q, want the signal %q and the output", err, tt.wantSignal)
			}
			if got := string(r.Output()); got != "hi\n" {
				t.Errorf("Output() = %q, want %q", got, "hi\n")
			}
			if log.String() != "hi\n" {
				t.Errorf("log = %q, want %q", log.String(), "hi\n")
			}
			if r.ExitCode() != -1 {
				t.Errorf("ExitCode() = %d, want -1 (signalled)", r.ExitCode())
			}
			// Idempotent, and safe after exit.
			if err := r.Stop(tt.grace); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

func TestRunStopConcurrent(t *testing.T) {
	r, err := Start(context.Background(), []string{"sh", "-c", "echo hi; sleep 30"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, r, "hi")
	errs := make(chan error, 3)
	for range 3 {
		go func() { errs <- r.Stop(5 * time.Second) }()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	<-r.Done()
}

func TestRunAfterExit(t *testing.T) {
	r, err := Start(context.Background(), []string{"sh", "-c", "echo done"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatalf("Wait() = %v, want nil", err)
	}
	if err := r.Stop(time.Second); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
	if err := r.Wait(); err != nil {
		t.Errorf("Wait() after Stop after a clean exit = %v, want nil", err)
	}
	if string(r.Output()) != "done\n" || r.ExitCode() != 0 {
		t.Errorf("Output() = %q, ExitCode() = %d, want \"done\\n\", 0", r.Output(), r.ExitCode())
	}
}

func TestRunExitStatus(t *testing.T) {
	var log bytes.Buffer
	r, err := Start(context.Background(), []string{"sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo line $i; done; echo oops >&2; exit 3"}, &log)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Wait()
	if !errors.Is(err, ErrWorkloadFailed) || errors.Is(err, ErrStopped) {
		t.Fatalf("Wait() = %v, want ErrWorkloadFailed (not stopped)", err)
	}
	msg := err.Error()
	for _, want := range []string{"sh:", "exit status 3", "line 12", "oops"} {
		if !strings.Contains(msg, want) {
			t.Errorf("Wait() = %q, want it to contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "line 2\n") {
		t.Errorf("Wait() = %q, want only the last lines of output", msg)
	}
	if r.ExitCode() != 3 {
		t.Errorf("ExitCode() = %d, want 3", r.ExitCode())
	}
	if !strings.Contains(log.String(), "line 1\n") || !strings.Contains(log.String(), "oops\n") {
		t.Errorf("log = %q, want stdout and stderr", log.String())
	}
}

func TestRunStartErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "not found", args: []string{"flamediff-no-such-command", "x"}, want: `"flamediff-no-such-command": executable file not found`},
		{name: "empty", args: nil, want: "no command"},
		{name: "not executable", args: []string{"./run_linux_test.go"}, want: "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Start(context.Background(), tt.args, nil)
			if err == nil || r != nil {
				t.Fatalf("Start(%q) = %v, %v, want an error", tt.args, r, err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "start workload") {
				t.Errorf("Start(%q) error = %q, want it to start with \"start workload\" and contain %q", tt.args, err, tt.want)
			}
		})
	}
	if _, err := Start(context.Background(), []string{"flamediff-no-such-command"}, nil); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("Start(missing) error = %v, want exec.ErrNotFound", err)
	}
}

func TestRunContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r, err := Start(ctx, []string{"sh", "-c", "echo hi; sleep 30"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	waitOutput(t, r, "hi")
	cancel()
	select {
	case <-r.Done():
	case <-time.After(DefaultGrace + 2*time.Second):
		t.Fatal("the command outlived its context")
	}
	if err := r.Wait(); !errors.Is(err, ErrStopped) {
		t.Errorf("Wait() = %v, want ErrStopped", err)
	}
	assertGroupGone(t, r.PID())

	if _, err := Start(ctx, []string{"true"}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Start(cancelled ctx) error = %v, want context.Canceled", err)
	}
}

func TestRunOutputTail(t *testing.T) {
	// 3 MiB of output: the log gets it all, Output the last OutputTail bytes.
	var log countWriter
	r, err := Start(context.Background(), []string{"sh", "-c", "head -c 3145728 /dev/zero | tr '\\0' x; echo END"}, &log)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	out := r.Output()
	if len(out) != OutputTail || !bytes.HasSuffix(out, []byte("xxEND\n")) {
		t.Errorf("Output() has %d bytes ending %q, want %d ending in END", len(out), out[max(0, len(out)-10):], OutputTail)
	}
	if log.n != 3<<20+4 {
		t.Errorf("log got %d bytes, want %d", log.n, 3<<20+4)
	}
}

func TestRunFailingLog(t *testing.T) {
	r, err := Start(context.Background(), []string{"sh", "-c", "echo a; echo b"}, failWriter{})
	if err != nil {
		t.Fatal(err)
	}
	err = r.Wait()
	if err == nil || errors.Is(err, ErrWorkloadFailed) || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Wait() = %v, want the log's error", err)
	}
	if string(r.Output()) != "a\nb\n" {
		t.Errorf("Output() = %q, want everything despite the log", r.Output())
	}
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, errors.New("disk full") }

func TestRunLingeringChild(t *testing.T) {
	// The shell exits at once; its background child keeps stdout open.
	r, err := Start(context.Background(), []string{"sh", "-c", "echo a; sleep 30 & exit 0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	select {
	case <-r.Done():
	case <-time.After(outputDrain + 2*time.Second):
		t.Fatal("Done() not closed after the command exited")
	}
	if took := time.Since(start); took > outputDrain+time.Second {
		t.Errorf("Done() after %v, want about %v", took, outputDrain)
	}
	if err := r.Wait(); err != nil || string(r.Output()) != "a\n" {
		t.Errorf("Wait() = %v, Output() = %q, want nil, \"a\\n\"", err, r.Output())
	}
	live, _ := groupMembers(t, r.PID())
	if len(live) == 0 {
		t.Fatal("the background sleep is gone before Stop")
	}
	if err := r.Stop(time.Second); err != nil {
		t.Fatal(err)
	}
	assertGroupGone(t, r.PID())
}

// StartEnv adds its variables to this process's environment for the
// command, replacing one of the same name; Start passes none.
func TestStartEnv(t *testing.T) {
	t.Setenv("FLAMEDIFF_TEST_KEEP", "kept")
	t.Setenv("FLAMEDIFF_TEST_SET", "old")
	script := `printf '%s|%s|%s' "$FLAMEDIFF_TEST_KEEP" "$FLAMEDIFF_TEST_SET" "$LUA_PATH"`
	r, err := StartEnv(context.Background(), []string{"sh", "-c", script}, []string{"FLAMEDIFF_TEST_SET=new", "LUA_PATH=/s/?.lua;;"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := string(r.Output()), "kept|new|/s/?.lua;;"; got != want {
		t.Errorf("StartEnv output %q, want %q", got, want)
	}
	r, err = Start(context.Background(), []string{"sh", "-c", script}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	if got, want := string(r.Output()), "kept|old|"+os.Getenv("LUA_PATH"); got != want {
		t.Errorf("Start output %q, want %q", got, want)
	}
}
