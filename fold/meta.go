package fold

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MetaFile and StacksFile are the names of the files of a run directory.
const (
	MetaFile   = "run.json"
	StacksFile = "stacks.folded"
	// OffCPUFile holds the off-CPU profile's stacks weighted by
	// microseconds off the CPU, OffCPUSwitchesFile the same stacks
	// weighted by switches; each stack's leaf is OffCPUVoluntary or
	// OffCPUInvoluntary.
	OffCPUFile         = "offcpu.folded"
	OffCPUSwitchesFile = "offcpu-switches.folded"
	// The leaf frames of off-CPU stacks: the thread blocked (a voluntary
	// switch), or it was preempted while runnable (an involuntary one).
	OffCPUVoluntary   = "[voluntary]"
	OffCPUInvoluntary = "[involuntary]"
)

// Meta is the metadata of one captured run, stored as run.json beside
// stacks.folded in a run directory. Every figure covers the sampling window
// only. Zero means "not measured" for every numeric field; HasPerOp says
// whether the per-operation figures can be computed.
//
// The JSON field names are part of flamediff's interface (docs/run-json.md) and
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
	// Sampler is "perf" or "bpf", or "none" for a window measured without
	// a sampler (no stacks); FrequencyHz its sampling frequency.
	Sampler string `json:"sampler,omitempty"`
	// Window says which kind of window the figures cover: WindowUnprofiled
	// (no sampler ran: throughput and per-op figures as the server runs
	// alone) or WindowProfiled (taken while sampling, which changes them);
	// "" in run directories written before it was recorded.
	Window      string  `json:"window,omitempty"`
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
	// Context switches of the server process over the window, thread by
	// thread (/proc/PID/task/TID/status): of the threads alive at its end.
	VoluntaryCtxSwitches   int64 `json:"voluntary_ctxt_switches,omitempty"`
	InvoluntaryCtxSwitches int64 `json:"involuntary_ctxt_switches,omitempty"`
	// ExitedThreads counts the server's threads that exited in the window:
	// their switches in it are not in the two counts above (the kernel
	// keeps none for an exited thread).
	ExitedThreads int `json:"exited_threads,omitempty"`
	// Storage I/O of the server process over the window (/proc/PID/io).
	ReadOps  int64   `json:"read_ops,omitempty"`
	WriteOps int64   `json:"write_ops,omitempty"`
	ReadKB   float64 `json:"read_kb,omitempty"`
	WriteKB  float64 `json:"write_kb,omitempty"`
	// Placement says where the server and the workload client ran: asked
	// and found (record --placement); nil when not recorded.
	Placement *Placement `json:"placement,omitempty"`
	// Host is the whole machine over the window (/proc/stat, cpufreq),
	// client included; nil when not measured.
	Host *Host `json:"host,omitempty"`
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
	// CallGraphStackBytes is, with CallGraph "dwarf", the bytes of user
	// stack copied per sample (a stack deeper than that is cut before its
	// root).
	CallGraphStackBytes int `json:"call_graph_stack_bytes,omitempty"`
	// StackCompleteness is the share (0 to 1) of the window's samples
	// whose stack reaches a thread root (the default thread roots of
	// package symbolmap), as record measured it; nil when not measured.
	StackCompleteness *float64 `json:"stack_completeness,omitempty"`
	// Unwind says how the stacks were unwound, per object; nil when not
	// recorded.
	Unwind *Unwind `json:"unwind,omitempty"`
	// SwitchFix says that the BPF sampler corrected what its cpu-clock
	// events miss (record --switch-fix, on by default; docs/fidelity.md).
	SwitchFix bool `json:"switch_fix,omitempty"`
	// Fidelity compares, per thread name, the CPU the samples stand for
	// with the run time the scheduler accounted to the threads of that
	// name over the window (schedstat); nil when not measured.
	Fidelity []ThreadFidelity `json:"fidelity,omitempty"`
	// OffCPU holds the totals of the off-CPU profile (record --off-cpu):
	// nil when none was recorded.
	OffCPU *OffCPU `json:"off_cpu,omitempty"`
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
	// WorkloadReport names the format of the workload's own report when
	// it printed one flamediff reads: "sysbench" or "super-smack".
	WorkloadReport string `json:"workload_report,omitempty"`
	// Figures from the workload's own report (sysbench, super-smack), for
	// the whole run, not only the window.
	WorkloadQPS float64 `json:"workload_qps,omitempty"`
	// WorkloadWindowQPS is the workload's own QPS over the sampling window
	// (sysbench --report-interval reports overlapping it, those at its
	// edges for the part inside it), to check the server's operation count
	// against.
	WorkloadWindowQPS float64 `json:"workload_window_qps,omitempty"`
	// WorkloadIntervalQPS are the QPS of the workload's interim reports
	// (sysbench --report-interval=1) wholly inside the window, in order:
	// the within-run spread of the throughput.
	WorkloadIntervalQPS  []float64 `json:"workload_interval_qps,omitempty"`
	WorkloadTPS          float64   `json:"workload_tps,omitempty"`
	WorkloadLatencyAvgMs float64   `json:"workload_latency_avg_ms,omitempty"`
	WorkloadLatencyP95Ms float64   `json:"workload_latency_p95_ms,omitempty"`
	WorkloadLatencyMaxMs float64   `json:"workload_latency_max_ms,omitempty"`
	WorkloadExitCode     *int      `json:"workload_exit_code,omitempty"`
	// Complete is false when the capture was cut short; Incomplete says why.
	Complete   *bool  `json:"complete,omitempty"`
	Incomplete string `json:"incomplete_reason,omitempty"`
	// Extra holds fields this version does not know, kept on rewrite.
	Extra map[string]json.RawMessage `json:"-"`
}

// The kinds of window (Meta.Window).
const (
	WindowUnprofiled = "unprofiled"
	WindowProfiled   = "profiled"
)

// CPUSeconds returns the process CPU seconds of the window: CPUSecondsTotal
// when set, else user plus system.
func (m *Meta) CPUSeconds() float64 {
	if m.CPUSecondsTotal > 0 {
		return m.CPUSecondsTotal
	}
	return m.CPUUserSeconds + m.CPUSystemSeconds
}

// ProfilerChargedSeconds is the off-CPU program's own run time that the
// scheduler charged to the process's threads (SamplerHealth's
// offcpu_charged_ns), which the switch fix keeps out of the samples on
// purpose (docs/fidelity.md); 0 without it.
func (m *Meta) ProfilerChargedSeconds() float64 {
	return float64(m.SamplerHealth["offcpu_charged_ns"]) / 1e9
}

// SampledPct is the CPU the samples stand for (SampledCPUSeconds) in
// percent of the CPU the process was accounted less the profiler's time
// charged to it (ProfilerChargedSeconds); 0 when either is unknown.
func (m *Meta) SampledPct() float64 {
	cpu := m.CPUSeconds() - m.ProfilerChargedSeconds()
	if m.SampledCPUSeconds <= 0 || cpu <= 0 {
		return 0
	}
	return 100 * m.SampledCPUSeconds / cpu
}

// SwitchesPerCPUSecond is the process's context switches (voluntary and
// involuntary) per second of its CPU time over the window: how short its
// threads' runs between switches were. 0 when either is unknown.
func (m *Meta) SwitchesPerCPUSecond() float64 {
	cpu := m.CPUSeconds()
	n := m.VoluntaryCtxSwitches + m.InvoluntaryCtxSwitches
	if cpu <= 0 || n <= 0 {
		return 0
	}
	return float64(n) / cpu
}

// Uncorrected says why the run's samples were not corrected at context
// switches ("the perf sampler", "the BPF sampler without the switch fix",
// "per-CPU events"), or "" when they were (the BPF sampler's switch fix on
// per-thread events, docs/fidelity.md) or when the run took no samples.
func (m *Meta) Uncorrected() string {
	switch {
	case m.Samples <= 0 || m.Sampler == "" || m.Sampler == "none":
		return ""
	case m.Sampler == "perf":
		return "the perf sampler"
	case m.SamplerScope == "cpu":
		return "per-CPU events"
	case !m.SwitchFix:
		return "the " + m.Sampler + " sampler without the switch fix"
	}
	return ""
}

// SwitchCorrected reports whether the run's samples were corrected at
// context switches: the BPF sampler's switch fix on per-thread events
// (docs/fidelity.md), with samples taken. Such a run's shares are still
// off by a little per context switch (diff.CorrectedPointsPerKSwitch).
func (m *Meta) SwitchCorrected() bool {
	return m.Samples > 0 && m.Sampler == "bpf" && m.SamplerScope != "cpu" && m.SwitchFix
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

// MetaError is a mistake in run.json, with its place. It wraps ErrBadMeta.
type MetaError struct {
	Line, Column int    // 1-based place (columns count characters); 0 when unknown
	Key          string // the field the mistake is in ("sampler_health.samples"), if any
	Msg          string // what is wrong: what was expected and what was found
}

// Error is "line N, column M: key: msg", without the parts that are unknown.
func (e *MetaError) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Column)
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

func (e *MetaError) Unwrap() error { return ErrBadMeta }

// metaErrorAt returns a MetaError placed at byte offset off of data.
func metaErrorAt(data []byte, off int, key, msg string) *MetaError {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line := 1 + bytes.Count(before, []byte{'\n'})
	col := 1 + utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:])
	return &MetaError{Line: line, Column: col, Key: key, Msg: msg}
}

// ParseMeta reads run.json. Unknown fields are kept in Extra. Its errors
// are *MetaError values (wrapping ErrBadMeta) that name the line and column
// and the field, say what was expected and what was found
// ("line 4, column 18: cpu_seconds: want a number, found \"3.88\""), or
// errors of r.
func ParseMeta(r io.Reader) (*Meta, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var syntax json.RawMessage
	if err := json.Unmarshal(data, &syntax); err != nil {
		var se *json.SyntaxError
		if !errors.As(err, &se) {
			return nil, fmt.Errorf("%w: %w", ErrBadMeta, err)
		}
		// Offset is past the offending byte, or the length at the end.
		if se.Offset >= int64(len(data)) && strings.Contains(se.Error(), "end of JSON input") {
			return nil, metaErrorAt(data, len(data), "", "the JSON ends early: a value, a closing } or ] is missing")
		}
		return nil, metaErrorAt(data, int(se.Offset)-1, "", se.Error())
	}
	// The fields, where they are, each checked against its Go type.
	pos := make(map[string]int) // field name -> offset of its value
	if start := skipJSONSpace(data, 0); data[start] != '{' {
		if string(syntax) != "null" { // null is no metadata
			return nil, metaErrorAt(data, start, "", "want an object ({\"label\": ...}), found "+describeJSON(rawAt(data, start)))
		}
	} else if err := walkObject(data, start, func(key string, off int, raw json.RawMessage) *MetaError {
		f, ok := metaFields[key]
		if !ok {
			// encoding/json matches names without regard to case.
			for name, t := range metaFields {
				if strings.EqualFold(name, key) {
					key, f, ok = name, t, true
				}
			}
		}
		if !ok {
			return nil // kept in Extra
		}
		pos[key] = off
		return checkJSON(data, off, raw, f, key)
	}); err != nil {
		return nil, err
	}
	var m Meta
	if err := json.Unmarshal(data, &m); err != nil {
		// checkJSON took every mistake encoding/json finds; in case not:
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, metaErrorAt(data, int(te.Offset), te.Field, "want "+wantJSON(te.Type)+", found "+te.Value)
		}
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
	at := func(key, msg string) *MetaError {
		if off, ok := pos[key]; ok {
			return metaErrorAt(data, off, key, msg)
		}
		return &MetaError{Key: key, Msg: msg}
	}
	switch m.Unit {
	case "", UnitSamples, UnitPeriod:
	default:
		return nil, at("unit", fmt.Sprintf("want %q or %q, found %q", UnitSamples, UnitPeriod, m.Unit))
	}
	if m.Format > 1 {
		return nil, at("format", fmt.Sprintf("%d is newer than this flamediff understands (1)", m.Format))
	}
	float := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, f := range []struct {
		key      string
		negative bool
		v        string
	}{
		{"operations", m.Operations < 0, strconv.FormatInt(m.Operations, 10)},
		{"cpu_seconds", m.CPUSecondsTotal < 0, float(m.CPUSecondsTotal)},
		{"cpu_user_seconds", m.CPUUserSeconds < 0, float(m.CPUUserSeconds)},
		{"cpu_system_seconds", m.CPUSystemSeconds < 0, float(m.CPUSystemSeconds)},
		{"window_seconds", m.WindowSeconds < 0, float(m.WindowSeconds)},
	} {
		if f.negative {
			return nil, at(f.key, "want 0 or more, found "+f.v)
		}
	}
	return &m, nil
}

// metaFields are Meta's fields by JSON name, with their types.
var metaFields = func() map[string]reflect.Type {
	t := reflect.TypeFor[Meta]()
	fields := make(map[string]reflect.Type)
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			fields[name] = t.Field(i).Type
		}
	}
	return fields
}()

// skipJSONSpace returns the offset of the first byte at or after off that
// is not JSON white space, ':' or ',' (the bytes between tokens).
func skipJSONSpace(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ':', ',':
			off++
		default:
			return off
		}
	}
	return off
}

// rawAt returns the JSON value that starts at off.
func rawAt(data []byte, off int) json.RawMessage {
	var raw json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(data[off:])).Decode(&raw); err != nil {
		return nil
	}
	return raw
}

// walkObject calls f with each key of the (valid) JSON object at offset
// off, the offset of its value and the value.
func walkObject(data []byte, off int, f func(key string, off int, raw json.RawMessage) *MetaError) *MetaError {
	dec := json.NewDecoder(bytes.NewReader(data[off:]))
	if _, err := dec.Token(); err != nil { // {
		return metaErrorAt(data, off, "", err.Error())
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return metaErrorAt(data, off+int(dec.InputOffset()), "", err.Error())
		}
		key, _ := tok.(string)
		voff := skipJSONSpace(data, off+int(dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return metaErrorAt(data, voff, key, err.Error())
		}
		if err := f(key, voff, raw); err != nil {
			return err
		}
	}
	return nil
}

// walkArray calls f with the offset and value of each element of the
// (valid) JSON array at offset off.
func walkArray(data []byte, off int, f func(i, off int, raw json.RawMessage) *MetaError) *MetaError {
	dec := json.NewDecoder(bytes.NewReader(data[off:]))
	if _, err := dec.Token(); err != nil { // [
		return metaErrorAt(data, off, "", err.Error())
	}
	for i := 0; dec.More(); i++ {
		voff := skipJSONSpace(data, off+int(dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return metaErrorAt(data, voff, "", err.Error())
		}
		if err := f(i, voff, raw); err != nil {
			return err
		}
	}
	return nil
}

// checkJSON checks that raw, the value at offset off, fits a field of
// type t as encoding/json would fill it (null fits every type).
func checkJSON(data []byte, off int, raw json.RawMessage, t reflect.Type, key string) *MetaError {
	if len(raw) == 0 || raw[0] == 'n' {
		return nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	bad := func(want string) *MetaError {
		return metaErrorAt(data, off, key, "want "+want+", found "+describeJSON(raw))
	}
	isNumber := raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9'
	switch t.Kind() {
	case reflect.String:
		if raw[0] != '"' {
			return bad(wantJSON(t))
		}
	case reflect.Bool:
		if raw[0] != 't' && raw[0] != 'f' {
			return bad(wantJSON(t))
		}
	case reflect.Float64:
		if !isNumber {
			return bad(wantJSON(t))
		}
		if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
			return bad("a number of at most 1.8e308")
		}
	case reflect.Int, reflect.Int64:
		if !isNumber || bytes.ContainsAny(raw, ".eE") {
			return bad(wantJSON(t))
		}
		if _, err := strconv.ParseInt(string(raw), 10, 64); err != nil {
			if raw[0] == '-' {
				return bad("a whole number of at least -9223372036854775808")
			}
			return bad("a whole number of at most 9223372036854775807")
		}
	case reflect.Uint64:
		if !isNumber || bytes.ContainsAny(raw, ".eE") || raw[0] == '-' {
			return bad(wantJSON(t))
		}
		if _, err := strconv.ParseUint(string(raw), 10, 64); err != nil {
			return bad("a whole number of at most 18446744073709551615")
		}
	case reflect.Map:
		if raw[0] != '{' {
			return bad(wantJSON(t))
		}
		return walkObject(data, off, func(k string, off int, raw json.RawMessage) *MetaError {
			return checkJSON(data, off, raw, t.Elem(), key+"."+k)
		})
	case reflect.Slice:
		if raw[0] != '[' {
			return bad(wantJSON(t))
		}
		return walkArray(data, off, func(i, off int, raw json.RawMessage) *MetaError {
			return checkJSON(data, off, raw, t.Elem(), fmt.Sprintf("%s[%d]", key, i))
		})
	}
	return nil
}

// wantJSON says in words what JSON value fills a field of type t.
func wantJSON(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number of 0 or more"
	case reflect.Map:
		return "an object of " + plural(wantJSON(t.Elem()))
	case reflect.Slice, reflect.Array:
		return "an array of " + plural(wantJSON(t.Elem()))
	}
	return "a value of another kind"
}

// plural turns "a whole number of 0 or more" into "whole numbers of 0 or more".
func plural(s string) string {
	s = strings.TrimPrefix(s, "a ")
	if head, tail, ok := strings.Cut(s, " of "); ok {
		return head + "s of " + tail
	}
	return s + "s"
}

// describeJSON says what the JSON value raw is: its text for strings
// (quoted, shortened), numbers, true and false; "an object", "an array".
func describeJSON(raw []byte) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strconv.Quote(shorten(s))
		}
	}
	return shorten(string(bytes.TrimSpace(raw)))
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

// ThreadFidelity is one thread name's line of Meta.Fidelity.
type ThreadFidelity struct {
	// Thread is the thread name (the folded stacks' first frame).
	Thread string `json:"thread"`
	// Threads is how many threads of that name ran in the window.
	Threads int `json:"threads,omitempty"`
	// Samples is the samples of that name (in the stacks' unit: for
	// "period" stacks, their share of Meta.Samples).
	Samples int64 `json:"samples"`
	// SampledCPUSeconds is the CPU the samples stand for: their share of
	// Meta.SampledCPUSeconds.
	SampledCPUSeconds float64 `json:"sampled_cpu_seconds"`
	// AccountedCPUSeconds is the threads' run time over the window.
	AccountedCPUSeconds float64 `json:"accounted_cpu_seconds"`
	// Corrections is what the BPF sampler's switch fix did to the
	// samples of that name (SamplerHealth's switch_deferred, switch_owed,
	// switch_skipped, switch_blind, switch_dense, weighted_extra,
	// weighted_zero, offcpu_charged_ns, offcpu_timer_skipped); nil when
	// nothing.
	Corrections map[string]uint64 `json:"corrections,omitempty"`
}

// Unwind says how a run's stacks were unwound (run.json "unwind").
type Unwind struct {
	// Method is "fp" (frame pointers only), "cfi+fp" (stack copies
	// unwound with the objects' CFI, frame pointers where an object has
	// none) or "dwarf" (perf --call-graph dwarf).
	Method string `json:"method"`
	// StackCopy is the BPF sampler's stack copy setting (never, auto,
	// always); WindowBytes the most user stack copied per sample;
	// CopiedSamples how many samples were copied and unwound in user
	// space.
	StackCopy     string `json:"stack_copy,omitempty"`
	WindowBytes   int    `json:"window_bytes,omitempty"`
	CopiedSamples int64  `json:"copied_samples,omitempty"`
	// Ends counts how the walks of copied samples ended: "root", "zero_pc",
	// "window" (the copied window ran out), "no_table", "bad_cfa",
	// "depth".
	Ends map[string]int64 `json:"ends,omitempty"`
	// Objects are the mapped objects the frames fell in, sorted by name.
	Objects []UnwindObject `json:"objects,omitempty"`
}

// UnwindObject counts the frames of one mapped object by how they were
// unwound.
type UnwindObject struct {
	// Object is the mapped file, as perf names a dso.
	Object string `json:"object"`
	// Frames is every frame in the object; FP, CFI and None split them
	// by method (None: the walk stopped in this object).
	Frames int64 `json:"frames"`
	FP     int64 `json:"fp,omitempty"`
	CFI    int64 `json:"cfi,omitempty"`
	None   int64 `json:"none,omitempty"`
	// Note says why frames of the object were lost, e.g. "no .eh_frame".
	Note string `json:"note,omitempty"`
}
