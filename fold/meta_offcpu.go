package fold

import (
	"fmt"
	"strings"
)

// OffCPU is the off-CPU profile of a run (run.json "off_cpu"): the totals
// of offcpu.folded and offcpu-switches.folded over the window, and /proc's
// context switches over the same window to check them against.
type OffCPU struct {
	// Seconds is the time the target's threads spent off the CPU, summed
	// over threads: from each switch-out in the window to the switch-in
	// that followed, or to the window's end.
	Seconds float64 `json:"seconds"`
	// Voluntary and Involuntary are the switch-outs counted: the thread
	// blocked, or it was preempted while runnable.
	Voluntary   int64 `json:"voluntary"`
	Involuntary int64 `json:"involuntary"`
	// VoluntarySeconds and InvoluntarySeconds split Seconds.
	VoluntarySeconds   float64 `json:"voluntary_seconds"`
	InvoluntarySeconds float64 `json:"involuntary_seconds"`
	// ProcVoluntary and ProcInvoluntary are the process's
	// voluntary_ctxt_switches and nonvoluntary_ctxt_switches over the
	// window (/proc/PID/task/*/status), the truth Voluntary and
	// Involuntary are checked against (a warning beyond 3%).
	ProcVoluntary   int64 `json:"proc_voluntary"`
	ProcInvoluntary int64 `json:"proc_involuntary"`
	// ProcOuterVoluntary and ProcOuterInvoluntary are /proc's switches
	// from just before the sampler started to just after it stopped: the
	// program counts from its start to its stop, so its counts lie
	// between ProcVoluntary and these (absent in runs made before
	// December 2026, and when the process was gone after the stop).
	ProcOuterVoluntary   int64 `json:"proc_outer_voluntary,omitempty"`
	ProcOuterInvoluntary int64 `json:"proc_outer_involuntary,omitempty"`
	// MinBlockMicros is the shortest stretch counted (record
	// --off-cpu-min); 0: every one. With it, the switches counted are
	// fewer than /proc's.
	MinBlockMicros int64 `json:"min_block_us,omitempty"`
	// Dropped counts switches not counted (a BPF map was full, a stack
	// not stored); Short those shorter than MinBlockMicros.
	Dropped uint64 `json:"dropped,omitempty"`
	Short   uint64 `json:"short,omitempty"`
	// Threads splits the totals by thread name, most time first.
	Threads []OffCPUThread `json:"threads,omitempty"`
	// ExitedThreads counts the threads that left the CPU in the window
	// and had exited by its end, and ExitedVoluntary and
	// ExitedInvoluntary their switches (in Voluntary and Involuntary):
	// /proc keeps no count of an exited thread, so SwitchGap compares
	// the others' with /proc's.
	ExitedThreads     int   `json:"exited_threads,omitempty"`
	ExitedVoluntary   int64 `json:"exited_voluntary,omitempty"`
	ExitedInvoluntary int64 `json:"exited_involuntary,omitempty"`
}

// OffCPUThread is the off-CPU time and switches of the threads of one
// name.
type OffCPUThread struct {
	Name string `json:"name"`
	// Threads is how many threads of that name left the CPU.
	Threads     int     `json:"threads"`
	Seconds     float64 `json:"seconds"`
	Voluntary   int64   `json:"voluntary"`
	Involuntary int64   `json:"involuntary"`
	// WallMinusCPUSeconds is, when known, the threads' wall-clock time in
	// the window less their run time (schedstat): what Seconds should be
	// for threads that lived through the window.
	WallMinusCPUSeconds float64 `json:"wall_minus_cpu_seconds,omitempty"`
}

// OffCPUSlack is the difference in switches SwitchGap lets pass whatever
// the counts: the program counts from the sampler's start to its stop,
// and where /proc was not read around that (ProcOuterVoluntary), its
// figures are read just inside it, and a few threads may switch in
// between.
const OffCPUSlack = 5

// OffCPUGapPct is the largest difference, in percent of /proc's count,
// SwitchGap lets pass between the switches counted and /proc's.
const OffCPUGapPct = 3

// SwitchGap is the warning of an off-CPU profile whose switches (less
// those of threads that exited in the window, which /proc cannot count)
// differ from /proc's by more than OffCPUGapPct percent and more than
// OffCPUSlack switches, voluntary or involuntary; "" when they do not, or
// with a minimum stretch (MinBlockMicros), which leaves switches out on
// purpose. /proc's counts are a range: from the window inside the
// sampler's (ProcVoluntary) to the window around it (ProcOuterVoluntary),
// and a count in that range is right; the differences are taken to its
// nearer end. Without the outer window the range is the inner count. A
// loaded machine stretches the time between the sampler's start and stop
// and /proc's reads, in which a preempted thread switches as often as
// anywhere. record warns with it as it writes run.json, the bench report
// as it reads one.
func (t *OffCPU) SwitchGap() string {
	if t == nil || t.MinBlockMicros > 0 {
		return ""
	}
	var off []string
	for _, k := range []struct {
		kind         string
		got, in, out int64
	}{{"voluntary", t.Voluntary - t.ExitedVoluntary, t.ProcVoluntary, t.ProcOuterVoluntary},
		{"involuntary", t.Involuntary - t.ExitedInvoluntary, t.ProcInvoluntary, t.ProcOuterInvoluntary}} {
		lo, hi := k.in, max(k.in, k.out)
		var d int64
		switch {
		case k.got < lo:
			d = lo - k.got
		case k.got > hi:
			d = k.got - hi
		}
		if float64(d) > OffCPUSlack && float64(d) > OffCPUGapPct/100.0*float64(k.in) {
			want := fmt.Sprint(k.in)
			if hi > lo {
				want = fmt.Sprintf("%d to %d", lo, hi)
			}
			off = append(off, fmt.Sprintf("%s %d against /proc's %s", k.kind, k.got, want))
		}
	}
	if len(off) == 0 {
		return ""
	}
	exited := ""
	if t.ExitedThreads > 0 {
		exited = fmt.Sprintf(", leaving out the %d threads that exited in the window", t.ExitedThreads)
	}
	return "OFF-CPU SWITCHES DIFFER: the off-CPU profile counted " + strings.Join(off, ", ") + exited +
		" (more than 3%): threads blocked since before the window are not in it"
}
