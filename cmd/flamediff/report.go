package main

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/report"
)

// inputFlags are the flags of every command that reads profiles under a
// symbol map and writes one output: report, diff, svg, html, map suggest.
type inputFlags struct {
	MapFile string
	Output  string
	Strict  bool
	// InputFormat is --input-format: auto, perf, folded or pprof.
	InputFormat string
	// Labels are --label's, one per profile argument (or none).
	Labels []string
	// OffCPU is --off-cpu: "" (on-CPU), input.OffCPUTime or
	// input.OffCPUSwitches.
	OffCPU offCPUFlag
}

// offCPUFlag is --off-cpu[=time|switches]: a value checked as it is
// parsed (a usage error), "time" when the flag is given bare.
type offCPUFlag string

func (f *offCPUFlag) String() string { return string(*f) }

// Type is "": the help shows "--off-cpu[=time]" and names both values.
func (f *offCPUFlag) Type() string { return "" }

func (f *offCPUFlag) Set(v string) error {
	if !slices.Contains(input.OffCPUKinds, v) {
		return fmt.Errorf("want %s", cli.OrList(input.OffCPUKinds))
	}
	*f = offCPUFlag(v)
	return nil
}

// offCPUHelp is --off-cpu's help.
const offCPUHelp = "read off-CPU profiles, as record --off-cpu writes them: a run directory's offcpu.folded (--off-cpu or --off-cpu=time: microseconds off the CPU) or offcpu-switches.folded (--off-cpu=switches: context switches); figures per operation in µs/op off the CPU or cs/op, voluntary and involuntary switches apart. A file named offcpu*.folded is read as one without it"

// registerInput adds the input flags; mapHelp and outputHelp are --map's
// and --output's help.
func (in *inputFlags) registerInput(cmd *cobra.Command, mapHelp, outputHelp string) {
	f := cmd.Flags()
	f.StringVar(&in.MapFile, "map", "", mapHelp)
	f.StringVarP(&in.Output, "output", "o", "", outputHelp)
	f.BoolVar(&in.Strict, "strict", false, "fail on input lines that cannot be parsed instead of skipping them")
	cli.EnumFlag(cmd, &in.InputFormat, "input-format", fold.FormatAuto, "format of file inputs: auto (detected), perf, folded or pprof; run directories are always stacks.folded (with --off-cpu, offcpu.folded or offcpu-switches.folded) and run.json", inputFormats...)
	cmd.Flags().StringArrayVar(&in.Labels, "label", nil, labelHelp)
	f.Var(&in.OffCPU, "off-cpu", offCPUHelp)
	f.Lookup("off-cpu").NoOptDefVal = input.OffCPUTime
	_ = cmd.RegisterFlagCompletionFunc("off-cpu", cli.FixedCompletion(input.OffCPUKinds...))
}

// loader is how the command reads its profile arguments (loader), off-CPU
// profiles with --off-cpu.
func (in *inputFlags) loader(s *streams, load input.LoadFunc) input.LoadFunc {
	return loaderOf(s, load, string(in.OffCPU))
}

// parseOptions are the options for reading the profile arguments.
func (in *inputFlags) parseOptions() fold.ParseOptions {
	return fold.ParseOptions{Format: in.InputFormat, Strict: in.Strict}
}

// commonFlags are the flags report and diff share.
type commonFlags struct {
	inputFlags
	Format string
	tableFlags
}

// tableFlags shape the report tables: report, diff and html share them.
type tableFlags struct {
	Top     int
	Roots   []string
	Depth   int
	Threads bool
	Explain bool
	// KeepUnresolved and NoCollapse turn off the subtree defaults.
	KeepUnresolved    bool
	NoCollapse        bool
	CollapseThreshold float64
}

func (c *commonFlags) register(cmd *cobra.Command) {
	c.registerInput(cmd, "symbol map `FILE` (renames, subsystems, thread roots); default: built-in normalisation only", "write to `FILE` instead of standard output")
	cli.EnumFlag(cmd, &c.Format, "format", formatTable, "output `format`: "+strings.Join(formats, ", "), formats...)
	c.registerTable(cmd, "print which map rule turned which original symbol into which name")
}

// registerTable adds the table flags; explain is --explain's help.
func (t *tableFlags) registerTable(cmd *cobra.Command, explain string) {
	f := cmd.Flags()
	f.BoolVar(&t.Explain, "explain", false, explain)
	f.IntVar(&t.Top, "top", 30, "show the first `N` rows of the function tables (0: all); --root breakdowns are limited by --depth, not --top")
	f.StringArrayVar(&t.Roots, "root", nil, "break down function `FN` and its callees (repeatable)")
	f.IntVar(&t.Depth, "depth", 2, "levels of callees under each --root")
	f.BoolVar(&t.Threads, "threads", false, "count thread names (the first frame of each stack) as functions")
	f.BoolVar(&t.KeepUnresolved, "keep-unresolved", false, "show unresolved frames ([mariadbd], [libc.so.6], [unknown]) as rows of --root breakdowns instead of looking through them")
	f.BoolVar(&t.NoCollapse, "no-collapse", false, "show every call level of --root breakdowns instead of merging a callee that holds nearly all of its caller into one row (a → b)")
	f.Float64Var(&t.CollapseThreshold, "collapse-threshold", diff.DefaultCollapseThreshold, "share `F` (0 < F <= 1) of its caller a callee must hold to share its row in --root breakdowns")
}

// validateTable checks the table flags.
func (t *tableFlags) validateTable() error {
	if t.Top < 0 {
		return cli.UsageError("--top %d: want 0 (all) or a positive number", t.Top)
	}
	if t.Depth < 0 {
		return cli.UsageError("--depth %d: want 0 or more", t.Depth)
	}
	if !(t.CollapseThreshold > 0 && t.CollapseThreshold <= 1) {
		return cli.UsageError("--collapse-threshold %g: want a share above 0 and at most 1", t.CollapseThreshold)
	}
	for _, r := range t.Roots {
		if strings.TrimSpace(r) == "" {
			return cli.UsageError("--root: empty function name")
		}
	}
	return nil
}

// inputFormats are the values of --input-format.
var inputFormats = []string{fold.FormatAuto, fold.FormatPerf, fold.FormatFolded, fold.FormatPprof}

// ReportOptions are the inputs of `flamediff report`.
type ReportOptions struct {
	IO      *streams
	Profile string
	commonFlags
	// Load reads the profile; nil means input.Loader on IO.In.
	Load input.LoadFunc
}

func newReportCmd(s *streams, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{IO: s}
	cmd := &cobra.Command{
		Use:     "report [flags] PROFILE",
		Short:   "Function shares, subtree breakdowns, subsystems and CPU per operation of one profile",
		Long:    help.Long("report"),
		Example: help.Example("report"),
		Args:    cli.ArgCount(1, 1, "report takes one PROFILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Profile = args[0]
			if err := opts.validateTable(); err != nil {
				return err
			}
			if err := checkLabels(opts.Labels, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runReport(cmd.Context(), opts)
		},
	}
	opts.register(cmd)
	return cmd
}

func runReport(ctx context.Context, opts *ReportOptions) error {
	s := opts.IO
	out, err := checkOutput("-o", opts.Output, opts.Profile, opts.MapFile)
	if err != nil {
		return err
	}
	m, err := loadMap(s, opts.MapFile)
	if err != nil {
		return err
	}
	in, err := input.ReadSet(ctx, opts.loader(s, opts.Load), m, []string{opts.Profile}, opts.Labels, opts.parseOptions())
	if err != nil {
		return err
	}
	warnUnlabelled(s, m, in.Args, in.Raw)
	dopts, err := opts.diffOptions(in)
	if err != nil {
		return err
	}
	sum := diff.Summarize(in.Profiles[0], dopts)
	var buf bytes.Buffer
	if err := report.RenderProfile(&buf, side(s), sum, in.Explanations[0], opts.reportOptions(sum.HintedWarnings(warningHints))); err != nil {
		return err
	}
	return cli.WriteOutput(s, out, buf.Bytes())
}
