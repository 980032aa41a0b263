package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

func TestWriteRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := Create(dir); err != nil {
		t.Fatal(err)
	}
	p, err := fold.ParseFolded(strings.NewReader("main;a;b 3\nmain;c 2\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	done := true
	m := &fold.Meta{Format: 1, Label: "10.11", Unit: fold.UnitSamples, Samples: 5, CPUSecondsTotal: 2, Operations: 100, WindowSeconds: 4, Complete: &done}
	if err := Write(dir, p, m); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{StacksFile, MetaFile, PprofFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("Write left no %s: %v", f, err)
		}
	}
	got, err := Read(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if got.Total() != 5 || got.Meta.Label != "10.11" || got.Meta.Operations != 100 {
		t.Errorf("Read = total %d, label %q, operations %d; want 5, 10.11, 100", got.Total(), got.Meta.Label, got.Meta.Operations)
	}
	qps, err := Check(got.Meta)
	if err != nil || qps != 25 {
		t.Errorf("Check = %v, %v; want 25 (100 operations over 4 s), nil", qps, err)
	}
}

func TestReadWithoutMeta(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "myrun")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, StacksFile), []byte("a;b 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Read(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta == nil || p.Meta.Label != "myrun" || p.Meta.HasPerOp() {
		t.Errorf("Read without run.json: meta %+v, want label myrun and no per-op figures", p.Meta)
	}
	if _, err := ReadMeta(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadMeta without run.json = %v, want fs.ErrNotExist", err)
	}
}

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stacks *string
		meta   string
		want   string
		is     error
	}{
		{"no stacks", nil, "", "no stacks.folded in it (a run directory holds stacks.folded and run.json)", nil},
		{"empty stacks", ptr(""), "", "stacks.folded: no samples (the input is empty); the run recorded nothing: see", ErrNoSamples},
		{"zero counts", ptr("a;b 0\n"), "", "no samples (1 stack, every count 0)", ErrNoSamples},
		{"bad run.json", ptr("a 1\n"), "{\"format\": 1,\n \"label\": 3}\n", "run.json: ", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.stacks != nil {
				if err := os.WriteFile(filepath.Join(dir, StacksFile), []byte(*tc.stacks), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tc.meta != "" {
				if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte(tc.meta), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := Read(dir, false)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Read = %v, want an error containing %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("Read = %v, want errors.Is %v", err, tc.is)
			}
		})
	}
}

func TestCheck(t *testing.T) {
	no, yes := false, true
	for _, tc := range []struct {
		name string
		m    fold.Meta
		qps  float64
		is   error
	}{
		{"complete", fold.Meta{Complete: &yes, CPUSecondsTotal: 1, Operations: 10, QPS: 5}, 5, nil},
		{"rate from the window", fold.Meta{CPUSecondsTotal: 1, Operations: 10, WindowSeconds: 2}, 5, nil},
		{"incomplete", fold.Meta{Complete: &no, Incomplete: "interrupted", CPUSecondsTotal: 1, Operations: 10, QPS: 5}, 0, ErrIncomplete},
		{"no operations", fold.Meta{CPUSecondsTotal: 1}, 0, ErrNoPerOp},
		{"no rate", fold.Meta{CPUSecondsTotal: 1, Operations: 10}, 0, ErrNoPerOp},
	} {
		qps, err := Check(&tc.m)
		if qps != tc.qps || !errors.Is(err, tc.is) || (tc.is == nil) != (err == nil) {
			t.Errorf("%s: Check = %v, %v; want %v, %v", tc.name, qps, err, tc.qps, tc.is)
		}
	}
}

func ptr(s string) *string { return &s }

// TestParseNoSamples: an input without samples is a *NoSamplesError that
// says what was read, and names the event when samples were filtered by
// event, without naming any flag.
func TestParseNoSamples(t *testing.T) {
	perf := "mariadbd 100/101 1.000000: cpu-clock: \n\t  7f0 f (/x)\n\n"
	for _, tc := range []struct {
		name, in, filter string
		want, event      string
	}{
		{"empty", "", "", "in: no samples (the input is empty)", ""},
		{"comments", "# nothing\n\n", "", "in: no samples (blank lines and comments, no stack, in 11 bytes)", ""},
		{"zero counts", "a;b 0\n", "", "in: no samples (1 stack, every count 0)", ""},
		{"other event", perf, "cycles", `in: no samples (no sample of event "cycles")`, "cycles"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := fold.ParseOptions{}
			opts.Perf.EventFilter = tc.filter
			_, err := Parse("in", strings.NewReader(tc.in), opts)
			var ne *NoSamplesError
			if !errors.As(err, &ne) || !errors.Is(err, ErrNoSamples) {
				t.Fatalf("Parse(%q) = %v, want a *NoSamplesError", tc.in, err)
			}
			if err.Error() != tc.want || ne.Event != tc.event {
				t.Errorf("Parse(%q) = %q (event %q), want %q (event %q)", tc.in, err, ne.Event, tc.want, tc.event)
			}
		})
	}
}
