package record

import (
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// sysRoot is where readHost finds the cpufreq files.
const sysRoot = "/sys"

// environment is what a run does and measures around the server besides
// sampling it: where the server and the client run (placement) and what
// the whole machine did in the window (host).
type environment struct {
	// serverCPUs and clientCPUs are the placement's CPUs; nil: not pinned.
	serverCPUs, clientCPUs []int
	// hostBefore and hostAfter are the machine at the window's bounds;
	// hostErr why one could not be read.
	hostBefore, hostAfter *hostSnapshot
	hostErr               error
}

// resolvePlacement resolves Config.Placement on this machine into r.env
// and run.json's placement.
func (r *recorder) resolvePlacement() error {
	r.env = &environment{}
	p, err := ParsePlacement(r.cfg.Placement)
	if err != nil {
		return fmt.Errorf("record: %w: Placement %w", ErrInvalidConfig, err)
	}
	r.meta.Placement = &fold.Placement{Asked: p.String()}
	if p.Mode == PlacementNone {
		return nil
	}
	allowed, err := allowedCPUs()
	if err == nil {
		r.env.serverCPUs, r.env.clientCPUs, err = p.Resolve(allowed)
	}
	if err != nil {
		return fmt.Errorf("record: %w", &FieldError{Field: FieldPlacement, Value: p.String(), Err: err})
	}
	if r.env.serverCPUs != nil {
		r.meta.Placement.ServerCPUs = FormatCPUList(r.env.serverCPUs)
	}
	if r.env.clientCPUs != nil {
		r.meta.Placement.ClientCPUs = FormatCPUList(r.env.clientCPUs)
	}
	return nil
}

// placeServer pins every thread of the server to the placement's server
// CPUs, and says so: the server stays pinned after the run.
func (r *recorder) placeServer() error {
	cpus := r.env.serverCPUs
	if cpus == nil {
		return nil
	}
	n, err := pinThreads(r.cfg.ProcRoot, r.pid, cpus)
	r.meta.Placement.PinnedServerThreads = n
	if err != nil {
		return r.fail("", fmt.Errorf("record: %w", &FieldError{Field: FieldPlacement, Value: r.meta.Placement.Asked,
			Err: fmt.Errorf("pinning the server (pid %d) to CPU %s: %w", r.pid, FormatCPUList(cpus), err)}))
	}
	r.progress(Status{Phase: PhasePlacement, Message: fmt.Sprintf(
		"pinned the %d threads of the server (pid %d) to CPU %s; they stay pinned after the run (taskset -a -p -c LIST %d changes it)",
		n, r.pid, FormatCPUList(cpus), r.pid)})
	return nil
}

// startClient calls start, which starts the workload, on the placement's
// client CPUs, so that the workload and every thread and process it
// starts run there from the beginning.
func (r *recorder) startClient(start func() error) error {
	if r.env.clientCPUs == nil {
		return start()
	}
	return startOn(r.env.clientCPUs, start)
}

// hostStart reads the machine at the window's start.
func (r *recorder) hostStart() {
	r.env.hostBefore, r.env.hostErr = readHost(r.cfg.ProcRoot, sysRoot)
}

// windowEnd reads the machine at the window's end and checks that the
// server's threads and the client's are where the placement put them;
// the threads that are not are named in run.json and a warning.
func (r *recorder) windowEnd(clientPID int) {
	if r.env.hostErr == nil {
		r.env.hostAfter, r.env.hostErr = readHost(r.cfg.ProcRoot, sysRoot)
	}
	pl := r.meta.Placement
	var mismatched []string
	if threads, err := readAffinities(r.cfg.ProcRoot, r.pid); err == nil {
		var m []string
		pl.Server, m = affinityFigures("server", threads, r.env.serverCPUs)
		mismatched = append(mismatched, m...)
	}
	if clientPID > 0 {
		if threads, err := readAffinities(r.cfg.ProcRoot, clientPID); err == nil {
			var m []string
			pl.Client, m = affinityFigures("client", threads, r.env.clientCPUs)
			mismatched = append(mismatched, m...)
		}
	}
	if len(mismatched) == 0 {
		return
	}
	pl.Mismatched = mismatched
	const most = 5
	list := strings.Join(mismatched[:min(len(mismatched), most)], "; ")
	if len(mismatched) > most {
		list += fmt.Sprintf("; and %d more (run.json placement.mismatched)", len(mismatched)-most)
	}
	w := fmt.Sprintf("placement %s did not hold: %d threads ran elsewhere at the end of the window: %s", pl.Asked, len(mismatched), list)
	r.meta.Warnings = append(r.meta.Warnings, w)
	r.progress(Status{Phase: PhaseWarning, Message: w})
}

// hostFigures fills run.json's host from the window's two reads, per
// operation of the run (so after the operations are known).
func (r *recorder) hostFigures() {
	if r.env.hostErr != nil {
		w := fmt.Sprintf("no host figures: %v", r.env.hostErr)
		r.meta.Warnings = append(r.meta.Warnings, w)
		r.progress(Status{Phase: PhaseWarning, Message: w})
		return
	}
	if r.env.hostBefore == nil || r.env.hostAfter == nil {
		return
	}
	r.meta.Host = hostWindow(r.env.hostBefore, r.env.hostAfter, r.meta.Operations)
}

// workloadPID returns the workload's pid, 0 without one.
func (r *recorder) workloadPID() int {
	if r.run == nil {
		return 0
	}
	return r.run.PID()
}
