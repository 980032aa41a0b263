package diff

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

func TestWarnings(t *testing.T) {
	complete := &fold.Profile{Stacks: []fold.Stack{{Frames: []string{"t", "start_thread", "f"}, Value: 4}}}
	cut := &fold.Profile{Stacks: []fold.Stack{{Frames: []string{"t", "start_thread", "f"}, Value: 3}, {Frames: []string{"t", "f"}, Value: 1}}}
	root := func(f string) bool { return f == "start_thread" }
	opts := Options{IsThreadRoot: root, Labels: []string{"a", "b"}}
	cutWarning := "25.00% of samples are in stacks that do not start at a thread root (truncated unwinding): callers' inclusive shares are understated by up to 25.00 percentage points"
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"complete", Summarize(complete, opts).Warnings(), nil},
		{"no thread roots given", Summarize(cut, Options{}).Warnings(), nil},
		{"cut", Summarize(cut, opts).Warnings(), []string{cutWarning}},
		{"labelled", LabelledWarnings([]*Summary{Summarize(cut, opts)}), []string{"a: " + cutWarning}},
	}
	r, err := Compute(complete, []*fold.Profile{cut}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tests = append(tests, struct {
		name string
		got  []string
		want []string
	}{"result", r.Warnings(), []string{"b: " + cutWarning}})
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: Warnings() = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestRecordedUnwinding(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	libc := fold.UnwindObject{Object: "libc.so.6", Frames: 900, FP: 88, None: 812, Note: "no frame pointers"}
	tests := []struct {
		name string
		meta *fold.Meta
		want *Unwinding
	}{
		{"no meta", nil, nil},
		{"not recorded", &fold.Meta{CallGraph: "fp"}, nil},
		{"perf: method from the call graph", &fold.Meta{Sampler: "perf", CallGraph: "dwarf", StackCompleteness: share(0.5)},
			&Unwinding{Complete: 0.5, Sampler: "perf", Method: "dwarf"}},
		{"most walks stopped wins", &fold.Meta{Sampler: "bpf", CallGraph: "fp", StackCompleteness: share(0.621), Unwind: &fold.Unwind{Method: "cfi+fp", Objects: []fold.UnwindObject{
			{Object: "ld-linux-x86-64.so.2", Frames: 10, None: 3, Note: "no .eh_frame"}, libc, {Object: "mariadbd", Frames: 5000, FP: 5000}}}},
			&Unwinding{Complete: 0.621, Sampler: "bpf", Method: "cfi+fp", Object: "libc.so.6", Stopped: 812, Note: "no frame pointers"}},
		{"a tie goes to the object with a note", &fold.Meta{StackCompleteness: share(0.9), Unwind: &fold.Unwind{Method: "fp", Objects: []fold.UnwindObject{
			{Object: "a.so", None: 5}, {Object: "b.so", None: 5, Note: "stripped"}}}},
			&Unwinding{Complete: 0.9, Method: "fp", Object: "b.so", Stopped: 5, Note: "stripped"}},
		{"a note without stopped walks", &fold.Meta{StackCompleteness: share(0.9), Unwind: &fold.Unwind{Method: "fp", Objects: []fold.UnwindObject{
			{Object: "a.so", FP: 5}, {Object: "b.so", FP: 1, Note: "no .eh_frame"}}}},
			&Unwinding{Complete: 0.9, Method: "fp", Object: "b.so", Note: "no .eh_frame"}},
	}
	for _, tt := range tests {
		if got := RecordedUnwinding(tt.meta); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: RecordedUnwinding = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestUnwindingWarning(t *testing.T) {
	low := &Unwinding{Complete: 0.621, Sampler: "bpf", Method: "fp", Object: "libc.so.6", Stopped: 812, Note: "no frame pointers"}
	tests := []struct {
		name string
		u    *Unwinding
		hint string
		want string
	}{
		{"nil", nil, "x", ""},
		{"enough", &Unwinding{Complete: 0.995, Method: "fp", Object: "libc.so.6", Stopped: 3}, "x", ""},
		{"exactly enough", &Unwinding{Complete: CompleteEnough, Method: "fp"}, "", ""},
		{"object, note and hint", low, "try harder",
			"stacks reach a thread root in 62.10% of samples (unwinding: fp): callers' inclusive shares are understated by up to 37.90 percentage points; libc.so.6: 812 walks stopped there (no frame pointers; try harder)"},
		{"object and note", low, "",
			"stacks reach a thread root in 62.10% of samples (unwinding: fp): callers' inclusive shares are understated by up to 37.90 percentage points; libc.so.6: 812 walks stopped there (no frame pointers)"},
		{"object without a note", &Unwinding{Complete: 0.5, Method: "cfi+fp", Object: "x.so", Stopped: 7}, "",
			"stacks reach a thread root in 50.00% of samples (unwinding: cfi+fp): callers' inclusive shares are understated by up to 50.00 percentage points; x.so: 7 walks stopped there"},
		{"note only", &Unwinding{Complete: 0.5, Method: "fp", Object: "x.so", Note: "no .eh_frame"}, "",
			"stacks reach a thread root in 50.00% of samples (unwinding: fp): callers' inclusive shares are understated by up to 50.00 percentage points; x.so: no .eh_frame"},
		{"no object, a hint", &Unwinding{Complete: 0.9}, "try harder",
			"stacks reach a thread root in 90.00% of samples: callers' inclusive shares are understated by up to 10.00 percentage points; try harder"},
	}
	for _, tt := range tests {
		if got := tt.u.Warning(tt.hint); got != tt.want {
			t.Errorf("%s: Warning = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRecordedWarnings(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	// Half the samples are cut; the run says 62.1% reach a root: the
	// recorded figure is quoted, the computed one is not repeated.
	p := &fold.Profile{Stacks: []fold.Stack{{Frames: []string{"t", "start_thread", "f"}, Value: 1}, {Frames: []string{"t", "f"}, Value: 1}},
		Meta: &fold.Meta{Label: "10.5", Sampler: "bpf", CallGraph: "fp", StackCompleteness: share(0.621),
			Unwind: &fold.Unwind{Method: "fp", Objects: []fold.UnwindObject{{Object: "libc.so.6", Frames: 812, None: 812, Note: "no frame pointers"}}}}}
	opts := Options{IsThreadRoot: func(f string) bool { return f == "start_thread" }}
	hints := Hints{Unwinding: func(u *Unwinding) string { return "sampler " + u.Sampler }}
	sum := Summarize(p, opts)
	want := "stacks reach a thread root in 62.10% of samples (unwinding: fp): callers' inclusive shares are understated by up to 37.90 percentage points; libc.so.6: 812 walks stopped there (no frame pointers"
	if got := sum.Warnings(); !reflect.DeepEqual(got, []string{want + ")"}) {
		t.Errorf("Warnings() = %q, want %q", got, want+")")
	}
	if got := LabelledHintedWarnings([]*Summary{sum}, hints); !reflect.DeepEqual(got, []string{"10.5: " + want + "; sampler bpf)"}) {
		t.Errorf("LabelledHintedWarnings = %q, want the hint added", got)
	}
	// Stacks whose outermost frame is an unnamed libc frame: the warning
	// says they may be whole, not that callers are understated, and the
	// hint sees the object.
	unnamed := &fold.Profile{Stacks: []fold.Stack{{Frames: []string{"t", "[libc.so.6]", "f"}, Value: 9}, {Frames: []string{"t", "start_thread", "f"}, Value: 1}},
		Meta: &fold.Meta{Label: "9.7", Sampler: "bpf", CallGraph: "fp", StackCompleteness: share(0.1), Unwind: &fold.Unwind{Method: "cfi+fp"}}}
	uh := Hints{Unwinding: func(u *Unwinding) string { return "debug files for " + u.UnnamedObject }}
	want = "stacks reach a named thread root in 10.00% of samples (unwinding: cfi+fp); 90.00% end at an unnamed frame of libc.so.6: the stacks may be whole, with a thread root (clone3, start_thread) that libc.so.6 names only in its debug symbols (the -dbg package of that very build); debug files for libc.so.6"
	if got := Summarize(unnamed, opts).HintedWarnings(uh); !reflect.DeepEqual(got, []string{want}) {
		t.Errorf("unnamed roots: Warnings() = %q, want %q", got, want)
	}
	// Recorded at 99.5%: no warning, though the computed figure is 50%.
	p.Meta.StackCompleteness = share(0.995)
	if got := Summarize(p, opts).HintedWarnings(hints); got != nil {
		t.Errorf("at 99.5%%: Warnings() = %q, want none", got)
	}
}

func TestSampledWarning(t *testing.T) {
	for _, tt := range []struct {
		f    RunFigures
		want string
	}{
		{RunFigures{}, ""},
		{RunFigures{HasSampled: true, SampledPct: 98.5}, ""},
		{RunFigures{HasSampled: true, SampledPct: 102}, ""},
		{RunFigures{HasSampled: true, SampledPct: 88.85}, "the samples stand for 88.85% of the CPU the process was accounted: 11.15% of it has no sample, so shares may be off by up to 11.15 percentage points, depending on where that CPU went (see docs/fidelity.md)"},
		{RunFigures{HasSampled: true, SampledPct: 110.1}, "the samples stand for 110.10% of the CPU the process was accounted: they stand for 10.10% more than it, so shares may be off by up to 10.10 percentage points, depending on where that CPU went (see docs/fidelity.md)"},
	} {
		if got := tt.f.SampledWarning(); got != tt.want {
			t.Errorf("SampledWarning(%v%%) = %q, want %q", tt.f.SampledPct, got, tt.want)
		}
	}
	// A summary says it after what it says of the stacks.
	s := &Summary{Profile: RunFigures{HasSampled: true, SampledPct: 80}}
	if w := s.Warnings(); len(w) != 1 || w[0] != (RunFigures{HasSampled: true, SampledPct: 80}).SampledWarning() {
		t.Errorf("Summary.Warnings() = %q, want the sampled CPU warning", w)
	}
}

func TestSwitchWarning(t *testing.T) {
	// 2,857 switches per CPU-second is where 0.7 points per 1,000 reach
	// SampledOff (2 points), uncorrected; 8,000 where 0.25 do, corrected.
	for _, tt := range []struct {
		why       string
		corrected bool
		rate      float64
		warn      bool
	}{
		{"", false, 20000, false},                // neither known (no samples)
		{"the perf sampler", false, 0, false},    // unknown rate
		{"the perf sampler", false, 1300, false}, // long runs between switches
		{"the perf sampler", false, 2800, false}, // 1.96 points
		{"the perf sampler", false, 2900, true},  // 2.03 points
		{"per-CPU events", false, 18309, true},   // 13 points
		{"", true, 2900, false},                  // corrected: 0.73 points
		{"", true, 7900, false},                  // 1.98 points
		{"", true, 8100, true},                   // 2.03 points
		{"", true, 20000, true},                  // 5 points
	} {
		w := SwitchWarning(tt.why, tt.corrected, tt.rate)
		if (w != "") != tt.warn {
			t.Errorf("SwitchWarning(%q, %v, %.0f) = %q, want a warning: %v", tt.why, tt.corrected, tt.rate, w, tt.warn)
		}
		if tt.warn && (!strings.Contains(w, tt.why) || !strings.Contains(w, fmt.Sprintf("switched %.0f times per CPU-second", tt.rate))) {
			t.Errorf("SwitchWarning(%q, %v, %.0f) = %q: want the reason and the rate in it", tt.why, tt.corrected, tt.rate, w)
		}
		if tt.warn && tt.corrected != strings.Contains(w, "were corrected at context switches, but") {
			t.Errorf("SwitchWarning(%q, %v, %.0f) = %q: want it to say whether the samples were corrected", tt.why, tt.corrected, tt.rate, w)
		}
	}
	if w := SwitchWarning("per-CPU events", false, 18309); !strings.Contains(w, "up to about 13 percentage points") {
		t.Errorf("SwitchWarning at 18,309 a CPU-second = %q, want about 13 points", w)
	}
	if w := SwitchWarning("", true, 20000); !strings.Contains(w, "up to about 5 percentage points") {
		t.Errorf("corrected SwitchWarning at 20,000 a CPU-second = %q, want about 5 points", w)
	}
	// From a run's metadata: 1.5 CPU-s, 30,000 switches.
	m := &fold.Meta{Sampler: "bpf", SamplerScope: "thread", SwitchFix: true, Samples: 10, CPUUserSeconds: 1.5, VoluntaryCtxSwitches: 30000}
	if got, want := MetaSwitchWarning(m), SwitchWarning("", true, 20000); got != want {
		t.Errorf("MetaSwitchWarning(corrected, 20,000 a CPU-second) = %q, want %q", got, want)
	}
	m.Sampler = "perf"
	if got, want := MetaSwitchWarning(m), SwitchWarning("the perf sampler", false, 20000); got != want {
		t.Errorf("MetaSwitchWarning(perf, 20,000 a CPU-second) = %q, want %q", got, want)
	}
	// A summary says it after the sampled CPU warning.
	f := RunFigures{HasSampled: true, SampledPct: 80, Uncorrected: "the perf sampler", SwitchesPerCPUSecond: 10000}
	s := &Summary{Profile: f}
	if w := s.Warnings(); len(w) != 2 || w[0] != f.SampledWarning() || w[1] != f.SwitchWarning() {
		t.Errorf("Summary.Warnings() = %q, want the sampled CPU warning, then the switch warning", w)
	}
}
