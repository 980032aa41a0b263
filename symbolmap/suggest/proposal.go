package suggest

import (
	"slices"
	"sort"
)

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
