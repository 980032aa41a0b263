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
		in  string
		msg string
	}{
		{`{"format": 2}`, "newer"},
		{`{"operations": -1}`, "operations"},
		{`{"cpu_seconds": -0.5}`, "cpu seconds"},
		{`{"cpu_user_seconds": -1}`, "cpu seconds"},
		{`{"cpu_system_seconds": -1}`, "cpu seconds"},
		{`{"window_seconds": -6}`, "window_seconds"},
		{`{"unit": "bytes"}`, "unit"},
		{`{"label": 5}`, ""},
		{`{"operations": 1.5}`, ""},
		{`{"operations": 99999999999999999999}`, ""},
		{`[1,2]`, ""},
		{`{`, ""},
		{``, ""},
		{`{"a":1} x`, ""},
	}
	for _, tt := range tests {
		m, err := ParseMeta(strings.NewReader(tt.in))
		if !errors.Is(err, ErrBadMeta) || m != nil {
			t.Errorf("ParseMeta(%q) = %v, %v, want nil and an error wrapping ErrBadMeta", tt.in, m, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseMeta(%q) error = %q, want it to mention %q", tt.in, err, tt.msg)
		}
	}
	if _, err := ParseMeta(&failReader{err: errors.New("boom")}); err == nil {
		t.Errorf("ParseMeta(failing reader) = nil error, want one")
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
