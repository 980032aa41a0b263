package suggest

import (
	"maps"
	"math"
	"slices"
	"strings"
)

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

// better reports whether candidate a is to be accepted before b: the
// higher score, then the larger share, then by kind and names, so that
// ties break the same way on every run.
func (g *suggester) better(a, b *candidate) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.share != b.share {
		return a.share > b.share
	}
	return g.key(a) < g.key(b)
}

// key names a candidate by its kind and names, for ordering ties.
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
