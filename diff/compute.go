package diff

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// Share is one function's figures in one profile of a comparison.
type Share struct {
	Inclusive            int64
	Self                 int64
	InclusivePct         float64
	SelfPct              float64
	InclusiveMicrosPerOp float64 // 0 unless Result.HasPerOp
	SelfMicrosPerOp      float64 // 0 unless Result.HasPerOp
	// Voluntary and Involuntary split Inclusive by the kind of switch
	// (off-CPU profiles; see FunctionShare).
	Voluntary, Involuntary int64
}

// FunctionDiff compares one function across the profiles.
type FunctionDiff struct {
	Name string
	// Profiles holds the function's share in each profile, base first
	// (zeros where the function does not occur).
	Profiles []Share
	// DeltaPP[i] is target i's inclusive percentage minus the base's, in
	// percentage points; SelfDeltaPP the same for self percentages.
	DeltaPP     []float64
	SelfDeltaPP []float64
	// DeltaMicrosPerOp[i] is the change in inclusive CPU µs per operation
	// of target i (nil unless Result.HasPerOp).
	DeltaMicrosPerOp []float64
	// Ratio[i] is target i's inclusive percentage divided by the base's:
	// +Inf when the base has none and the target has some, NaN when neither has.
	Ratio []float64
	// OnlyIn is the label of the one profile the function occurs in, when
	// it occurs in exactly one (of two or more): after mapping, that is
	// usually a rename the symbol map misses. "" otherwise.
	OnlyIn string
}

// SubsystemValue is one subsystem's figures in one profile of a comparison.
type SubsystemValue struct {
	Value       int64
	Pct         float64
	MicrosPerOp float64 // 0 unless Result.HasPerOp
	// Voluntary and Involuntary split Value by the kind of switch
	// (off-CPU profiles; see SubsystemShare).
	Voluntary, Involuntary int64
}

// SubsystemDiff compares one subsystem across the profiles (fields as in FunctionDiff).
type SubsystemDiff struct {
	Name             string
	Profiles         []SubsystemValue
	DeltaPP          []float64
	DeltaMicrosPerOp []float64
	Ratio            []float64
}

// NodeValue is one subtree row's figures in one profile.
type NodeValue struct {
	Value     int64
	Pct       float64 // of the profile total
	PctOfRoot float64 // of the root's value in that profile
	// EndValue and EndPct are those of the chain's end (Value and Pct
	// without a chain); see Node.
	EndValue int64
	EndPct   float64
}

// SubtreeRow is one row of a compared subtree, flattened.
type SubtreeRow struct {
	// Path runs from the root to this row (the rows' first functions);
	// Level is len(Path)-1.
	Path []string
	// Chain lists the functions the row merges, first to last, when it is
	// a pass-through chain in every profile; nil otherwise.
	Chain []string
	// Unresolved marks the row of the stacks ending inside unresolved
	// frames (see Node.Unresolved).
	Unresolved bool
	Level      int
	Profiles   []NodeValue
	DeltaPP    []float64 // per target, of Pct
}

// Label is the row's name as a report prints it (see Node.Label).
func (r SubtreeRow) Label() string {
	if len(r.Chain) > 1 {
		return strings.Join(r.Chain, " → ")
	}
	return r.Path[len(r.Path)-1]
}

// SubtreeDiff compares the breakdown of one root across the profiles: the
// union of the rows of each profile's breakdown, in depth-first order, the
// root first, siblings by their largest Pct in any profile, then name.
//
// The profiles' trees are aligned before they are collapsed: a row merges a
// callee (SubtreeOptions) only when that callee, the same in all, holds the
// threshold share in every profile that has the row, so the rows line up
// and Depth counts the same levels in every profile.
type SubtreeDiff struct {
	Root  string
	Depth int
	Rows  []SubtreeRow
	// SkippedUnresolved says unresolved frames were made transparent in
	// at least one profile; Threshold is the collapse threshold (above 1:
	// none).
	SkippedUnresolved bool
	Threshold         float64
}

// AttributionPart is one subsystem's share of a change per operation (in
// the Attribution's Unit).
type AttributionPart struct {
	Subsystem string
	// Base and Target are the subsystem's µs/op in each profile as shown
	// (whole hundredths that add up to the profile's shown cpu/o); Delta
	// is Target − Base.
	Base, Target float64
	Delta        float64 // µs/op, a whole number of hundredths
}

// Attribution splits the change per operation between the base and one
// target among subsystems (CPU µs, or for off-CPU profiles µs off the CPU
// or switches: Quantity and Unit say which), with one rounding: every figure is
// rounded once, to 0.01 µs, and every difference is taken between rounded
// figures, so that a table and a sentence of the same report show the same
// numbers and they add up.
//
// Delta is the target's µs/op rounded minus the base's rounded (what a
// reader gets from the two cpu/o figures shown). In each profile the
// subsystems' µs/op (share × the profile's µs/op) are rounded to 0.01 µs by
// the largest-remainder method, so that they add up exactly to the
// profile's rounded µs/op; each part's Delta is the difference of those,
// and the parts add up exactly to Delta. Parts are sorted by absolute size,
// largest first, ties in subsystem order.
type Attribution struct {
	Base, Target string
	// Quantity and Unit are the profiles' fold.Profile.Quantity and
	// PerOpUnit: "CPU" and "µs/op", "off-CPU time" and "µs/op", or
	// "context switches" and "cs/op". The fields named MicrosPerOp are in
	// Unit.
	Quantity, Unit    string
	BaseMicrosPerOp   float64
	TargetMicrosPerOp float64
	Delta             float64
	Parts             []AttributionPart
}

// Sentence returns the attribution as a report quotes it, leaving out parts
// of 0.00: "10.11 → 11.8: of +18.00 µs/op, commit +11.00, update +6.00,
// other +1.00" ("of +15.00 cs/op" for switches).
func (a Attribution) Sentence() string {
	var b strings.Builder
	unit := a.Unit
	if unit == "" {
		unit = "µs/op"
	}
	fmt.Fprintf(&b, "%s → %s: of %+.2f %s", a.Base, a.Target, a.Delta, unit)
	for _, p := range a.Parts {
		if math.Round(p.Delta*100) == 0 {
			continue
		}
		b.WriteString(", ")
		fmt.Fprintf(&b, "%s %+.2f", p.Subsystem, p.Delta)
	}
	return b.String()
}

// Result is a comparison of a base profile with one or more targets.
type Result struct {
	// Summaries are the per-profile summaries (base first); their run
	// figures carry RelativeQPS against the base.
	Summaries []*Summary
	// Functions are sorted by the largest absolute DeltaPP over the
	// targets, descending, then by name.
	Functions []FunctionDiff
	// Subsystems, sorted like Functions; nil without Options.Classify.
	Subsystems []SubsystemDiff
	// Subtrees, one per Options.Roots.
	Subtrees []SubtreeDiff
	// HasPerOp says every profile has per-op metadata; otherwise
	// PerOpMissing is the sentence saying what is needed.
	HasPerOp     bool
	PerOpMissing string
	// Attribution has one entry per target when HasPerOp and subsystems
	// were computed; nil otherwise.
	Attribution []Attribution
}

// Labels returns the profile labels, base first.
func (r *Result) Labels() []string {
	out := make([]string, len(r.Summaries))
	for i, s := range r.Summaries {
		out[i] = s.Profile.Label
	}
	return out
}

// ErrNoTarget is returned by Compute when it is given no target profile.
var ErrNoTarget = errors.New("no target profile to compare with the base")

// Compute compares base with each target: per function and per subsystem
// the share in each profile, the difference in percentage points and the
// ratio against the base, and, when every profile has run metadata with
// per-op figures, CPU µs per operation and the attribution of its change
// to subsystems. Off-CPU profiles are compared the same way, per operation
// in their own unit (µs off the CPU, or switches: fold.Profile.PerOp);
// profiles of different quantities are an error wrapping ErrMixed.
// Profiles are compared after whatever mapping the caller applied; none is
// modified.
func Compute(base *fold.Profile, targets []*fold.Profile, opts Options) (*Result, error) {
	if base == nil {
		return nil, errors.New("diff: base profile is nil")
	}
	if len(targets) == 0 {
		return nil, fmt.Errorf("diff: %w", ErrNoTarget)
	}
	all := append([]*fold.Profile{base}, targets...)
	for i, p := range all {
		if p == nil {
			return nil, fmt.Errorf("diff: target %d is nil", i)
		}
		if q, q0 := p.Quantity(), base.Quantity(); q != q0 {
			return nil, fmt.Errorf("diff: profile %d is of %s, the base of %s: %w", i, q, q0, ErrMixed)
		}
	}
	labs := labels(all, opts.Labels)
	r := &Result{HasPerOp: true}
	var missing []string
	for i, p := range all {
		o := opts
		o.Labels = []string{labs[i]}
		s := Summarize(p, o)
		s.PerOpMissing = ""
		if !s.Profile.HasPerOp {
			r.HasPerOp = false
			missing = append(missing, labs[i])
		}
		r.Summaries = append(r.Summaries, s)
	}
	baseQPS := r.Summaries[0].Profile.QPS
	for _, s := range r.Summaries {
		s.Profile.RelativeQPS = 0
		if baseQPS > 0 && s.Profile.QPS > 0 {
			s.Profile.RelativeQPS = s.Profile.QPS / baseQPS
		}
	}
	if !r.HasPerOp {
		r.PerOpMissing = perOpMissing(missing, len(all), base.IsOffCPU())
	}
	r.Functions = diffFunctions(r)
	if opts.Classify != nil {
		r.Subsystems = diffSubsystems(r)
		if r.HasPerOp {
			for i := 1; i < len(all); i++ {
				r.Attribution = append(r.Attribution, attribute(r.Summaries[0], r.Summaries[i]))
			}
		}
	}
	for i, root := range opts.Roots {
		trees := make([]*SubtreeResult, len(all))
		for j, s := range r.Summaries {
			trees[j] = s.Subtrees[i]
		}
		r.Subtrees = append(r.Subtrees, diffSubtree(root, opts.Depth, trees))
	}
	return r, nil
}

func diffFunctions(r *Result) []FunctionDiff {
	n := len(r.Summaries)
	idx := make(map[string]int)
	var out []FunctionDiff
	for pi, s := range r.Summaries {
		for _, f := range s.Functions {
			i, ok := idx[f.Name]
			if !ok {
				i = len(out)
				idx[f.Name] = i
				out = append(out, FunctionDiff{Name: f.Name, Profiles: make([]Share, n)})
			}
			out[i].Profiles[pi] = Share{
				Inclusive: f.Inclusive, Self: f.Self,
				InclusivePct: f.InclusivePct, SelfPct: f.SelfPct,
				InclusiveMicrosPerOp: f.InclusiveMicrosPerOp, SelfMicrosPerOp: f.SelfMicrosPerOp,
				Voluntary: f.Voluntary, Involuntary: f.Involuntary,
			}
		}
	}
	for i := range out {
		f := &out[i]
		b := f.Profiles[0]
		present := 0
		for pi, sh := range f.Profiles {
			if sh.Inclusive != 0 {
				present++
				f.OnlyIn = r.Summaries[pi].Profile.Label
			}
			if pi == 0 {
				continue
			}
			f.DeltaPP = append(f.DeltaPP, sh.InclusivePct-b.InclusivePct)
			f.SelfDeltaPP = append(f.SelfDeltaPP, sh.SelfPct-b.SelfPct)
			f.Ratio = append(f.Ratio, ratio(sh.InclusivePct, b.InclusivePct))
			if r.HasPerOp {
				f.DeltaMicrosPerOp = append(f.DeltaMicrosPerOp, sh.InclusiveMicrosPerOp-b.InclusiveMicrosPerOp)
			}
		}
		if present != 1 {
			f.OnlyIn = ""
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := maxAbs(out[i].DeltaPP), maxAbs(out[j].DeltaPP)
		if a != b {
			return a > b
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func diffSubsystems(r *Result) []SubsystemDiff {
	n := len(r.Summaries)
	idx := make(map[string]int)
	var out []SubsystemDiff
	for pi, s := range r.Summaries {
		for _, sub := range s.Subsystems {
			i, ok := idx[sub.Name]
			if !ok {
				i = len(out)
				idx[sub.Name] = i
				out = append(out, SubsystemDiff{Name: sub.Name, Profiles: make([]SubsystemValue, n)})
			}
			out[i].Profiles[pi] = SubsystemValue{Value: sub.Value, Pct: sub.Pct, MicrosPerOp: sub.MicrosPerOp,
				Voluntary: sub.Voluntary, Involuntary: sub.Involuntary}
		}
	}
	for i := range out {
		d := &out[i]
		b := d.Profiles[0]
		for _, v := range d.Profiles[1:] {
			d.DeltaPP = append(d.DeltaPP, v.Pct-b.Pct)
			d.Ratio = append(d.Ratio, ratio(v.Pct, b.Pct))
			if r.HasPerOp {
				d.DeltaMicrosPerOp = append(d.DeltaMicrosPerOp, v.MicrosPerOp-b.MicrosPerOp)
			}
		}
	}
	// Stable sort keeps subsystem order among equal changes.
	sort.SliceStable(out, func(i, j int) bool {
		return maxAbs(out[i].DeltaPP) > maxAbs(out[j].DeltaPP)
	})
	return out
}

// attribute splits target − base per op among subsystems (see Attribution).
func attribute(base, target *Summary) Attribution {
	a := Attribution{
		Base: base.Profile.Label, Target: target.Profile.Label,
		Quantity: base.Profile.Quantity, Unit: base.Profile.PerOpUnit,
		BaseMicrosPerOp: base.Profile.PerOp, TargetMicrosPerOp: target.Profile.PerOp,
	}
	baseH := int64(math.Round(base.Profile.PerOp * 100))
	targetH := int64(math.Round(target.Profile.PerOp * 100))
	a.Delta = float64(targetH-baseH) / 100
	// Subsystems in the base's order (targets may add names).
	var names []string
	idx := make(map[string]int)
	var bvals, tvals []float64
	add := func(name string) int {
		i, ok := idx[name]
		if !ok {
			i = len(names)
			idx[name] = i
			names = append(names, name)
			bvals, tvals = append(bvals, 0), append(tvals, 0)
		}
		return i
	}
	for _, s := range base.Subsystems {
		bvals[add(s.Name)] = s.MicrosPerOp * 100
	}
	for _, s := range target.Subsystems {
		tvals[add(s.Name)] = s.MicrosPerOp * 100
	}
	bh := largestRemainder(bvals, baseH)
	th := largestRemainder(tvals, targetH)
	for i, n := range names {
		a.Parts = append(a.Parts, AttributionPart{Subsystem: n,
			Base: float64(bh[i]) / 100, Target: float64(th[i]) / 100, Delta: float64(th[i]-bh[i]) / 100})
	}
	sort.SliceStable(a.Parts, func(i, j int) bool {
		return math.Abs(a.Parts[i].Delta) > math.Abs(a.Parts[j].Delta)
	})
	return a
}

// largestRemainder rounds vals to integers that add up to exactly total:
// each is floored, then the units still missing (or in excess) go to the
// values with the largest (or smallest) fractional parts, ties to the
// earlier value. vals should add up to about total.
func largestRemainder(vals []float64, total int64) []int64 {
	out := make([]int64, len(vals))
	if len(vals) == 0 {
		return out
	}
	frac := make([]float64, len(vals))
	var sum int64
	for i, v := range vals {
		f := math.Floor(v)
		out[i] = int64(f)
		frac[i] = v - f
		sum += out[i]
	}
	order := make([]int, len(vals))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return frac[order[a]] > frac[order[b]] })
	for k := 0; sum < total; k++ {
		out[order[k%len(order)]]++
		sum++
	}
	for k := len(order) - 1; sum > total; k-- {
		if k < 0 {
			k = len(order) - 1
		}
		out[order[k]]--
		sum--
	}
	return out
}

func diffSubtree(root string, depth int, trees []*SubtreeResult) SubtreeDiff {
	n := len(trees)
	d := SubtreeDiff{Root: root, Depth: depth, Threshold: DefaultCollapseThreshold}
	if n > 0 {
		d.Threshold = trees[0].Threshold
	}
	for _, t := range trees {
		d.SkippedUnresolved = d.SkippedUnresolved || t.SkippedUnresolved
	}
	// next returns the callee every present node passes through, or nil.
	next := func(nodes []*Node) []*Node {
		var name string
		out := make([]*Node, n)
		for i, nd := range nodes {
			if nd == nil || nd.Value <= 0 {
				continue
			}
			c := dominant(nd, d.Threshold)
			if c == nil || name != "" && c.Name != name {
				return nil
			}
			name, out[i] = c.Name, c
		}
		if name == "" {
			return nil
		}
		return out
	}
	var walk func(path []string, nodes []*Node)
	walk = func(path []string, nodes []*Node) {
		row := SubtreeRow{Path: path, Level: len(path) - 1, Profiles: make([]NodeValue, n)}
		ends := nodes
		for nx := next(ends); nx != nil; nx = next(ends) {
			if row.Chain == nil {
				row.Chain = []string{path[len(path)-1]}
			}
			for _, nd := range nx {
				if nd != nil {
					row.Chain = append(row.Chain, nd.Name)
					break
				}
			}
			ends = nx
		}
		for i, nd := range nodes {
			if nd == nil {
				continue
			}
			row.Unresolved = nd.Unresolved
			row.Profiles[i] = NodeValue{Value: nd.Value, Pct: nd.Pct, PctOfRoot: nd.PctOfRoot, EndValue: nd.Value, EndPct: nd.Pct}
			if e := ends[i]; e != nil {
				row.Profiles[i].EndValue, row.Profiles[i].EndPct = e.Value, e.Pct
			}
		}
		for _, v := range row.Profiles[1:] {
			row.DeltaPP = append(row.DeltaPP, v.Pct-row.Profiles[0].Pct)
		}
		d.Rows = append(d.Rows, row)
		if row.Level >= depth {
			return
		}
		// Union of the ends' children by name.
		type kid struct {
			name  string
			nodes []*Node
			max   float64
		}
		var kids []*kid
		byName := make(map[string]*kid)
		for i, nd := range ends {
			if nd == nil {
				continue
			}
			for _, c := range nd.Children {
				k := byName[c.Name]
				if k == nil {
					k = &kid{name: c.Name, nodes: make([]*Node, n)}
					byName[c.Name] = k
					kids = append(kids, k)
				}
				k.nodes[i] = c
				k.max = math.Max(k.max, c.Pct)
			}
		}
		sort.Slice(kids, func(i, j int) bool {
			if kids[i].max != kids[j].max {
				return kids[i].max > kids[j].max
			}
			return kids[i].name < kids[j].name
		})
		for _, k := range kids {
			walk(append(path[:len(path):len(path)], k.name), k.nodes)
		}
	}
	roots := make([]*Node, n)
	for i, t := range trees {
		roots[i] = t.full
	}
	walk([]string{root}, roots)
	return d
}

func ratio(t, b float64) float64 {
	if b == 0 {
		if t == 0 {
			return math.NaN()
		}
		return math.Inf(1)
	}
	return t / b
}

func maxAbs(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, math.Abs(x))
	}
	return m
}
