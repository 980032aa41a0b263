package diff

import (
	"fmt"
	"math"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// Completeness says how much of a profile sits in stacks that do not reach
// a thread root: stacks the unwinder cut short (frameless libc code,
// unwinding that stopped in a JIT or a library built without frame
// pointers).
type Completeness struct {
	Total           int64
	Incomplete      int64
	IncompletePct   float64
	IncompleteCount int // number of distinct incomplete stacks
	// UnnamedRoot counts the incomplete samples whose outermost frame is
	// an unresolved frame of an object ("[libc.so.6]"): such a stack may
	// well reach its thread's root, a root without a name because the
	// object has no symbols for it (a stripped libc without its debug
	// file names neither clone3 nor start_thread). UnnamedObject is the
	// object of most of them, without brackets.
	UnnamedRoot   int64
	UnnamedObject string
}

// StackCompleteness classifies every stack of p as complete or not.
//
// A stack is complete when Frames[1], the outermost frame after the thread
// name, is a thread root (start_thread, clone, a thread's entry function:
// whatever isThreadRoot accepts), or when Frames[0] is one. Only the
// outermost frames are looked at because a thread root is by definition
// where a thread's stack begins: a truncated stack has lost exactly those
// outer frames, and a root found deeper in a stack would say nothing about
// the frames lost above it. Frames[0] is accepted so that profiles without
// a thread-name frame (pprof input, folded stacks from tools that do not
// write the thread) are judged on their outermost function; for that reason
// isThreadRoot should accept functions, not thread names. A stack of a
// single frame is complete only if that frame is a root.
//
// Consequence, stated with the figure: an incomplete stack lacks its
// callers, so the inclusive share of every function above the cut (the
// callers, such as a query's dispatch function) is understated by up to
// IncompletePct percentage points, while leaf and self shares are not.
func StackCompleteness(p *fold.Profile, isThreadRoot func(string) bool) Completeness {
	c := Completeness{Total: p.Total()}
	unnamed := map[string]int64{}
	for _, s := range p.Stacks {
		ok := len(s.Frames) > 0 && isThreadRoot(s.Frames[0]) ||
			len(s.Frames) > 1 && isThreadRoot(s.Frames[1])
		if !ok {
			c.Incomplete += s.Value
			c.IncompleteCount++
			if len(s.Frames) > 1 {
				if obj, ok := unresolvedObject(s.Frames[1]); ok {
					c.UnnamedRoot += s.Value
					unnamed[obj] += s.Value
				}
			}
		}
	}
	for obj, n := range unnamed {
		if n > unnamed[c.UnnamedObject] || n == unnamed[c.UnnamedObject] && obj < c.UnnamedObject {
			c.UnnamedObject = obj
		}
	}
	c.IncompletePct = pct(c.Incomplete, c.Total)
	return c
}

// unresolvedObject returns the object of an unresolved frame as perf and
// flamediff name one, "[libc.so.6]", and whether frame is one; "[unknown]"
// and perf's "[[vdso]]" or "[[stack]]" are not objects.
func unresolvedObject(frame string) (string, bool) {
	if !IsUnresolved(frame) {
		return "", false
	}
	obj := frame[1 : len(frame)-1]
	if obj == "" || obj == "unknown" || strings.ContainsAny(obj, "[]") {
		return "", false
	}
	return obj, true
}

// UnnamedRoots says whether the unnamed roots explain the incomplete
// stacks: at least half of the incomplete samples have one.
func (c Completeness) UnnamedRoots() bool {
	return c.UnnamedRoot > 0 && 2*c.UnnamedRoot >= c.Incomplete
}

// Warning returns the sentence a report prints when some stacks are
// incomplete, or "" when every stack is complete. When no stack at all is
// complete the thread roots are more likely wrong than the unwinding, and
// the sentence says so.
func (c Completeness) Warning() string {
	if c.Incomplete == 0 {
		return ""
	}
	if c.UnnamedRoots() {
		return fmt.Sprintf("%.2f%% of samples are in stacks that do not start at a named thread root, %.2f%% at an unnamed frame of %s: %s", c.IncompletePct, pct(c.UnnamedRoot, c.Total), c.UnnamedObject, unnamedAdvice(c.UnnamedObject))
	}
	if c.Incomplete == c.Total {
		return "no stack starts at a known thread root: the thread roots (symbol map) do not fit this profile, perhaps because start_thread is unresolved; callers' inclusive shares may be understated by up to 100 percentage points"
	}
	return fmt.Sprintf("%.2f%% of samples are in stacks that do not start at a thread root (truncated unwinding): callers' inclusive shares are understated by up to %.2f percentage points", c.IncompletePct, c.IncompletePct)
}

// Warnings are the sentences a report prints about the figures of the
// profile, without its label: when the run recorded its stack completeness
// (run.json stack_completeness), the recorded figure's warning (see
// Unwinding.Warning) when it is below CompleteEnough; otherwise the
// computed completeness warning (see Completeness.Warning) when some stacks
// do not start at a thread root; then RunFigures.SampledWarning when the
// samples stand for CPU too far from the accounted; none when nothing is
// wrong. Every command
// and page that reports on a profile prints these, so that they say it in
// the same words.
func (s *Summary) Warnings() []string { return s.HintedWarnings(Hints{}) }

// SampledOff is how far, in percentage points, the CPU a run's samples
// stand for may be from the CPU the process was accounted before a report
// warns that the shares cannot be trusted to that many points.
const SampledOff = 2.0

// SampledWarning is RunFigures.SampledWarning for samples that stand for
// pct percent of the CPU the process was accounted.
func SampledWarning(pct float64) string {
	off := math.Abs(pct - 100)
	if off <= SampledOff {
		return ""
	}
	what := fmt.Sprintf("%.2f%% of it has no sample", off)
	if pct > 100 {
		what = fmt.Sprintf("they stand for %.2f%% more than it", off)
	}
	return fmt.Sprintf("the samples stand for %.2f%% of the CPU the process was accounted: %s, so shares may be off by up to %.2f percentage points, depending on where that CPU went (see docs/fidelity.md)", pct, what, off)
}

// SampledWarning is the sentence about a run whose samples stand for more
// or less CPU than the process was accounted, by more than SampledOff
// percent; "" otherwise, and when the run did not record it.
func (f RunFigures) SampledWarning() string {
	if !f.HasSampled {
		return ""
	}
	return SampledWarning(f.SampledPct)
}

// UncorrectedPointsPerKSwitch is how far, in percentage points, the
// shares of samples not corrected at context switches were off per 1,000
// context switches per CPU-second of the sampled process: the worst
// function of the truth program's bursty thread (internal/cputruth,
// bursts of 25 µs to 1 ms around sleeps of 100 µs, perf at 499 Hz) was
// off by 0.60–0.87 points per 1,000 at 535 to 14,800 switches per
// CPU-second (docs/fidelity.md, "Samples not corrected at switches").
// Switches at points tied to the program's flow (blocking calls, a thread
// preempted by the thread it wakes) make the error; preemptions at random
// points hardly do (two threads that never block, preempted 3,139 times
// per CPU-second: within 0.4 points), but /proc's counts cannot tell them
// apart, so every switch counts.
const UncorrectedPointsPerKSwitch = 0.7

// CorrectedPointsPerKSwitch is how far, in percentage points, the shares
// of samples corrected at context switches (the BPF sampler's switch fix
// on per-thread events) were still off per 1,000 context switches per
// CPU-second: on the truth program's threads (internal/cputruth) at 499
// Hz, the CPU outside the measured functions (mostly the blocking call)
// came out 0.03 to 0.39 points per 1,000 off, at 7,500 to 61,000
// switches per CPU-second: mostly low for threads that sleep in
// nanosleep, high for threads that wait on pipes, the functions around it
// off the other way (docs/fidelity.md, "Samples not corrected at
// switches: the warning"). Steady threads with few switches are within
// their sampling noise. The mechanism is not known yet, so this is an
// observed rate, not a model.
const CorrectedPointsPerKSwitch = 0.25

// SwitchWarning is the sentence about a run whose process switched rate
// times per CPU-second (fold.Meta.SwitchesPerCPUSecond) often enough that
// its shares may be off by more than SampledOff points: when its samples
// were not corrected at context switches (why: fold.Meta.Uncorrected) at
// UncorrectedPointsPerKSwitch, and when they were (corrected:
// fold.Meta.SwitchCorrected) at CorrectedPointsPerKSwitch; "" otherwise,
// and when neither is known.
func SwitchWarning(why string, corrected bool, rate float64) string {
	switch {
	case why != "":
		off := UncorrectedPointsPerKSwitch * rate / 1000
		if off <= SampledOff {
			return ""
		}
		return fmt.Sprintf("the samples were not corrected at context switches (%s) and the process switched %.0f times per CPU-second: shares may be off by up to about %.0f percentage points, mostly toward the code right after wake-ups (%.1f per 1,000 switches per CPU-second on programs whose true CPU is known; the BPF sampler's switch fix on per-thread events corrects it, see docs/fidelity.md)", why, rate, off, UncorrectedPointsPerKSwitch)
	case corrected:
		off := CorrectedPointsPerKSwitch * rate / 1000
		if off <= SampledOff {
			return ""
		}
		return fmt.Sprintf("the samples were corrected at context switches, but the process switched %.0f times per CPU-second: the shares of its blocking calls, and of the code between them the other way, may still be off by up to about %.0f percentage points (%.2f per 1,000 switches per CPU-second on programs whose true CPU is known, at 499 Hz; see docs/fidelity.md)", rate, off, CorrectedPointsPerKSwitch)
	}
	return ""
}

// MetaSwitchWarning is SwitchWarning for a run's metadata: why its samples
// were not corrected, whether they were, and its switches per CPU-second.
func MetaSwitchWarning(m *fold.Meta) string {
	return SwitchWarning(m.Uncorrected(), m.SwitchCorrected(), m.SwitchesPerCPUSecond())
}

// SwitchWarning is the package's SwitchWarning for the run's figures.
func (f RunFigures) SwitchWarning() string {
	return SwitchWarning(f.Uncorrected, f.SwitchCorrected, f.SwitchesPerCPUSecond)
}

// HintedWarnings are the Warnings with a command's hints added.
func (s *Summary) HintedWarnings(h Hints) []string {
	out := s.hintedWarnings(h)
	if w := s.Profile.SampledWarning(); w != "" {
		out = append(out, w)
	}
	if w := s.Profile.SwitchWarning(); w != "" {
		out = append(out, w)
	}
	return out
}

func (s *Summary) hintedWarnings(h Hints) []string {
	var out []string
	if u := s.Recorded; u != nil {
		if c := s.Completeness; c != nil && c.UnnamedRoots() {
			// What the stacks say of their roots, beside what the run
			// recorded.
			v := *u
			v.UnnamedRoot, v.UnnamedObject = float64(c.UnnamedRoot)/float64(c.Total), c.UnnamedObject
			u = &v
		}
		if w := u.Warning(h.unwinding(u)); w != "" {
			out = append(out, w)
		}
		return out
	}
	if c := s.Completeness; c != nil {
		if w := c.Warning(); w != "" {
			out = append(out, w)
		}
	}
	return out
}

// LabelledWarnings are the Warnings of each profile, each after the
// profile's label: "11.8: 2.17% of samples are in stacks ...".
func LabelledWarnings(sums []*Summary) []string { return LabelledHintedWarnings(sums, Hints{}) }

// LabelledHintedWarnings are the LabelledWarnings with a command's hints added.
func LabelledHintedWarnings(sums []*Summary, h Hints) []string {
	var out []string
	for _, s := range sums {
		for _, w := range s.HintedWarnings(h) {
			out = append(out, s.Profile.Label+": "+w)
		}
	}
	return out
}

// Warnings are the LabelledWarnings of the result's profiles, base first.
func (r *Result) Warnings() []string { return LabelledWarnings(r.Summaries) }

// HintedWarnings are the Warnings with a command's hints added.
func (r *Result) HintedWarnings(h Hints) []string { return LabelledHintedWarnings(r.Summaries, h) }
