package suggest

import (
	"fmt"
	"sort"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/symbolmap"
)

// Defaults of Options.
const (
	DefaultMinShare = 0.5 // percent of the profile's samples
	DefaultMinScore = 0.3
)

// Options control Compute. The zero value gives the defaults.
type Options struct {
	// MinShare is the inclusive share, in percent of the profile's total,
	// a function found in one profile only must hold to be explained (0:
	// DefaultMinShare). Partners of a rename may hold less.
	MinShare float64
	// MinScore is the lowest score a proposal may have (0:
	// DefaultMinScore); scores run from 0 to 1.
	MinScore float64
	// Root, when set, limits the analysis to Root and the functions below
	// it (the mapped frames from Root's outermost occurrence down, in the
	// stacks that contain it); shares stay percentages of the whole profile.
	Root string
	// Max stops after that many proposals (0: no limit).
	Max int
}

func (o Options) minShare() float64 {
	if o.MinShare <= 0 {
		return DefaultMinShare
	}
	return o.MinShare
}

func (o Options) minScore() float64 {
	if o.MinScore <= 0 {
		return DefaultMinScore
	}
	return o.MinScore
}

// Side names one of the two profiles Compute compares.
type Side int

// The two profiles.
const (
	Base Side = iota
	Target
)

func (s Side) other() Side { return 1 - s }

// ProposalKind says what a proposal asserts.
type ProposalKind int

// Proposal kinds.
const (
	// Rename: a function of one profile is a function of the other under
	// another name (rename rule, the base's name canonical).
	Rename ProposalKind = iota
	// Elide: a function of one profile is an extra frame between a caller
	// and callees that the other profile calls directly (elide rule).
	Elide
	// Split: several functions of one profile together do what one
	// function of the other does (one rename rule onto that function's name).
	Split
)

// String returns "rename", "elide" or "split".
func (k ProposalKind) String() string {
	switch k {
	case Elide:
		return "elide"
	case Split:
		return "split"
	}
	return "rename"
}

// Evidence is a function present in both profiles that supports a
// proposal (a shared caller or callee), with the share of the samples that
// reach it through the proposed function(s) in each profile, in percent of
// each profile's total.
type Evidence struct {
	Name         string
	Base, Target float64
}

// Edge is, for an elide proposal, a call from a caller to a callee both
// profiles have: Via is its share through the wrapper (in the wrapper's
// profile), Direct its share as a direct call in the other profile.
type Edge struct {
	Caller, Callee string
	Via, Direct    float64
}

// Proposal is one proposed rule with the evidence for it.
type Proposal struct {
	Kind ProposalKind
	// Score is the confidence, from 0 to 1 (see Compute).
	Score float64
	// Side is the profile whose frames the rule rewrites; Label its label.
	Side  Side
	Label string
	// Names are the functions (mapped names) the rule rewrites, with
	// their inclusive share (percent) in Side's profile.
	Names  []string
	Shares []float64
	// From are the symbols the rule must match: Names, or the original
	// symbols an existing map turned into them.
	From []string
	// To is the canonical name (rename, split) and ToShare its share in
	// the other profile; "" and 0 for elide.
	To      string
	ToShare float64
	// Callers and Callees are the shared neighbours (rename, split),
	// largest first; nil for elide.
	Callers, Callees []Evidence
	// Edges (elide) are the calls the wrapper sits on.
	Edges []Edge
}

// OneSided is a function found in one profile only.
type OneSided struct {
	Name  string
	Side  Side
	Share float64 // inclusive, percent of the profile's total
	// RootShare is the inclusive value in percent of the root's (0
	// without Options.Root).
	RootShare float64
}

// Suggestions are the result of Compute.
type Suggestions struct {
	// Labels of the base and target profiles.
	BaseLabel, TargetLabel string
	// Proposals in the order they were accepted: each was the best one
	// left when it was accepted, but a later proposal may rely on an
	// earlier one (a wrapper is recognised once the function above it is
	// paired) and score higher than it. BestFirst sorts them by score.
	Proposals []Proposal
	// Unpaired are the functions holding at least MinShare in one profile
	// and absent from the other once every proposal is applied: new or
	// gone code, or renames the evidence did not support. Largest first.
	Unpaired []OneSided
	// Before counts the functions holding at least MinShare in one
	// profile only before any proposal.
	Before int
	// Options as given, defaults filled.
	Options Options
	// labels: whether rules carry the label of the profile they rewrite.
	labels bool
}

// Label returns the label of the profile on side s.
func (s *Suggestions) Label(side Side) string {
	if side == Base {
		return s.BaseLabel
	}
	return s.TargetLabel
}

// BestFirst returns the indexes of the proposals from the highest score
// to the lowest, equal scores in the order found. Proposals holds them in
// the order found, which is not always best first: accepting one can
// raise the score of the next (a wrapper is recognised once the function
// above it is paired).
func (s *Suggestions) BestFirst() []int {
	out := make([]int, len(s.Proposals))
	for i := range out {
		out[i] = i
	}
	sort.SliceStable(out, func(a, b int) bool {
		return s.Proposals[out[a]].Score > s.Proposals[out[b]].Score
	})
	return out
}

// Compute proposes the symbol map rules that would make base and target
// comparable, after m (Default() for none) has been applied to both.
//
// It looks at the functions found in one profile only; those holding at
// least opts.MinShare of a profile's samples are to be explained. A
// function's neighbours are its nearest callers and callees present in
// both profiles (frames in one profile only and unresolved frames such as
// "[mariadbd]" are looked through; unresolved frames are never proposed).
// Three kinds of proposal are scored from 0 to 1:
//
//   - rename a ↔ b: the mean of the overlap of their callers and of their
//     callees (each the weighted overlap of two distributions, 0 to 1),
//     times the square root of the ratio of their shares. A pair that
//     shares no callee, or no caller while either has one, is never
//     proposed: siblings of a similar share are not evidence enough, so
//     leaf functions are not paired. When neither has a caller (stacks cut
//     short above both), the callees alone count, at three quarters.
//   - split: a group of functions of one profile scored as one function
//     against a single function of the other, proposed when it scores
//     clearly better than the best single rename.
//   - elide w: the calls caller → callee that w sits on in one profile
//     against the same calls made directly in the other (weighted
//     Jaccard of their shares), times the share of w's samples those calls
//     cover and the square root of the part of w that is not self time.
//
// Proposals are accepted greedily, best first; each is applied before the
// next is sought, so that a rename makes the functions below it
// comparable. Canonical names are the base's (for a split, the single
// function's). The result is deterministic. Compute returns an error only
// when opts.Root is in neither profile.
func Compute(m *symbolmap.Map, base, target *fold.Profile, opts Options) (*Suggestions, error) {
	if m == nil {
		m = symbolmap.Default()
	}
	opts.MinShare, opts.MinScore = opts.minShare(), opts.minScore()
	res := &Suggestions{BaseLabel: base.Label(), TargetLabel: target.Label(), Options: opts}
	res.labels = res.BaseLabel != "" && res.TargetLabel != "" && res.BaseLabel != res.TargetLabel
	g := &suggester{opts: opts, ids: map[string]int32{}}
	found := false
	for i, p := range []*fold.Profile{base, target} {
		sd, ok := g.load(m, p, opts.Root)
		found = found || ok
		g.sides[i] = sd
	}
	if opts.Root != "" && !found {
		return nil, fmt.Errorf("suggest: root %q is in neither profile", opts.Root)
	}
	for _, sd := range g.sides {
		sd.rename = make([]int32, len(g.names))
		for i := range sd.rename {
			sd.rename[i] = noName
		}
		sd.elide = make([]bool, len(g.names))
	}
	g.refresh()
	res.Before = len(g.unpaired())
	for opts.Max <= 0 || len(res.Proposals) < opts.Max {
		c := g.best()
		if c == nil {
			break
		}
		p := g.proposal(c, res)
		g.accept(c)
		g.refresh()
		res.Proposals = append(res.Proposals, p)
	}
	res.Unpaired = g.unpaired()
	return res, nil
}

// ComputeEach is Compute with the default options of base against each
// target in turn, for a report that compares one base with several
// versions. labels, when not nil, name the profiles (base first) in place
// of their own labels, as the report names them.
func ComputeEach(m *symbolmap.Map, base *fold.Profile, targets []*fold.Profile, labels []string) ([]*Suggestions, error) {
	out := make([]*Suggestions, len(targets))
	for i, target := range targets {
		s, err := Compute(m, base, target, Options{})
		if err != nil {
			return nil, err
		}
		if labels != nil {
			s.BaseLabel, s.TargetLabel = labels[0], labels[i+1]
		}
		out[i] = s
	}
	return out, nil
}
