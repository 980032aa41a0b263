package diff

import (
	"sort"

	"github.com/flamediff/flamediff/fold"
)

// FunctionShare is the inclusive and self value of one function in one
// profile, as counts and as percentages of the profile total.
type FunctionShare struct {
	Name         string
	Inclusive    int64
	Self         int64
	InclusivePct float64
	SelfPct      float64
	// InclusiveMicrosPerOp and SelfMicrosPerOp are per operation, in the
	// profile's fold.Profile.PerOpUnit (CPU µs, µs off the CPU, or
	// switches); 0 unless fold.Profile.PerOp is known.
	InclusiveMicrosPerOp float64
	SelfMicrosPerOp      float64
	// Voluntary and Involuntary split Inclusive by the kind of switch, in
	// an off-CPU profile (see WithoutSwitchKind); 0 otherwise.
	Voluntary, Involuntary int64
}

// SharesOptions control Functions.
type SharesOptions struct {
	// IncludeThreads counts Frames[0] (the thread name) as a function.
	IncludeThreads bool
}

// Functions returns the inclusive and self share of every function of p.
//
// Guarantees: a stack adds its value at most once to a function's
// inclusive value, however often the function recurses in it, so no
// inclusive value exceeds the total; self values add up to the total less
// the value of stacks that have no function frame (a stack of a thread name
// alone, unless IncludeThreads). The result is sorted by inclusive value
// descending, then by name; per-op fields are filled when p.PerOp() is
// known. In an off-CPU profile the switch-kind leaf is no function: self
// values are those of the frame above it, and Voluntary and Involuntary
// split the inclusive values.
func Functions(p *fold.Profile, opts SharesOptions) []FunctionShare {
	type acc struct{ incl, self, vol, invol int64 }
	m := make(map[string]*acc)
	seen := make(map[string]bool)
	get := func(name string) *acc {
		a := m[name]
		if a == nil {
			a = &acc{}
			m[name] = a
		}
		return a
	}
	offCPU := p.IsOffCPU()
	for _, s := range p.Stacks {
		first := firstFunction(opts.IncludeThreads)
		frames, kind := stackKind(offCPU, s.Frames)
		if len(frames) <= first || s.Value == 0 {
			continue
		}
		clear(seen)
		for _, f := range frames[first:] {
			if seen[f] {
				continue
			}
			seen[f] = true
			a := get(f)
			a.incl += s.Value
			kinds(kind, s.Value, &a.vol, &a.invol)
		}
		get(frames[len(frames)-1]).self += s.Value
	}
	total := p.Total()
	upo := perOp(p)
	out := make([]FunctionShare, 0, len(m))
	for name, a := range m {
		fs := FunctionShare{
			Name:         name,
			Inclusive:    a.incl,
			Self:         a.self,
			InclusivePct: pct(a.incl, total),
			SelfPct:      pct(a.self, total),
			Voluntary:    a.vol,
			Involuntary:  a.invol,
		}
		fs.InclusiveMicrosPerOp = fs.InclusivePct / 100 * upo
		fs.SelfMicrosPerOp = fs.SelfPct / 100 * upo
		out = append(out, fs)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Inclusive != out[j].Inclusive {
			return out[i].Inclusive > out[j].Inclusive
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func firstFunction(includeThreads bool) int {
	if includeThreads {
		return 0
	}
	return 1
}

// pct returns v as a percentage of total, 0 when total is 0.
func pct(v, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(v) * 100 / float64(total)
}

// Frames returns every distinct frame name of p (thread names included),
// sorted; callers use it to suggest names close to a misspelt one.
func Frames(p *fold.Profile) []string {
	set := make(map[string]bool)
	for _, s := range p.Stacks {
		for _, f := range s.Frames {
			set[f] = true
		}
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}
