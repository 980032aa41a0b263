package fold

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func parseMetaString(t *testing.T, s string) *Meta {
	t.Helper()
	m, err := ParseMeta(strings.NewReader(s))
	if err != nil {
		t.Fatalf("ParseMeta(%q): %v", s, err)
	}
	return m
}

func writeMetaString(t testing.TB, m *Meta) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteMeta(&buf, m); err != nil {
		t.Fatalf("WriteMeta(%+v): %v", m, err)
	}
	return buf.String()
}

func TestParseMeta(t *testing.T) {
	yes := true
	in := `{"format": 1, "label": "10.5", "server_version": "10.5.23-MariaDB", "workload": "sysbench",
		"sampler": "perf", "frequency_hz": 499, "window_seconds": 6.0, "cpu_seconds": 3.83,
		"cpu_user_seconds": 3, "cpu_system_seconds": 0.83, "operations": 67300, "ops_counter": "Questions",
		"qps": 11216.67, "voluntary_ctxt_switches": 10, "involuntary_ctxt_switches": 5, "read_ops": 1,
		"write_ops": 2, "read_kb": 3.5, "write_kb": 4.5, "samples": 1411, "unit": "period",
		"event": "cpu-clock", "complete": true, "incomplete_reason": "none"}`
	want := &Meta{Format: 1, Label: "10.5", ServerVersion: "10.5.23-MariaDB", Workload: "sysbench",
		Sampler: "perf", FrequencyHz: 499, WindowSeconds: 6, CPUSecondsTotal: 3.83,
		CPUUserSeconds: 3, CPUSystemSeconds: 0.83, Operations: 67300, OpsCounter: "Questions",
		QPS: 11216.67, VoluntaryCtxSwitches: 10, InvoluntaryCtxSwitches: 5, ReadOps: 1,
		WriteOps: 2, ReadKB: 3.5, WriteKB: 4.5, Samples: 1411, Unit: UnitPeriod,
		Event: "cpu-clock", Complete: &yes, Incomplete: "none"}
	got := parseMetaString(t, in)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseMeta(all fields) = %+v, want %+v", got, want)
	}
	// Every known field is in metaKeys, so none lands in Extra.
	if got.Extra != nil {
		t.Errorf("ParseMeta(all fields) Extra = %v, want nil", got.Extra)
	}
}

func TestMetaRoundTripExtra(t *testing.T) {
	in := `{"format":1,"label":"x","operations":5,"future_field":{"a":[1,2]},"zeta":"z","big":12345678901234567890}`
	m := parseMetaString(t, in)
	if len(m.Extra) != 3 {
		t.Fatalf("ParseMeta(%q) Extra = %v, want 3 fields", in, m.Extra)
	}
	out := writeMetaString(t, m)
	m2 := parseMetaString(t, out)
	if m2.Label != "x" || m2.Operations != 5 {
		t.Errorf("round trip lost known fields: %+v", m2)
	}
	for k, v := range m.Extra {
		var a, b bytes.Buffer
		_ = json.Compact(&a, v)
		_ = json.Compact(&b, m2.Extra[k])
		if a.String() != b.String() {
			t.Errorf("round trip changed extra field %q: %s, want %s", k, b.String(), a.String())
		}
	}
	if out2 := writeMetaString(t, m2); out2 != out {
		t.Errorf("WriteMeta is not stable: %q then %q", out, out2)
	}
	// An extra field never overrides a known one.
	m3 := &Meta{Label: "real", Extra: map[string]json.RawMessage{"label": json.RawMessage(`"fake"`)}}
	if got := parseMetaString(t, writeMetaString(t, m3)); got.Label != "real" {
		t.Errorf("Extra[label] overrode Label: %q", got.Label)
	}
}

// Integers beyond 2^53 must survive a rewrite (float64 would round them).
func TestMetaRoundTripLargeIntegers(t *testing.T) {
	m := &Meta{Format: 1, Label: "x", Operations: 1<<53 + 1, Samples: math.MaxInt64, ReadOps: 9007199254740993}
	got := parseMetaString(t, writeMetaString(t, m))
	if got.Operations != m.Operations || got.Samples != m.Samples || got.ReadOps != m.ReadOps {
		t.Errorf("round trip: Operations, Samples, ReadOps = %d, %d, %d, want %d, %d, %d",
			got.Operations, got.Samples, got.ReadOps, m.Operations, m.Samples, m.ReadOps)
	}
}

func TestWriteMeta(t *testing.T) {
	out := writeMetaString(t, &Meta{Label: "10.11", Operations: 3})
	want := "{\n  \"format\": 1,\n  \"label\": \"10.11\",\n  \"operations\": 3\n}\n"
	if out != want {
		t.Errorf("WriteMeta = %q, want %q", out, want)
	}
	m := &Meta{Label: "a"}
	writeMetaString(t, m)
	if m.Format != 0 {
		t.Errorf("WriteMeta changed its argument's Format to %d", m.Format)
	}
	if err := WriteMeta(errWriter{}, m); err == nil {
		t.Errorf("WriteMeta(failing writer) = nil, want an error")
	}
}

func TestParseMetaErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		// Values of the wrong kind, placed at the value.
		{"string for a number", "{\n  \"label\": \"10.5\",\n  \"operations\": 5,\n  \"cpu_seconds\": \"3.88\"\n}", `line 4, column 18: cpu_seconds: want a number, found "3.88"`},
		{"bool for a number", `{"cpu_seconds": true}`, `line 1, column 17: cpu_seconds: want a number, found true`},
		{"number for a string", `{"label": 5}`, `line 1, column 11: label: want a string, found 5`},
		{"object for a string", `{"label": {"a": 1}}`, `line 1, column 11: label: want a string, found an object`},
		{"fraction for a whole number", `{"operations": 1.5}`, `line 1, column 16: operations: want a whole number, found 1.5`},
		{"exponent for a whole number", `{"samples": 1e3}`, `line 1, column 13: samples: want a whole number, found 1e3`},
		{"whole number too large", `{"operations": 99999999999999999999}`, `line 1, column 16: operations: want a whole number of at most 9223372036854775807, found 99999999999999999999`},
		{"whole number too small", `{"pid": -99999999999999999999}`, `line 1, column 9: pid: want a whole number of at least -9223372036854775808, found -99999999999999999999`},
		{"number too large", `{"qps": 1e400}`, `line 1, column 9: qps: want a number of at most 1.8e308, found 1e400`},
		{"string for a bool", `{"complete": "yes"}`, `line 1, column 14: complete: want true or false, found "yes"`},
		{"string for a pointer to int", `{"workload_exit_code": "0"}`, `line 1, column 24: workload_exit_code: want a whole number, found "0"`},
		{"array for a map", `{"sampler_health": [1]}`, `line 1, column 20: sampler_health: want an object of whole numbers of 0 or more, found an array`},
		{"negative in a map", "{\"sampler_health\": {\"samples\": 3,\n  \"map_full\": -1}}", `line 2, column 15: sampler_health.map_full: want a whole number of 0 or more, found -1`},
		{"number in a string array", `{"warnings": ["a", 2]}`, `line 1, column 20: warnings[1]: want a string, found 2`},
		{"string for an array", `{"warnings": "lost"}`, `line 1, column 14: warnings: want an array of strings, found "lost"`},
		{"name in another case", `{"CPU_Seconds": "x"}`, `line 1, column 17: cpu_seconds: want a number, found "x"`},
		{"column counts characters", `{"workload": "é", "qps": "x"}`, `line 1, column 26: qps: want a number, found "x"`},
		// Values of the right kind that are not allowed.
		{"format too new", `{"format": 2}`, `line 1, column 12: format: 2 is newer than this flamediff understands (1)`},
		{"negative operations", `{"operations": -1}`, `line 1, column 16: operations: want 0 or more, found -1`},
		{"negative cpu seconds", `{"cpu_seconds": -0.5}`, `line 1, column 17: cpu_seconds: want 0 or more, found -0.5`},
		{"negative user seconds", `{"cpu_user_seconds": -1}`, `line 1, column 22: cpu_user_seconds: want 0 or more, found -1`},
		{"negative system seconds", `{"cpu_system_seconds": -1}`, `line 1, column 24: cpu_system_seconds: want 0 or more, found -1`},
		{"negative window", "{\n\t\"window_seconds\": -6}", `line 2, column 20: window_seconds: want 0 or more, found -6`},
		{"unknown unit", `{"unit": "bytes"}`, `line 1, column 10: unit: want "samples" or "period", found "bytes"`},
		// Not an object, or not JSON.
		{"array", `[1,2]`, `line 1, column 1: want an object ({"label": ...}), found an array`},
		{"string", "\n  \"run\"", `line 2, column 3: want an object ({"label": ...}), found "run"`},
		{"unclosed", `{`, `line 1, column 2: the JSON ends early: a value, a closing } or ] is missing`},
		{"empty", ``, `line 1, column 1: the JSON ends early: a value, a closing } or ] is missing`},
		{"trailing text", `{"a":1} x`, `line 1, column 9: invalid character 'x' after top-level value`},
		{"missing colon", "{\n\"label\" \"x\"}", `line 2, column 9: invalid character '"' after object key`},
		{"trailing comma", `{"a": 1,}`, `line 1, column 9: invalid character '}' looking for beginning of object key string`},
	}
	for _, tt := range tests {
		m, err := ParseMeta(strings.NewReader(tt.in))
		var me *MetaError
		if !errors.Is(err, ErrBadMeta) || !errors.As(err, &me) || m != nil {
			t.Errorf("%s: ParseMeta(%q) = %v, %v, want nil and a *MetaError wrapping ErrBadMeta", tt.name, tt.in, m, err)
			continue
		}
		if err.Error() != tt.want {
			t.Errorf("%s: ParseMeta(%q) error = %q, want %q", tt.name, tt.in, err, tt.want)
		}
	}
	if _, err := ParseMeta(&failReader{err: errors.New("boom")}); err == nil {
		t.Errorf("ParseMeta(failing reader) = nil error, want one")
	}
	// Unknown fields of any kind are kept, not checked; null fits every field.
	m, err := ParseMeta(strings.NewReader(`{"label": null, "future": "x", "complete": null, "sampler_health": {"samples": null}}`))
	if err != nil || m.Extra["future"] == nil {
		t.Errorf("ParseMeta(unknown field, nulls) = %+v, %v, want no error and the unknown field in Extra", m, err)
	}
	if m, err := ParseMeta(strings.NewReader(`null`)); err != nil || m == nil {
		t.Errorf("ParseMeta(null) = %v, %v, want empty metadata", m, err)
	}
}

func TestMetaFigures(t *testing.T) {
	tests := []struct {
		name          string
		m             *Meta
		cpu, us, ctxs float64
		perOp         bool
	}{
		{"total wins", &Meta{CPUSecondsTotal: 2, CPUUserSeconds: 5, CPUSystemSeconds: 5, Operations: 1000}, 2, 2000, 0, true},
		{"user plus system", &Meta{CPUUserSeconds: 1.5, CPUSystemSeconds: 0.5, Operations: 4}, 2, 500000, 0, true},
		{"no operations", &Meta{CPUSecondsTotal: 2}, 2, 0, 0, false},
		{"no cpu", &Meta{Operations: 10, VoluntaryCtxSwitches: 15, InvoluntaryCtxSwitches: 5}, 0, 0, 2, false},
		{"ctx switches", &Meta{CPUSecondsTotal: 1, Operations: 10, VoluntaryCtxSwitches: 3, InvoluntaryCtxSwitches: 2}, 1, 100000, 0.5, true},
		{"nil", nil, 0, 0, 0, false},
	}
	for _, tt := range tests {
		if tt.m != nil {
			if got := tt.m.CPUSeconds(); got != tt.cpu {
				t.Errorf("%s: CPUSeconds() = %v, want %v", tt.name, got, tt.cpu)
			}
		}
		if got := tt.m.HasPerOp(); got != tt.perOp {
			t.Errorf("%s: HasPerOp() = %v, want %v", tt.name, got, tt.perOp)
		}
		if got := tt.m.CPUMicrosPerOp(); math.Abs(got-tt.us) > 1e-9*tt.us {
			t.Errorf("%s: CPUMicrosPerOp() = %v, want %v", tt.name, got, tt.us)
		}
		if got := tt.m.CtxSwitchesPerOp(); got != tt.ctxs {
			t.Errorf("%s: CtxSwitchesPerOp() = %v, want %v", tt.name, got, tt.ctxs)
		}
	}
}

// The run directories' run.json files parse, and a rewrite keeps every field.
func TestMetaRunDirectories(t *testing.T) {
	names, _ := filepath.Glob("../testdata/runs/*/" + MetaFile)
	if len(names) == 0 {
		t.Fatal("no run.json fixtures")
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseMeta(bytes.NewReader(data))
		if err != nil {
			t.Errorf("ParseMeta(%s): %v", name, err)
			continue
		}
		if m.Label == "" || !m.HasPerOp() || m.CPUMicrosPerOp() <= 0 {
			t.Errorf("ParseMeta(%s) = %+v: want a label and per-op figures", name, m)
		}
		m2, err := ParseMeta(strings.NewReader(writeMetaString(t, m)))
		if err != nil {
			t.Errorf("ParseMeta(WriteMeta(%s)): %v", name, err)
			continue
		}
		if !reflect.DeepEqual(m, m2) {
			t.Errorf("%s: round trip = %+v, want %+v", name, m2, m)
		}
	}
}

// TestMetaSampledPct: the samples against the accounted CPU less the
// off-CPU program's time charged to the threads, which the switch fix
// keeps out of the samples.
func TestMetaSampledPct(t *testing.T) {
	for _, tt := range []struct {
		name string
		m    Meta
		want float64
	}{
		{"plain", Meta{CPUSecondsTotal: 4, SampledCPUSeconds: 3}, 75},
		{"profiler charged", Meta{CPUSecondsTotal: 4, SampledCPUSeconds: 3, SamplerHealth: map[string]uint64{"offcpu_charged_ns": 1e9}}, 100},
		{"no samples", Meta{CPUSecondsTotal: 4}, 0},
		{"no CPU", Meta{SampledCPUSeconds: 3}, 0},
		{"charged beyond the CPU", Meta{CPUSecondsTotal: 1, SampledCPUSeconds: 1, SamplerHealth: map[string]uint64{"offcpu_charged_ns": 2e9}}, 0},
	} {
		if got := tt.m.SampledPct(); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: SampledPct() = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestMetaUncorrected(t *testing.T) {
	for _, tt := range []struct {
		name      string
		m         Meta
		want      string
		corrected bool
	}{
		{"perf", Meta{Sampler: "perf", Samples: 10}, "the perf sampler", false},
		{"bpf per-thread, fix", Meta{Sampler: "bpf", Samples: 10, SwitchFix: true, SamplerScope: "thread"}, "", true},
		{"bpf, fix, scope not recorded", Meta{Sampler: "bpf", Samples: 10, SwitchFix: true}, "", true},
		{"bpf per-thread, no fix", Meta{Sampler: "bpf", Samples: 10, SamplerScope: "thread"}, "the bpf sampler without the switch fix", false},
		{"bpf per-CPU, weighted", Meta{Sampler: "bpf", Samples: 10, SwitchFix: true, SamplerScope: "cpu"}, "per-CPU events", false},
		{"no samples", Meta{Sampler: "perf"}, "", false},
		{"bpf, fix, no samples", Meta{Sampler: "bpf", SwitchFix: true}, "", false},
		{"no sampler", Meta{Sampler: "none", Samples: 10}, "", false},
		{"unknown sampler", Meta{Samples: 10}, "", false},
	} {
		if got := tt.m.Uncorrected(); got != tt.want {
			t.Errorf("%s: Uncorrected() = %q, want %q", tt.name, got, tt.want)
		}
		if got := tt.m.SwitchCorrected(); got != tt.corrected {
			t.Errorf("%s: SwitchCorrected() = %v, want %v", tt.name, got, tt.corrected)
		}
	}
	m := Meta{CPUUserSeconds: 1.5, CPUSystemSeconds: 0.5, VoluntaryCtxSwitches: 30000, InvoluntaryCtxSwitches: 10000}
	if got := m.SwitchesPerCPUSecond(); got != 20000 {
		t.Errorf("SwitchesPerCPUSecond() = %v, want 20000", got)
	}
	if got := (&Meta{VoluntaryCtxSwitches: 5}).SwitchesPerCPUSecond(); got != 0 {
		t.Errorf("SwitchesPerCPUSecond() without CPU = %v, want 0", got)
	}
}
