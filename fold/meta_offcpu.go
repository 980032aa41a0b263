package fold

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
