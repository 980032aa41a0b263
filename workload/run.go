package workload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"sync/atomic"
	"time"
)

// ErrWorkloadFailed is wrapped by Run.Wait's error when the command did not
// exit with status 0.
var ErrWorkloadFailed = errors.New("workload failed")

// ErrStopped is wrapped, with ErrWorkloadFailed, by Run.Wait's error when
// the command ended unsuccessfully after Stop (or the cancellation of
// Start's context), so callers can tell an interruption they asked for
// from a failure.
var ErrStopped = errors.New("stopped")

// DefaultGrace is how long a Run whose context is cancelled gets between
// SIGINT and SIGKILL.
const DefaultGrace = 5 * time.Second

// OutputTail is how much of the command's output a Run keeps in memory.
const OutputTail = 1 << 20

// tailLines is how many lines of output Wait's error quotes.
const tailLines = 10

// outputDrain is how long a Run keeps reading output after the command
// exited, when processes it left behind still hold its stdout.
const outputDrain = 2 * time.Second

// Run is a running workload command (see Start). Its methods are safe for
// concurrent use.
type Run struct {
	cmd    *exec.Cmd
	name   string
	out    *tailWriter
	exited chan struct{} // closed when the command has exited
	done   chan struct{} // closed when it has exited and its output is read
	err    error         // how the command ended; set before exited is closed

	stopped  atomic.Bool
	stopOnce sync.Once
	stopErr  error
}

// Done returns a channel that is closed when the command has exited and its
// output has been read: up to the end, or for at most 2 seconds when
// processes it started still hold its output open.
func (r *Run) Done() <-chan struct{} { return r.done }

// Wait blocks until the command exits. It returns nil when the command
// exited with status 0, and else an error wrapping ErrWorkloadFailed that
// gives the exit status (or signal) and the last lines of output; after
// Stop it wraps ErrStopped too. A command that succeeded but whose output
// could not be written to Start's log gives that write error.
func (r *Run) Wait() error {
	<-r.done
	var exitErr *exec.ExitError
	switch {
	case r.err == nil:
		if err := r.out.logError(); err != nil {
			return fmt.Errorf("workload %s: log: %w", r.name, err)
		}
		return nil
	case errors.As(r.err, &exitErr):
		tail := lastLines(r.out.bytes(), tailLines)
		if r.stopped.Load() {
			return fmt.Errorf("%s: %w (%w): %s; last output:\n%s", r.name, ErrWorkloadFailed, ErrStopped, exitErr.ProcessState, tail)
		}
		return fmt.Errorf("%s: %w: %s; last output:\n%s", r.name, ErrWorkloadFailed, exitErr.ProcessState, tail)
	default:
		return fmt.Errorf("%s: %w: %w", r.name, ErrWorkloadFailed, r.err)
	}
}

// ExitCode returns the command's exit status once it has exited, and -1
// while it runs or when a signal ended it.
func (r *Run) ExitCode() int {
	select {
	case <-r.exited:
		return r.cmd.ProcessState.ExitCode()
	default:
		return -1
	}
}

// Stop ends the command and everything it started: SIGINT to its process
// group, then SIGKILL to the group once grace has passed. It blocks until
// the command has exited, then sends SIGKILL to whatever is left of the
// group. Stop is idempotent (later calls wait for the first) and safe
// after the command exited. It does not report how the command ended: see
// Wait.
func (r *Run) Stop(grace time.Duration) error {
	r.stopOnce.Do(func() { r.stopErr = r.stop(grace) })
	if r.stopErr != nil {
		return r.stopErr
	}
	<-r.done
	return nil
}

func (r *Run) stop(grace time.Duration) error {
	select {
	case <-r.exited:
		return r.signalGroup(sigKill)
	default:
	}
	r.stopped.Store(true)
	if err := r.signalGroup(sigInterrupt); err != nil {
		return err
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-r.exited:
	case <-timer.C:
	}
	// The command, if it ignored SIGINT, and its children that ignored it
	// or outlived the command (background jobs of a shell ignore SIGINT).
	return r.signalGroup(sigKill)
}

// Output returns the last OutputTail bytes the command printed (stdout and
// stderr interleaved as written). It can be called while the command runs.
func (r *Run) Output() []byte { return r.out.bytes() }

// PID returns the process id of the command, which is also the id of its
// process group.
func (r *Run) PID() int { return r.cmd.Process.Pid }

// tailWriter copies what it is given to a log and keeps the last max bytes.
// Errors of the log are remembered, never returned, so that the command
// is never blocked or killed by a failing log.
type tailWriter struct {
	mu     sync.Mutex
	log    io.Writer
	logErr error
	buf    []byte
	max    int
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.log != nil && w.logErr == nil {
		if _, err := w.log.Write(p); err != nil {
			w.logErr = err
		}
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.max {
		n := copy(w.buf, w.buf[len(w.buf)-w.max:])
		w.buf = w.buf[:n]
	}
	return len(p), nil
}

func (w *tailWriter) bytes() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.buf
	if len(b) > w.max {
		b = b[len(b)-w.max:]
	}
	return bytes.Clone(b)
}

func (w *tailWriter) logError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.logErr
}

// lastLines returns the last n lines of out, each indented, at most 4 KiB.
func lastLines(out []byte, n int) string {
	out = bytes.TrimRight(out, "\n")
	if len(out) == 0 {
		return "  (no output)"
	}
	if len(out) > 4096 {
		out = out[len(out)-4096:]
	}
	lines := bytes.Split(out, []byte{'\n'})
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("  ")
		b.Write(bytes.TrimRight(l, "\r"))
	}
	return b.String()
}

// wait reaps the command, then reads its output until the end, or for
// outputDrain when processes it left behind hold the pipe open.
func (r *Run) wait(pipe io.Closer, outDone <-chan struct{}) {
	r.err = r.cmd.Wait()
	close(r.exited)
	timer := time.NewTimer(outputDrain)
	defer timer.Stop()
	select {
	case <-outDone:
	case <-timer.C:
		_ = pipe.Close() // unblocks the copy
		<-outDone
	}
	close(r.done)
}
