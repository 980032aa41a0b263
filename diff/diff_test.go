package diff

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// prof builds a profile from "frame;frame;frame value"-like pairs.
func prof(meta *fold.Meta, stacks ...any) *fold.Profile {
	p := &fold.Profile{Meta: meta}
	for i := 0; i < len(stacks); i += 2 {
		p.Stacks = append(p.Stacks, fold.Stack{
			Frames: strings.Split(stacks[i].(string), ";"),
			Value:  int64(stacks[i+1].(int)),
		})
	}
	return p
}

// base: total 20; a recurses in the second stack; t;x is truncated.
func baseProfile(meta *fold.Meta) *fold.Profile {
	return prof(meta,
		"t;main;a;b", 10,
		"t;main;a;a;c", 5,
		"t;main;d", 3,
		"t;x", 2,
	)
}

// target: total 40; d and x gone, e new.
func targetProfile(meta *fold.Meta) *fold.Profile {
	return prof(meta,
		"t;main;a;b", 10,
		"t;main;a;a;c", 20,
		"t;main;e", 10,
	)
}

const eps = 1e-9

func near(a, b float64) bool {
	if math.IsInf(a, 1) && math.IsInf(b, 1) || math.IsNaN(a) && math.IsNaN(b) {
		return true
	}
	return math.Abs(a-b) < eps
}

func TestFunctions(t *testing.T) {
	type row struct {
		name       string
		incl, self int64
		inclPct    float64
		selfPct    float64
	}
	tests := []struct {
		name string
		p    *fold.Profile
		opts SharesOptions
		want []row
	}{
		{
			name: "recursion counted once",
			p:    baseProfile(nil),
			want: []row{
				{"main", 18, 0, 90, 0},
				{"a", 15, 0, 75, 0}, // 10 + 5, not 10 + 5 + 5
				{"b", 10, 10, 50, 50},
				{"c", 5, 5, 25, 25},
				{"d", 3, 3, 15, 15},
				{"x", 2, 2, 10, 10},
			},
		},
		{
			name: "thread names counted when asked",
			p:    prof(nil, "t;f", 3, "u;f;f;f", 1, "u", 4),
			opts: SharesOptions{IncludeThreads: true},
			want: []row{
				{"u", 5, 4, 62.5, 50},
				{"f", 4, 4, 50, 50},
				{"t", 3, 0, 37.5, 0},
			},
		},
		{
			name: "thread-only stack has no function",
			p:    prof(nil, "t;f", 3, "u;f;f;f", 1, "u", 4),
			want: []row{{"f", 4, 4, 50, 50}},
		},
		{
			name: "ties sorted by name",
			p:    prof(nil, "t;b", 1, "t;a", 1),
			want: []row{{"a", 1, 1, 50, 50}, {"b", 1, 1, 50, 50}},
		},
		{
			name: "empty profile",
			p:    &fold.Profile{},
			want: []row{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Functions(tt.p, tt.opts)
			if len(got) != len(tt.want) {
				t.Fatalf("Functions() returned %d functions %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.Name != w.name || g.Inclusive != w.incl || g.Self != w.self || !near(g.InclusivePct, w.inclPct) || !near(g.SelfPct, w.selfPct) {
					t.Errorf("Functions()[%d] = %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestFunctionsPerOp(t *testing.T) {
	// 2 CPU seconds over 1000 operations: 2000 µs/op; c is 25% of it.
	p := baseProfile(&fold.Meta{CPUSecondsTotal: 2, Operations: 1000})
	for _, f := range Functions(p, SharesOptions{}) {
		if f.Name == "c" {
			if !near(f.InclusiveMicrosPerOp, 500) || !near(f.SelfMicrosPerOp, 500) {
				t.Errorf("c per op = %v/%v, want 500/500", f.InclusiveMicrosPerOp, f.SelfMicrosPerOp)
			}
			return
		}
	}
	t.Fatal("c not found")
}

// flat renders a subtree as "label pct/pctOfRoot" lines, indented by level,
// with " end P" when a chain's end has less than its start.
func flat(r *SubtreeResult) string {
	var b strings.Builder
	r.Walk(func(path []string, level int, n *Node) {
		b.WriteString(strings.Repeat("  ", level))
		b.WriteString(n.Label())
		b.WriteString(" ")
		b.WriteString(short(n.Pct))
		b.WriteString("/")
		b.WriteString(short(n.PctOfRoot))
		if n.EndValue != n.Value {
			b.WriteString(" end ")
			b.WriteString(short(n.EndPct))
		}
		b.WriteString("\n")
	})
	return b.String()
}

func short(f float64) string { return strings.TrimRight(strings.TrimRight(ftoa(f), "0"), ".") }

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }

func TestSubtree(t *testing.T) {
	tests := []struct {
		name  string
		p     *fold.Profile
		root  string
		depth int
		want  string
	}{
		{
			name: "recursive root counted from outermost occurrence",
			p:    baseProfile(nil), root: "a", depth: 2,
			// The inner a passes everything to c: one row.
			want: "a 75/100\n  b 50/66.67\n  a → c 25/33.33\n",
		},
		{
			name: "depth 1",
			p:    baseProfile(nil), root: "a", depth: 1,
			want: "a 75/100\n  b 50/66.67\n  a → c 25/33.33\n",
		},
		{
			name: "depth 0 is the root alone",
			p:    baseProfile(nil), root: "main", depth: 0,
			want: "main 90/100\n",
		},
		{
			name: "negative depth is 0",
			p:    baseProfile(nil), root: "main", depth: -3,
			want: "main 90/100\n",
		},
		{
			name: "callees merged over all occurrences",
			p:    prof(nil, "t;x;r;a", 1, "t;y;r;a;b", 1, "t;y;r;c", 2),
			root: "r", depth: 2,
			want: "r 100/100\n  a 50/50\n    b 25/25\n  c 50/50\n",
		},
		{
			name: "thread name as root",
			p:    baseProfile(nil), root: "t", depth: 1,
			want: "t 100/100\n  main 90/90\n  x 10/10\n",
		},
		{
			name: "absent root",
			p:    baseProfile(nil), root: "nope", depth: 2,
			want: "nope 0/0\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := flat(Subtree(tt.p, tt.root, SubtreeOptions{Depth: tt.depth}))
			if got != tt.want {
				t.Errorf("Subtree(%q, %d) =\n%s\nwant\n%s", tt.root, tt.depth, got, tt.want)
			}
		})
	}
}

func TestSubtreeSelfAndSummary(t *testing.T) {
	p := prof(nil, "t;r", 2, "t;r;a", 3, "t;r;a;b", 5)
	r := Subtree(p, "r", SubtreeOptions{Depth: 1})
	if r.Root.Value != 10 || r.Root.Self != 2 {
		t.Errorf("root value/self = %d/%d, want 10/2", r.Root.Value, r.Root.Self)
	}
	// Self is where the node is the leaf, whatever the depth of the cut.
	if got := r.Root.Children[0]; got.Name != "a" || got.Value != 8 || got.Self != 3 || len(got.Children) != 0 {
		t.Errorf("child = %+v, want a 8 self 3, no children (cut at depth 1)", got)
	}
	if got, want := Subtree(baseProfile(nil), "main", SubtreeOptions{Depth: 1}).Summary(0), "main 90.00%: a 75.00%, d 15.00%"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	if got, want := Subtree(baseProfile(nil), "main", SubtreeOptions{Depth: 1}).Summary(1), "main 90.00%: a 75.00%, others 15.00%"; got != want {
		t.Errorf("Summary(1) = %q, want %q", got, want)
	}
}

// unresolvedProfile: r calls a directly and through an unresolved frame;
// some stacks end inside unresolved frames under r and under a. Total 11.
func unresolvedProfile() *fold.Profile {
	return prof(nil,
		"t;r;[x];a;b", 4,
		"t;r;a;c", 3,
		"t;r;[x]", 2,
		"t;r;a;[x];[libc.so.6]", 1,
		"t;r", 1,
	)
}

func TestSubtreeOptions(t *testing.T) {
	tests := []struct {
		name string
		p    *fold.Profile
		root string
		opts SubtreeOptions
		want string
	}{
		{
			name: "unresolved frames transparent, their leaves under the named ancestor",
			p:    unresolvedProfile(), root: "r", opts: SubtreeOptions{Depth: 2},
			want: "r 100/100\n" +
				"  a 72.73/72.73\n" +
				"    b 36.36/36.36\n" +
				"    c 27.27/27.27\n" +
				"    [unresolved] 9.09/9.09\n" +
				"  [unresolved] 18.18/18.18\n",
		},
		{
			name: "unresolved frames kept",
			p:    unresolvedProfile(), root: "r", opts: SubtreeOptions{Depth: 2, KeepUnresolved: true},
			want: "r 100/100\n" +
				"  [x] 54.55/54.55\n" +
				"    a → b 36.36/36.36\n" +
				"  a 36.36/36.36\n" +
				"    c 27.27/27.27\n" +
				"    [x] → [libc.so.6] 9.09/9.09\n",
		},
		{
			// r → a 100, a → b 95 (exactly the threshold), b → {c, d}.
			name: "chain collapsed at the threshold, depth counted after",
			p:    prof(nil, "t;r;a;b;c", 50, "t;r;a;b;d", 45, "t;r;a", 5),
			root: "r", opts: SubtreeOptions{Depth: 1},
			want: "r → a → b 100/100 end 95\n  c 50/50\n  d 45/45\n",
		},
		{
			name: "not collapsed below the threshold",
			p:    prof(nil, "t;r;a;b;c", 50, "t;r;a;b;d", 44, "t;r;a", 6),
			root: "r", opts: SubtreeOptions{Depth: 1},
			want: "r → a 100/100\n  b 94/94\n",
		},
		{
			name: "threshold option",
			p:    prof(nil, "t;r;a;b;c", 50, "t;r;a;b;d", 48, "t;r;a", 2),
			root: "r", opts: SubtreeOptions{Depth: 1, CollapseThreshold: 0.99},
			want: "r → a 100/100\n  b 98/98\n",
		},
		{
			name: "no collapse",
			p:    prof(nil, "t;r;a;b;c", 50, "t;r;a;b;d", 49, "t;r;a", 1),
			root: "r", opts: SubtreeOptions{Depth: 1, NoCollapse: true},
			want: "r 100/100\n  a 100/100\n",
		},
		{
			name: "chain through unresolved frames, never into the unresolved row",
			p:    prof(nil, "t;r;[x];a;[y]", 99, "t;r;[x];a;b", 1),
			root: "r", opts: SubtreeOptions{Depth: 2},
			want: "r → a 100/100\n  [unresolved] 99/99\n  b 1/1\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Subtree(tt.p, tt.root, tt.opts)
			if got := flat(r); got != tt.want {
				t.Errorf("Subtree(%q, %+v) =\n%s\nwant\n%s", tt.root, tt.opts, got, tt.want)
			}
			// Above the cut, self and children add up to the chain end.
			r.Walk(func(path []string, level int, n *Node) {
				if level >= r.Depth {
					return
				}
				sum := n.Self
				for _, c := range n.Children {
					sum += c.Value
				}
				if sum != n.EndValue {
					t.Errorf("%v: self %d + children = %d, want EndValue %d", path, n.Self, sum, n.EndValue)
				}
			})
		})
	}
}

func TestSubtreeUnresolvedFlags(t *testing.T) {
	r := Subtree(unresolvedProfile(), "r", SubtreeOptions{Depth: 1})
	if !r.SkippedUnresolved {
		t.Error("SkippedUnresolved = false, want true")
	}
	if r.Root.Self != 1 {
		t.Errorf("root self = %d, want 1 (the stack ending at r)", r.Root.Self)
	}
	u := r.Root.Children[1]
	if !u.Unresolved || u.Name != UnresolvedName || u.Value != 2 || u.Self != 2 {
		t.Errorf("unresolved row = %+v, want [unresolved] 2 self 2", u)
	}
	if r := Subtree(unresolvedProfile(), "r", SubtreeOptions{Depth: 1, KeepUnresolved: true}); r.SkippedUnresolved {
		t.Error("SkippedUnresolved with KeepUnresolved, want false")
	}
	for _, tc := range []struct {
		in   string
		want bool
	}{{"[mariadbd]", true}, {"[unknown]", true}, {"[libc.so.6]", true}, {"[]", true}, {"[", false}, {"a[1]", false}, {"operator[]", false}, {"", false}} {
		if got := IsUnresolved(tc.in); got != tc.want {
			t.Errorf("IsUnresolved(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestSubtreeSummary(t *testing.T) {
	var stacks []any
	// r → [x] → a (one pass-through, 100%) → 8 callees of 10..3, plus an
	// unresolved leaf of 5 that the summary leaves out.
	for i, v := range []int{10, 9, 8, 7, 6, 5, 4, 3} {
		stacks = append(stacks, "t;r;[x];a;f"+strconv.Itoa(i), v)
	}
	stacks = append(stacks, "t;r;[x];a;[y]", 5, "u;other", 43)
	p := prof(nil, stacks...)
	tests := []struct {
		opts SubtreeOptions
		max  int
		want string
	}{
		{SubtreeOptions{}, 0, "r 57.00%: f0 10.00%, f1 9.00%, f2 8.00%, f3 7.00%, f4 6.00%, f5 5.00%, others 7.00%"},
		{SubtreeOptions{}, 2, "r 57.00%: f0 10.00%, f1 9.00%, others 33.00%"},
		{SubtreeOptions{}, 8, "r 57.00%: f0 10.00%, f1 9.00%, f2 8.00%, f3 7.00%, f4 6.00%, f5 5.00%, f6 4.00%, f7 3.00%"},
		{SubtreeOptions{NoCollapse: true}, 0, "r 57.00%: a 57.00%"},
		{SubtreeOptions{KeepUnresolved: true, NoCollapse: true}, 0, "r 57.00%: [x] 57.00%"},
	}
	for _, tt := range tests {
		if got := Subtree(p, "r", tt.opts).Summary(tt.max); got != tt.want {
			t.Errorf("Subtree(r, %+v).Summary(%d) = %q, want %q", tt.opts, tt.max, got, tt.want)
		}
	}
	// The chain's end is named when it has less than the root.
	p = prof(nil, "t;r;a;b;c", 50, "t;r;a;b;d", 49, "t;r;a", 1)
	if got, want := Subtree(p, "r", SubtreeOptions{Depth: 1}).Summary(0), "r 100.00% → b 99.00%: c 50.00%, d 49.00%"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}

func TestSubtreeDiffAlignment(t *testing.T) {
	// In the base r → a is a pass-through (100%), in the target not (a is
	// 50%): the diff keeps r and a apart so that a lines up. a → b is a
	// pass-through in both: one row.
	base := prof(&fold.Meta{Label: "old"}, "t;r;[x];a;b;c", 60, "t;r;a;b;d", 40)
	target := prof(&fold.Meta{Label: "new"}, "t;r;a;b;c", 25, "t;r;a;b;d", 25, "t;r;e", 50)
	r, err := Compute(base, []*fold.Profile{target}, Options{Roots: []string{"r"}, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	// Per profile, the base collapses r → a → b; the target only a → b.
	if got, want := r.Summaries[0].Subtrees[0].Summary(0), "r 100.00%: c 60.00%, d 40.00%"; got != want {
		t.Errorf("base Summary() = %q, want %q", got, want)
	}
	if got, want := r.Summaries[1].Subtrees[0].Summary(0), "r 100.00%: a 50.00%, e 50.00%"; got != want {
		t.Errorf("target Summary() = %q, want %q", got, want)
	}
	type row struct {
		label      string
		level      int
		base, targ float64
	}
	want := []row{
		{"r", 0, 100, 100},
		{"a → b", 1, 100, 50},
		{"e", 1, 0, 50},
	}
	var got []row
	for _, rw := range r.Subtrees[0].Rows {
		got = append(got, row{rw.Label(), rw.Level, rw.Profiles[0].Pct, rw.Profiles[1].Pct})
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("subtree rows = %+v, want %+v", got, want)
	}
	if a := r.Subtrees[0].Rows[1]; !reflect.DeepEqual(a.Path, []string{"r", "a"}) || !reflect.DeepEqual(a.Chain, []string{"a", "b"}) || !near(a.DeltaPP[0], -50) {
		t.Errorf("a row = %+v, want path [r a], chain [a b], -50pp", a)
	}

	// Depth 2: the chain end's callees, aligned by name.
	r, err = Compute(base, []*fold.Profile{target}, Options{Roots: []string{"r"}, Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, rw := range r.Subtrees[0].Rows {
		paths = append(paths, strings.Join(rw.Path, ";"))
	}
	if want := []string{"r", "r;a", "r;a;c", "r;a;d", "r;e"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("depth 2 rows = %v, want %v", paths, want)
	}

	// When every profile passes through, the root row is a chain too, and
	// its end values are per profile.
	target2 := prof(&fold.Meta{Label: "new"}, "t;r;a;b;c", 30, "t;r;a;b;d", 69, "t;r;a", 1)
	r, err = Compute(base, []*fold.Profile{target2}, Options{Roots: []string{"r"}, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	top := r.Subtrees[0].Rows[0]
	if top.Label() != "r → a → b" || top.Profiles[0].EndValue != 100 || top.Profiles[1].EndValue != 99 || !near(top.Profiles[1].EndPct, 99) {
		t.Errorf("root row = %s %+v, want r → a → b, end 100 and 99", top.Label(), top.Profiles)
	}
	if len(r.Subtrees[0].Rows) != 3 || r.Subtrees[0].Rows[1].Label() != "d" {
		t.Errorf("rows = %+v, want r → a → b, d, c", r.Subtrees[0].Rows)
	}
	// And not at all with NoCollapse.
	r, err = Compute(base, []*fold.Profile{target2}, Options{Roots: []string{"r"}, Depth: 1, NoCollapse: true})
	if err != nil {
		t.Fatal(err)
	}
	if rows := r.Subtrees[0].Rows; len(rows) != 2 || rows[0].Chain != nil || rows[1].Label() != "a" {
		t.Errorf("NoCollapse rows = %+v, want r, a", rows)
	}
}

func TestSubtreeDiffRootMissingInOne(t *testing.T) {
	base := prof(nil, "t;r;a;b", 10)
	target := prof(nil, "t;x", 10)
	r, err := Compute(base, []*fold.Profile{target}, Options{Roots: []string{"r"}, Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	rows := r.Subtrees[0].Rows
	// The target has no r: the base alone decides the chain.
	if len(rows) != 1 || rows[0].Label() != "r → a → b" || rows[0].Profiles[1].Value != 0 || !near(rows[0].DeltaPP[0], -100) {
		t.Errorf("rows = %+v, want one row r → a → b, -100pp", rows)
	}
}

func TestSubsystems(t *testing.T) {
	classify := func(frames []string) string {
		for _, f := range frames {
			switch f {
			case "b":
				return "update"
			case "c":
				return "commit"
			case "x":
				return "zzz"
			}
		}
		return "other"
	}
	tests := []struct {
		name  string
		p     *fold.Profile
		names []string
		want  []SubsystemShare
	}{
		{
			name:  "map order, unknown names last, zero shares kept",
			p:     baseProfile(nil),
			names: []string{"update", "commit", "io", "other"},
			want: []SubsystemShare{
				{Name: "update", Value: 10, Pct: 50},
				{Name: "commit", Value: 5, Pct: 25},
				{Name: "io", Value: 0, Pct: 0},
				{Name: "other", Value: 3, Pct: 15},
				{Name: "zzz", Value: 2, Pct: 10},
			},
		},
		{
			name:  "per op",
			p:     prof(&fold.Meta{CPUSecondsTotal: 1, Operations: 100}, "t;b", 1, "t;c", 3),
			names: []string{"update", "commit", "other"},
			want: []SubsystemShare{
				{Name: "update", Value: 1, Pct: 25, MicrosPerOp: 2500},
				{Name: "commit", Value: 3, Pct: 75, MicrosPerOp: 7500},
				{Name: "other", Value: 0, Pct: 0},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Subsystems(tt.p, classify, tt.names)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Subsystems() = %+v, want %+v", got, tt.want)
			}
			var sum float64
			var vsum int64
			for _, s := range got {
				sum += s.Pct
				vsum += s.Value
			}
			if !near(sum, 100) || vsum != tt.p.Total() {
				t.Errorf("Subsystems() sum to %v%% (%d), want 100%% (%d)", sum, vsum, tt.p.Total())
			}
		})
	}
}

func TestStackCompleteness(t *testing.T) {
	isRoot := func(s string) bool { return s == "main" || s == "start_thread" }
	tests := []struct {
		name   string
		p      *fold.Profile
		wantV  int64
		wantPc float64
	}{
		{"truncated stack", baseProfile(nil), 2, 10},
		{"root as Frames[0] (no thread frame)", prof(nil, "main;a", 3, "b;c", 1), 1, 25},
		{"root deeper than Frames[1] does not count", prof(nil, "t;libc;start_thread;a", 1, "t;start_thread;a", 1), 1, 50},
		{"thread name alone", prof(nil, "t", 1, "t;main", 1), 1, 50},
		{"all complete", prof(nil, "t;main;a", 1), 0, 0},
		{"none complete", prof(nil, "t;libc;a", 1), 1, 100},
		{"unnamed roots", prof(nil, "t;[libc.so.6];a", 3, "t;main;a", 1), 3, 75},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := StackCompleteness(tt.p, isRoot)
			if c.Incomplete != tt.wantV || !near(c.IncompletePct, tt.wantPc) {
				t.Errorf("StackCompleteness() = %+v, want incomplete %d (%v%%)", c, tt.wantV, tt.wantPc)
			}
			if tt.name == "unnamed roots" {
				want := "75.00% of samples are in stacks that do not start at a named thread root, 75.00% at an unnamed frame of libc.so.6: the stacks may be whole"
				if c.UnnamedRoot != 3 || c.UnnamedObject != "libc.so.6" || !strings.HasPrefix(c.Warning(), want) {
					t.Errorf("unnamed roots %d in %q, Warning() = %q; want 3 in libc.so.6 and a warning starting %q", c.UnnamedRoot, c.UnnamedObject, c.Warning(), want)
				}
			} else if c.UnnamedRoot != 0 {
				t.Errorf("unnamed roots %d, want none", c.UnnamedRoot)
			}
			if tt.wantPc == 100 && !strings.Contains(c.Warning(), "thread roots (symbol map) do not fit") {
				t.Errorf("Warning() = %q, want it to blame the thread roots", c.Warning())
			}
			if (c.Warning() == "") != (tt.wantV == 0) {
				t.Errorf("Warning() = %q with %d incomplete", c.Warning(), tt.wantV)
			}
		})
	}
}

// Only an object's unresolved frame is an unnamed root; [unknown] and
// perf's [[vdso]] are not objects.
func TestUnresolvedObject(t *testing.T) {
	for frame, want := range map[string]string{"[libc.so.6]": "libc.so.6", "[mysqld]": "mysqld", "[unknown]": "", "[[vdso]]": "", "start_thread": "", "[]": "", "[x": ""} {
		if got, ok := unresolvedObject(frame); got != want || ok != (want != "") {
			t.Errorf("unresolvedObject(%q) = %q, %v; want %q", frame, got, ok, want)
		}
	}
}

func classifyUC(frames []string) string {
	for _, f := range frames {
		switch f {
		case "b":
			return "update"
		case "c":
			return "commit"
		}
	}
	return "other"
}

func TestCompute(t *testing.T) {
	base := baseProfile(&fold.Meta{Label: "old", CPUSecondsTotal: 2, Operations: 1000, QPS: 100})
	target := targetProfile(&fold.Meta{Label: "new", CPUSecondsTotal: 6, Operations: 2000, QPS: 80})
	r, err := Compute(base, []*fold.Profile{target}, Options{
		Classify: classifyUC, SubsystemNames: []string{"update", "commit", "other"},
		Roots: []string{"a"}, Depth: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name   string
		delta  float64
		ratio  float64
		onlyIn string
	}
	want := []row{
		{"b", -25, 0.5, ""},
		{"c", 25, 2, ""},
		{"e", 25, math.Inf(1), "new"},
		{"d", -15, 0, "old"},
		{"main", 10, 100.0 / 90, ""},
		{"x", -10, 0, "old"},
		{"a", 0, 1, ""},
	}
	if len(r.Functions) != len(want) {
		t.Fatalf("Compute() has %d functions, want %d", len(r.Functions), len(want))
	}
	for i, w := range want {
		g := r.Functions[i]
		if g.Name != w.name || !near(g.DeltaPP[0], w.delta) || !near(g.Ratio[0], w.ratio) || g.OnlyIn != w.onlyIn {
			t.Errorf("Functions[%d] = %s %v pp ratio %v only_in %q, want %+v", i, g.Name, g.DeltaPP, g.Ratio, g.OnlyIn, w)
		}
	}
	// c: 25% of 2000 µs/op in the base, 50% of 3000 in the target.
	c := r.Functions[1]
	if !near(c.Profiles[0].InclusiveMicrosPerOp, 500) || !near(c.Profiles[1].InclusiveMicrosPerOp, 1500) || !near(c.DeltaMicrosPerOp[0], 1000) {
		t.Errorf("c per op = %+v delta %v, want 500 → 1500 (+1000)", c.Profiles, c.DeltaMicrosPerOp)
	}
	if !r.HasPerOp || r.PerOpMissing != "" {
		t.Errorf("HasPerOp = %v (%q), want true", r.HasPerOp, r.PerOpMissing)
	}
	if got := r.Summaries[1].Profile.RelativeQPS; !near(got, 0.8) {
		t.Errorf("rQPS = %v, want 0.8", got)
	}
	if got := r.Summaries[1].Profile.MicrosPerOp; !near(got, 3000) {
		t.Errorf("cpu/o = %v, want 3000", got)
	}

	// Subsystems sorted by |Δpp|: update -25, commit +25 (stable: map order), other 0.
	var subs []string
	for _, s := range r.Subsystems {
		subs = append(subs, s.Name)
	}
	if want := []string{"update", "commit", "other"}; !reflect.DeepEqual(subs, want) {
		t.Errorf("subsystem order = %v, want %v", subs, want)
	}

	if len(r.Attribution) != 1 {
		t.Fatalf("Attribution = %+v, want one entry", r.Attribution)
	}
	want2 := "old → new: of +1000.00 µs/op, commit +1000.00, update -250.00, other +250.00"
	if got := r.Attribution[0].Sentence(); got != want2 {
		t.Errorf("Sentence() = %q, want %q", got, want2)
	}

	// Subtree of a at depth 1: root, then a (tie at 50% with b, by name), b.
	var paths []string
	for _, row := range r.Subtrees[0].Rows {
		paths = append(paths, strings.Join(row.Path, ";"))
	}
	if want := []string{"a", "a;a", "a;b"}; !reflect.DeepEqual(paths, want) {
		t.Errorf("subtree rows = %v, want %v", paths, want)
	}
	if d := r.Subtrees[0].Rows[1].DeltaPP[0]; !near(d, 25) {
		t.Errorf("a;a delta = %v, want +25", d)
	}
}

func TestComputeWithoutMeta(t *testing.T) {
	base := baseProfile(nil)
	target := targetProfile(&fold.Meta{Label: "new", CPUSecondsTotal: 6, Operations: 2000})
	r, err := Compute(base, []*fold.Profile{target}, Options{Classify: classifyUC, SubsystemNames: []string{"update", "commit", "other"}})
	if err != nil {
		t.Fatal(err)
	}
	if r.HasPerOp || !strings.Contains(r.PerOpMissing, "missing for base") || r.Attribution != nil {
		t.Errorf("HasPerOp = %v, PerOpMissing = %q, Attribution = %v; want false, a sentence naming base, nil", r.HasPerOp, r.PerOpMissing, r.Attribution)
	}
	for _, f := range r.Functions {
		if f.DeltaMicrosPerOp != nil {
			t.Errorf("%s has DeltaMicrosPerOp without metadata", f.Name)
		}
	}
}

func TestComputeErrorsAndLabels(t *testing.T) {
	if _, err := Compute(baseProfile(nil), nil, Options{}); err == nil {
		t.Error("Compute() with no target: no error")
	}
	r, err := Compute(baseProfile(&fold.Meta{Label: "v"}), []*fold.Profile{baseProfile(&fold.Meta{Label: "v"}), baseProfile(nil)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.Labels(), []string{"v", "v (2)", "target 2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Labels() = %v, want %v", got, want)
	}
	for _, f := range r.Functions {
		if f.OnlyIn != "" || f.DeltaPP[0] != 0 || f.DeltaPP[1] != 0 {
			t.Errorf("identical profiles: %+v", f)
		}
	}
}

func TestLargestRemainder(t *testing.T) {
	tests := []struct {
		vals  []float64
		total int64
		want  []int64
	}{
		{[]float64{33.333, 33.333, 33.334}, 100, []int64{33, 33, 34}},
		{[]float64{-0.5, -0.5}, -1, []int64{0, -1}},
		{[]float64{1.2, 2.2, -0.4}, 3, []int64{1, 2, 0}},
		{[]float64{0.6, 0.6}, 1, []int64{1, 0}},
		{[]float64{}, 0, []int64{}},
	}
	for _, tt := range tests {
		got := largestRemainder(tt.vals, tt.total)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("largestRemainder(%v, %d) = %v, want %v", tt.vals, tt.total, got, tt.want)
		}
	}
}

// TestAttributionAddsUp checks on random profiles that the parts, in
// hundredths of a µs, add up exactly to the total, that the total is the
// difference of the two cpu/o figures as shown, and that each profile's
// shown subsystem figures add up to its shown cpu/o (one rounding).
func TestAttributionAddsUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{"s0", "s1", "s2", "s3", "s4", "other"}
	classify := func(frames []string) string { return frames[1] }
	random := func() *fold.Profile {
		p := &fold.Profile{Meta: &fold.Meta{CPUSecondsTotal: rng.Float64() * 10, Operations: 1 + rng.Int64N(100000)}}
		for _, n := range names {
			p.Stacks = append(p.Stacks, fold.Stack{Frames: []string{"t", n}, Value: rng.Int64N(10000)})
		}
		return p
	}
	for i := 0; i < 500; i++ {
		r, err := Compute(random(), []*fold.Profile{random(), random()}, Options{Classify: classify, SubsystemNames: names})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range r.Attribution {
			var sum int64
			for _, p := range a.Parts {
				sum += int64(math.Round(p.Delta * 100))
			}
			if total := int64(math.Round(a.Delta * 100)); sum != total {
				t.Fatalf("attribution parts sum to %d hundredths, total %d: %+v", sum, total, a)
			}
			shown := func(x float64) float64 { v, _ := strconv.ParseFloat(fmt.Sprintf("%.2f", x), 64); return v }
			if want := shown(a.TargetMicrosPerOp) - shown(a.BaseMicrosPerOp); math.Abs(want-a.Delta) > eps {
				t.Fatalf("Delta %v is not %.2f − %.2f as shown", a.Delta, a.TargetMicrosPerOp, a.BaseMicrosPerOp)
			}
			var bsum, tsum int64
			for _, p := range a.Parts {
				bsum += int64(math.Round(p.Base * 100))
				tsum += int64(math.Round(p.Target * 100))
				if d := int64(math.Round(p.Target*100)) - int64(math.Round(p.Base*100)); d != int64(math.Round(p.Delta*100)) {
					t.Fatalf("part %s: Delta %v is not Target %v − Base %v", p.Subsystem, p.Delta, p.Target, p.Base)
				}
			}
			if bsum != int64(math.Round(shown(a.BaseMicrosPerOp)*100)) || tsum != int64(math.Round(shown(a.TargetMicrosPerOp)*100)) {
				t.Fatalf("subsystem figures add up to %d and %d hundredths, not the cpu/o shown %.2f and %.2f", bsum, tsum, a.BaseMicrosPerOp, a.TargetMicrosPerOp)
			}
		}
	}
}
