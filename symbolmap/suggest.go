package symbolmap

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
)

// This file proposes symbol map rules: functions that carry a meaningful
// share in one profile and are absent from the other are paired by where
// they sit in the call tree. See Suggest.

// Defaults of SuggestOptions.
const (
	DefaultSuggestMinShare = 0.5 // percent of the profile's samples
	DefaultSuggestMinScore = 0.3
)

// SuggestOptions control Suggest. The zero value gives the defaults.
type SuggestOptions struct {
	// MinShare is the inclusive share, in percent of the profile's total,
	// a function found in one profile only must hold to be explained (0:
	// DefaultSuggestMinShare). Partners of a rename may hold less.
	MinShare float64
	// MinScore is the lowest score a proposal may have (0:
	// DefaultSuggestMinScore); scores run from 0 to 1.
	MinScore float64
	// Root, when set, limits the analysis to Root and the functions below
	// it (the mapped frames from Root's outermost occurrence down, in the
	// stacks that contain it); shares stay percentages of the whole profile.
	Root string
	// Max stops after that many proposals (0: no limit).
	Max int
}

func (o SuggestOptions) minShare() float64 {
	if o.MinShare <= 0 {
		return DefaultSuggestMinShare
	}
	return o.MinShare
}

func (o SuggestOptions) minScore() float64 {
	if o.MinScore <= 0 {
		return DefaultSuggestMinScore
	}
	return o.MinScore
}

// Side names one of the two profiles Suggest compares.
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
	// Score is the confidence, from 0 to 1 (see Suggest).
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
	// without SuggestOptions.Root).
	RootShare float64
}

// Suggestions are the result of Suggest.
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
	Options SuggestOptions
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

// Suggest proposes the symbol map rules that would make base and target
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
// function's). The result is deterministic. Suggest returns an error only
// when opts.Root is in neither profile.
func Suggest(m *Map, base, target *fold.Profile, opts SuggestOptions) (*Suggestions, error) {
	if m == nil {
		m = Default()
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

// Names are interned: an id is an index into suggester.names.
const (
	noName  int32 = -1 // no caller: the top of the (named) stack
	groupID int32 = -2 // the node of a group of functions taken as one
)

// sideData is one profile prepared for suggesting: mapped stacks without
// thread names and unresolved frames, and the rules accepted so far.
type sideData struct {
	total  int64
	root   int64 // value of the stacks through the root (Options.Root)
	stacks [][]int32
	values []int64
	// originals maps a mapped name to the (normalised) symbols that give it.
	originals map[int32][]string
	rename    []int32 // by id: the canonical name, or noName
	elide     []bool  // by id

	// Recomputed by refresh, by id where not said.
	view    [][]int32
	present []int64 // inclusive value; 0: absent
	where   [][]int // indexes of the view's stacks holding the name
}

// load prepares one profile, interning its names; ok says whether root
// (when set) was found.
func (g *suggester) load(m *Map, p *fold.Profile, root string) (sd *sideData, ok bool) {
	r := m.resolver(p.Label())
	sd = &sideData{total: p.Total()}
	orig := map[int32]map[string]bool{}
	for _, s := range p.Stacks {
		var fr []int32
		hasRoot := root == ""
		for i, name := range s.Frames {
			if i == 0 {
				continue
			}
			v := r.resolve(i, name)
			if !v.keep || isUnresolved(v.name) {
				continue
			}
			id := g.intern(v.name)
			if orig[id] == nil {
				orig[id] = map[string]bool{}
			}
			orig[id][m.normalize.apply(name)] = true
			if !hasRoot && v.name == root {
				hasRoot, fr = true, fr[:0] // keep the root and what is below it
			}
			fr = append(fr, id)
		}
		// Values are counts: a stack of no (or negative) weight says nothing.
		if !hasRoot || len(fr) == 0 || s.Value <= 0 {
			continue
		}
		ok = ok || root != ""
		sd.root += s.Value
		sd.stacks = append(sd.stacks, fr)
		sd.values = append(sd.values, s.Value)
	}
	sd.originals = make(map[int32][]string, len(orig))
	for k, set := range orig {
		sd.originals[k] = slices.Sorted(maps.Keys(set))
	}
	return sd, ok
}

func (g *suggester) intern(name string) int32 {
	id, ok := g.ids[name]
	if !ok {
		id = int32(len(g.names))
		g.ids[name] = id
		g.names = append(g.names, name)
	}
	return id
}

// isUnresolved reports whether a frame is one the profiler could not name
// ("[mariadbd]", "[unknown]", "[libc.so.6]"), as diff.IsUnresolved does.
func isUnresolved(name string) bool {
	return len(name) >= 2 && name[0] == '[' && name[len(name)-1] == ']'
}

func (sd *sideData) share(v int64) float64 {
	if sd.total == 0 {
		return 0
	}
	return float64(v) * 100 / float64(sd.total)
}

type suggester struct {
	opts   SuggestOptions
	names  []string
	ids    map[string]int32
	sides  [2]*sideData
	common []bool // by id: in both profiles (refresh)
}

// refresh rebuilds both views with the accepted rules.
func (g *suggester) refresh() {
	n := len(g.names)
	for _, sd := range g.sides {
		sd.view = sd.view[:0]
		sd.present = make([]int64, n)
		sd.where = make([][]int, n)
		for si, st := range sd.stacks {
			fr := make([]int32, 0, len(st))
			for _, f := range st {
				if sd.elide[f] {
					continue
				}
				if to := sd.rename[f]; to != noName {
					f = to
				}
				fr = append(fr, f)
				if w := sd.where[f]; len(w) == 0 || w[len(w)-1] != si {
					sd.where[f] = append(w, si)
					sd.present[f] += sd.values[si]
				}
			}
			sd.view = append(sd.view, fr)
		}
	}
	g.common = make([]bool, n)
	for i := range g.common {
		g.common[i] = g.sides[Base].present[i] > 0 && g.sides[Target].present[i] > 0
	}
}

// oneSided returns the names of side s absent from the other, by name.
func (g *suggester) oneSided(s Side) []int32 {
	var out []int32
	for id, v := range g.sides[s].present {
		if v > 0 && g.sides[s.other()].present[id] == 0 {
			out = append(out, int32(id))
		}
	}
	g.byName(out)
	return out
}

func (g *suggester) byName(ids []int32) {
	sort.Slice(ids, func(i, j int) bool { return g.names[ids[i]] < g.names[ids[j]] })
}

func (g *suggester) unpaired() []OneSided {
	var out []OneSided
	for _, s := range []Side{Base, Target} {
		sd := g.sides[s]
		for _, id := range g.oneSided(s) {
			if sh := sd.share(sd.present[id]); sh >= g.opts.MinShare {
				u := OneSided{Name: g.names[id], Side: s, Share: sh}
				if g.opts.Root != "" && sd.root > 0 {
					u.RootShare = float64(sd.present[id]) * 100 / float64(sd.root)
				}
				out = append(out, u)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Share != out[j].Share {
			return out[i].Share > out[j].Share
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// nodeStats are the neighbours of one function, or of a group of functions
// taken as one, in one profile: values counted once per stack.
type nodeStats struct {
	incl, self int64
	callers    map[int32]int64 // nearest common caller; noName at the top
	callees    map[int32]int64 // nearest common callee
	edges      map[[2]int32]int64
}

func newNodeStats() *nodeStats {
	return &nodeStats{callers: map[int32]int64{}, callees: map[int32]int64{}, edges: map[[2]int32]int64{}}
}

// stats computes nodeStats in side s for every node of ids, which maps a
// name (never a common one) to the node it belongs to.
func (g *suggester) stats(s Side, ids map[int32]int32) map[int32]*nodeStats {
	sd := g.sides[s]
	out := map[int32]*nodeStats{}
	// Only the stacks that hold a node matter.
	var stacks []int
	if len(ids) < 64 {
		for n := range ids {
			stacks = append(stacks, sd.where[n]...)
		}
		sort.Ints(stacks)
		stacks = slices.Compact(stacks)
	} else {
		stacks = make([]int, len(sd.view))
		for i := range stacks {
			stacks[i] = i
		}
	}
	// Per stack, what was counted already (few entries: linear search).
	var seenI []int32
	var seenC, seenD [][2]int32
	var seenE [][3]int32
	var up, down []int
	for _, si := range stacks {
		fr, v := sd.view[si], sd.values[si]
		seenI, seenC, seenD, seenE = seenI[:0], seenC[:0], seenD[:0], seenE[:0]
		up, down = up[:0], down[:0]
		last := -1
		for i, f := range fr {
			up = append(up, last)
			if g.common[f] {
				last = i
			}
		}
		down = append(down, make([]int, len(fr))...)
		last = -1
		for i := len(fr) - 1; i >= 0; i-- {
			down[i] = last
			if g.common[fr[i]] {
				last = i
			}
		}
		for i, f := range fr {
			id, ok := ids[f]
			if !ok {
				continue
			}
			ns := out[id]
			if ns == nil {
				ns = newNodeStats()
				out[id] = ns
			}
			if !slices.Contains(seenI, id) {
				seenI = append(seenI, id)
				ns.incl += v
			}
			if i == len(fr)-1 {
				ns.self += v
			}
			c, d := noName, noName
			if up[i] >= 0 {
				c = fr[up[i]]
			}
			if down[i] >= 0 {
				d = fr[down[i]]
			}
			if k := [2]int32{id, c}; !slices.Contains(seenC, k) {
				seenC = append(seenC, k)
				ns.callers[c] += v
			}
			if k := [2]int32{id, d}; d != noName && !slices.Contains(seenD, k) {
				seenD = append(seenD, k)
				ns.callees[d] += v
			}
			if k := [3]int32{id, c, d}; c != noName && d != noName && !slices.Contains(seenE, k) {
				seenE = append(seenE, k)
				ns.edges[[2]int32{c, d}] += v
			}
		}
	}
	return out
}

// directEdges returns, in side s, the value of calls c → d between common
// functions with nothing but unresolved or elided frames between them.
func (g *suggester) directEdges(s Side) map[[2]int32]int64 {
	sd := g.sides[s]
	out := map[[2]int32]int64{}
	var seen [][2]int32
	for si, fr := range sd.view {
		seen = seen[:0]
		for i := 0; i+1 < len(fr); i++ {
			if !g.common[fr[i]] || !g.common[fr[i+1]] {
				continue
			}
			if k := [2]int32{fr[i], fr[i+1]}; !slices.Contains(seen, k) {
				seen = append(seen, k)
				out[k] += sd.values[si]
			}
		}
	}
	return out
}

// candidate is a proposal being weighed.
type candidate struct {
	kind  ProposalKind
	score float64
	side  Side    // the side whose names are rewritten
	names []int32 // rewritten names, by name
	to    int32   // rename/split target, on the other side; noName for elide
	share float64 // for ordering ties: the larger share involved
}

// overlap is the weighted overlap of two distributions given as values:
// the sum over shared keys of the smaller of the two normalised weights.
// Key noName (no caller) never counts. ok is false when both are empty.
func overlap(a, b map[int32]int64) (sim float64, ok bool) {
	var ta, tb int64
	for k, v := range a {
		if k != noName {
			ta += v
		}
	}
	for k, v := range b {
		if k != noName {
			tb += v
		}
	}
	if ta == 0 && tb == 0 {
		return 0, false
	}
	if ta == 0 || tb == 0 {
		return 0, true
	}
	// Sum in key order: float sums must not depend on map order, or ties
	// between candidates would break differently from run to run.
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if w, shared := b[k]; shared && k != noName {
			sim += math.Min(float64(a[k])/float64(ta), float64(w)/float64(tb))
		}
	}
	return sim, true
}

// pairScore scores a (side sa) against b (other side) as one function:
// 0 unless they share a callee, and a caller when either has one.
func pairScore(a, b *nodeStats, shareA, shareB float64) float64 {
	cs, cok := overlap(a.callers, b.callers)
	ds, _ := overlap(a.callees, b.callees)
	if ds == 0 || (cok && cs == 0) {
		// Nothing shared below, or callers that share nothing: siblings
		// with a similar share are not evidence enough.
		return 0
	}
	st := ds * 0.75 // callees only: the stacks were cut above both
	if cok {
		st = (cs + ds) / 2
	}
	ratio := math.Min(shareA, shareB) / math.Max(shareA, shareB)
	return st * math.Sqrt(ratio)
}

// best returns the best candidate scoring at least MinScore, or nil.
func (g *suggester) best() *candidate {
	var one [2][]int32
	var st [2]map[int32]*nodeStats
	for _, s := range []Side{Base, Target} {
		one[s] = g.oneSided(s)
		ids := make(map[int32]int32, len(one[s]))
		for _, n := range one[s] {
			ids[n] = n
		}
		st[s] = g.stats(s, ids)
	}
	enc := [2]map[int32]map[int32]float64{g.enclosing(Base, st[Base]), g.enclosing(Target, st[Target])}
	direct := [2]map[[2]int32]int64{g.directEdges(Base), g.directEdges(Target)}
	var best *candidate
	consider := func(c *candidate) {
		if c == nil || c.score < g.opts.MinScore {
			return
		}
		if best == nil || g.better(c, best) {
			best = c
		}
	}
	type scored struct {
		id    int32
		score float64
	}
	for _, s := range []Side{Base, Target} {
		sd, od := g.sides[s], g.sides[s.other()]
		for _, a := range one[s] {
			shA := sd.share(sd.present[a])
			if shA < g.opts.MinShare {
				continue
			}
			sa := st[s][a]
			// Renames and splits: the partners are on the other side.
			var partners []scored
			for _, b := range one[s.other()] {
				if sc := pairScore(sa, st[s.other()][b], shA, od.share(od.present[b])); sc > 0 {
					partners = append(partners, scored{b, sc})
				}
			}
			sort.SliceStable(partners, func(i, j int) bool { return partners[i].score > partners[j].score })
			if len(partners) > 0 {
				x, y, sc := g.outermost(s, a, partners[0].id, partners[0].score, st, enc)
				consider(g.renameCandidate(s, x, y, sc))
				ids := make([]int32, len(partners))
				for i, p := range partners {
					ids[i] = p.id
				}
				consider(g.splitCandidate(s, a, sa, shA, ids, st[s.other()], partners[0].score))
			}
			consider(g.wrapperCandidate(s, a, sa, direct))
		}
	}
	return best
}

// outerSlack is how much lower a pair of enclosing functions may score
// than the pair they enclose and still be preferred to it.
const outerSlack = 0.15

// outermost moves the pair a (side s) ↔ b up to the functions that enclose
// them, when those pair almost as well: a renamed function keeps its place
// and new code appears below it, so of a function and its callee that both
// match, the caller is the rename and the callee new code.
func (g *suggester) outermost(s Side, a, b int32, score float64, st [2]map[int32]*nodeStats, enc [2]map[int32]map[int32]float64) (int32, int32, float64) {
	sd, od := g.sides[s], g.sides[s.other()]
	for range 64 {
		bestA, bestB, bestSc := a, b, -1.0
		for _, up := range g.sortedByName(enc[s][a]) {
			if sc := pairScore(st[s][up], st[s.other()][b], sd.share(sd.present[up]), od.share(od.present[b])); sc >= score-outerSlack && sc > bestSc {
				bestA, bestB, bestSc = up, b, sc
			}
		}
		for _, up := range g.sortedByName(enc[s.other()][b]) {
			if sc := pairScore(st[s][a], st[s.other()][up], sd.share(sd.present[a]), od.share(od.present[up])); sc >= score-outerSlack && sc > bestSc {
				bestA, bestB, bestSc = a, up, sc
			}
		}
		if bestSc < 0 {
			break
		}
		a, b, score = bestA, bestB, bestSc
	}
	return a, b, score
}

// enclosing returns, for each one-sided function x of side s, the
// one-sided functions found above x in at least 90% of x's samples.
func (g *suggester) enclosing(s Side, st map[int32]*nodeStats) map[int32]map[int32]float64 {
	sd := g.sides[s]
	above := map[[2]int32]int64{}
	var seen [][2]int32
	for si, fr := range sd.view {
		seen = seen[:0]
		for j, x := range fr {
			if st[x] == nil {
				continue
			}
			for _, y := range fr[:j] {
				if k := [2]int32{x, y}; st[y] != nil && y != x && !slices.Contains(seen, k) {
					seen = append(seen, k)
					above[k] += sd.values[si]
				}
			}
		}
	}
	out := map[int32]map[int32]float64{}
	for k, v := range above {
		if f := float64(v) / float64(st[k[0]].incl); f >= 0.9 {
			if out[k[0]] == nil {
				out[k[0]] = map[int32]float64{}
			}
			out[k[0]][k[1]] = f
		}
	}
	return out
}

func (g *suggester) sortedByName(m map[int32]float64) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	g.byName(out)
	return out
}

func (g *suggester) better(a, b *candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.share != b.share {
		return a.share > b.share
	}
	return g.key(a) < g.key(b)
}

func (g *suggester) key(c *candidate) string {
	var b strings.Builder
	b.WriteString(c.kind.String())
	for _, n := range c.names {
		b.WriteString(";" + g.names[n])
	}
	if c.to != noName {
		b.WriteString(">" + g.names[c.to])
	}
	return b.String()
}

// renameCandidate pairs a (side s) with b (other side); the base's name is
// canonical, so the target's name is rewritten.
func (g *suggester) renameCandidate(s Side, a, b int32, score float64) *candidate {
	shA := g.sides[s].share(g.sides[s].present[a])
	shB := g.sides[s.other()].share(g.sides[s.other()].present[b])
	c := &candidate{kind: Rename, score: score, side: Target, share: math.Max(shA, shB)}
	if s == Target {
		c.names, c.to = []int32{a}, b
	} else {
		c.names, c.to = []int32{b}, a
	}
	return c
}

// splitCandidate tries to explain a (side s) by a group of functions of the
// other side, grown greedily from the best partner.
func (g *suggester) splitCandidate(s Side, a int32, sa *nodeStats, shA float64, partners []int32, st map[int32]*nodeStats, single float64) *candidate {
	const (
		gain       = 0.05
		maxPartner = 8
	)
	o := s.other()
	od := g.sides[o]
	group := []int32{partners[0]}
	score := single
	if len(partners) > maxPartner {
		partners = partners[:maxPartner]
	}
	for _, b := range partners[1:] {
		// A member must share a caller and a callee with a by itself.
		bs := st[b]
		if cs, _ := overlap(sa.callers, bs.callers); cs == 0 {
			continue
		}
		if ds, _ := overlap(sa.callees, bs.callees); ds == 0 {
			continue
		}
		try := append(slices.Clone(group), b)
		ids := map[int32]int32{}
		for _, n := range try {
			ids[n] = groupID
		}
		gs := g.stats(o, ids)[groupID]
		if sc := pairScore(sa, gs, shA, od.share(gs.incl)); sc > score+gain/2 {
			group, score = try, sc
		}
	}
	if len(group) < 2 || score < single+gain {
		return nil
	}
	g.byName(group)
	return &candidate{kind: Split, score: score, side: o, names: group, to: a, share: shA}
}

// wrapperCandidate scores w (side s) as an extra frame: the calls it sits on
// against the same calls made directly in the other profile.
func (g *suggester) wrapperCandidate(s Side, w int32, ws *nodeStats, direct [2]map[[2]int32]int64) *candidate {
	if len(ws.edges) == 0 || ws.incl == 0 {
		return nil
	}
	sd, od := g.sides[s], g.sides[s.other()]
	var covered int64
	for _, v := range ws.edges {
		covered += v
	}
	mine, theirs := direct[s], direct[s.other()]
	var lo, hi float64
	for _, e := range sortedEdgeIDs(ws.edges) {
		a := sd.share(ws.edges[e] + mine[e])
		b := od.share(theirs[e])
		lo += math.Min(a, b)
		hi += math.Max(a, b)
	}
	if lo == 0 {
		return nil
	}
	cover := float64(covered) / float64(ws.incl)
	notSelf := 1 - float64(ws.self)/float64(ws.incl)
	score := lo / hi * cover * math.Sqrt(notSelf)
	return &candidate{kind: Elide, score: score, side: s, names: []int32{w}, to: noName, share: sd.share(ws.incl)}
}

// accept records c's rule in the side it rewrites.
func (g *suggester) accept(c *candidate) {
	sd := g.sides[c.side]
	for _, n := range c.names {
		if c.kind == Elide {
			sd.elide[n] = true
		} else {
			sd.rename[n] = c.to
		}
	}
}

// proposal turns c into a Proposal with its evidence, before it is applied.
func (g *suggester) proposal(c *candidate, res *Suggestions) Proposal {
	sd, od := g.sides[c.side], g.sides[c.side.other()]
	p := Proposal{Kind: c.kind, Score: c.score, Side: c.side}
	if c.to != noName {
		p.To = g.names[c.to]
	}
	if res.labels {
		p.Label = res.Label(c.side)
	}
	ids := map[int32]int32{}
	for _, n := range c.names {
		p.Names = append(p.Names, g.names[n])
		p.Shares = append(p.Shares, sd.share(sd.present[n]))
		p.From = append(p.From, sd.originals[n]...)
		ids[n] = groupID
	}
	p.From = dedupSorted(p.From)
	ns := g.stats(c.side, ids)[groupID]
	if ns == nil {
		ns = newNodeStats()
	}
	if c.kind == Elide {
		theirs := g.directEdges(c.side.other())
		for _, e := range g.sortedEdges(ns.edges) {
			p.Edges = append(p.Edges, Edge{Caller: g.names[e[0]], Callee: g.names[e[1]], Via: sd.share(ns.edges[e]), Direct: od.share(theirs[e])})
		}
		return p
	}
	p.ToShare = od.share(od.present[c.to])
	ts := g.stats(c.side.other(), map[int32]int32{c.to: c.to})[c.to]
	if ts == nil {
		ts = newNodeStats()
	}
	// Evidence, as base | target shares.
	ev := func(n int32, mine, theirs int64) Evidence {
		e := Evidence{Name: g.names[n], Base: sd.share(mine), Target: od.share(theirs)}
		if c.side == Target {
			e.Base, e.Target = od.share(theirs), sd.share(mine)
		}
		return e
	}
	for _, n := range g.sortedByValue(ns.callers) {
		if v, ok := ts.callers[n]; ok && n != noName {
			p.Callers = append(p.Callers, ev(n, ns.callers[n], v))
		}
	}
	for _, n := range g.sortedByValue(ns.callees) {
		if v, ok := ts.callees[n]; ok {
			p.Callees = append(p.Callees, ev(n, ns.callees[n], v))
		}
	}
	return p
}

func dedupSorted(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

// sortedByValue returns m's keys, largest value first, then by name.
func (g *suggester) sortedByValue(m map[int32]int64) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		if k != noName {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if m[out[i]] != m[out[j]] {
			return m[out[i]] > m[out[j]]
		}
		return g.names[out[i]] < g.names[out[j]]
	})
	return out
}

func sortedEdgeIDs(m map[[2]int32]int64) [][2]int32 {
	out := make([][2]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b [2]int32) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1])
	})
	return out
}

// sortedEdges returns m's keys, largest value first, then by names.
func (g *suggester) sortedEdges(m map[[2]int32]int64) [][2]int32 {
	out := sortedEdgeIDs(m)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if m[a] != m[b] {
			return m[a] > m[b]
		}
		if a[0] != b[0] {
			return g.names[a[0]] < g.names[b[0]]
		}
		return g.names[a[1]] < g.names[b[1]]
	})
	return out
}

// evidenceShown is how many callers, callees or edges a comment lists.
const evidenceShown = 4

// YAML returns the proposals as symbol map YAML: a header comment, the
// elide rules, the rename rules (split proposals are rename rules with
// several names), each list best first (BestFirst) and each rule preceded
// by comments with its number in the order found and its evidence, and the
// unpaired functions as comments. With complete, it starts with
// "version: 1", so that the text is a map of its own; without, it is a
// fragment to merge into a map's elide and rename lists (MergeYAML).
// The text is deterministic.
func (s *Suggestions) YAML(complete bool) []byte {
	var b strings.Builder
	o := s.Options
	fmt.Fprintf(&b, "# Rules proposed by flamediff map suggest: %s (base) vs %s.\n", orNone(s.BaseLabel), orNone(s.TargetLabel))
	fmt.Fprintf(&b, "# %s with at least %.2f%% of the samples %s in one profile only", names.Plural(s.Before, "function"), o.MinShare, were(s.Before))
	if o.Root != "" {
		fmt.Fprintf(&b, " (under %s)", o.Root)
	}
	fmt.Fprintf(&b, ";\n# %s scoring at least %.2f", names.Plural(len(s.Proposals), "proposal"), o.MinScore)
	if len(s.Proposals) > 1 {
		b.WriteString(": elide rules, then rename rules, each best first (#N: order found)")
	}
	b.WriteString(".\n")
	b.WriteString("# Shares are inclusive, in percent of each profile's samples, written base | target.\n")
	if complete {
		b.WriteString("version: 1\n")
	}
	if el := s.rules(true); el != "" {
		b.WriteString("\nelide:\n" + el)
	}
	if rn := s.rules(false); rn != "" {
		b.WriteString("\nrename:\n" + rn)
	}
	if len(s.Proposals) == 0 {
		b.WriteString("\n# No proposal.\n")
	}
	if len(s.Unpaired) > 0 {
		fmt.Fprintf(&b, "\n# Not paired: %s with at least %.2f%% in one profile only (new or gone code,\n# or renames without enough evidence):\n", names.Plural(len(s.Unpaired), "function"), o.MinShare)
		for _, u := range s.Unpaired {
			what := "gone"
			if u.Side == Target {
				what = "new"
			}
			fmt.Fprintf(&b, "#   %-5s only in %s: %s %.2f%%", what, orNone(s.Label(u.Side)), u.Name, u.Share)
			if o.Root != "" {
				fmt.Fprintf(&b, " (%.2f%% of %s)", u.RootShare, o.Root)
			}
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}

// rules returns the elide rules (elide) or the rename rules, commented,
// as the items of a list indented by two spaces, in BestFirst order. The
// order within a list changes nothing: no two proposals rewrite the same
// symbol of the same profile.
func (s *Suggestions) rules(elide bool) string {
	var b strings.Builder
	for _, i := range s.BestFirst() {
		if (s.Proposals[i].Kind == Elide) == elide {
			s.writeRule(&b, i)
		}
	}
	return b.String()
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

// were returns "was" or "were" to go with n things.
func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func orNone(label string) string {
	if label == "" {
		return "(no label)"
	}
	return label
}

// Summary returns the proposal's one-line description, as the comment
// above its rule starts: "rename, score 0.87: 11.8 Sql_cmd_dml::execute
// 21.76% is 10.11 mysql_update 23.68%".
func (s *Suggestions) Summary(i int) string {
	p := s.Proposals[i]
	return fmt.Sprintf("%s, score %.2f: %s", p.Kind, p.Score, s.Describe(i))
}

// Describe returns what proposal i asserts, with the shares:
// "11.8 Sql_cmd_dml::execute 21.76% is 10.11 mysql_update 23.68%".
func (s *Suggestions) Describe(i int) string {
	p := s.Proposals[i]
	me, other := orNone(s.Label(p.Side)), orNone(s.Label(p.Side.other()))
	var names []string
	for j, n := range p.Names {
		names = append(names, fmt.Sprintf("%s %.2f%%", n, p.Shares[j]))
	}
	switch p.Kind {
	case Elide:
		return fmt.Sprintf("%s %s is an extra frame; %s calls its callees directly", me, names[0], other)
	case Split:
		return fmt.Sprintf("%s %s together are %s %s %.2f%%", me, strings.Join(names, " + "), other, p.To, p.ToShare)
	}
	return fmt.Sprintf("%s %s is %s %s %.2f%%", me, names[0], other, p.To, p.ToShare)
}

func (s *Suggestions) writeRule(b *strings.Builder, i int) {
	p := s.Proposals[i]
	fmt.Fprintf(b, "  # #%d %s\n", i+1, s.Summary(i))
	ev := func(what string, es []Evidence) {
		if len(es) == 0 {
			return
		}
		var parts []string
		for j, e := range es {
			if j == evidenceShown {
				parts = append(parts, fmt.Sprintf("+%d more", len(es)-j))
				break
			}
			parts = append(parts, fmt.Sprintf("%s %.2f%% | %.2f%%", e.Name, e.Base, e.Target))
		}
		fmt.Fprintf(b, "  #   %s: %s\n", what, strings.Join(parts, ", "))
	}
	if p.Kind == Elide {
		for j, e := range p.Edges {
			if j == evidenceShown {
				fmt.Fprintf(b, "  #   (+%s)\n", names.Plural(len(p.Edges)-j, "more call"))
				break
			}
			fmt.Fprintf(b, "  #   %s → %s: %.2f%% through it in %s, %.2f%% direct in %s\n",
				e.Caller, e.Callee, e.Via, orNone(s.Label(p.Side)), e.Direct, orNone(s.Label(p.Side.other())))
		}
	} else {
		ev("shared callers", p.Callers)
		ev("shared callees", p.Callees)
		if len(p.Callers) == 0 {
			b.WriteString("  #   no shared caller\n")
		}
		if len(p.Callees) == 0 {
			b.WriteString("  #   no shared callee\n")
		}
		fmt.Fprintf(b, "  - to: %s\n", yamlScalar(p.To))
	}
	from := make([]string, len(p.From))
	for j, f := range p.From {
		from[j] = yamlScalar(f)
	}
	key := "- from"
	if p.Kind != Elide {
		key = "  from"
	}
	fmt.Fprintf(b, "  %s: [%s]\n", key, strings.Join(from, ", "))
	if p.Label != "" {
		fmt.Fprintf(b, "    labels: [%s]\n", yamlScalar(globEscape(p.Label)))
	}
}

// yamlScalar writes name as a YAML scalar: plain when it is a simple
// identifier starting with a letter or '_' (C++ names with "::" and "~"
// included), double-quoted otherwise.
func yamlScalar(name string) string {
	plain := name != ""
	for i, r := range name {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' ||
			i > 0 && (r >= '0' && r <= '9' || r == '.' || r == ':' || r == '~')
		if !ok {
			plain = false
			break
		}
	}
	if plain && !strings.HasSuffix(name, ":") && !reservedScalar[strings.ToLower(name)] {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range name {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// reservedScalar are plain words YAML reads as something else than a string.
var reservedScalar = map[string]bool{"true": true, "false": true, "yes": true, "no": true,
	"on": true, "off": true, "null": true, "y": true, "n": true, "~": true}

// globEscape escapes the characters globs treat specially, so that a label
// matches itself only.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '*' || r == '?' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MergeYAML returns the map src (the text of a map file; empty for none)
// with the proposals' rules added: the elide rules at the end of its elide
// list, the rename rules at the front of its rename list, so that they win
// over the map's own rules for the same symbols (the first matching rule
// wins, and an original symbol the map renamed is named in From). The
// sections are created when missing. The map is re-encoded, comments
// kept, with two-space indentation; name is used in errors. The result is
// parsed again: an error wrapping ErrInvalid means the merged map is not
// valid (src was not, or a rule conflicts), and nothing should be written.
func (s *Suggestions) MergeYAML(src []byte, name string) ([]byte, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		out := s.YAML(true)
		return out, checkMerged(out, name)
	}
	if len(s.Proposals) == 0 {
		return src, checkMerged(src, name)
	}
	// Insert the rules as text where the map's own block lists are, so
	// that the rest of the file stays as written; re-encode otherwise.
	if out, ok := mergeText(src, s.rules(true), s.rules(false)); ok && checkMerged(out, name) == nil {
		return out, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("symbol map %s: %w: %w", name, ErrInvalid, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("symbol map %s: %w: the top level is not a mapping", name, ErrInvalid)
	}
	var frag yaml.Node
	if err := yaml.Unmarshal(s.YAML(false), &frag); err != nil {
		return nil, fmt.Errorf("suggest: rules do not parse: %w", err) // a bug
	}
	root := doc.Content[0]
	if len(frag.Content) == 1 && frag.Content[0].Kind == yaml.MappingNode {
		fm := frag.Content[0]
		for i := 0; i+1 < len(fm.Content); i += 2 {
			key, items := fm.Content[i].Value, fm.Content[i+1]
			if items.Kind != yaml.SequenceNode {
				continue
			}
			mergeSection(root, fm.Content[i], items, key == "rename")
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("symbol map %s: %w", name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("symbol map %s: %w", name, err)
	}
	out := b.Bytes()
	return out, checkMerged(out, name)
}

// mergeText inserts the elide items at the end of src's block-style elide
// list and the rename items at the front of its rename list, adding the
// sections at the end when missing. ok is false when a section is written
// in a form it does not handle (flow style, a scalar).
func mergeText(src []byte, elide, rename string) ([]byte, bool) {
	lines := strings.SplitAfter(string(src), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += "\n"
	}
	for _, sec := range []struct {
		key, items string
		front      bool
	}{{"elide", elide, false}, {"rename", rename, true}} {
		if sec.items == "" {
			continue
		}
		k := -1
		for i, l := range lines {
			if rest, ok := strings.CutPrefix(l, sec.key+":"); ok {
				if t := strings.TrimSpace(rest); t != "" && !strings.HasPrefix(t, "#") {
					return nil, false // flow style or a scalar
				}
				k = i
				break
			}
		}
		if k < 0 {
			lines = append(lines, "\n", sec.key+":\n", sec.items)
			continue
		}
		end := len(lines) // the next top-level key
		for i := k + 1; i < len(lines); i++ {
			if c := lines[i][0]; c != ' ' && c != '\t' && c != '#' && c != '-' && c != '\n' && c != '\r' {
				end = i
				break
			}
		}
		indent := "  "
		for _, l := range lines[k+1 : end] {
			if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "- ") {
				indent = l[:len(l)-len(t)]
				break
			}
		}
		items := sec.items
		if indent != "  " {
			var b strings.Builder
			for _, l := range strings.SplitAfter(items, "\n") {
				b.WriteString(indent + strings.TrimPrefix(l, "  "))
			}
			items = strings.TrimSuffix(b.String(), indent)
		}
		at := k + 1
		if !sec.front {
			// After the section's last item line, before the blank lines
			// and comments that lead to the next key.
			at = k + 1
			for i := k + 1; i < end; i++ {
				if c := lines[i][0]; c == ' ' || c == '\t' || c == '-' {
					if strings.TrimSpace(lines[i]) != "" {
						at = i + 1
					}
				}
			}
		}
		lines = append(lines[:at], append([]string{items}, lines[at:]...)...)
	}
	return []byte(strings.Join(lines, "")), true
}

// mergeSection adds items to the list under key in root (front or back),
// or adds the key with the items when root lacks it or holds no list there.
func mergeSection(root, key, items *yaml.Node, front bool) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != key.Value {
			continue
		}
		list := root.Content[i+1]
		if list.Kind != yaml.SequenceNode {
			root.Content[i+1] = items
			return
		}
		list.Style &^= yaml.FlowStyle // comments need block style
		if front {
			list.Content = append(append([]*yaml.Node(nil), items.Content...), list.Content...)
		} else {
			list.Content = append(list.Content, items.Content...)
		}
		return
	}
	root.Content = append(root.Content, key, items)
}

func checkMerged(out []byte, name string) error {
	if _, _, err := Parse(bytes.NewReader(out), name); err != nil {
		if errors.Is(err, ErrInvalid) {
			return err
		}
		return fmt.Errorf("symbol map %s: %w", name, err)
	}
	return nil
}
