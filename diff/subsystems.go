package diff

import (
	"sort"

	"github.com/flamediff/flamediff/fold"
)

// SubsystemShare is the value of the stacks a classifier puts in one subsystem.
type SubsystemShare struct {
	Name  string
	Value int64
	Pct   float64
	// MicrosPerOp is per operation in the profile's PerOpUnit (CPU µs, µs
	// off the CPU, or switches); 0 unless p.PerOp() is known.
	MicrosPerOp float64
	// Voluntary and Involuntary split Value by the kind of switch, in an
	// off-CPU profile; 0 otherwise.
	Voluntary, Involuntary int64
}

// Classifier names the subsystem of a stack (frames root first), as
// (*symbolmap.Map).Subsystem does.
type Classifier func(frames []string) string

// Subsystems returns the share of each subsystem of p: every stack is
// given to exactly one subsystem by classify, so the values add up to the
// profile total and the percentages to 100 (up to float rounding) whenever
// the total is not 0.
//
// The result lists names in the given order (zero shares included), then
// any name classify returned that is not in names, sorted.
func Subsystems(p *fold.Profile, classify Classifier, names []string) []SubsystemShare {
	vals := make(map[string]int64)
	vol, invol := make(map[string]int64), make(map[string]int64)
	offCPU := p.IsOffCPU()
	for _, s := range p.Stacks {
		frames, kind := stackKind(offCPU, s.Frames)
		name := classify(frames)
		vals[name] += s.Value
		v, iv := vol[name], invol[name]
		kinds(kind, s.Value, &v, &iv)
		vol[name], invol[name] = v, iv
	}
	order := append([]string(nil), names...)
	known := make(map[string]bool, len(names))
	for _, n := range names {
		known[n] = true
	}
	var extra []string
	for n := range vals {
		if !known[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	order = append(order, extra...)
	total := p.Total()
	upo := perOp(p)
	out := make([]SubsystemShare, 0, len(order))
	for _, n := range order {
		sh := SubsystemShare{Name: n, Value: vals[n], Pct: pct(vals[n], total), Voluntary: vol[n], Involuntary: invol[n]}
		sh.MicrosPerOp = sh.Pct / 100 * upo
		out = append(out, sh)
	}
	return out
}
