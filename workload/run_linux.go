//go:build linux

package workload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

// groupSignal is a signal sent to a Run's process group.
type groupSignal = syscall.Signal

const (
	sigInterrupt = syscall.SIGINT
	sigKill      = syscall.SIGKILL
)

// Start starts args[0] (looked up in PATH) with arguments args[1:], in a
// process group of its own so that Stop reaches the processes it starts
// too. Standard input is /dev/null; standard output and error go, as one
// stream, to log (which may be nil; its write errors never block the
// command, Wait reports them) and into memory, of which Output keeps the
// last OutputTail bytes. Start does not wait for the command; when ctx is
// done before the command exits, the Run is stopped with DefaultGrace.
// A command that cannot be found or started is an error naming it.
func Start(ctx context.Context, args []string, log io.Writer) (*Run, error) {
	return StartEnv(ctx, args, nil, log)
}

// StartEnv is Start with env ("NAME=value") added to this process's
// environment for the command (a later entry replaces an earlier one of
// the same name, as os/exec does).
func StartEnv(ctx context.Context, args, env []string, log io.Writer) (*Run, error) {
	if len(args) == 0 || args[0] == "" {
		return nil, errors.New("start workload: no command")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start workload %s: %w", args[0], err)
	}
	path, err := exec.LookPath(args[0])
	if err != nil {
		return nil, fmt.Errorf("start workload: %w", err)
	}
	// Our own pipe rather than exec's copying, so that the command's exit
	// is known (Stop acts on it) even while children hold the pipe.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("start workload %s: %w", args[0], err)
	}
	cmd := exec.Command(path, args[1:]...)
	cmd.Args[0] = args[0]
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return nil, fmt.Errorf("start workload %s: %w", args[0], err)
	}
	out := &tailWriter{log: log, max: OutputTail}
	r := &Run{cmd: cmd, name: args[0], out: out, exited: make(chan struct{}), done: make(chan struct{})}
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		defer pr.Close()
		_, _ = io.Copy(out, pr) // out never fails; a read error ends the output
	}()
	go r.wait(pr, outDone)
	if ctx.Done() != nil {
		go func() {
			select {
			case <-ctx.Done():
				_ = r.Stop(DefaultGrace)
			case <-r.done:
			}
		}()
	}
	return r, nil
}

// signalGroup sends sig to the Run's process group; a group that no longer
// exists is not an error.
func (r *Run) signalGroup(sig groupSignal) error {
	err := syscall.Kill(-r.cmd.Process.Pid, sig)
	if err == nil || errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return fmt.Errorf("workload %s: signal process group %d: %w", r.name, r.cmd.Process.Pid, err)
}
