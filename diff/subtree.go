package diff

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// DefaultCollapseThreshold is the share of its caller's value a single
// callee must hold for the two to be shown as one row (see SubtreeOptions).
const DefaultCollapseThreshold = 0.95

// UnresolvedName is the name of the row that holds, under a named function,
// the samples whose stacks end inside unresolved frames below it.
const UnresolvedName = "[unresolved]"

// summaryChildren is how many callees Summary lists by default.
const summaryChildren = 6

// IsUnresolved reports whether a frame is one the profiler could not name:
// stackcollapse prints those as the object's base name in brackets
// ("[mariadbd]", "[libc.so.6]", "[unknown]").
func IsUnresolved(frame string) bool {
	return len(frame) >= 2 && frame[0] == '[' && frame[len(frame)-1] == ']'
}

// SubtreeOptions control how Subtree and SubtreeDiff break a function down.
// The zero value gives the defaults: unresolved frames transparent,
// pass-through chains collapsed at DefaultCollapseThreshold, depth 0.
type SubtreeOptions struct {
	// Depth is the number of rows below the root, counted after
	// collapsing (0: the root row alone; negative is taken as 0).
	Depth int
	// KeepUnresolved shows unresolved frames (IsUnresolved) as nodes of
	// their own. By default they are transparent: their value flows to
	// their named callees, and the stacks that end inside them count,
	// under the nearest named ancestor, in a child row named
	// UnresolvedName (Node.Unresolved).
	KeepUnresolved bool
	// NoCollapse shows every call level as its own row. By default a node
	// whose largest named callee holds at least CollapseThreshold of the
	// node's value is merged with that callee into one row (Node.Chain),
	// repeatedly, so that a row is a function whose callees branch.
	NoCollapse bool
	// CollapseThreshold is the share (0 to 1] a callee must hold; 0 means
	// DefaultCollapseThreshold, a value above 1 collapses nothing.
	CollapseThreshold float64
}

func (o SubtreeOptions) threshold() float64 {
	if o.NoCollapse {
		return 2
	}
	if o.CollapseThreshold <= 0 {
		return DefaultCollapseThreshold
	}
	return o.CollapseThreshold
}

// Node is one row of a subtree breakdown: a function, or a chain of
// pass-through functions, and the samples that reach it through the path
// from the root above it.
type Node struct {
	// Name is the function of the row; for a chain, its first function.
	Name string
	// Chain, when the row merges pass-through calls, lists the functions
	// from Name (first) to the chain's end (last); nil otherwise.
	Chain []string
	// Unresolved marks the row of the stacks that end inside unresolved
	// frames called by the parent row (Name is UnresolvedName).
	Unresolved bool
	// Value is the value of the stacks passing through this node's path
	// (for a chain, through its first function); Self the part of it where
	// the node (for a chain, its end) is the leaf.
	Value int64
	Self  int64
	// EndValue is the value of the chain's end (Value without a chain):
	// Value less the self time and the callees under the threshold along
	// the chain. Children are the end's callees.
	EndValue int64
	// Pct and EndPct are Value and EndValue as percentages of the profile
	// total; PctOfRoot is Value as a percentage of the root's value.
	Pct       float64
	EndPct    float64
	PctOfRoot float64
	// Children are the callees, sorted by Value descending, then name.
	Children []*Node
}

// Label is the row's name as a report prints it: the chain joined by " → ",
// or Name.
func (n *Node) Label() string {
	if len(n.Chain) > 1 {
		return strings.Join(n.Chain, " → ")
	}
	return n.Name
}

// SubtreeResult is the breakdown of one function and its callees.
type SubtreeResult struct {
	// Root is the row of the function itself (PctOfRoot 100 unless its
	// value is 0); its Children are its callees to the requested depth.
	Root  *Node
	Depth int
	Total int64
	// SkippedUnresolved says that unresolved frames were made transparent
	// (some occurred below the root and KeepUnresolved was off).
	SkippedUnresolved bool
	// Threshold is the collapse threshold used (above 1: none).
	Threshold float64

	// full is the uncut, uncollapsed tree, for SubtreeDiff.
	full *Node
}

// Subtree returns the share of p's samples whose stack contains root, and
// the tree of its callees, shaped by opts (see SubtreeOptions).
//
// The root may be any frame, the thread name included. All occurrences of
// root are merged: each stack is counted once, from the outermost
// (nearest the thread) occurrence of root, so a recursive root is not
// double-counted; inner occurrences appear as callees of the outer one, as
// in a flame graph zoomed on the root. Callees with the same name under the
// same parent path are merged (after unresolved frames are skipped, so
// r → [x] → f and r → f are one row f). The result guarantees: Root.Value
// is the inclusive value Functions reports for root (for any frame but
// Frames[0]), every node's EndValue is at least the sum of its children's
// Values, and for a node above the cut Self plus its children's Values
// equals its EndValue (stacks ending in unresolved frames are in an
// Unresolved child). A root absent from p gives Root.Value 0.
func Subtree(p *fold.Profile, root string, opts SubtreeOptions) *SubtreeResult {
	depth := max(opts.Depth, 0)
	total := p.Total()
	full, skipped := buildTree(p, root, opts.KeepUnresolved)
	t := opts.threshold()
	top := view(full, 0, depth, t)
	top.finish(total, top.Value)
	return &SubtreeResult{Root: top, Depth: depth, Total: total, SkippedUnresolved: skipped, Threshold: t, full: full}
}

// buildTree returns the full tree of root's callees, unresolved frames
// skipped unless keep, with Pct and PctOfRoot filled; skipped says whether
// any frame was skipped.
func buildTree(p *fold.Profile, root string, keep bool) (*Node, bool) {
	type key struct {
		parent *Node
		name   string
	}
	kids := make(map[key]*Node)
	child := func(n *Node, name string, unresolved bool) *Node {
		k := key{n, name}
		c := kids[k]
		if c == nil {
			c = &Node{Name: name, Unresolved: unresolved}
			kids[k] = c
			n.Children = append(n.Children, c)
		}
		return c
	}
	top := &Node{Name: root}
	skipped := false
	for _, s := range p.Stacks {
		at := slices.Index(s.Frames, root)
		if at < 0 {
			continue
		}
		top.Value += s.Value
		n := top
		inUnresolved := false
		for _, f := range s.Frames[at+1:] {
			if !keep && IsUnresolved(f) {
				inUnresolved, skipped = true, true
				continue
			}
			inUnresolved = false
			n = child(n, f, false)
			n.Value += s.Value
		}
		if inUnresolved {
			n = child(n, UnresolvedName, true)
			n.Value += s.Value
		}
		n.Self += s.Value
	}
	top.finish(p.Total(), top.Value)
	return top, skipped
}

// dominant returns n's callee that holds at least t of n's value, or nil.
// Unresolved rows are never merged into a chain.
func dominant(n *Node, t float64) *Node {
	if n == nil || n.Value <= 0 || len(n.Children) == 0 {
		return nil
	}
	c := n.Children[0] // the largest
	if c.Unresolved || float64(c.Value) < t*float64(n.Value)*(1-1e-12) {
		return nil
	}
	return c
}

// view copies the full tree n with chains collapsed at t, cut below depth.
func view(n *Node, level, depth int, t float64) *Node {
	out := &Node{Name: n.Name, Unresolved: n.Unresolved, Value: n.Value}
	end := n
	for c := dominant(end, t); c != nil; c = dominant(end, t) {
		if out.Chain == nil {
			out.Chain = []string{n.Name}
		}
		out.Chain = append(out.Chain, c.Name)
		end = c
	}
	out.Self, out.EndValue = end.Self, end.Value
	if level < depth {
		for _, c := range end.Children {
			out.Children = append(out.Children, view(c, level+1, depth, t))
		}
	}
	return out
}

func (n *Node) finish(total, root int64) {
	if n.Chain == nil {
		n.EndValue = n.Value
	}
	n.Pct = pct(n.Value, total)
	n.EndPct = pct(n.EndValue, total)
	n.PctOfRoot = pct(n.Value, root)
	sort.Slice(n.Children, func(i, j int) bool {
		a, b := n.Children[i], n.Children[j]
		if a.Value != b.Value {
			return a.Value > b.Value
		}
		if a.Unresolved != b.Unresolved {
			return b.Unresolved
		}
		return a.Name < b.Name
	})
	for _, c := range n.Children {
		c.finish(total, root)
	}
}

// Summary returns the breakdown in the form a report quotes: the root row
// (its chain's end too, when that has less) and its named callees, largest
// first, with their shares of the whole profile:
// "mysqld_stmt_execute 68.35% → mysql_execute_command 66.43%: trans_commit_stmt 40.68%, mysql_update 23.70%, others 1.20%".
// With collapsing on, the callees are those of the first level where the
// subtree branches; they are listed whatever the depth. At most max callees
// are listed (6 when max <= 0), then "others" with the sum of the rest.
// Rows of stacks ending in unresolved frames are not listed.
func (r *SubtreeResult) Summary(max int) string { return r.SummaryWith(max, nil) }

// SummaryWith is Summary with every function name passed through name (a
// table shortens long names so), or as it is when name is nil.
func (r *SubtreeResult) SummaryWith(max int, name func(string) string) string {
	if name == nil {
		name = func(s string) string { return s }
	}
	if max <= 0 {
		max = summaryChildren
	}
	root := r.Root
	if r.full != nil && r.Depth < 1 {
		root = view(r.full, 0, 1, r.Threshold)
		root.finish(r.Total, root.Value)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %.2f%%", name(root.Name), root.Pct)
	if len(root.Chain) > 1 && root.EndValue != root.Value {
		fmt.Fprintf(&b, " → %s %.2f%%", name(root.Chain[len(root.Chain)-1]), root.EndPct)
	}
	var kids []*Node
	for _, c := range root.Children {
		if !c.Unresolved {
			kids = append(kids, c)
		}
	}
	if len(kids) == 0 {
		return b.String()
	}
	b.WriteString(": ")
	for i, c := range kids {
		if i == max {
			var rest int64
			for _, o := range kids[max:] {
				rest += o.Value
			}
			fmt.Fprintf(&b, ", others %.2f%%", pct(rest, r.Total))
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.2f%%", name(c.Name), c.Pct)
	}
	return b.String()
}

// Walk calls f for every node of the tree in depth-first order, root first,
// children in their sorted order, with the node's path from the root (the
// rows' Names, root included; f may keep it) and its level (0 for the root).
func (r *SubtreeResult) Walk(f func(path []string, level int, n *Node)) {
	var walk func(path []string, n *Node)
	walk = func(path []string, n *Node) {
		path = append(path, n.Name)
		f(slices.Clone(path), len(path)-1, n)
		for _, c := range n.Children {
			walk(path, c)
		}
	}
	walk(nil, r.Root)
}
