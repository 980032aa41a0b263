//go:build linux

package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// platform returns nil: the lab runs on Linux.
func platform() error { return nil }

// ownGroup makes cmd start in a process group of its own, killed when
// this process dies; for a cmd made by exec.CommandContext, the whole
// group is killed when the context is done.
func ownGroup(cmd *exec.Cmd, withContext bool) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if withContext {
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	}
}

// killGroup sends SIGKILL to the process group pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }

// terminate sends SIGTERM to the process pid.
func terminate(pid int) { _ = syscall.Kill(pid, syscall.SIGTERM) }

// lockFile takes an exclusive flock on path, waiting until ctx is done.
func lockFile(ctx context.Context, path string) (func(), error) {
	fd, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %w", describePath(path, err, false))
	}
	for {
		err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { _ = syscall.Flock(int(fd.Fd()), syscall.LOCK_UN); fd.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			fd.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			fd.Close()
			return nil, fmt.Errorf("lock %s: %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
