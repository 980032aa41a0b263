package flamegraph

import (
	"bytes"
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
)

// profile builds a profile from folded lines ("a;b;c 12"), independent of
// fold's parser.
func profile(t testing.TB, lines ...string) *fold.Profile {
	t.Helper()
	p := &fold.Profile{}
	for _, l := range lines {
		i := strings.LastIndexByte(l, ' ')
		var v int64
		for _, c := range l[i+1:] {
			if c < '0' || c > '9' {
				t.Fatalf("profile line %q: bad count", l)
			}
			v = v*10 + int64(c-'0')
		}
		p.Stacks = append(p.Stacks, fold.Stack{Frames: strings.Split(l[:i], ";"), Value: v})
	}
	p.Normalize()
	return p
}

// shape is a frame as the tests compare it.
type shape struct {
	name         string
	depth        int
	start, value int64
}

func shapes(g *Graph) []shape {
	out := make([]shape, len(g.Frames))
	for i, f := range g.Frames {
		out[i] = shape{f.Name, f.Depth, f.Start, f.Value}
	}
	return out
}

func TestLayout(t *testing.T) {
	p := profile(t, "t;main;b 3", "t;main;a 2", "t;main 1", "u;x 4")
	tests := []struct {
		name   string
		opts   Options
		want   []shape
		merged int
	}{
		{
			name: "sorted by name, left aligned, self to the right",
			want: []shape{{"all", 0, 0, 10}, {"t", 1, 0, 6}, {"main", 2, 0, 6}, {"a", 3, 0, 2}, {"b", 3, 2, 3}, {"u", 1, 6, 4}, {"x", 2, 6, 4}},
		},
		{
			// 2 of 10 units is 236 px of 1180; a 300 px minimum merges a
			// (2 units) into main, whose width stays 6.
			name:   "minwidth merges narrow frames into their parent",
			opts:   Options{MinWidth: 300},
			want:   []shape{{"all", 0, 0, 10}, {"t", 1, 0, 6}, {"main", 2, 0, 6}, {"b", 3, 2, 3}, {"u", 1, 6, 4}, {"x", 2, 6, 4}},
			merged: 1,
		},
		{
			name:   "minwidth as a percentage",
			opts:   Options{MinWidthPercent: 35},
			want:   []shape{{"all", 0, 0, 10}, {"t", 1, 0, 6}, {"main", 2, 0, 6}, {"u", 1, 6, 4}, {"x", 2, 6, 4}},
			merged: 2,
		},
		{
			name: "reverse: leaf first",
			opts: Options{Reverse: true},
			want: []shape{{"all", 0, 0, 10}, {"a", 1, 0, 2}, {"main", 2, 0, 2}, {"t", 3, 0, 2}, {"b", 1, 2, 3}, {"main", 2, 2, 3}, {"t", 3, 2, 3},
				{"main", 1, 5, 1}, {"t", 2, 5, 1}, {"x", 1, 6, 4}, {"u", 2, 6, 4}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Layout(p, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := shapes(g); !equal(got, tt.want) {
				t.Errorf("Layout frames =\n%v\nwant\n%v", got, tt.want)
			}
			if g.Merged != tt.merged {
				t.Errorf("Merged = %d, want %d", g.Merged, tt.merged)
			}
			if g.Total != 10 {
				t.Errorf("Total = %d, want 10", g.Total)
			}
			for i, f := range g.Frames {
				if f.Parent >= i || (i > 0) != (f.Parent >= 0) {
					t.Errorf("frame %d (%s) has parent %d: want an earlier frame", i, f.Name, f.Parent)
				}
			}
		})
	}
}

func equal(a, b []shape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func frameNamed(t *testing.T, g *Graph, name string) *Frame {
	t.Helper()
	for i := range g.Frames {
		if g.Frames[i].Name == name {
			return &g.Frames[i]
		}
	}
	t.Fatalf("no frame %q", name)
	return nil
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestLayoutDiff(t *testing.T) {
	// main's subtree grows from 50% to 75%, its own samples stay 10%; old
	// is gone, new appears.
	base := profile(t, "t;main 10", "t;main;work 30", "t;main;old 10", "t;idle 50")
	target := profile(t, "t;main 10", "t;main;work 40", "t;main;new 25", "t;idle 25")
	base.Meta = &fold.Meta{Label: "10.11", CPUSecondsTotal: 1, Operations: 10000}  // 100 µs/op
	target.Meta = &fold.Meta{Label: "11.8", CPUSecondsTotal: 2, Operations: 10000} // 200 µs/op

	g, err := LayoutDiff(base, target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.BaseLabel != "10.11" || g.TargetLabel != "11.8" || g.Normalize != NormalizeShare {
		t.Errorf("labels %q %q, normalize %q: want 10.11, 11.8, share", g.BaseLabel, g.TargetLabel, g.Normalize)
	}
	main := frameNamed(t, g, "main")
	if d := main.Diff; !near(d.BaseFig, 50) || !near(d.TargetFig, 75) || !near(d.Delta, 25) || !near(d.BaseSelfFig, 10) || !near(d.TargetSelfFig, 10) {
		t.Errorf("main: %+v; want 50%% -> 75%%, delta +25 pp, self 10%% -> 10%%", *d)
	}
	if main.Value != 75 {
		t.Errorf("main width %d, want the target's 75", main.Value)
	}
	if d := frameNamed(t, g, "new").Diff; d.OnlyIn() != "target" || !near(d.Delta, 25) {
		t.Errorf("new: only in %q, delta %v; want target, +25", d.OnlyIn(), d.Delta)
	}
	for _, f := range g.Frames {
		if f.Name == "old" {
			t.Errorf("old (gone in the target) is drawn with widths from the target")
		}
	}
	if !near(g.MaxDelta, 25) {
		t.Errorf("MaxDelta = %v, want 25", g.MaxDelta)
	}

	// Colour by self: main's own samples did not change.
	g, err = LayoutDiff(base, target, Options{ColorBy: ColorBySelf})
	if err != nil {
		t.Fatal(err)
	}
	if d := frameNamed(t, g, "main").Diff; !near(d.Delta, 0) {
		t.Errorf("--color-by self: main delta %v, want 0", d.Delta)
	}

	// Negate: widths from the base, so old shows.
	g, err = LayoutDiff(base, target, Options{Negate: true})
	if err != nil {
		t.Fatal(err)
	}
	if old := frameNamed(t, g, "old"); old.Value != 10 || old.Diff.OnlyIn() != "base" || !near(old.Diff.Delta, -10) {
		t.Errorf("--negate: old width %d, only in %q, delta %v; want 10, base, -10", old.Value, old.Diff.OnlyIn(), old.Diff.Delta)
	}

	// Per op: main is 50 µs/op in the base, 150 in the target.
	g, err = LayoutDiff(base, target, Options{Normalize: NormalizePerOp})
	if err != nil {
		t.Fatal(err)
	}
	if d := frameNamed(t, g, "main").Diff; !near(d.BaseFig, 50) || !near(d.TargetFig, 150) || !near(d.Delta, 100) {
		t.Errorf("per-op main: %v -> %v (delta %v); want 50 -> 150 (+100)", d.BaseFig, d.TargetFig, d.Delta)
	}
	if d := frameNamed(t, g, "idle").Diff; !near(d.Delta, 0) {
		t.Errorf("per-op idle: delta %v; want 0 (50%% of 100 and 25%% of 200 µs/op)", d.Delta)
	}
	if !strings.Contains(g.Note(), "per operation") || !strings.Contains(g.Note(), "100.00") {
		t.Errorf("Note() = %q; want it to say per operation and the base's 100.00 µs/op", g.Note())
	}
}

func TestLayoutErrors(t *testing.T) {
	p := profile(t, "t;a 1")
	noMeta := profile(t, "t;a 2")
	tests := []struct {
		name string
		err  error
		do   func() error
	}{
		{"empty profile", ErrEmpty, func() error { _, err := Layout(&fold.Profile{}, Options{}); return err }},
		{"only zero values", ErrEmpty, func() error {
			_, err := Layout(&fold.Profile{Stacks: []fold.Stack{{Frames: []string{"a"}}}}, Options{})
			return err
		}},
		{"empty base", ErrEmpty, func() error { _, err := LayoutDiff(&fold.Profile{}, p, Options{}); return err }},
		{"empty target", ErrEmpty, func() error { _, err := LayoutDiff(p, &fold.Profile{}, Options{}); return err }},
		{"only negative values", ErrEmpty, func() error {
			_, err := Layout(&fold.Profile{Stacks: []fold.Stack{{Frames: []string{"a"}, Value: -3}}}, Options{})
			return err
		}},
		{"per-op without metadata", ErrNoPerOp, func() error {
			_, err := LayoutDiff(p, noMeta, Options{Normalize: NormalizePerOp})
			return err
		}},
		{"unknown palette", ErrOption, func() error { _, err := Layout(p, Options{Palette: "rainbow"}); return err }},
		{"subsystem palette without classifier", ErrOption, func() error { _, err := Layout(p, Options{Palette: PaletteSubsystem}); return err }},
		{"unknown color-by", ErrOption, func() error { _, err := LayoutDiff(p, p, Options{ColorBy: "total"}); return err }},
		{"negative min delta", ErrOption, func() error { _, err := LayoutDiff(p, p, Options{MinDelta: -1}); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if !errors.Is(err, tt.err) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
			// The library is called by commands with other flags (bench,
			// html): its errors name none.
			if err != nil && strings.Contains(err.Error(), "--") {
				t.Errorf("error %q names a command-line flag", err)
			}
		})
	}
}

func TestSubsystemOfFrames(t *testing.T) {
	p := profile(t, "t;loop;commit;fsync 4", "t;loop;update 2", "t;idle 1")
	classify := func(frames []string) string {
		for _, f := range frames {
			switch f {
			case "commit", "fsync":
				return "commit"
			case "update":
				return "update"
			}
		}
		return "other"
	}
	g, err := Layout(p, Options{Palette: PaletteSubsystem, Subsystem: classify, Subsystems: []string{"commit", "update", "other"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"t": "other", "loop": "other", "commit": "commit", "fsync": "commit", "update": "update", "idle": "other"}
	for _, f := range g.Frames[1:] {
		if f.Subsystem != want[f.Name] {
			t.Errorf("frame %s: subsystem %q, want %q", f.Name, f.Subsystem, want[f.Name])
		}
	}
	if a, b := g.color(frameNamed(t, g, "commit")), g.color(frameNamed(t, g, "update")); a == b {
		t.Errorf("commit and update frames have the same colour %v", a)
	}
}

func TestLabel(t *testing.T) {
	cw := DefaultFontSize * fontWidth // 7.08
	tests := []struct {
		name string
		w    float64
		want string
	}{
		{"mysql_update", 200, "mysql_update"},
		{"mysql_update", 3 + 5*cw, "mys.."},
		{"mysql_update", 3 + 2.9*cw, ""},
		{"äöüäöü", 3 + 4*cw, "äö.."},
	}
	for _, tt := range tests {
		if got := label(tt.name, tt.w, cw); got != tt.want {
			t.Errorf("label(%q, %.1f) = %q, want %q", tt.name, tt.w, got, tt.want)
		}
	}
}

func TestClean(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"markup kept (escaped later)", "operator<<(std::ostream&, T const&)", "operator<<(std::ostream&, T const&)"},
		{"control characters", "a\x00b\nc\td", "a\uFFFDb\uFFFDc\uFFFDd"},
		{"invalid byte", "bad\xffname", "bad\uFFFDname"},
		{"truncated multi-byte sequence: one U+FFFD, as names.Clean", "bad\xe2\x82name", "bad\uFFFDname"},
		{"run of invalid bytes: one U+FFFD", "bad\xff\xfe\xfdname", "bad\uFFFDname"},
		{"encoded surrogate", "a\xed\xa0\x80b", "a\uFFFDb"},
		{"U+FFFD and other runes kept", "keep \uFFFD and ü", "keep \uFFFD and ü"},
		{"noncharacter", "\uFFFE", "\uFFFD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clean(tt.in)
			if got != tt.want {
				t.Errorf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Clean(%q) = %q is not valid UTF-8", tt.in, got)
			}
			// Invalid UTF-8 is replaced as everywhere else.
			if c := names.Clean(tt.in); !strings.ContainsAny(c, "\x00\n\t\uFFFE") && got != c {
				t.Errorf("Clean(%q) = %q, names.Clean gives %q", tt.in, got, c)
			}
		})
	}
}

func TestDiffColor(t *testing.T) {
	if c := diffColor(0.5, 1, 1); c != unchangedColor {
		t.Errorf("a change under --min-delta: %v, want unchanged %v", c, unchangedColor)
	}
	grew, shrank, small := diffColor(1, 1, 0), diffColor(-1, 1, 0), diffColor(0.1, 1, 0)
	if grew.r != 255 || grew.g >= 100 || shrank.b != 255 || shrank.r >= 100 {
		t.Errorf("full change: grew %v shrank %v; want saturated red and blue", grew, shrank)
	}
	if small.r != 255 || small.g <= grew.g {
		t.Errorf("small growth %v should be paler than full growth %v", small, grew)
	}
}

func TestCountName(t *testing.T) {
	cases := []struct{ name, unit, event, want string }{
		{"no unit", "", "", "samples"},
		{"samples of a clock event", "samples", "cpu-clock", "samples"},
		{"period of cpu-clock", "period", "cpu-clock", "ns"},
		{"period of task-clock", "period", "task-clock", "ns"},
		{"period of another event", "period", "cycles", "period"},
		{"period of no event", "period", "", "period"},
		{"period of a clock event with modifiers", "period", "cpu-clock:u", "ns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &fold.Profile{Unit: c.unit, Event: c.event}
			if got := CountName(p); got != c.want {
				t.Errorf("CountName(unit %q, event %q) = %q, want %q", c.unit, c.event, got, c.want)
			}
			// Tooltips name the same unit.
			p.Stacks = []fold.Stack{{Frames: []string{"t"}, Value: 7}}
			g, err := Layout(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tip := g.tooltip(&g.Frames[1], "t"); !strings.Contains(tip, "7 "+c.want+",") {
				t.Errorf("tooltip %q does not count in %s", tip, c.want)
			}
		})
	}
}

// deepStack returns a stack of n frames under thread t: f1;f2;...;fn.
func deepStack(t string, n int) []string {
	frames := make([]string, n+1)
	frames[0] = t
	for i := 1; i <= n; i++ {
		frames[i] = "f" + strconv.Itoa(i)
	}
	return frames
}

func TestDepthCap(t *testing.T) {
	deep := &fold.Profile{Stacks: []fold.Stack{
		{Frames: deepStack("t", 99999), Value: 5}, // 100,000 frames with the thread
		{Frames: []string{"t", "main"}, Value: 3},
	}}
	deep.Normalize()
	deep2 := &fold.Profile{Stacks: []fold.Stack{
		{Frames: deepStack("t", 99999), Value: 2},
		{Frames: deepStack("u", 2000), Value: 1},
		{Frames: []string{"t", "main"}, Value: 3},
	}}
	deep2.Normalize()
	shallow := profile(t, "t;main;a 2", "t;main 1")
	svgHeight := regexp.MustCompile(`<svg [^>]*height="(\d+)"`)
	tests := []struct {
		name      string
		base, p   *fold.Profile // base nil: a single graph
		opts      Options
		wantDepth int // levels drawn
		wantNote  string
	}{
		{"100,000 frames", nil, deep, Options{}, 1499,
			"stacks deeper than 1,499 levels cut: 98,501 frames in 1 stack not drawn"},
		{"taller frames, fewer levels", nil, deep, Options{FrameHeight: 40}, 599,
			"stacks deeper than 599 levels cut: 99,401 frames in 1 stack not drawn"},
		{"two deep stacks", nil, deep2, Options{}, 1499,
			"stacks deeper than 1,499 levels cut: 99,003 frames in 2 stacks not drawn"},
		{"differential", deep, deep2, Options{}, 1499,
			"stacks deeper than 1,499 levels cut: 99,003 frames in 2 stacks not drawn"},
		{"differential, widths of the base", deep, deep2, Options{Negate: true}, 1499,
			"stacks deeper than 1,499 levels cut: 98,501 frames in 1 stack not drawn"},
		{"shallow: nothing cut", nil, shallow, Options{}, 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var g *Graph
			var err error
			if tt.base != nil {
				g, err = LayoutDiff(tt.base, tt.p, tt.opts)
			} else {
				g, err = Layout(tt.p, tt.opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.MaxDepth != tt.wantDepth {
				t.Errorf("MaxDepth = %d, want %d", g.MaxDepth, tt.wantDepth)
			}
			if got := g.CutNote(); got != tt.wantNote {
				t.Errorf("CutNote() = %q, want %q", got, tt.wantNote)
			}
			// The deepest level keeps its frames, with their whole width.
			var deepest []Frame
			for _, f := range g.Frames {
				if f.Depth == g.MaxDepth {
					deepest = append(deepest, f)
				}
			}
			if len(deepest) == 0 {
				t.Fatalf("no frame at depth %d", g.MaxDepth)
			}
			var buf bytes.Buffer
			if err := g.WriteSVG(&buf); err != nil {
				t.Fatal(err)
			}
			checkXML(t, buf.Bytes())
			m := svgHeight.FindSubmatch(buf.Bytes())
			if m == nil {
				t.Fatal("no height on <svg>")
			}
			h, _ := strconv.Atoi(string(m[1]))
			if h > maxFramesHeight+300 || h >= 32767 {
				t.Errorf("SVG height %d px, want at most %d (browsers draw nothing past 32,767)", h, maxFramesHeight+300)
			}
			if tt.wantNote != "" && !strings.Contains(buf.String(), ">"+tt.wantNote+"</text>") {
				t.Errorf("the SVG does not draw the note %q", tt.wantNote)
			}
		})
	}
	t.Run("deepest frame keeps its width", func(t *testing.T) {
		g, err := Layout(deep, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range g.Frames {
			if f.Depth == g.MaxDepth && (f.Name != "f1498" || f.Value != 5) {
				t.Errorf("deepest frame %s at depth %d width %d, want f1498 width 5", f.Name, f.Depth, f.Value)
			}
		}
	})
}
