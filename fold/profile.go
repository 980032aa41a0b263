// Package fold is flamediff's model of a sampled CPU profile: a set of call
// stacks, each with a sample count, plus the run metadata that turns shares
// into CPU per operation.
//
// The package parses and writes the formats people already use (perf script
// text, Brendan Gregg's folded stacks, bcc profile -f output, pprof
// protobuf) and offers pure transforms (Merge, Filter, Scale). It knows
// nothing of capture, symbol maps or rendering, and it opens no files: parsers
// take an io.Reader and writers an io.Writer.
package fold

import (
	"fmt"
	"maps"
	"math/bits"
	"sort"
	"strings"
)

// Stack is one distinct call stack and its weight.
//
// Frames are ordered root first, leaf last, as in the folded format. For
// profiles that come from perf script, bcc or flamediff's own capture,
// Frames[0] is the thread (process) name, as stackcollapse-perf.pl writes it.
type Stack struct {
	Frames []string
	Value  int64
}

// Key returns the stack in folded form without its count: frames joined by ';'.
func (s Stack) Key() string { return strings.Join(s.Frames, ";") }

// Profile is a set of stacks with their values and optional run metadata.
//
// A Profile produced by a parser has no two stacks with the same frames and
// its stacks are sorted by Key, so that writers are deterministic.
type Profile struct {
	// Stacks are distinct and, after Normalize, sorted by Key.
	Stacks []Stack
	// Unit says what Value counts: "samples" (the default) or, for perf
	// script input that carries sample periods, "period" (the event's
	// period, nanoseconds for cpu-clock), as stackcollapse-perf.pl sums them;
	// for an off-CPU profile "offcpu_us" or "switches".
	Unit string
	// Samples is the number of samples behind the profile when the source
	// says it (perf script input); 0 when unknown. For Unit "samples" it
	// equals Total().
	Samples int64
	// Meta is the run's metadata (run.json), nil when the profile came from
	// a bare file.
	Meta *Meta
	// Skipped counts input lines that were not understood and left out;
	// SkippedFirst describes the first of them (for messages).
	Skipped      int
	SkippedFirst string
	skipLine     int
	// Event is the perf event the stacks were sampled on ("cpu-clock"),
	// when the input says; FilteredEvents is true when samples of other
	// events were left out (stackcollapse-perf.pl keeps only the first
	// event type it sees, or the one given with --event-filter).
	Event          string
	FilteredEvents bool
}

// Unit values. An off-CPU profile (record --off-cpu, rundir.ReadOffCPU)
// counts microseconds its threads spent off the CPU (UnitOffCPUMicros) or
// the times they left it (UnitSwitches).
const (
	UnitSamples      = "samples"
	UnitPeriod       = "period"
	UnitOffCPUMicros = "offcpu_us"
	UnitSwitches     = "switches"
)

// Total returns the sum of all stack values. Parsers and Merge make sure
// it fits in an int64; for other profiles CheckedTotal says whether it does.
func (p *Profile) Total() int64 {
	var t int64
	for _, s := range p.Stacks {
		t += s.Value
	}
	return t
}

// CheckedTotal returns the sum of all stack values, or an error wrapping
// ErrOverflow when it does not fit in an int64 (values of both signs, as
// in a difference, may add up to more than an int64 holds on the way).
func (p *Profile) CheckedTotal() (int64, error) {
	// A 128-bit sum: hi holds the carries and the sign extensions.
	var hi int64
	var lo uint64
	for _, s := range p.Stacks {
		var carry uint64
		lo, carry = bits.Add64(lo, uint64(s.Value), 0)
		hi += int64(carry) + s.Value>>63
	}
	if hi != int64(lo)>>63 {
		return 0, fmt.Errorf("%s: %w", overflowMsg, ErrOverflow)
	}
	return int64(lo), nil
}

// addInt64 returns a+b and whether it did not overflow.
func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}

// Label returns the profile's label from its metadata, or "" when it has none.
func (p *Profile) Label() string {
	if p.Meta == nil {
		return ""
	}
	return p.Meta.Label
}

// Normalize merges stacks with identical frames (summing their values),
// drops stacks with no frames, and sorts stacks by Key
// (byte order, as stackcollapse-perf.pl's sort does).
func (p *Profile) Normalize() { p.normalize() }

// normalize is Normalize; it reports false when the sum of a stack's
// values overflowed an int64.
func (p *Profile) normalize() bool {
	idx := make(map[string]int, len(p.Stacks))
	out := p.Stacks[:0:0]
	fits := true
	for _, s := range p.Stacks {
		if len(s.Frames) == 0 {
			continue
		}
		k := s.Key()
		if i, ok := idx[k]; ok {
			var ok bool
			out[i].Value, ok = addInt64(out[i].Value, s.Value)
			fits = fits && ok
			continue
		}
		idx[k] = len(out)
		out = append(out, s)
	}
	keys := make([]string, len(out))
	for i := range out {
		keys[i] = out[i].Key()
	}
	sort.Sort(byKey{out, keys})
	p.Stacks = out
	return fits
}

type byKey struct {
	s    []Stack
	keys []string
}

func (b byKey) Len() int           { return len(b.s) }
func (b byKey) Less(i, j int) bool { return b.keys[i] < b.keys[j] }
func (b byKey) Swap(i, j int) {
	b.s[i], b.s[j] = b.s[j], b.s[i]
	b.keys[i], b.keys[j] = b.keys[j], b.keys[i]
}

// Clone returns a deep copy of p (frames slices are copied; strings are shared).
func (p *Profile) Clone() *Profile {
	q := *p
	q.Stacks = make([]Stack, len(p.Stacks))
	for i, s := range p.Stacks {
		q.Stacks[i] = Stack{Frames: append([]string(nil), s.Frames...), Value: s.Value}
	}
	if p.Meta != nil {
		m := *p.Meta
		m.Extra = maps.Clone(m.Extra)
		if m.Complete != nil {
			c := *m.Complete
			m.Complete = &c
		}
		q.Meta = &m
	}
	return &q
}

// Merge returns a new profile holding the stacks of p and others, values
// summed. Metadata is taken from p. Units must agree, and the sums, each
// stack's and the total, must fit in an int64 (else an error wrapping
// ErrOverflow).
func (p *Profile) Merge(others ...*Profile) (*Profile, error) {
	q := p.Clone()
	for _, o := range others {
		if unitOf(o) != unitOf(p) {
			return nil, fmt.Errorf("merge: unit %q differs from %q", unitOf(o), unitOf(p))
		}
		for _, s := range o.Stacks {
			q.Stacks = append(q.Stacks, Stack{Frames: append([]string(nil), s.Frames...), Value: s.Value})
		}
		q.Samples += o.Samples
		q.Skipped += o.Skipped
	}
	if !q.normalize() {
		return nil, fmt.Errorf("merge: the counts of a stack add up to more than an int64 holds: %w", ErrOverflow)
	}
	if _, err := q.CheckedTotal(); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return q, nil
}

func unitOf(p *Profile) string {
	if p.Unit == "" {
		return UnitSamples
	}
	return p.Unit
}

// Filter returns a new profile with the stacks for which keep returns true.
func (p *Profile) Filter(keep func(Stack) bool) *Profile {
	q := *p
	q.Stacks = nil
	for _, s := range p.Stacks {
		if keep(s) {
			q.Stacks = append(q.Stacks, s)
		}
	}
	return &q
}

// Scale returns a new profile whose values are multiplied by f and rounded
// to the nearest integer; stacks whose value rounds to zero are dropped.
// pprof's -diff_base is Scale(-1) followed by Merge.
func (p *Profile) Scale(f float64) *Profile {
	q := *p
	q.Stacks = make([]Stack, 0, len(p.Stacks))
	for _, s := range p.Stacks {
		v := float64(s.Value) * f
		var r int64
		if v >= 0 {
			r = int64(v + 0.5)
		} else {
			r = -int64(-v + 0.5)
		}
		if r != 0 {
			q.Stacks = append(q.Stacks, Stack{Frames: s.Frames, Value: r})
		}
	}
	return &q
}

// KernelSuffix marks a kernel frame in a folded stack: stackcollapse-perf.pl's
// "_[k]", kept when a profile is parsed with PerfOptions.Kernel.
const KernelSuffix = "_[k]"

// WithoutKernel returns p without its kernel frames (those ending in
// KernelSuffix), as if it had been parsed with PerfOptions.NoKernel: a
// sample in the kernel counts for the user stack that entered it.
func (p *Profile) WithoutKernel() *Profile {
	return p.MapFrames(func(i int, name string) (string, bool) {
		return name, i == 0 || !strings.HasSuffix(name, KernelSuffix)
	})
}

// MapFrames returns a new profile whose frames are rewritten by f. f gets the
// frame index (0 is the root, usually the thread name) and the name, and
// returns the new name and whether to keep the frame. Stacks that become
// identical are merged.
func (p *Profile) MapFrames(f func(i int, name string) (string, bool)) *Profile {
	q := *p
	q.Stacks = make([]Stack, 0, len(p.Stacks))
	for _, s := range p.Stacks {
		fr := make([]string, 0, len(s.Frames))
		for i, name := range s.Frames {
			if n, keep := f(i, name); keep {
				fr = append(fr, n)
			}
		}
		q.Stacks = append(q.Stacks, Stack{Frames: fr, Value: s.Value})
	}
	q.Normalize()
	return &q
}
