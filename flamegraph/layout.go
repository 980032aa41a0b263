// Package flamegraph lays out and draws flame graphs of fold.Profiles: the
// classic flame graph of one profile and the differential flame graph of a
// base and a target profile, as interactive, self-contained SVG (hover
// details, click to zoom, regular-expression search, state kept in the URL
// fragment), and a self-contained HTML page that holds such an SVG beside
// report tables.
//
// Off-CPU profiles (fold.Profile.IsOffCPU: microseconds off the CPU, or
// context switches) are drawn in the blue io palette by default
// (DefaultPalette), with teal voluntary and amber involuntary leaves,
// titles and tooltips worded by their quantity and per-op figures in their
// own unit (Graph.Quantity, Graph.PerOpUnit); a differential graph of two
// profiles of different quantities is refused (ErrMixedUnits).
//
// Layout is apart from drawing: Layout and LayoutDiff turn profiles into a
// Graph (frames with positions in the profile's own units and, for a
// differential graph, each frame's figures in both profiles); Graph.WriteSVG
// draws it. Neither does any I/O of its own beyond the given io.Writer.
//
// Output is deterministic: the same profiles and options give the same
// bytes. Every name (frame, title, label, subsystem) is escaped, and
// characters XML does not allow are replaced, so the SVG is well-formed
// XML whatever the input, and a name containing markup is drawn as text.
package flamegraph

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
)

// Palette names the colour scheme of a single flame graph.
type Palette string

// Palettes. PaletteHot, PaletteMem and PaletteIO are flamegraph.pl's;
// PaletteSubsystem gives each subsystem (Options.Subsystem) a hue.
const (
	PaletteHot       Palette = "hot"
	PaletteMem       Palette = "mem"
	PaletteIO        Palette = "io"
	PaletteSubsystem Palette = "subsystem"
)

// Palettes lists the valid palettes, for usage messages.
var Palettes = []Palette{PaletteHot, PaletteMem, PaletteIO, PaletteSubsystem}

// ColorBy says which change colours a frame of a differential graph.
type ColorBy string

// ColorBySubtree (the default) colours a frame by the change of its whole
// subtree (its inclusive figure); ColorBySelf by the change of its own
// samples, as the classic differential flame graph does.
const (
	ColorBySubtree ColorBy = "subtree"
	ColorBySelf    ColorBy = "self"
)

// Normalize says how the two profiles of a differential graph are compared.
type Normalize string

// NormalizeShare compares percentages of each profile's total (changes in
// percentage points); NormalizePerOp compares figures per operation
// (fold.Profile.PerOp): CPU microseconds per operation (both profiles need
// run metadata with cpu_seconds and operations), or, for off-CPU profiles,
// microseconds off the CPU or context switches per operation (run metadata
// with operations).
const (
	NormalizeShare Normalize = "share"
	NormalizePerOp Normalize = "per-op"
)

// Defaults, as flamegraph.pl's.
const (
	DefaultWidth       = 1200
	DefaultFrameHeight = 16
	DefaultMinWidth    = 0.1 // pixels
	DefaultFontSize    = 12.0
	fontWidth          = 0.59 // average character width, in font sizes
	xpad               = 10.0
)

// Options control a flame graph's layout and drawing. The zero value gives
// flamegraph.pl's defaults.
type Options struct {
	// Title is drawn at the top; "Flame Graph" or "Differential Flame
	// Graph" when empty. Subtitle is drawn below it when not empty.
	Title    string
	Subtitle string
	// Width is the image width in pixels (DefaultWidth when 0);
	// FrameHeight the height of one frame (DefaultFrameHeight when 0).
	Width       int
	FrameHeight int
	// MinWidth: frames narrower than this many pixels are not drawn; their
	// samples stay in their parent's width (they are merged into it).
	// DefaultMinWidth when 0 (a negative value draws every frame).
	// MinWidthPercent, when above 0, gives the limit as a percentage of
	// the total instead.
	MinWidth        float64
	MinWidthPercent float64
	// Palette colours single graphs (DefaultPalette of the profile when
	// empty: PaletteHot, or PaletteIO for an off-CPU profile). In a single
	// off-CPU graph, the leaf frames fold.OffCPUVoluntary and
	// fold.OffCPUInvoluntary are teal and amber whatever the palette, with
	// a legend.
	Palette Palette
	// Hash gives every frame of the same name the same colour; otherwise
	// the colour varies from frame to frame (still deterministically).
	Hash bool
	// CountName names what values count in tooltips; when empty,
	// CountName of the profile drawn (the target of a differential graph).
	CountName string
	// Reverse reverses every stack (leaf first) before layout.
	Reverse bool
	// Inverted draws an icicle graph: the root at the top.
	Inverted bool
	// Subsystem classifies a stack (root first, as the path of a frame
	// from the thread name down); Subsystems lists the names in legend
	// order. Needed by PaletteSubsystem; with a nil Subsystem, tooltips
	// say no subsystem.
	Subsystem  func(frames []string) string
	Subsystems []string

	// Differential graphs only.

	// ColorBy: ColorBySubtree when empty.
	ColorBy ColorBy
	// MinDelta: changes smaller than this (in percentage points, or in
	// the per-op unit, Graph.PerOpUnit, with NormalizePerOp) are drawn as
	// unchanged.
	MinDelta float64
	// Normalize: NormalizeShare when empty.
	Normalize Normalize
	// Negate makes widths follow the base instead of the target (frames
	// gone in the target then show); colours keep their meaning.
	Negate bool
	// BaseLabel and TargetLabel name the profiles; the profiles' labels,
	// else "base" and "target", when empty.
	BaseLabel, TargetLabel string
}

// withDefaults fills the options left empty; p is the profile drawn.
func (o Options) withDefaults(p *fold.Profile) Options {
	if o.Width <= 0 {
		o.Width = DefaultWidth
	}
	if o.FrameHeight <= 0 {
		o.FrameHeight = DefaultFrameHeight
	}
	if o.MinWidth == 0 {
		o.MinWidth = DefaultMinWidth
	}
	if o.Palette == "" {
		o.Palette = DefaultPalette(p)
	}
	if o.CountName == "" {
		o.CountName = CountName(p)
	}
	if o.ColorBy == "" {
		o.ColorBy = ColorBySubtree
	}
	if o.Normalize == "" {
		o.Normalize = NormalizeShare
	}
	return o
}

// CountName names what a profile's values count, for tooltips: the one
// rule of fold.Profile.CountUnit that the report tables follow too (ns for
// period sums of cpu-clock or task-clock, modifiers included; period for
// other events' periods; else samples).
func CountName(p *fold.Profile) string { return p.CountUnit() }

// Errors of Layout and LayoutDiff, wrapped with context.
var (
	// ErrEmpty: the profile has no positive values to draw.
	ErrEmpty = errors.New("profile has no samples")
	// ErrNoPerOp: NormalizePerOp needs run metadata the profile lacks.
	ErrNoPerOp = errors.New("no per-op figures (a run directory whose run.json gives cpu_seconds and operations)")
	// ErrOption: an option has a value Layout does not know.
	ErrOption = errors.New("bad option")
	// ErrMixedUnits: the two profiles of a differential graph measure
	// different things (fold.Profile.Quantity: CPU, off-CPU time, context
	// switches), which no graph can compare.
	ErrMixedUnits = errors.New("profiles measure different things")
)

// Frame is one drawn frame: a function at a depth, under the path of its
// ancestors.
type Frame struct {
	Name string
	// Depth is 0 for the root frame ("all"), 1 for the first frame of
	// each stack (the thread name, for perf profiles).
	Depth int
	// Parent is the index of the parent frame in Graph.Frames, -1 for the root.
	Parent int
	// Start and Value are the frame's position and width in the units of
	// the drawn profile (the target of a differential graph, or the base
	// with Negate). Self is the part of Value where the frame is the leaf.
	Start, Value, Self int64
	// Subsystem is the frame's subsystem when Options.Subsystem is set.
	Subsystem string
	// Diff holds the figures of a differential graph; nil otherwise.
	Diff *FrameDiff
}

// FrameDiff is a frame's figures in both profiles of a differential graph.
type FrameDiff struct {
	// Base and Target are the inclusive values (the frame's subtree);
	// BaseSelf and TargetSelf the frame's own.
	Base, Target, BaseSelf, TargetSelf int64
	// BaseFig, TargetFig, BaseSelfFig and TargetSelfFig are the same as
	// percentages of each profile's total, or per operation in
	// Graph.PerOpUnit (Graph.Normalize).
	BaseFig, TargetFig, BaseSelfFig, TargetSelfFig float64
	// Delta is the change that colours the frame (Options.ColorBy):
	// TargetFig-BaseFig, or TargetSelfFig-BaseSelfFig.
	Delta float64
}

// OnlyIn returns "base" or "target" when the frame occurs in one profile
// only, "" otherwise.
func (d *FrameDiff) OnlyIn() string {
	switch {
	case d.Base == 0 && d.Target != 0:
		return "target"
	case d.Target == 0 && d.Base != 0:
		return "base"
	}
	return ""
}

// Graph is a laid-out flame graph, ready to draw.
type Graph struct {
	// Frames in depth-first order, the root first, siblings sorted by name
	// (byte order, as flamegraph.pl sorts them): a frame's descendants
	// follow it.
	Frames []Frame
	// Total is the root's value (the drawn profile's total).
	Total int64
	// MaxDepth is the largest Depth of a drawn frame.
	MaxDepth int
	// Merged counts frames narrower than the minimum width, merged into
	// their parents.
	Merged int
	// CutDepth is the number of stack levels drawn when deeper stacks were
	// cut (MaxLevels of the frame height), 0 when nothing was cut.
	// CutFrames counts the frames not drawn (below level CutDepth, in the
	// stacks that give the widths), CutStacks the stacks they are in. The
	// frames at level CutDepth keep their whole width: their callees'
	// samples stay in them. CutNote says so in a sentence, which the SVG
	// draws under the title.
	CutDepth  int
	CutFrames int64
	CutStacks int
	// Diff says this is a differential graph; Normalize how it compares.
	Diff      bool
	Normalize Normalize
	// Labels and totals of the two profiles (Target* only, for a single graph).
	BaseLabel, TargetLabel string
	BaseTotal, TargetTotal int64
	// Quantity is what the drawn profiles measure, as
	// fold.Profile.Quantity names it: "CPU", "off-CPU time" or "context
	// switches" (the target's, for a differential graph; both are the same).
	Quantity string
	// BasePerOp and TargetPerOp are the whole profiles per operation
	// (fold.Profile.PerOp), in PerOpUnit: CPU µs/op for an on-CPU profile,
	// µs off the CPU per op or context switches per op ("cs/op") for an
	// off-CPU one; 0 when the profile has no per-op figure (no run
	// metadata). A single graph sets Target* only.
	BasePerOp, TargetPerOp float64
	PerOpUnit              string
	// MaxDelta is the largest |Delta| of the drawn frames below the root
	// that is at least MinDelta (the change that gets full colour).
	MaxDelta float64

	opts   Options
	offCPU bool
}

// IsOffCPU reports whether the graph draws off-CPU profiles
// (fold.Profile.IsOffCPU): time off the CPU or context switches.
func (g *Graph) IsOffCPU() bool { return g.offCPU }

// Options returns the options the graph was laid out with, defaults filled in.
func (g *Graph) Options() Options { return g.opts }

// maxFramesHeight is the most pixels the rows of frames of one graph take.
// A stack 100,000 frames deep (a runaway recursion; one 10 MB stack made a
// 14-million-pixel SVG) would otherwise make an image no browser shows:
// Chromium draws nothing of an SVG or canvas taller than 32,767 pixels (and
// Firefox stops at about the same), and its area limit (268 million
// pixels) is hit even sooner at 1200 pixels wide. 24,000 pixels keeps the
// whole image, titles and notes included, a quarter below that: 1,499
// levels at the default 16-pixel frames, more than any real server's
// stacks have.
const maxFramesHeight = 24000

// MaxLevels is the most stack levels (below the root frame) a graph with
// frames frameHeight pixels high draws; deeper frames are cut (see
// Graph.CutDepth). At least 1.
func MaxLevels(frameHeight int) int {
	if frameHeight <= 0 {
		frameHeight = DefaultFrameHeight
	}
	return max(1, maxFramesHeight/frameHeight-1)
}

// CutNote returns the sentence saying which frames the depth limit cut,
// "" when it cut none.
func (g *Graph) CutNote() string {
	if g.CutDepth == 0 {
		return ""
	}
	frames := "1 frame"
	if g.CutFrames != 1 {
		frames = thousands(g.CutFrames) + " frames"
	}
	return fmt.Sprintf("stacks deeper than %s levels cut: %s in %s not drawn",
		thousands(int64(g.CutDepth)), frames, names.Plural(g.CutStacks, "stack"))
}

// item is one stack of the merged input; v[0] is the base's value, v[1] the
// target's (a single graph uses v[1]).
type item struct {
	frames []string
	v      [2]int64
}

// Layout lays out the flame graph of p. It fails (wrapping ErrEmpty) when
// p has no positive value, or (ErrOption) on an unknown palette. An
// off-CPU profile (fold.Profile.IsOffCPU) gets its own title, tooltips
// worded by its quantity and the colours of its voluntary and involuntary
// leaves; an on-CPU profile is drawn as it always was.
func Layout(p *fold.Profile, opts Options) (*Graph, error) {
	opts = opts.withDefaults(p)
	if err := opts.check(false); err != nil {
		return nil, err
	}
	items := collect(nil, p, 1, opts.Reverse)
	total := sum(items)
	if total[1] <= 0 {
		return nil, fmt.Errorf("flame graph: %w", ErrEmpty)
	}
	g := &Graph{opts: opts, TargetLabel: or(opts.TargetLabel, p.Label()), TargetTotal: total[1], Normalize: NormalizeShare}
	g.setQuantity(p)
	g.TargetPerOp, _ = p.PerOp()
	g.place(items, total, 1)
	return g, nil
}

// LayoutDiff lays out the differential flame graph of base and target (both
// already mapped onto common names, if need be). Widths follow the target,
// or the base with Options.Negate. It fails (ErrEmpty) when either profile
// has no positive value, (ErrNoPerOp) when NormalizePerOp is asked of a
// profile without per-op metadata, (ErrMixedUnits) when the two profiles
// measure different things (CPU and off-CPU time, or off-CPU time and
// context switches), or (ErrOption) on unknown options. Two off-CPU
// profiles compare per operation in their own unit: µs off the CPU per
// op, or context switches per op.
func LayoutDiff(base, target *fold.Profile, opts Options) (*Graph, error) {
	opts = opts.withDefaults(target)
	if err := opts.check(true); err != nil {
		return nil, err
	}
	g := &Graph{opts: opts, Diff: true, Normalize: opts.Normalize,
		BaseLabel: opts.BaseLabel, TargetLabel: opts.TargetLabel}
	if g.BaseLabel == "" {
		g.BaseLabel = or(base.Label(), "base")
	}
	if g.TargetLabel == "" {
		g.TargetLabel = or(target.Label(), "target")
	}
	if bq, tq := base.Quantity(), target.Quantity(); bq != tq {
		return nil, fmt.Errorf("flame graph: base %s measures %s, target %s %s: %w", g.BaseLabel, bq, g.TargetLabel, tq, ErrMixedUnits)
	}
	g.setQuantity(target)
	var bok, tok bool
	g.BasePerOp, bok = base.PerOp()
	g.TargetPerOp, tok = target.PerOp()
	if opts.Normalize == NormalizePerOp {
		if !bok {
			return nil, fmt.Errorf("flame graph: per-op normalization: base %s: %w", g.BaseLabel, ErrNoPerOp)
		}
		if !tok {
			return nil, fmt.Errorf("flame graph: per-op normalization: target %s: %w", g.TargetLabel, ErrNoPerOp)
		}
	}
	items := collect(nil, base, 0, opts.Reverse)
	items = collect(items, target, 1, opts.Reverse)
	total := sum(items)
	g.BaseTotal, g.TargetTotal = total[0], total[1]
	if g.BaseTotal <= 0 {
		return nil, fmt.Errorf("flame graph: base %s: %w", g.BaseLabel, ErrEmpty)
	}
	if g.TargetTotal <= 0 {
		return nil, fmt.Errorf("flame graph: target %s: %w", g.TargetLabel, ErrEmpty)
	}
	w := 1
	if opts.Negate {
		w = 0
	}
	g.place(items, total, w)
	return g, nil
}

// setQuantity records what p measures.
func (g *Graph) setQuantity(p *fold.Profile) {
	g.offCPU = p.IsOffCPU()
	g.Quantity = p.Quantity()
	g.PerOpUnit = p.PerOpUnit()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (o Options) check(isDiff bool) error {
	if !slices.Contains(Palettes, o.Palette) {
		return fmt.Errorf("%w: palette %q: want one of %s", ErrOption, o.Palette, joinPalettes())
	}
	if o.Palette == PaletteSubsystem && o.Subsystem == nil && !isDiff {
		return fmt.Errorf("%w: palette %q needs a subsystem classifier", ErrOption, o.Palette)
	}
	if o.ColorBy != ColorBySubtree && o.ColorBy != ColorBySelf {
		return fmt.Errorf("%w: color by %q: want %q or %q", ErrOption, o.ColorBy, ColorBySubtree, ColorBySelf)
	}
	if o.Normalize != NormalizeShare && o.Normalize != NormalizePerOp {
		return fmt.Errorf("%w: normalize %q: want %q or %q", ErrOption, o.Normalize, NormalizeShare, NormalizePerOp)
	}
	if o.MinDelta < 0 {
		return fmt.Errorf("%w: min delta %g: want 0 or more", ErrOption, o.MinDelta)
	}
	return nil
}

func joinPalettes() string {
	s := make([]string, len(Palettes))
	for i, p := range Palettes {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

// collect appends p's stacks with a positive value to items, in slot k.
func collect(items []item, p *fold.Profile, k int, reverse bool) []item {
	for _, s := range p.Stacks {
		if s.Value <= 0 || len(s.Frames) == 0 {
			continue
		}
		it := item{frames: s.Frames}
		if reverse {
			it.frames = slices.Clone(s.Frames)
			slices.Reverse(it.frames)
		}
		it.v[k] = s.Value
		items = append(items, it)
	}
	return items
}

func sum(items []item) [2]int64 {
	var t [2]int64
	for _, it := range items {
		t[0] += it.v[0]
		t[1] += it.v[1]
	}
	return t
}

// place sorts items by their frames, which puts the stacks under any one
// frame next to each other with the callees of a frame in name order, and
// walks the call tree that this order implies, depth first, filling
// g.Frames. Slot w of the values gives the widths. A frame under the
// minimum width is not visited at all (nor its callees), so the cost
// follows the frames drawn, not the stacks' depth.
func (g *Graph) place(items []item, total [2]int64, w int) {
	slices.SortFunc(items, func(a, b item) int { return slices.Compare(a.frames, b.frames) })
	o := g.opts
	g.Total = total[w]
	minV := 0.0
	switch {
	case o.MinWidthPercent > 0:
		minV = float64(g.Total) * o.MinWidthPercent / 100
	case o.MinWidth > 0:
		minV = float64(g.Total) * o.MinWidth / (float64(o.Width) - 2*xpad)
	}
	fig := func(v int64, k int) float64 {
		tot, upo := g.BaseTotal, g.BasePerOp
		if k == 1 {
			tot, upo = g.TargetTotal, g.TargetPerOp
		}
		if tot == 0 {
			return 0
		}
		share := float64(v) / float64(tot)
		if g.Normalize == NormalizePerOp {
			return share * upo
		}
		return share * 100
	}
	limit := MaxLevels(o.FrameHeight)
	var path []string
	// visit emits the frame of the items [lo, hi), which share their first
	// depth frames (the path), then its callees.
	var visit func(lo, hi, depth, parent int, start int64, v, self [2]int64, sub string)
	visit = func(lo, hi, depth, parent int, start int64, v, self [2]int64, sub string) {
		f := Frame{Name: "all", Depth: depth, Parent: parent, Start: start, Value: v[w], Self: self[w]}
		if depth > 0 {
			f.Name = path[depth-1]
			if o.Subsystem != nil {
				// The subsystem nearest the root wins: the parent's, unless
				// the parent has none and this frame starts one.
				if sub == "" || sub == otherSubsystem {
					sub = o.Subsystem(path[:depth])
				}
				f.Subsystem = sub
			}
		}
		if g.Diff {
			d := &FrameDiff{Base: v[0], Target: v[1], BaseSelf: self[0], TargetSelf: self[1]}
			d.BaseFig, d.TargetFig = fig(d.Base, 0), fig(d.Target, 1)
			d.BaseSelfFig, d.TargetSelfFig = fig(d.BaseSelf, 0), fig(d.TargetSelf, 1)
			d.Delta = change(d.BaseFig, d.TargetFig)
			if o.ColorBy == ColorBySelf {
				d.Delta = change(d.BaseSelfFig, d.TargetSelfFig)
			}
			f.Diff = d
			if a := abs(d.Delta); depth > 0 && a >= o.MinDelta && a > g.MaxDelta {
				g.MaxDelta = a
			}
		}
		me := len(g.Frames)
		g.Frames = append(g.Frames, f)
		g.MaxDepth = max(g.MaxDepth, depth)
		if depth == limit {
			// The frame keeps its width; what lies below it is counted.
			for _, it := range items[lo:hi] {
				if len(it.frames) > depth && it.v[w] > 0 {
					g.CutDepth = limit
					g.CutStacks++
					g.CutFrames += int64(len(it.frames) - depth)
				}
			}
			return
		}
		i := lo
		for i < hi && len(items[i].frames) == depth {
			i++ // stacks ending here: sorted first, counted in self
		}
		x := start
		for i < hi {
			name := items[i].frames[depth]
			j := i
			var cv, cself [2]int64
			for j < hi && items[j].frames[depth] == name {
				it := &items[j]
				cv[0] += it.v[0]
				cv[1] += it.v[1]
				if len(it.frames) == depth+1 {
					cself[0] += it.v[0]
					cself[1] += it.v[1]
				}
				j++
			}
			switch {
			case cv[w] <= 0:
				// Only in the profile that does not give the widths.
			case float64(cv[w]) < minV:
				g.Merged++
			default:
				path = append(path[:depth], name)
				visit(i, j, depth+1, me, x, cv, cself, sub)
			}
			x += cv[w]
			i = j
		}
	}
	visit(0, len(items), 0, -1, 0, total, [2]int64{}, "")
}

// otherSubsystem is what symbolmap calls stacks of no subsystem.
const otherSubsystem = "other"

// change returns t-b, or 0 when the two differ only by rounding (by less
// than a billionth of the larger): 30 of 80 switches at 0.40 cs/op and 15
// of 50 at 0.50 are both 0.15 cs/op, though the float products differ in
// the last bit, and such a frame must be drawn unchanged, not tinted.
func change(b, t float64) float64 {
	d := t - b
	if abs(d) <= 1e-9*max(abs(b), abs(t)) {
		return 0
	}
	return d
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
