package suggest

import (
	"maps"
	"slices"
	"sort"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/symbolmap"
)

// Names are interned: an id is an index into suggester.names.
const (
	noName  int32 = -1 // no caller: the top of the (named) stack
	groupID int32 = -2 // the node of a group of functions taken as one
)

// suggester holds the two profiles being compared and the names of both,
// interned.
type suggester struct {
	opts   Options
	names  []string
	ids    map[string]int32
	sides  [2]*sideData
	common []bool // by id: in both profiles (refresh)
}

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
func (g *suggester) load(m *symbolmap.Map, p *fold.Profile, root string) (sd *sideData, ok bool) {
	r := m.Resolver(p.Label())
	sd = &sideData{total: p.Total()}
	orig := map[int32]map[string]bool{}
	for _, s := range p.Stacks {
		var fr []int32
		hasRoot := root == ""
		mf := r.Stack(s.Frames) // context rules and glibc_cancel, as Apply does
		for i, name := range s.Frames {
			mapped, keep := mf[i].Name, mf[i].Keep
			if i == 0 || !keep || isUnresolved(mapped) {
				continue
			}
			id := g.intern(mapped)
			if orig[id] == nil {
				orig[id] = map[string]bool{}
			}
			orig[id][m.Normalize(name)] = true
			if !hasRoot && mapped == root {
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
