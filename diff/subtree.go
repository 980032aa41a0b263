package diff

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// Node is one function in a subtree breakdown: the samples that reach it
// through the path from the root above it.
type Node struct {
	Name string
	// Value is the value of the stacks passing through this node's path;
	// Self the part of it where the node is the leaf.
	Value int64
	Self  int64
	// Pct is Value as a percentage of the profile total; PctOfRoot as a
	// percentage of the root's value.
	Pct       float64
	PctOfRoot float64
	// Children are the callees, sorted by Value descending, then name.
	Children []*Node
}

// SubtreeResult is the breakdown of one function and its callees.
type SubtreeResult struct {
	// Root is the node of the function itself (PctOfRoot 100 unless its
	// value is 0); its Children are its callees to the requested depth.
	Root  *Node
	Depth int
	Total int64
}

// Subtree returns the share of p's samples whose stack contains root, and
// the tree of its callees to depth levels (depth 0: the root alone; 1: its
// direct callees; ...; negative depth is taken as 0).
//
// The root may be any frame, the thread name included. All occurrences of
// root are merged: each stack is counted once, from the outermost
// (nearest the thread) occurrence of root, so a recursive root is not
// double-counted; inner occurrences appear as callees of the outer one, as
// in a flame graph zoomed on the root. Callees with the same name under the
// same parent path are merged. The result guarantees: Root.Value is the
// inclusive value Functions reports for root (for any frame but Frames[0]),
// every node's Value is at least the sum of its children's, Self is the
// value of the stacks that end at the node (whatever the depth), and for a
// node above the cut Self plus its children's values equals its Value. A root absent from p gives Root.Value 0.
func Subtree(p *fold.Profile, root string, depth int) *SubtreeResult {
	if depth < 0 {
		depth = 0
	}
	total := p.Total()
	top := &Node{Name: root}
	for _, s := range p.Stacks {
		at := -1
		for i, f := range s.Frames {
			if f == root {
				at = i
				break
			}
		}
		if at < 0 {
			continue
		}
		top.Value += s.Value
		n := top
		rest := s.Frames[at+1:]
		if len(rest) == 0 {
			top.Self += s.Value
		}
		for i, f := range rest {
			if i >= depth {
				break
			}
			n = n.child(f)
			n.Value += s.Value
			if i == len(rest)-1 {
				n.Self += s.Value
			}
		}
	}
	top.finish(total, top.Value)
	return &SubtreeResult{Root: top, Depth: depth, Total: total}
}

func (n *Node) child(name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	c := &Node{Name: name}
	n.Children = append(n.Children, c)
	return c
}

func (n *Node) finish(total, root int64) {
	n.Pct = pct(n.Value, total)
	n.PctOfRoot = pct(n.Value, root)
	sort.Slice(n.Children, func(i, j int) bool {
		a, b := n.Children[i], n.Children[j]
		if a.Value != b.Value {
			return a.Value > b.Value
		}
		return a.Name < b.Name
	})
	for _, c := range n.Children {
		c.finish(total, root)
	}
}

// Summary returns the breakdown in the form a report quotes, the root and
// its direct callees with their shares of the whole profile:
// "mysqld_stmt_execute 32.77%: mysql_update 17.10%, trans_commit_stmt 12.00%".
// At most max callees are listed (all when max <= 0), then "+N more".
func (r *SubtreeResult) Summary(max int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %.2f%%", r.Root.Name, r.Root.Pct)
	kids := r.Root.Children
	if len(kids) == 0 {
		return b.String()
	}
	b.WriteString(": ")
	for i, c := range kids {
		if max > 0 && i == max {
			fmt.Fprintf(&b, ", +%d more", len(kids)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.2f%%", c.Name, c.Pct)
	}
	return b.String()
}

// Walk calls f for every node of the tree in depth-first order, root first,
// children in their sorted order, with the node's path from the root (root
// included; f may keep it) and its level (0 for the root).
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
