package input

import (
	"fmt"
	"sort"
	"strings"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/internal/textdist"
)

// RootError says why a function asked for by name (a subtree to break
// down) is not one the profiles can show.
type RootError struct {
	// Root is the name as asked for.
	Root string
	// ElidedBy is the map rule that removes this frame from the profiles,
	// or "" when no profile has the name.
	ElidedBy string
	// Closest are up to five names of the profiles nearest to Root, best
	// first, when ElidedBy is "".
	Closest []string
}

// Reason says what is wrong, without the name: "the symbol map removes
// this frame (RULE); choose its caller or callee", or "no such function in
// the profile; closest: a, b".
func (e *RootError) Reason() string {
	if e.ElidedBy != "" {
		return fmt.Sprintf("the symbol map removes this frame (%s); choose its caller or callee", e.ElidedBy)
	}
	msg := "no such function in the profile"
	if len(e.Closest) > 0 {
		msg += "; closest: " + strings.Join(e.Closest, ", ")
	}
	return msg
}

func (e *RootError) Error() string {
	return fmt.Sprintf("root %q: %s", e.Root, e.Reason())
}

// ResolveRoots checks that every root names a frame of at least one of the
// mapped profiles. A root given by its original symbol, which the map
// renamed, is replaced by the canonical name. Otherwise the error is a
// *RootError for the first root that fails.
func (s *Set) ResolveRoots(roots []string) ([]string, error) {
	if len(roots) == 0 {
		return nil, nil
	}
	have := make(map[string]bool)
	var frames []string
	for _, p := range s.Profiles {
		for _, f := range diff.Frames(p) {
			if !have[f] {
				have[f] = true
				frames = append(frames, f)
			}
		}
	}
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r
		if have[r] {
			continue
		}
		renamed, elidedBy := "", ""
		for _, e := range s.Explanations {
			if e == nil {
				continue
			}
			for _, rw := range e.Rewrites {
				if rw.Original != r {
					continue
				}
				if rw.Result == "" {
					elidedBy = rw.Rule
				} else if have[rw.Result] && renamed == "" {
					renamed = rw.Result
				}
			}
		}
		if renamed != "" {
			out[i] = renamed
			continue
		}
		if elidedBy != "" {
			return nil, &RootError{Root: r, ElidedBy: elidedBy}
		}
		return nil, &RootError{Root: r, Closest: closest(r, frames, 5)}
	}
	return out, nil
}

// closest returns up to n names nearest to want: names containing it
// (case-insensitively) first, shortest first, then by edit distance.
func closest(want string, names []string, n int) []string {
	lw := strings.ToLower(want)
	type cand struct {
		name string
		sub  bool
		dist int
	}
	var cs []cand
	for _, name := range names {
		ln := strings.ToLower(name)
		c := cand{name: name, sub: strings.Contains(ln, lw) || strings.Contains(lw, ln) && len(ln) > 3}
		c.dist = textdist.Levenshtein(lw, ln)
		if c.sub || c.dist <= max(2, len(want)/3) {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.sub != b.sub {
			return a.sub
		}
		if a.dist != b.dist {
			return a.dist < b.dist
		}
		return a.name < b.name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}
