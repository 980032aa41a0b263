package symbolmap

import (
	"sort"

	"github.com/flamediff/flamediff/fold"
)

// RuleRef names one comm, elide or rename rule of a map.
type RuleRef struct {
	// Rule is how --explain names it: `rename -> "mysql_update" (m.yaml:84)`.
	Rule string
	Kind string // "comm", "elide" or "rename"
	Line int    // the rule's line in the map file
	// Labels are the rule's label globs ("[11.*, 12.*]"), "" when it has
	// none; Context its caller and callee conditions, "" when none.
	Labels, Context string
}

func (m *Map) ref(r *rule) RuleRef {
	ref := RuleRef{Rule: r.describe(m.file), Kind: r.kind, Line: r.line, Context: r.contextText()}
	if r.labels != nil {
		ref.Labels = r.labelsText()
	}
	return ref
}

// SkippedByLabel returns the rules limited by labels that a profile
// labelled label does not get, in file order (comm, elide, rename): for a
// profile without label ("") every rule whose label globs do not match
// the empty string. Nil when every rule applies.
func (m *Map) SkippedByLabel(label string) []RuleRef {
	var out []RuleRef
	for _, rs := range [][]*rule{m.comm, m.elide, m.rename} {
		for _, r := range rs {
			if r.labels != nil && !matchLabel(r.labels, label) {
				out = append(out, m.ref(r))
			}
		}
	}
	return out
}

// RuleUse is one rule that changed a profile, and how much of it.
type RuleUse struct {
	RuleRef
	// Value is the total value of the stacks in which the rule changed a
	// frame (a stack counts once per rule), Total the profile's.
	Value, Total int64
}

// Applied returns the comm, elide and rename rules that changed at least
// one frame of p (with p's label, as Apply maps it), most value first
// then in file order. Rules that never applied are not listed (Check
// reports those).
func (m *Map) Applied(p *fold.Profile) []RuleUse {
	r := m.Resolver(p.Label())
	vals := map[*rule]int64{}
	var seen []*rule
	for _, s := range p.Stacks {
		seen = seen[:0]
		vs := r.resolveStack(s.Frames)
		drop := r.drops(vs)
		for i, v := range vs {
			if v.by == nil || drop != nil && drop[i] {
				continue
			}
			dup := false
			for _, x := range seen {
				dup = dup || x == v.by
			}
			if !dup {
				seen = append(seen, v.by)
				vals[v.by] += s.Value
			}
		}
	}
	total := p.Total()
	out := make([]RuleUse, 0, len(vals))
	for ru, v := range vals {
		out = append(out, RuleUse{RuleRef: m.ref(ru), Value: v, Total: total})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Value != out[j].Value {
			return out[i].Value > out[j].Value
		}
		return out[i].Line < out[j].Line
	})
	return out
}
