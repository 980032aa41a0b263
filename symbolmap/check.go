package symbolmap

import (
	"fmt"

	"github.com/flamediff/flamediff/fold"
)

// Check returns diagnostics about how the map fits profile p: rules that can
// never match it (warnings), each at the position of the rule or pattern.
//
// Each pattern is tried against the names the step it belongs to sees:
// comm patterns against the thread names (frame 0), elide patterns against
// the normalised frames, rename patterns against the normalised frames
// that survive elision (an elide rule with a caller or callee condition
// lets its names through), subsystem and thread-root patterns against the
// mapped frames. A rule limited by labels that p's label does not match is
// reported once as not applicable instead, as it is not meant to match.
// The map built by Default yields no diagnostics.
func (m *Map) Check(p *fold.Profile) []Diagnostic {
	label := p.Label()
	prof := fmt.Sprintf("profile %q", label)
	if label == "" {
		prof = "the profile (it has no label)"
	}
	comms := map[string]bool{}
	normalized := map[string]bool{}
	for _, s := range p.Stacks {
		for i, f := range s.Frames {
			if i == 0 {
				comms[f] = true
			} else {
				normalized[m.normalize.apply(f)] = true
			}
		}
	}
	a := m.active(label)
	survivors := map[string]bool{}
	for n := range normalized {
		elided := false
		for _, r := range a.elide {
			if r.hasContext() {
				continue // elides in some stacks only: the rest reach rename
			}
			if _, ok := r.m.match(n); ok {
				elided = true
				break
			}
		}
		if !elided {
			survivors[n] = true
		}
	}
	mp, _ := m.Apply(p)
	mapped := map[string]bool{}
	for _, s := range mp.Stacks {
		for _, f := range s.Frames {
			mapped[f] = true
		}
	}

	var diags []Diagnostic
	warn := func(line, col int, hint, format string, args ...any) {
		diags = append(diags, Diagnostic{Severity: Warning, File: m.file, Line: line, Column: col,
			Msg: fmt.Sprintf(format, args...), Hint: hint})
	}
	anyMatch := func(pt *pattern, names map[string]bool) bool {
		if pt.kind == patExact {
			return names[pt.text]
		}
		for n := range names {
			if pt.re.MatchString(n) {
				return true
			}
		}
		return false
	}
	const hintNever = "check the spelling against the profile (flamediff report), or limit the rule to the versions that have the name with labels:"
	checkRules := func(rs []*rule, names map[string]bool, what string) {
		for _, r := range rs {
			desc := r.describe(m.file)
			if r.labels != nil && !matchLabel(r.labels, label) {
				warn(r.line, r.col, "expected when the rule is for other versions", "%s: not applicable to %s: labels %s do not match", desc, prof, r.labelsText())
				continue
			}
			for _, pt := range r.m.pats {
				if !anyMatch(pt, names) {
					warn(pt.line, pt.col, hintNever, "%s: %s matches no %s of %s", desc, pt, what, prof)
				}
			}
		}
	}
	checkRules(m.comm, comms, "thread name")
	checkRules(m.elide, normalized, "frame")
	checkRules(m.rename, survivors, "frame left after normalize and elide")
	for _, s := range m.subsys {
		for _, pt := range s.m.pats {
			if !anyMatch(pt, mapped) {
				warn(pt.line, pt.col, "subsystems match mapped (canonical) names: use the name rename produces", "subsystem %q: %s matches no mapped frame of %s", s.name, pt, prof)
			}
		}
	}
	for _, pt := range m.roots.pats {
		if !anyMatch(pt, mapped) {
			warn(pt.line, pt.col, "thread roots match mapped (canonical) names", "thread_roots: %s matches no mapped frame of %s", pt, prof)
		}
	}
	return diags
}
