package flamegraph

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// offCPUProfiles returns small hand-made off-CPU profiles whose figures are
// known: time is 1,200 µs off the CPU over 100 operations (12.00 µs/op),
// vio_read's 600 of it (6.00 µs/op); switches is 50 switches over the same
// 100 operations (0.50 cs/op); base and target are switch profiles of two
// versions: base 50 switches over 100 operations (0.50 cs/op), target 80
// over 200 (0.40 cs/op). Their runs' CPU per operation (100 and 50 µs/op)
// is none of these figures, so a graph that took CPU per op for an
// off-CPU profile's fails the tests.
func offCPUProfiles(t testing.TB) (time, switches, base, target *fold.Profile) {
	stacks := func(vio, commit, update, purge int) []string {
		return []string{
			fmt.Sprintf("mariadbd;do_command;my_net_read_packet;vio_read;[voluntary] %d", vio),
			fmt.Sprintf("mariadbd;do_command;dispatch_command;trans_commit_stmt;log_write_up_to;[voluntary] %d", commit),
			fmt.Sprintf("mariadbd;do_command;dispatch_command;mysql_update;[involuntary] %d", update),
			fmt.Sprintf("ib_purge;srv_purge_coordinator;os_event_wait;[voluntary] %d", purge),
		}
	}
	run105 := &fold.Meta{Label: "10.5", CPUSecondsTotal: 0.01, Operations: 100}
	run1011 := &fold.Meta{Label: "10.11", CPUSecondsTotal: 0.01, Operations: 200}
	time = profile(t, stacks(600, 400, 50, 150)...)
	time.Unit, time.Meta = fold.UnitOffCPUMicros, run105
	switches = profile(t, stacks(20, 10, 5, 15)...)
	switches.Unit, switches.Meta = fold.UnitSwitches, run105
	base = switches
	target = profile(t, stacks(40, 10, 20, 10)...)
	target.Unit, target.Meta = fold.UnitSwitches, run1011
	return time, switches, base, target
}

func TestOffCPUProfilesKnown(t *testing.T) {
	// The hand-made profiles' totals, which the other tests' figures follow.
	time, switches, base, target := offCPUProfiles(t)
	for _, c := range []struct {
		name  string
		p     *fold.Profile
		total int64
		perOp float64
	}{
		{"time", time, 1200, 12}, {"switches", switches, 50, 0.5}, {"base", base, 50, 0.5}, {"target", target, 80, 0.4},
	} {
		if got := c.p.Total(); got != c.total {
			t.Errorf("%s: total %d, want %d", c.name, got, c.total)
		}
		if v, ok := c.p.PerOp(); !ok || !near(v, c.perOp) {
			t.Errorf("%s: PerOp() = %v, %v; want %v", c.name, v, ok, c.perOp)
		}
	}
}

func TestDefaultPalette(t *testing.T) {
	time, switches, _, _ := offCPUProfiles(t)
	onCPU := profile(t, "t;a 1")
	for _, c := range []struct {
		name string
		p    *fold.Profile
		want Palette
	}{{"off-CPU time", time, PaletteIO}, {"switches", switches, PaletteIO}, {"on-CPU", onCPU, PaletteHot}} {
		if got := DefaultPalette(c.p); got != c.want {
			t.Errorf("DefaultPalette(%s) = %q, want %q", c.name, got, c.want)
		}
		g, err := Layout(c.p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Options().Palette; got != c.want {
			t.Errorf("Layout(%s) with no palette drew %q, want %q", c.name, got, c.want)
		}
	}
	// A palette chosen is kept.
	g, err := Layout(time, Options{Palette: PaletteHot})
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Options().Palette; got != PaletteHot {
		t.Errorf("off-CPU graph with PaletteHot chosen drew %q", got)
	}
}

func TestOffCPUTitles(t *testing.T) {
	time, switches, base, target := offCPUProfiles(t)
	onCPU := profile(t, "t;a 1")
	single := func(p *fold.Profile, o Options) func() (*Graph, error) {
		return func() (*Graph, error) { return Layout(p, o) }
	}
	diff := func(b, t *fold.Profile) func() (*Graph, error) {
		return func() (*Graph, error) { return LayoutDiff(b, t, Options{}) }
	}
	tests := []struct {
		name   string
		layout func() (*Graph, error)
		want   string
	}{
		{"time", single(time, Options{}), "Off-CPU Time Flame Graph"},
		{"switches", single(switches, Options{}), "Context Switches Flame Graph"},
		{"time inverted", single(time, Options{Inverted: true}), "Off-CPU Time Icicle Graph"},
		{"diff switches", diff(base, target), "Differential Context Switches Flame Graph"},
		{"diff time", diff(time, time), "Differential Off-CPU Time Flame Graph"},
		{"title given", single(time, Options{Title: "waits"}), "waits"},
		{"on-CPU unchanged", single(onCPU, Options{}), "Flame Graph"},
		{"on-CPU diff unchanged", diff(onCPU, onCPU), "Differential Flame Graph"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := tt.layout()
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Title(); got != tt.want {
				t.Errorf("Title() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestOffCPUFigures checks the per-op figures of off-CPU graphs, their
// fields, header lines and tooltips, against the hand-made profiles' known
// totals and operations (offCPUProfiles).
func TestOffCPUFigures(t *testing.T) {
	time, switches, base, target := offCPUProfiles(t)

	t.Run("time", func(t *testing.T) {
		g, err := Layout(time, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !g.IsOffCPU() || g.Quantity != "off-CPU time" || g.PerOpUnit != "µs/op" || !near(g.TargetPerOp, 12) {
			t.Errorf("graph: off-CPU %v, quantity %q, per-op %v %q; want true, off-CPU time, 12 µs/op (1,200 µs / 100 operations)",
				g.IsOffCPU(), g.Quantity, g.TargetPerOp, g.PerOpUnit)
		}
		if got, want := g.TotalNote(), "10.5: 1,200 µs off the CPU, 12.00 µs/op"; got != want {
			t.Errorf("TotalNote() = %q, want %q", got, want)
		}
		f := frameNamed(t, g, "vio_read")
		// 600 of 1,200 µs: 50%, over 100 operations 6.00 µs/op.
		if got, want := g.tooltip(f, f.Name), "vio_read\n600 us, 50.00% of off-CPU time, 6.00 µs/op"; got != want {
			t.Errorf("tooltip %q, want %q", got, want)
		}
		f = frameNamed(t, g, "log_write_up_to")
		if got, want := g.tooltip(f, f.Name), "log_write_up_to\n400 us, 33.33% of off-CPU time, 4.00 µs/op"; got != want {
			t.Errorf("tooltip %q, want %q", got, want)
		}
	})

	t.Run("switches", func(t *testing.T) {
		g, err := Layout(switches, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if g.Quantity != "context switches" || g.PerOpUnit != "cs/op" || !near(g.TargetPerOp, 0.5) {
			t.Errorf("graph: quantity %q, per-op %v %q; want context switches, 0.5 cs/op (50 / 100 operations)", g.Quantity, g.TargetPerOp, g.PerOpUnit)
		}
		if got, want := g.TotalNote(), "10.5: 50 context switches, 0.50 cs/op"; got != want {
			t.Errorf("TotalNote() = %q, want %q", got, want)
		}
		f := frameNamed(t, g, "os_event_wait")
		// 15 of 50 switches: 30%, 0.15 cs/op.
		if got, want := g.tooltip(f, f.Name), "os_event_wait\n15 switches, 30.00% of context switches, 0.15 cs/op"; got != want {
			t.Errorf("tooltip %q, want %q", got, want)
		}
	})

	t.Run("without operations", func(t *testing.T) {
		p := profile(t, "t;a;[voluntary] 7")
		p.Unit = fold.UnitSwitches
		g, err := Layout(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if g.TargetPerOp != 0 {
			t.Errorf("TargetPerOp %v without run metadata, want 0", g.TargetPerOp)
		}
		if got, want := g.TotalNote(), "7 context switches"; got != want {
			t.Errorf("TotalNote() = %q, want %q", got, want)
		}
		if got, want := g.tooltip(&g.Frames[1], "t"), "t\n7 switches, 100.00% of context switches"; got != want {
			t.Errorf("tooltip %q, want %q", got, want)
		}
	})

	t.Run("diff switches per op", func(t *testing.T) {
		if got := AutoNormalize(base, target); got != NormalizePerOp {
			t.Fatalf("AutoNormalize = %q, want per-op (both have operations)", got)
		}
		g, err := LayoutDiff(base, target, Options{Normalize: NormalizePerOp})
		if err != nil {
			t.Fatal(err)
		}
		if !near(g.BasePerOp, 0.5) || !near(g.TargetPerOp, 0.4) || g.PerOpUnit != "cs/op" {
			t.Errorf("per-op %v → %v %q; want 0.5 (50/100) → 0.4 (80/200) cs/op", g.BasePerOp, g.TargetPerOp, g.PerOpUnit)
		}
		if got, want := g.Note(), "normalized per operation: context switches per op, cs/op (10.5 0.50, 10.11 0.40); colour: change of the frame's whole subtree; widths: 10.11"; got != want {
			t.Errorf("Note() = %q, want %q", got, want)
		}
		if n := g.TotalNote(); n != "" {
			t.Errorf("TotalNote() of a differential graph = %q, want none", n)
		}
		// log_write_up_to: 10 of 50 base switches over 100 operations (0.10
		// cs/op), 10 of 80 target switches over 200 (0.05 cs/op).
		f := frameNamed(t, g, "log_write_up_to")
		got := g.tooltip(f, f.Name)
		for _, want := range []string{
			"10.5 (base): 0.10 cs/op, 20.00%, 10 switches",
			"10.11 (target): 0.05 cs/op, 12.50%, 10 switches",
			"change: -0.05 cs/op (-50.0%)",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("tooltip %q lacks %q", got, want)
			}
		}
		// vio_read: 20/100 = 40/200 = 0.20 cs/op: unchanged per op though
		// its share grew from 40% to 50%.
		f = frameNamed(t, g, "vio_read")
		if got := g.tooltip(f, f.Name); !strings.Contains(got, "change: +0.00 cs/op (+0.0%)") {
			t.Errorf("tooltip %q: want no change per op", got)
		}
		if got := g.color(f); got != unchangedColor {
			t.Errorf("vio_read, unchanged per op, is filled %v, want %v", got, unchangedColor)
		}
	})

	t.Run("diff time share", func(t *testing.T) {
		other := profile(t, "mariadbd;do_command;my_net_read_packet;vio_read;[voluntary] 300")
		other.Unit = fold.UnitOffCPUMicros
		g, err := LayoutDiff(time, other, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := g.Note(), "normalized by share: % of all off-CPU time, changes in percentage points (pp); colour: change of the frame's whole subtree; widths: target"; got != want {
			t.Errorf("Note() = %q, want %q", got, want)
		}
		f := frameNamed(t, g, "vio_read")
		if got, want := g.tooltip(f, f.Name), "vio_read\n10.5 (base): 50.00%, 600 us\ntarget (target): 100.00%, 300 us\nchange: +50.00 pp (+100.0%)\nself: 0.00 → 0.00 pp (+0.00 pp)"; got != want {
			t.Errorf("tooltip %q, want %q", got, want)
		}
		g, err = LayoutDiff(time, other, Options{ColorBy: ColorBySelf})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(g.Note(), "colour: change of the frame's own time") {
			t.Errorf("Note() = %q: want the frame's own time", g.Note())
		}
	})
}

func TestMixedUnits(t *testing.T) {
	time, switches, _, _ := offCPUProfiles(t)
	onCPU := profile(t, "mariadbd;do_command;vio_read 5")
	onCPU.Meta = &fold.Meta{Label: "cpu", CPUSecondsTotal: 1, Operations: 100}
	period := profile(t, "mariadbd;do_command;vio_read 5000000")
	period.Unit, period.Event = fold.UnitPeriod, "cpu-clock"
	tests := []struct {
		name         string
		base, target *fold.Profile
		want         error
	}{
		{"on-CPU vs off-CPU time", onCPU, time, ErrMixedUnits},
		{"off-CPU time vs on-CPU", time, onCPU, ErrMixedUnits},
		{"time vs switches", time, switches, ErrMixedUnits},
		{"switches vs time", switches, time, ErrMixedUnits},
		{"on-CPU vs switches", onCPU, switches, ErrMixedUnits},
		{"time vs time", time, time, nil},
		{"switches vs switches", switches, switches, nil},
		// Both CPU, counted differently: compared by share as before.
		{"samples vs cpu-clock periods", onCPU, period, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, n := range []Normalize{NormalizeShare, ""} {
				_, err := LayoutDiff(tt.base, tt.target, Options{Normalize: n})
				if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
					t.Errorf("LayoutDiff(normalize %q) error %v, want %v", n, err, tt.want)
				}
			}
		})
	}
	_, err := LayoutDiff(onCPU, switches, Options{})
	if want := "flame graph: base cpu measures CPU, target 10.5 context switches: profiles measure different things"; err == nil || err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

// TestSwitchKindColors checks the teal and amber of the voluntary and
// involuntary leaves of a single off-CPU graph, whatever the palette, and
// their legend; differential and on-CPU graphs keep their colours.
func TestSwitchKindColors(t *testing.T) {
	time, _, base, target := offCPUProfiles(t)
	subs := []string{"network", "commit", "update", "other"}
	for _, o := range []Options{{}, {Palette: PaletteHot}, {Palette: PaletteSubsystem, Subsystem: classify, Subsystems: subs}, {Reverse: true}} {
		g, err := Layout(time, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range g.Frames {
			f := &g.Frames[i]
			got := g.color(f)
			switch f.Name {
			case fold.OffCPUVoluntary:
				if got != (rgb{0, 150, 136}) {
					t.Errorf("palette %s: [voluntary] at depth %d filled %v, want teal rgb(0,150,136)", g.opts.Palette, f.Depth, got)
				}
			case fold.OffCPUInvoluntary:
				if got != (rgb{255, 179, 0}) {
					t.Errorf("palette %s: [involuntary] at depth %d filled %v, want amber rgb(255,179,0)", g.opts.Palette, f.Depth, got)
				}
			default:
				if g.opts.Palette == PaletteIO && (got.b < 190 || got.r != got.g) {
					t.Errorf("%s filled %v: want the io palette's blue", f.Name, got)
				}
			}
		}
		var out bytes.Buffer
		if err := g.WriteSVG(&out); err != nil {
			t.Fatal(err)
		}
		checkXML(t, out.Bytes())
		s := out.String()
		for _, want := range []string{
			`fill="rgb(0,150,136)"/><text x="`, `>[voluntary] blocked</text>`,
			`fill="rgb(255,179,0)"/><text x="`, `>[involuntary] preempted</text>`,
		} {
			if !strings.Contains(s, want) {
				t.Errorf("palette %s: SVG lacks the legend's %q", g.opts.Palette, want)
			}
		}
		if o.Palette == PaletteSubsystem && !strings.Contains(s, ">network</text>") {
			t.Error("the subsystem legend is gone beside the switch legend")
		}
	}

	// A profile with voluntary leaves only has a legend of that kind only.
	vol := profile(t, "t;a;[voluntary] 3")
	vol.Unit = fold.UnitOffCPUMicros
	g, err := Layout(vol, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sw := g.switchSwatches(); len(sw) != 1 || sw[0].name != "[voluntary] blocked" {
		t.Errorf("legend %+v, want [voluntary] only", sw)
	}

	// Differential graph: colours say the change.
	dg, err := LayoutDiff(base, target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range dg.Frames {
		f := &dg.Frames[i]
		if want := diffColor(f.Diff.Delta, dg.MaxDelta, 0); dg.color(f) != want {
			t.Errorf("diff: %s filled %v, want the change colour %v", f.Name, dg.color(f), want)
		}
	}
	if sw := dg.switchSwatches(); sw != nil {
		t.Errorf("diff graph has a switch legend %+v", sw)
	}

	// An on-CPU profile with such a frame name keeps its palette.
	on := profile(t, "t;[voluntary] 3")
	og, err := Layout(on, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := frameNamed(t, og, fold.OffCPUVoluntary)
	if got, want := og.color(f), paletteColor(PaletteHot, og.seed(f)); got != want {
		t.Errorf("on-CPU [voluntary] filled %v, want the hot palette's %v", got, want)
	}
	if len(og.headLines()) != 0 {
		t.Errorf("on-CPU graph has header lines %+v", og.headLines())
	}
}

// TestOffCPUGolden draws the hand-made off-CPU profiles (offCPUProfiles):
// a graph of off-CPU time in the default palette, one of switches by
// subsystem, and a differential graph of switches per operation.
func TestOffCPUGolden(t *testing.T) {
	time, switches, base, target := offCPUProfiles(t)
	subs := []string{"network", "commit", "update", "other"}
	tests := []struct {
		name   string
		render func(*bytes.Buffer) error
	}{
		{"offcpu-time", func(b *bytes.Buffer) error { return Render(b, time, Options{}) }},
		{"offcpu-switches-subsystem", func(b *bytes.Buffer) error {
			return Render(b, switches, Options{Palette: PaletteSubsystem, Subsystem: classify, Subsystems: subs, Hash: true})
		}},
		{"offcpu-diff-switches-per-op", func(b *bytes.Buffer) error {
			return RenderDiff(b, base, target, Options{Normalize: AutoNormalize(base, target)})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := tt.render(&out); err != nil {
				t.Fatal(err)
			}
			checkXML(t, out.Bytes())
			checkScript(t, out.Bytes())
			golden(t, tt.name+".svg", out.Bytes())
		})
	}
}
