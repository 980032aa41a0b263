package suggest

import (
	"math"
	"slices"
	"sort"
)

// candidate is a proposal being weighed.
type candidate struct {
	kind  ProposalKind
	score float64
	side  Side    // the side whose names are rewritten
	names []int32 // rewritten names, by name
	to    int32   // rename/split target, on the other side; noName for elide
	share float64 // for ordering ties: the larger share involved
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

// sortedByName returns m's keys sorted by name.
func (g *suggester) sortedByName(m map[int32]float64) []int32 {
	out := make([]int32, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	g.byName(out)
	return out
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
