package fold

// Placement says where the server's threads and the workload client ran
// (run.json "placement"): what was asked and what was found at the end of
// the window. On a VM, waking a thread on another CPU costs more than many
// queries do, so a figure means little without it (docs/recording.md).
type Placement struct {
	// Asked is the placement as given: "none" (left to the scheduler),
	// "same" (server and client on one CPU), "separate" (on two), or a
	// list ("server=1,client=0").
	Asked string `json:"asked"`
	// ServerCPUs and ClientCPUs are the CPUs asked for, as a CPU list
	// ("1", "0-3,6"); empty when that side is not pinned.
	ServerCPUs string `json:"server_cpus,omitempty"`
	ClientCPUs string `json:"client_cpus,omitempty"`
	// PinnedServerThreads is how many of the server's threads record set
	// the affinity of, before the workload started; threads created later
	// inherit it. The server stays pinned after the run.
	PinnedServerThreads int `json:"pinned_server_threads,omitempty"`
	// Server and Client are the affinities found at the end of the
	// window: each distinct Cpus_allowed_list of the process's threads
	// and how many threads had it.
	Server []Affinity `json:"server,omitempty"`
	Client []Affinity `json:"client,omitempty"`
	// Mismatched names the threads whose affinity at the end of the window
	// was not what was asked ("server 1234 one_connection: 0-1"); each is
	// also a warning.
	Mismatched []string `json:"mismatched,omitempty"`
}

// Affinity is one CPU list and the threads that had it.
type Affinity struct {
	CPUs    string `json:"cpus"`
	Threads int    `json:"threads"`
}

// Host is the whole machine over the window (run.json "host"), from
// /proc/stat and cpufreq: what every process did, the client, flamediff
// and the sampler included, as vmstat-based reports measure it. It is not
// the server's own figures (cpu_seconds, voluntary_ctxt_switches).
type Host struct {
	// CPUs is the number of CPUs /proc/stat lists.
	CPUs int `json:"cpus"`
	// Seconds is the window the figures cover (between the two reads).
	Seconds float64 `json:"seconds"`
	// CPUSeconds is busy CPU time of all CPUs: user, nice, system, irq and
	// softirq (guest time is inside user). UserSeconds, SystemSeconds
	// (system, irq and softirq), IdleSeconds (idle and iowait) and
	// StealSeconds split the window's CPU time.
	CPUSeconds    float64 `json:"cpu_seconds"`
	UserSeconds   float64 `json:"user_seconds"`
	SystemSeconds float64 `json:"system_seconds"`
	IdleSeconds   float64 `json:"idle_seconds"`
	StealSeconds  float64 `json:"steal_seconds"`
	// StealShare is StealSeconds over all the CPU time of the window
	// (busy, idle and steal): the share the hypervisor gave to others.
	StealShare float64 `json:"steal_share"`
	// ContextSwitches is the machine's context switches (ctxt).
	ContextSwitches int64 `json:"ctxt"`
	// CPUMicrosPerOp and CtxSwitchesPerOp are CPUSeconds and
	// ContextSwitches per operation of the run (Meta.Operations); zero
	// without operations. They include the client's work.
	CPUMicrosPerOp   float64 `json:"cpu_us_per_op,omitempty"`
	CtxSwitchesPerOp float64 `json:"ctxt_per_op,omitempty"`
	// CPUFreq is the CPUs' frequency at the start and end of the window.
	CPUFreq *CPUFreq `json:"cpu_freq,omitempty"`
}

// CPUFreq is the CPUs' current frequency (cpufreq scaling_cur_freq) at
// the window's start and end, or why it is not known.
type CPUFreq struct {
	// Exposed is false when the machine has no cpufreq files (many VMs);
	// the other fields are then empty and Note says so.
	Exposed bool `json:"exposed"`
	// StartKHz and EndKHz are per CPU, by CPU number.
	StartKHz []int64 `json:"start_khz,omitempty"`
	EndKHz   []int64 `json:"end_khz,omitempty"`
	// Changed says that a CPU's frequency differed between start and end.
	Changed bool   `json:"changed,omitempty"`
	Note    string `json:"note,omitempty"`
}
