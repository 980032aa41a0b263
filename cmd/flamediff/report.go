package main

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap"

	"github.com/flamediff/flamediff/internal/textdist"
)

// commonFlags are the flags report and diff share.
type commonFlags struct {
	MapFile string
	Explain bool
	Format  string
	Output  string
	Top     int
	Roots   []string
	Depth   int
	Strict  bool
	// InputFormat is --input-format: auto, perf, folded or pprof.
	InputFormat string
	Threads     bool
	// KeepUnresolved and NoCollapse turn off the subtree defaults.
	KeepUnresolved    bool
	NoCollapse        bool
	CollapseThreshold float64
}

func (c *commonFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&c.MapFile, "map", "", "symbol map `FILE` (renames, subsystems, thread roots); default: built-in normalisation only")
	f.BoolVar(&c.Explain, "explain", false, "print which map rule turned which original symbol into which name")
	f.StringVar(&c.Format, "format", formatTable, "output `format`: "+strings.Join(formats, ", "))
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion(formats...))
	f.StringVarP(&c.Output, "output", "o", "", "write to `FILE` instead of standard output")
	f.IntVar(&c.Top, "top", 30, "show the first `N` rows of the function tables (0: all); --root breakdowns are limited by --depth, not --top")
	f.StringArrayVar(&c.Roots, "root", nil, "break down function `FN` and its callees (repeatable)")
	f.IntVar(&c.Depth, "depth", 2, "levels of callees under each --root")
	f.BoolVar(&c.Strict, "strict", false, "fail on input lines that cannot be parsed instead of skipping them")
	registerInputFormat(cmd, &c.InputFormat)
	f.BoolVar(&c.Threads, "threads", false, "count thread names (the first frame of each stack) as functions")
	f.BoolVar(&c.KeepUnresolved, "keep-unresolved", false, "show unresolved frames ([mariadbd], [libc.so.6], [unknown]) as rows of --root breakdowns instead of looking through them")
	f.BoolVar(&c.NoCollapse, "no-collapse", false, "show every call level of --root breakdowns instead of merging a callee that holds nearly all of its caller into one row (a → b)")
	f.Float64Var(&c.CollapseThreshold, "collapse-threshold", diff.DefaultCollapseThreshold, "share `F` (0 < F <= 1) of its caller a callee must hold to share its row in --root breakdowns")
}

func (c *commonFlags) validate() error {
	if c.Top < 0 {
		return usageError("--top %d: want 0 (all) or a positive number", c.Top)
	}
	if c.Depth < 0 {
		return usageError("--depth %d: want 0 or more", c.Depth)
	}
	if !(c.CollapseThreshold > 0 && c.CollapseThreshold <= 1) {
		return usageError("--collapse-threshold %g: want a share above 0 and at most 1", c.CollapseThreshold)
	}
	if err := checkInputFormat(c.InputFormat); err != nil {
		return err
	}
	for _, r := range c.Roots {
		if strings.TrimSpace(r) == "" {
			return usageError("--root: empty function name")
		}
	}
	return checkFormat(c.Format)
}

// parseOptions are the options for reading the profile arguments.
func (c *commonFlags) parseOptions() fold.ParseOptions {
	return fold.ParseOptions{Format: c.InputFormat, Strict: c.Strict}
}

// registerInputFormat adds --input-format to a command that reads profiles.
func registerInputFormat(cmd *cobra.Command, v *string) {
	cmd.Flags().StringVar(v, "input-format", fold.FormatAuto, "format of file inputs: auto (detected), perf, folded or pprof; run directories are always stacks.folded and run.json")
	_ = cmd.RegisterFlagCompletionFunc("input-format", fixedCompletion(fold.FormatAuto, fold.FormatPerf, fold.FormatFolded, fold.FormatPprof))
}

// checkInputFormat checks --input-format.
func checkInputFormat(f string) error {
	switch f {
	case "", fold.FormatAuto, fold.FormatPerf, fold.FormatFolded, fold.FormatPprof:
		return nil
	}
	return usageError("--input-format %q: want auto, perf, folded or pprof", f)
}

// profileLoader reads a profile argument; loadProfile in production.
type profileLoader func(s *streams, path string, opts loadOptions) (*fold.Profile, error)

// ReportOptions are the inputs of `flamediff report`.
type ReportOptions struct {
	IO      *streams
	Profile string
	commonFlags
	// Load reads the profile; nil means loadProfile.
	Load profileLoader
}

func newReportCmd(s *streams, runF func(*ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "report [flags] PROFILE",
		Short: "Function shares, subtree breakdowns, subsystems and CPU per operation of one profile",
		Long: `Report where one profile spends its CPU: the inclusive and self share of
every function (a recursive function counts once per sample), the breakdown
of chosen functions into their callees, subsystem shares (with --map), the
share of stacks cut short by the unwinder, and CPU microseconds per
operation when PROFILE is a run directory whose run.json has cpu_seconds
and operations.

PROFILE is a file in any format flamediff fold reads, a run directory
(stacks.folded and run.json), or - for standard input.`,
		Example: `  flamediff report testdata/runs/mariadb-10.11-update-index
  flamediff report --root mysqld_stmt_execute --depth 2 testdata/runs/mariadb-10.11-update-index
  flamediff report --map examples/symbolmaps/mariadb.yaml --explain testdata/runs/mariadb-11.8-update-index
  flamediff report --top 0 --format csv -o functions.csv stacks.folded
  perf script | flamediff fold | flamediff report --format markdown -`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("report takes one PROFILE, got %s", names.Plural(len(args), "argument"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Profile = args[0]
			if err := opts.validate(); err != nil {
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
	p, expl, err := loadMapped(ctx, s, opts.Load, opts.Profile, opts.parseOptions(), m)
	if err != nil {
		return err
	}
	roots, err := resolveRoots(opts.Roots, []*fold.Profile{p}, []*symbolmap.Explanation{expl})
	if err != nil {
		return err
	}
	dopts := diffOptions(m, &opts.commonFlags, roots)
	dopts.Labels = []string{profileLabel(p, opts.Profile)}
	sum := diff.Summarize(p, dopts)
	var warnings []string
	if sum.Completeness != nil {
		if w := sum.Completeness.Warning(); w != "" {
			warnings = append(warnings, "warning: "+w)
		}
	}
	var buf bytes.Buffer
	switch opts.Format {
	case formatJSON:
		err = writeJSON(&buf, reportJSON(sum, expl, opts.Top, opts.Explain, warnings))
	case formatCSV:
		err = writeCSV(&buf, reportCSVHeader, reportCSVRows(sum, opts.Top))
		for _, w := range warnings {
			fmt.Fprintf(s.ErrOut, "flamediff: %s\n", w)
		}
		if opts.Explain {
			err2 := writeDocument(s.ErrOut, formatTable, &document{sections: []section{rewritesSection("Rewrites", expl, opts.Format)}})
			if err == nil {
				err = err2
			}
		}
	default:
		err = writeDocument(&buf, opts.Format, reportDocument(sum, expl, opts.Top, opts.Explain, warnings, opts.Format))
	}
	if err != nil {
		return err
	}
	return writeOutput(s, out, buf.Bytes())
}

// resolveRoots checks that every --root names a frame of at least one
// profile. A root given by its original symbol, which the map renamed, is
// replaced by the canonical name. Otherwise it is a usage error naming the
// closest names.
func resolveRoots(roots []string, ps []*fold.Profile, expls []*symbolmap.Explanation) ([]string, error) {
	if len(roots) == 0 {
		return nil, nil
	}
	have := make(map[string]bool)
	var names []string
	for _, p := range ps {
		for _, f := range diff.Frames(p) {
			if !have[f] {
				have[f] = true
				names = append(names, f)
			}
		}
	}
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r
		if have[r] {
			continue
		}
		renamed, elidedBy := "", ""
		for _, e := range expls {
			if e == nil {
				continue
			}
			for _, rw := range e.Rewrites {
				if rw.Original != r {
					continue
				}
				if rw.Result == "" {
					elidedBy = rw.Rule
				} else if have[rw.Result] && renamed == "" {
					renamed = rw.Result
				}
			}
		}
		if renamed != "" {
			out[i] = renamed
			continue
		}
		if elidedBy != "" {
			return nil, usageError("--root %q: the symbol map removes this frame (%s); choose its caller or callee", r, elidedBy)
		}
		msg := fmt.Sprintf("--root %q: no such function in the profile", r)
		if close := closest(r, names, 5); len(close) > 0 {
			msg += "; closest: " + strings.Join(close, ", ")
		}
		return nil, usageError("%s", msg)
	}
	return out, nil
}

// closest returns up to n names nearest to want: names containing it
// (case-insensitively) first, shortest first, then by edit distance.
func closest(want string, names []string, n int) []string {
	lw := strings.ToLower(want)
	type cand struct {
		name string
		sub  bool
		dist int
	}
	var cs []cand
	for _, name := range names {
		ln := strings.ToLower(name)
		c := cand{name: name, sub: strings.Contains(ln, lw) || strings.Contains(lw, ln) && len(ln) > 3}
		c.dist = textdist.Levenshtein(lw, ln)
		if c.sub || c.dist <= max(2, len(want)/3) {
			cs = append(cs, c)
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		a, b := cs[i], cs[j]
		if a.sub != b.sub {
			return a.sub
		}
		if a.dist != b.dist {
			return a.dist < b.dist
		}
		return a.name < b.name
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].name)
	}
	return out
}

func top[T any](xs []T, n int) []T {
	if n > 0 && len(xs) > n {
		return xs[:n]
	}
	return xs
}

// nameCell formats a function name (or a chain "a → b") for the table,
// markdown or HTML output: invalid UTF-8 replaced and, in tables and
// markdown, each name longer than names.Width runes shortened in the middle
// (the HTML page shortens them itself, with the whole name as tooltip;
// JSON and CSV keep names whole).
func nameCell(format, name string, level int) string {
	switch format {
	case formatMarkdown:
		return mdName(names.ShortenChain(name, names.Width), level)
	case formatHTML:
		return treeName(names.Clean(name), level)
	}
	return treeName(names.ShortenChain(name, names.Width), level)
}

// rowCell formats a subtree row's name (a function, or a chain "a → b";
// a chain of more than 4 functions shows its first two and its last) and,
// when a chain's end has less than its start, the end's share(s):
// "a → b (end 66.43%)".
func rowCell(format, name string, chain []string, level int, end []float64) string {
	label := name
	switch {
	case len(chain) > 4:
		label = fmt.Sprintf("%s → %s → … → %s", chain[0], chain[1], chain[len(chain)-1])
	case len(chain) > 1:
		label = strings.Join(chain, " → ")
	}
	cell := nameCell(format, label, level)
	if len(end) == 0 {
		return cell
	}
	pcts := make([]string, len(end))
	for i, e := range end {
		pcts[i] = f2(e) + "%"
	}
	return cell + " (end " + strings.Join(pcts, ", ") + ")"
}

// subtreeNotes explain the transparent unresolved frames and the chains of
// a breakdown, when it has any.
func subtreeNotes(skipped, chains bool, threshold float64) []string {
	var notes []string
	if skipped {
		notes = append(notes, "Unresolved frames ([mariadbd], [libc.so.6], ...) are looked through: their callees sit under the nearest named caller, and "+
			diff.UnresolvedName+" rows hold the stacks that end inside them (--keep-unresolved shows them as rows).")
	}
	if chains {
		notes = append(notes, fmt.Sprintf("a → b: b holds at least %g%% of a, shown as one row with a's value and b's callees; \"end\" is b's share when it differs (--no-collapse shows every level).", threshold*100))
	}
	return notes
}

// runSection is the per-op block: one row per profile.
func runSection(sums []*diff.Summary, format string) section {
	s := section{
		title: "Run",
		cols: []column{{"profile", false}, {"unit", false}, {"total", true}, {"cpu s", true}, {"ops", true},
			{"QPS", true}, {"rQPS", true}, {"cpu/o µs", true}, {"cs/o", true}},
	}
	for _, sum := range sums {
		f := sum.Profile
		row := []string{f.Label, f.CountUnit, itoa(f.Total), "-", "-", "-", "-", "-", "-"}
		if f.HasPerOp {
			row[3], row[4], row[7] = f2(f.CPUSeconds), itoa(f.Operations), f2(f.MicrosPerOp)
		}
		if f.QPS > 0 {
			row[5] = f2(f.QPS)
		}
		if f.RelativeQPS > 0 {
			row[6] = f2(f.RelativeQPS)
		}
		if f.HasCtxSwitches {
			row[8] = f2(f.CtxSwitchesPerOp)
		}
		if format == formatMarkdown {
			row[0] = "`" + row[0] + "`"
		}
		s.rows = append(s.rows, row)
	}
	return s
}

func rewritesSection(title string, e *symbolmap.Explanation, format string) section {
	s := section{title: title, cols: []column{{"original", false}, {"result", false}, {"rule", false}, {"value", true}}}
	if e != nil {
		for _, r := range e.Rewrites {
			res := r.Result
			if res == "" {
				res = "(elided)"
			}
			s.rows = append(s.rows, []string{nameCell(format, r.Original, 0), nameCell(format, res, 0), r.Rule, itoa(r.Value)})
		}
	}
	if len(s.rows) == 0 {
		s.notes = append(s.notes, "no symbol was rewritten")
	}
	return s
}

func reportDocument(sum *diff.Summary, expl *symbolmap.Explanation, n int, explain bool, warnings []string, format string) *document {
	d := &document{title: fmt.Sprintf("Profile %s: %d %s", sum.Profile.Label, sum.Profile.Total, sum.Profile.CountUnit)}
	perOp := sum.Profile.HasPerOp
	d.sections = append(d.sections, runSection([]*diff.Summary{sum}, format))
	fs := section{
		title: fmt.Sprintf("Functions (%d of %d, by inclusive share)", len(top(sum.Functions, n)), len(sum.Functions)),
		cols:  []column{{"function", false}, {"inclusive", true}, {"self", true}, {"incl %", true}, {"self %", true}},
	}
	if perOp {
		fs.cols = append(fs.cols, column{"incl µs/op", true}, column{"self µs/op", true})
	}
	for _, f := range top(sum.Functions, n) {
		row := []string{nameCell(format, f.Name, 0), itoa(f.Inclusive), itoa(f.Self), f2(f.InclusivePct), f2(f.SelfPct)}
		if perOp {
			row = append(row, f2(f.InclusiveMicrosPerOp), f2(f.SelfMicrosPerOp))
		}
		fs.rows = append(fs.rows, row)
	}
	d.sections = append(d.sections, fs)
	if sum.Subsystems != nil {
		ss := section{title: "Subsystems", cols: []column{{"subsystem", false}, {"value", true}, {"%", true}}}
		if perOp {
			ss.cols = append(ss.cols, column{"µs/op", true})
		}
		for _, sub := range sum.Subsystems {
			row := []string{sub.Name, itoa(sub.Value), f2(sub.Pct)}
			if perOp {
				row = append(row, f2(sub.MicrosPerOp))
			}
			ss.rows = append(ss.rows, row)
		}
		d.sections = append(d.sections, ss)
	}
	for _, t := range sum.Subtrees {
		ts := section{
			title: fmt.Sprintf("Subtree %s (depth %d)", noteName(format)(t.Root.Name), t.Depth),
			cols:  []column{{"function", false}, {"value", true}, {"self", true}, {"% of total", true}, {"% of root", true}},
			notes: []string{t.SummaryWith(0, noteName(format))},
		}
		if perOp {
			ts.cols = append(ts.cols, column{"µs/op", true})
		}
		chains := false
		t.Walk(func(_ []string, level int, nd *diff.Node) {
			chains = chains || nd.Chain != nil
			var end []float64
			if nd.EndValue != nd.Value {
				end = []float64{nd.EndPct}
			}
			row := []string{rowCell(format, nd.Name, nd.Chain, level, end), itoa(nd.Value), itoa(nd.Self), f2(nd.Pct), f2(nd.PctOfRoot)}
			if perOp {
				row = append(row, f2(nd.Pct/100*sum.Profile.MicrosPerOp))
			}
			ts.rows = append(ts.rows, row)
		})
		ts.notes = append(ts.notes, subtreeNotes(t.SkippedUnresolved, chains, t.Threshold)...)
		d.sections = append(d.sections, ts)
	}
	if explain {
		d.sections = append(d.sections, rewritesSection("Rewrites", expl, format))
	}
	if sum.PerOpMissing != "" {
		d.notes = append(d.notes, "note: "+sum.PerOpMissing)
	}
	d.notes = append(d.notes, warnings...)
	return d
}

// reportCSVHeader is the one header row of `report --format csv`. Every row
// has a kind: function, subsystem or subtree (name is then the path from the
// root, joined by ';'). Cells that do not apply to a kind are empty.
// For a subtree row that merges a pass-through chain, chain lists its
// functions joined by ';' and chain_end_pct is the share of the chain's end.
var reportCSVHeader = []string{"kind", "name", "inclusive", "self", "inclusive_pct", "self_pct", "pct_of_root", "inclusive_us_per_op", "self_us_per_op", "chain", "chain_end_pct"}

func reportCSVRows(sum *diff.Summary, n int) [][]string {
	perOp := sum.Profile.HasPerOp
	var rows [][]string
	for _, f := range top(sum.Functions, n) {
		rows = append(rows, []string{"function", f.Name, itoa(f.Inclusive), itoa(f.Self), f2(f.InclusivePct), f2(f.SelfPct), "",
			optf2(perOp, f.InclusiveMicrosPerOp), optf2(perOp, f.SelfMicrosPerOp), "", ""})
	}
	for _, sub := range sum.Subsystems {
		rows = append(rows, []string{"subsystem", sub.Name, itoa(sub.Value), "", f2(sub.Pct), "", "", optf2(perOp, sub.MicrosPerOp), "", "", ""})
	}
	for _, t := range sum.Subtrees {
		t.Walk(func(path []string, _ int, nd *diff.Node) {
			rows = append(rows, []string{"subtree", strings.Join(path, ";"), itoa(nd.Value), itoa(nd.Self), f2(nd.Pct), "", f2(nd.PctOfRoot),
				optf2(perOp, nd.Pct/100*sum.Profile.MicrosPerOp), "", strings.Join(nd.Chain, ";"), optf2(nd.Chain != nil, nd.EndPct)})
		})
	}
	return rows
}

func reportJSON(sum *diff.Summary, expl *symbolmap.Explanation, n int, explain bool, warnings []string) *jsonReport {
	perOp := sum.Profile.HasPerOp
	j := &jsonReport{
		Profile:        toJSONProfile(sum),
		PerOpMissing:   sum.PerOpMissing,
		FunctionsTotal: len(sum.Functions),
		Functions:      []jsonFunction{},
		Warnings:       warnings,
	}
	for _, f := range top(sum.Functions, n) {
		j.Functions = append(j.Functions, jsonFunction{Name: f.Name,
			jsonShare: toJSONShare(f.Inclusive, f.Self, f.InclusivePct, f.SelfPct, f.InclusiveMicrosPerOp, f.SelfMicrosPerOp, perOp)})
	}
	for _, sub := range sum.Subsystems {
		j.Subsystems = append(j.Subsystems, jsonSubsystem{Name: sub.Name, Value: sub.Value, Pct: sub.Pct, MicrosPerOp: fptr(perOp, sub.MicrosPerOp)})
	}
	for _, t := range sum.Subtrees {
		js := jsonSubtree{Root: t.Root.Name, Depth: t.Depth, Summary: t.Summary(0)}
		t.Walk(func(path []string, level int, nd *diff.Node) {
			jn := jsonNode{Path: path, Level: level, Value: nd.Value, Self: nd.Self, Pct: nd.Pct, PctOfRoot: nd.PctOfRoot,
				Chain: nd.Chain, Unresolved: nd.Unresolved}
			if nd.Chain != nil {
				ev := nd.EndValue
				jn.EndValue, jn.EndPct = &ev, fptr(true, nd.EndPct)
			}
			js.Nodes = append(js.Nodes, jn)
		})
		j.Subtrees = append(j.Subtrees, js)
	}
	if explain {
		j.Rewrites = toJSONRewrites(expl)
	}
	return j
}

// noteName formats a function name in a sentence under a table: shortened
// like the table's cells (the HTML page's notes wrap and keep it whole).
func noteName(format string) func(string) string {
	if format == formatHTML {
		return names.Clean
	}
	return func(s string) string { return names.Shorten(s, names.Width) }
}
