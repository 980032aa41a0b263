package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/flamegraph"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/internal/names"
)

// Values of --normalize beyond flamegraph's.
const normalizeAuto = "auto"

// graphFlags are the flame graph flags svg and html share.
type graphFlags struct {
	inputFlags
	Diff      bool
	Title     string
	Subtitle  string
	Width     int
	Height    int
	MinWidth  string
	Colors    string
	Hash      bool
	CountName string
	Reverse   bool
	Inverted  bool
	ColorBy   string
	MinDelta  float64
	Normalize string
	Negate    bool

	// set by validate
	minWidthPx, minWidthPct float64
	changed                 func(name string) bool
}

func (g *graphFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&g.Diff, "diff", false, "draw a differential flame graph of BASE and TARGET")
	g.registerInput(cmd, "symbol map `FILE`: renames (so versions line up), subsystems (--colors subsystem, tooltips)", "write to `FILE` instead of standard output")
	f.StringVar(&g.Title, "title", "", "title `TEXT` (default \"Flame Graph\", \"Icicle Graph\" or \"Differential Flame Graph\")")
	f.StringVar(&g.Subtitle, "subtitle", "", "second title line `TEXT` (a differential graph says BASE → TARGET by default)")
	f.IntVar(&g.Width, "width", flamegraph.DefaultWidth, "image width in `PIXELS`")
	f.IntVar(&g.Height, "height", flamegraph.DefaultFrameHeight, "frame height in `PIXELS`")
	f.StringVar(&g.MinWidth, "minwidth", strconv.FormatFloat(flamegraph.DefaultMinWidth, 'g', -1, 64),
		"merge frames narrower than `W` pixels into their parent (\"0.5%\": a percentage of the total; 0: draw all)")
	palettes := make([]string, len(flamegraph.Palettes))
	for i, p := range flamegraph.Palettes {
		palettes[i] = string(p)
	}
	cli.EnumFlag(cmd, &g.Colors, "colors", string(flamegraph.PaletteHot), "palette of a single graph: "+strings.Join(palettes, ", ")+" (subsystem needs --map with subsystems); default hot, or io for an off-CPU profile", palettes...)
	f.BoolVar(&g.Hash, "hash", false, "colour by name: every frame of a function gets the same colour")
	f.StringVar(&g.CountName, "countname", "", "what values count, in tooltips (default: samples, or ns for perf period sums of cpu-clock)")
	f.BoolVar(&g.Reverse, "reverse", false, "reverse every stack (leaf first): a flame graph of callers")
	f.BoolVar(&g.Inverted, "inverted", false, "draw an icicle graph: root at the top")
	cli.EnumFlag(cmd, &g.ColorBy, "color-by", string(flamegraph.ColorBySubtree), "with --diff: colour a frame by the change of its whole subtree, or of its self samples (self: the classic differential graph)",
		string(flamegraph.ColorBySubtree), string(flamegraph.ColorBySelf))
	f.Float64Var(&g.MinDelta, "min-delta", 0, "with --diff: draw changes smaller than `D` (pp, or µs/op with --normalize per-op) as unchanged")
	cli.EnumFlag(cmd, &g.Normalize, "normalize", normalizeAuto, "with --diff: share (% of all samples), per-op (CPU µs per operation; needs run directories), or auto (per-op when both inputs have run metadata)",
		normalizeAuto, string(flamegraph.NormalizeShare), string(flamegraph.NormalizePerOp))
	f.BoolVar(&g.Negate, "negate", false, "with --diff: widths follow BASE instead of TARGET (frames gone in TARGET show); red still means grown")
	g.changed = func(name string) bool { return cmd.Flags().Changed(name) }
}

// validate checks the flags against each other and the number of profiles.
func (g *graphFlags) validate(cmdName string, args []string) error {
	nargs := len(args)
	if g.Diff && nargs != 2 {
		return cli.UsageError("%s --diff takes a BASE and a TARGET profile, got %s", cmdName, names.Plural(nargs, "argument"))
	}
	if !g.Diff && nargs != 1 {
		if nargs == 2 {
			return cli.UsageError("%s takes one PROFILE, got 2 arguments (add --diff for a differential graph of BASE and TARGET)", cmdName)
		}
		return cli.UsageError("%s takes one PROFILE, got %s", cmdName, names.Plural(nargs, "argument"))
	}
	if err := distinctInputs(args...); err != nil {
		return err
	}
	if err := checkLabels(g.Labels, args); err != nil {
		return err
	}
	if g.Width < 100 {
		return cli.UsageError("--width %d: want at least 100 pixels", g.Width)
	}
	if g.Height < 4 {
		return cli.UsageError("--height %d: want at least 4 pixels", g.Height)
	}
	var err error
	if g.minWidthPx, g.minWidthPct, err = flamegraph.ParseMinWidth(g.MinWidth); err != nil {
		return cli.UsageError("--minwidth %v", err)
	}
	if g.Diff && g.changed != nil && g.changed("colors") {
		return cli.UsageError("--colors applies to single flame graphs; a --diff graph is coloured by change (see --color-by)")
	}
	if g.Colors == string(flamegraph.PaletteSubsystem) && g.MapFile == "" {
		return cli.UsageError("--colors subsystem needs --map FILE with subsystems (e.g. examples/symbolmaps/mariadb.yaml)")
	}
	if !g.Diff && g.changed != nil {
		for _, name := range []string{"color-by", "min-delta", "normalize", "negate"} {
			if g.changed(name) {
				return cli.UsageError("--%s applies to differential graphs only (add --diff BASE TARGET)", name)
			}
		}
	}
	if g.MinDelta < 0 || math.IsNaN(g.MinDelta) {
		return cli.UsageError("--min-delta %g: want 0 or more", g.MinDelta)
	}
	return nil
}

// SVGOptions are the inputs of `flamediff svg`.
type SVGOptions struct {
	IO *streams
	// Profiles is PROFILE, or BASE and TARGET with --diff.
	Profiles []string
	graphFlags
	// Load reads a profile; nil means input.Loader on IO.In.
	Load input.LoadFunc
}

func newSVGCmd(s *streams, runF func(*SVGOptions) error) *cobra.Command {
	opts := &SVGOptions{IO: s}
	cmd := &cobra.Command{
		Use:     "svg [flags] PROFILE | svg --diff [flags] BASE TARGET",
		Short:   "Draw an interactive flame graph, or a differential flame graph of two versions, as SVG",
		Long:    help.Long("svg"),
		Example: help.Example("svg"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Profiles = args
			if err := opts.validate("svg", args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runSVG(cmd.Context(), opts)
		},
	}
	opts.register(cmd)
	return cmd
}

// readGraphInput reads the map and the profiles of svg and html, the
// labels of a base and a target told apart when they are equal.
func readGraphInput(ctx context.Context, s *streams, load input.LoadFunc, paths []string, g *graphFlags) (*input.Set, error) {
	m, err := loadMap(s, g.MapFile)
	if err != nil {
		return nil, err
	}
	if g.Colors == string(flamegraph.PaletteSubsystem) && !m.HasSubsystems() {
		return nil, cli.UsageError("--colors subsystem: symbol map %s defines no subsystems; add a subsystems: section or choose --colors hot", g.MapFile)
	}
	in, err := input.ReadSet(ctx, g.loader(s, load), m, paths, g.Labels, g.parseOptions())
	if err != nil {
		return nil, err
	}
	warnUnlabelled(s, m, in.Args, in.Raw)
	in.LabelBaseTarget()
	return in, nil
}

// layout lays out the graph the flags ask for.
func (g *graphFlags) layout(in *input.Set) (*flamegraph.Graph, error) {
	// Without --colors the profile chooses: hot, io for off-CPU.
	palette := flamegraph.Palette(g.Colors)
	if g.changed != nil && !g.changed("colors") {
		palette = ""
	}
	gr, err := in.Graph(flamegraph.Options{
		Title: g.Title, Subtitle: g.Subtitle,
		Width: g.Width, FrameHeight: g.Height,
		MinWidth: g.minWidthPx, MinWidthPercent: g.minWidthPct,
		Palette: palette, Hash: g.Hash,
		CountName: g.CountName, Reverse: g.Reverse, Inverted: g.Inverted,
		ColorBy: flamegraph.ColorBy(g.ColorBy), MinDelta: g.MinDelta, Negate: g.Negate,
	}, g.Diff, g.Normalize)
	var np *input.NoPerOpError
	if errors.As(err, &np) {
		return nil, fmt.Errorf("--normalize per-op: %w or use --normalize share", err)
	}
	return gr, err
}

func runSVG(ctx context.Context, opts *SVGOptions) error {
	out, err := checkOutput("-o", opts.Output, append([]string{opts.MapFile}, opts.Profiles...)...)
	if err != nil {
		return err
	}
	in, err := readGraphInput(ctx, opts.IO, opts.Load, opts.Profiles, &opts.graphFlags)
	if err != nil {
		return err
	}
	g, err := opts.layout(in)
	if err != nil {
		return err
	}
	warnCut(opts.IO, g)
	var buf bytes.Buffer
	if err := g.WriteSVG(&buf); err != nil {
		return err
	}
	return cli.WriteOutput(opts.IO, out, buf.Bytes())
}

// warnCut says on stderr what a graph too deep to draw left out (the graph
// says it too, under its title).
func warnCut(s *streams, g *flamegraph.Graph) {
	if note := g.CutNote(); note != "" {
		fmt.Fprintf(s.ErrOut, "flamediff: warning: %s\n", note)
	}
}
