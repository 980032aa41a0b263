package fold

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// MetaFile and StacksFile are the names of the files of a run directory.
const (
	MetaFile   = "run.json"
	StacksFile = "stacks.folded"
)

// Meta is the metadata of one captured run, stored as run.json beside
// stacks.folded in a run directory. Every figure covers the sampling window
// only. Zero means "not measured" for every numeric field; HasPerOp says
// whether the per-operation figures can be computed.
//
// The JSON field names are part of flamediff's interface (see README) and
// stay stable.
type Meta struct {
	// Format is the run.json format version, currently 1.
	Format int `json:"format"`
	// Label names the run in reports, usually the server version ("10.11").
	Label string `json:"label"`
	// ServerVersion is what the server reported (SELECT VERSION()).
	ServerVersion string `json:"server_version,omitempty"`
	// Workload is the benchmark that drove the server (command line or name).
	Workload string `json:"workload,omitempty"`
	// Sampler is "perf" or "bpf"; FrequencyHz its sampling frequency.
	Sampler     string  `json:"sampler,omitempty"`
	FrequencyHz float64 `json:"frequency_hz,omitempty"`
	// WindowSeconds is the length of the sampling window.
	WindowSeconds float64 `json:"window_seconds,omitempty"`
	// CPUSecondsTotal is the server process's CPU time (all threads, user
	// plus system) over the window, from /proc; CPUUserSeconds and
	// CPUSystemSeconds split it when known.
	CPUSecondsTotal  float64 `json:"cpu_seconds,omitempty"`
	CPUUserSeconds   float64 `json:"cpu_user_seconds,omitempty"`
	CPUSystemSeconds float64 `json:"cpu_system_seconds,omitempty"`
	// Operations is the number of operations (queries or transactions,
	// see OpsCounter) the server completed in the window.
	Operations int64 `json:"operations,omitempty"`
	// OpsCounter says what Operations counts ("Questions", "Com_update", "sysbench transactions").
	OpsCounter string `json:"ops_counter,omitempty"`
	// QPS is Operations / WindowSeconds.
	QPS float64 `json:"qps,omitempty"`
	// Context switches of the server process over the window.
	VoluntaryCtxSwitches   int64 `json:"voluntary_ctxt_switches,omitempty"`
	InvoluntaryCtxSwitches int64 `json:"involuntary_ctxt_switches,omitempty"`
	// Storage I/O of the server process over the window (/proc/PID/io).
	ReadOps  int64   `json:"read_ops,omitempty"`
	WriteOps int64   `json:"write_ops,omitempty"`
	ReadKB   float64 `json:"read_kb,omitempty"`
	WriteKB  float64 `json:"write_kb,omitempty"`
	// Samples is the number of samples taken in the window.
	Samples int64 `json:"samples,omitempty"`
	// Unit says what the counts of stacks.folded are: "samples" (the
	// default) or "period" (sums of sample periods, as stackcollapse-perf.pl
	// writes them; nanoseconds for cpu-clock). Event is the perf event.
	Unit  string `json:"unit,omitempty"`
	Event string `json:"event,omitempty"`
	// SampledCPUSeconds is samples / frequency: the CPU time the sampler
	// saw, to compare with the accounted CPUSeconds (lost samples show as
	// a gap). LostSamples is what the sampler reported lost.
	SampledCPUSeconds float64 `json:"sampled_cpu_seconds,omitempty"`
	LostSamples       int64   `json:"lost_samples,omitempty"`
	// SamplerHealth holds the BPF sampler's health counters over the
	// window (samples, map_full, stack_map_full, stack_nomem, collisions,
	// truncated, user_stack_errors, kernel_stack_errors, and
	// user_stack_errno_N / kernel_stack_errno_N by errno); absent for perf.
	SamplerHealth map[string]uint64 `json:"sampler_health,omitempty"`
	// Warnings are what the sampler warned about (lost samples, a process
	// that exited or exec'd, deleted files), as record printed them.
	Warnings []string `json:"warnings,omitempty"`
	// CallGraph is how stacks were walked ("fp", "dwarf").
	CallGraph string `json:"call_graph,omitempty"`
	// SamplerScope is "cpu" (per-CPU events, the target's samples kept)
	// or "thread" (events on the target's threads).
	SamplerScope string `json:"sampler_scope,omitempty"`
	// SamplerReason says why this sampler ran (with --sampler auto).
	SamplerReason string `json:"sampler_reason,omitempty"`
	// PID of the sampled process; StartTime and EndTime bound the window
	// (RFC 3339).
	PID       int    `json:"pid,omitempty"`
	StartTime string `json:"start_time,omitempty"`
	EndTime   string `json:"end_time,omitempty"`
	// Figures from the workload's own report (sysbench), for the whole run,
	// not only the window.
	WorkloadQPS float64 `json:"workload_qps,omitempty"`
	// WorkloadWindowQPS is the workload's own QPS over the sampling window
	// (sysbench --report-interval reports wholly inside it), to check the
	// server's operation count against.
	WorkloadWindowQPS    float64 `json:"workload_window_qps,omitempty"`
	WorkloadTPS          float64 `json:"workload_tps,omitempty"`
	WorkloadLatencyAvgMs float64 `json:"workload_latency_avg_ms,omitempty"`
	WorkloadLatencyP95Ms float64 `json:"workload_latency_p95_ms,omitempty"`
	WorkloadLatencyMaxMs float64 `json:"workload_latency_max_ms,omitempty"`
	WorkloadExitCode     *int    `json:"workload_exit_code,omitempty"`
	// Complete is false when the capture was cut short; Incomplete says why.
	Complete   *bool  `json:"complete,omitempty"`
	Incomplete string `json:"incomplete_reason,omitempty"`
	// Extra holds fields this version does not know, kept on rewrite.
	Extra map[string]json.RawMessage `json:"-"`
}

// CPUSeconds returns the process CPU seconds of the window: CPUSecondsTotal
// when set, else user plus system.
func (m *Meta) CPUSeconds() float64 {
	if m.CPUSecondsTotal > 0 {
		return m.CPUSecondsTotal
	}
	return m.CPUUserSeconds + m.CPUSystemSeconds
}

// HasPerOp reports whether CPU per operation can be computed.
func (m *Meta) HasPerOp() bool {
	return m != nil && m.Operations > 0 && m.CPUSeconds() > 0
}

// CPUMicrosPerOp returns CPU microseconds per operation, or 0 without the figures.
func (m *Meta) CPUMicrosPerOp() float64 {
	if !m.HasPerOp() {
		return 0
	}
	return m.CPUSeconds() * 1e6 / float64(m.Operations)
}

// CtxSwitchesPerOp returns context switches (voluntary and involuntary) per operation.
func (m *Meta) CtxSwitchesPerOp() float64 {
	if m == nil || m.Operations == 0 {
		return 0
	}
	return float64(m.VoluntaryCtxSwitches+m.InvoluntaryCtxSwitches) / float64(m.Operations)
}

// ErrBadMeta is wrapped by ParseMeta's errors.
var ErrBadMeta = errors.New("bad run metadata")

// ParseMeta reads run.json. Unknown fields are kept in Extra.
func ParseMeta(r io.Reader) (*Meta, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadMeta, err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadMeta, err)
	}
	for _, k := range metaKeys {
		delete(all, k)
	}
	if len(all) > 0 {
		m.Extra = all
	}
	switch m.Unit {
	case "", UnitSamples, UnitPeriod:
	default:
		return nil, fmt.Errorf("%w: unit %q: want %q or %q", ErrBadMeta, m.Unit, UnitSamples, UnitPeriod)
	}
	if m.Format > 1 {
		return nil, fmt.Errorf("%w: format %d is newer than this flamediff understands (1)", ErrBadMeta, m.Format)
	}
	switch {
	case m.Operations < 0:
		return nil, fmt.Errorf("%w: operations is negative (%d)", ErrBadMeta, m.Operations)
	case m.CPUSecondsTotal < 0 || m.CPUUserSeconds < 0 || m.CPUSystemSeconds < 0:
		return nil, fmt.Errorf("%w: cpu seconds are negative", ErrBadMeta)
	case m.WindowSeconds < 0:
		return nil, fmt.Errorf("%w: window_seconds is negative", ErrBadMeta)
	}
	return &m, nil
}

// metaKeys are the JSON names of Meta's fields, from their tags.
var metaKeys = func() []string {
	t := reflect.TypeFor[Meta]()
	var keys []string
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}()

// WriteMeta writes m as indented JSON, with Extra fields merged back in.
func WriteMeta(w io.Writer, m *Meta) error {
	mm := *m
	if mm.Format == 0 {
		mm.Format = 1
	}
	data, err := json.Marshal(mm)
	if err != nil {
		return err
	}
	if len(m.Extra) > 0 {
		var all map[string]json.RawMessage
		if err := json.Unmarshal(data, &all); err != nil {
			return err
		}
		for k, v := range m.Extra {
			if _, ok := all[k]; !ok {
				all[k] = v
			}
		}
		if data, err = json.Marshal(all); err != nil {
			return err
		}
	}
	// Sort the keys and indent; json.Number keeps integers beyond 2^53 exact.
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return err
	}
	data, err = json.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
