package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap"
)

// DiffOptions are the inputs of `flamediff diff`.
type DiffOptions struct {
	IO *streams
	// Base and Targets are the profile arguments.
	Base    string
	Targets []string
	commonFlags
	// Load reads a profile; nil means loadProfile.
	Load profileLoader
	// Suggest prints proposed map rules under the tables (map_suggest.go).
	Suggest bool
}

func newDiffCmd(s *streams, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "diff [flags] BASE TARGET [TARGET...]",
		Short: "Compare function and subsystem shares and CPU per operation between versions",
		Long: `Compare a base profile with one or more targets, after mapping renamed
functions onto one canonical name (--map): per function and per subsystem
the share in each profile, the difference in percentage points (pp) against
the base and the ratio; functions found in one profile only (often a rename
the map lacks); and, when every profile is a run directory whose run.json
has cpu_seconds and operations, CPU microseconds per operation (cpu/o),
QPS relative to the base (rQPS) and the change in cpu/o split among
subsystems.

Functions are sorted by their largest change in inclusive share.`,
		Example: `  flamediff diff testdata/runs/mariadb-10.11-update-index testdata/runs/mariadb-11.8-update-index
  flamediff diff --map examples/symbolmaps/mariadb.yaml --root mysqld_stmt_execute --depth 2 \
      testdata/runs/mariadb-10.11-update-index testdata/runs/mariadb-11.8-update-index
  flamediff diff --map examples/symbolmaps/mariadb.yaml --format markdown --top 20 \
      testdata/runs/mariadb-10.5-update-index testdata/runs/mariadb-10.11-update-index testdata/runs/mariadb-11.8-update-index
  flamediff diff --format json -o diff.json 10.11.folded 11.8.folded`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError("diff takes a BASE and at least one TARGET profile, got %s", names.Plural(len(args), "argument"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Base, opts.Targets = args[0], args[1:]
			if err := opts.validate(); err != nil {
				return err
			}
			if err := distinctInputs(args...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runDiff(cmd.Context(), opts)
		},
	}
	opts.register(cmd)
	cmd.Flags().BoolVar(&opts.Suggest, "suggest", false, "when functions hold 0.5% or more in one profile only, print the top proposed map rules under the tables (map suggest prints them all, as YAML)")
	return cmd
}

func runDiff(ctx context.Context, opts *DiffOptions) error {
	s := opts.IO
	paths := append([]string{opts.Base}, opts.Targets...)
	out, err := checkOutput("-o", opts.Output, append([]string{opts.MapFile}, paths...)...)
	if err != nil {
		return err
	}
	m, err := loadMap(s, opts.MapFile)
	if err != nil {
		return err
	}
	raw, err := loadRaw(ctx, s, opts.Load, paths, opts.parseOptions())
	if err != nil {
		return err
	}
	ps := make([]*fold.Profile, len(paths))
	expls := make([]*symbolmap.Explanation, len(paths))
	labels := make([]string, len(paths))
	for i, p := range raw {
		ps[i], expls[i] = applyMap(m, p)
		labels[i] = profileLabel(ps[i], paths[i])
	}
	roots, err := resolveRoots(opts.Roots, ps, expls)
	if err != nil {
		return err
	}
	dopts := diffOptions(m, &opts.commonFlags, roots)
	dopts.Labels = labels
	r, err := diff.Compute(ps[0], ps[1:], dopts)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	var warnings []string
	for _, sum := range r.Summaries {
		if c := sum.Completeness; c != nil {
			if w := c.Warning(); w != "" {
				warnings = append(warnings, fmt.Sprintf("warning: %s: %s", sum.Profile.Label, w))
			}
		}
	}
	var suggest []section
	if opts.Suggest {
		if suggest, err = suggestSections(m, raw, labels); err != nil {
			return err
		}
		if opts.Format == formatJSON || opts.Format == formatCSV {
			err = writeDocument(s.ErrOut, formatTable, &document{sections: suggest})
			if err != nil {
				return err
			}
		}
	}
	var buf bytes.Buffer
	switch opts.Format {
	case formatJSON:
		err = writeJSON(&buf, diffJSON(r, expls, opts.Top, opts.Explain, warnings))
	case formatCSV:
		err = writeCSV(&buf, diffCSVHeader(r), diffCSVRows(r, opts.Top))
		for _, w := range warnings {
			fmt.Fprintf(s.ErrOut, "flamediff: %s\n", w)
		}
		if opts.Explain {
			d := &document{}
			for i, e := range expls {
				d.sections = append(d.sections, rewritesSection("Rewrites in "+r.Summaries[i].Profile.Label, e, formatTable))
			}
			if err2 := writeDocument(s.ErrOut, formatTable, d); err == nil {
				err = err2
			}
		}
	default:
		d := diffDocument(r, expls, opts.Top, opts.Explain, warnings, opts.Format)
		d.sections = append(d.sections, suggest...)
		err = writeDocument(&buf, opts.Format, d)
	}
	if err != nil {
		return err
	}
	return writeOutput(s, out, buf.Bytes())
}

// targetHead names a per-target column: "Δpp" with one target, "Δpp 11.8" with several.
func targetHead(r *diff.Result, head string, i int) string {
	if len(r.Summaries) == 2 {
		return head
	}
	return head + " " + r.Summaries[i+1].Profile.Label
}

func diffDocument(r *diff.Result, expls []*symbolmap.Explanation, n int, explain bool, warnings []string, format string) *document {
	labs := r.Labels()
	d := &document{title: fmt.Sprintf("Diff: %s (base) vs %s", labs[0], strings.Join(labs[1:], ", "))}
	d.sections = append(d.sections, runSection(r.Summaries, format))
	nt := len(labs) - 1

	fs := section{title: fmt.Sprintf("Functions (%d of %d, by largest change in inclusive share)", len(top(r.Functions, n)), len(r.Functions))}
	fs.cols = append(fs.cols, column{"function", false})
	for _, l := range labs {
		fs.cols = append(fs.cols, column{l + " incl %", true})
	}
	for i := 0; i < nt; i++ {
		fs.cols = append(fs.cols, column{targetHead(r, "Δpp", i), true}, column{targetHead(r, "ratio", i), true})
	}
	for _, l := range labs {
		fs.cols = append(fs.cols, column{l + " self %", true})
	}
	for i := 0; i < nt; i++ {
		fs.cols = append(fs.cols, column{targetHead(r, "self Δpp", i), true})
	}
	if r.HasPerOp {
		for _, l := range labs {
			fs.cols = append(fs.cols, column{l + " µs/op", true})
		}
		for i := 0; i < nt; i++ {
			fs.cols = append(fs.cols, column{targetHead(r, "Δµs/op", i), true})
		}
	}
	for _, f := range top(r.Functions, n) {
		row := []string{nameCell(format, f.Name, 0)}
		for _, p := range f.Profiles {
			row = append(row, f2(p.InclusivePct))
		}
		for i := 0; i < nt; i++ {
			row = append(row, shownDelta(f.Profiles[0].InclusivePct, f.Profiles[i+1].InclusivePct), ratioText(f.Ratio[i]))
		}
		for _, p := range f.Profiles {
			row = append(row, f2(p.SelfPct))
		}
		for i := 0; i < nt; i++ {
			row = append(row, shownDelta(f.Profiles[0].SelfPct, f.Profiles[i+1].SelfPct))
		}
		if r.HasPerOp {
			for _, p := range f.Profiles {
				row = append(row, f2(p.InclusiveMicrosPerOp))
			}
			for i := 0; i < nt; i++ {
				row = append(row, shownDelta(f.Profiles[0].InclusiveMicrosPerOp, f.Profiles[i+1].InclusiveMicrosPerOp))
			}
		}
		fs.rows = append(fs.rows, row)
	}
	d.sections = append(d.sections, fs)

	if r.Subsystems != nil {
		ss := section{title: "Subsystems"}
		ss.cols = append(ss.cols, column{"subsystem", false})
		for _, l := range labs {
			ss.cols = append(ss.cols, column{l + " %", true})
		}
		for i := 0; i < nt; i++ {
			ss.cols = append(ss.cols, column{targetHead(r, "Δpp", i), true}, column{targetHead(r, "ratio", i), true})
		}
		if r.HasPerOp {
			for _, l := range labs {
				ss.cols = append(ss.cols, column{l + " µs/op", true})
			}
			for i := 0; i < nt; i++ {
				ss.cols = append(ss.cols, column{targetHead(r, "Δµs/op", i), true})
			}
		}
		for _, sub := range r.Subsystems {
			row := []string{sub.Name}
			for _, p := range sub.Profiles {
				row = append(row, f2(p.Pct))
			}
			for i := 0; i < nt; i++ {
				row = append(row, shownDelta(sub.Profiles[0].Pct, sub.Profiles[i+1].Pct), ratioText(sub.Ratio[i]))
			}
			if r.HasPerOp {
				row = append(row, subsystemMicrosCells(r, sub)...)
			}
			ss.rows = append(ss.rows, row)
		}
		for _, a := range r.Attribution {
			ss.notes = append(ss.notes, "Change in CPU per operation, "+a.Sentence())
		}
		d.sections = append(d.sections, ss)
	}

	for ti, t := range r.Subtrees {
		ts := section{title: fmt.Sprintf("Subtree %s (depth %d, %% of each profile's total)", t.Root, t.Depth)}
		ts.cols = append(ts.cols, column{"function", false})
		for _, l := range labs {
			ts.cols = append(ts.cols, column{l + " %", true})
		}
		for i := 0; i < nt; i++ {
			ts.cols = append(ts.cols, column{targetHead(r, "Δpp", i), true})
		}
		chains := false
		for _, row := range t.Rows {
			chains = chains || row.Chain != nil
			cells := []string{rowCell(format, row.Path[len(row.Path)-1], row.Chain, row.Level, chainEnds(row))}
			for _, p := range row.Profiles {
				cells = append(cells, f2(p.Pct))
			}
			for i := range row.DeltaPP {
				cells = append(cells, shownDelta(row.Profiles[0].Pct, row.Profiles[i+1].Pct))
			}
			ts.rows = append(ts.rows, cells)
		}
		for i, sum := range r.Summaries {
			ts.notes = append(ts.notes, labs[i]+": "+sum.Subtrees[ti].SummaryWith(0, noteName(format)))
		}
		ts.notes = append(ts.notes, subtreeNotes(t.SkippedUnresolved, chains, t.Threshold)...)
		d.sections = append(d.sections, ts)
	}

	var only []diff.FunctionDiff
	for _, f := range r.Functions {
		if f.OnlyIn != "" {
			only = append(only, f)
		}
	}
	if len(only) > 0 {
		os := section{
			title: fmt.Sprintf("Only in one profile (%d of %d shown; a rename missing from the symbol map shows up here)", len(top(only, n)), len(only)),
			cols:  []column{{"function", false}, {"only in", false}, {"incl %", true}},
		}
		for _, f := range top(only, n) {
			pct := 0.0
			for i, p := range f.Profiles {
				if labs[i] == f.OnlyIn {
					pct = p.InclusivePct
				}
			}
			os.rows = append(os.rows, []string{nameCell(format, f.Name, 0), f.OnlyIn, f2(pct)})
		}
		d.sections = append(d.sections, os)
	}
	if explain {
		for i, e := range expls {
			d.sections = append(d.sections, rewritesSection("Rewrites in "+labs[i], e, format))
		}
	}
	if r.PerOpMissing != "" {
		d.notes = append(d.notes, "note: "+r.PerOpMissing)
	}
	d.notes = append(d.notes, warnings...)
	return d
}

// chainEnds returns the share of a chain's end in each profile, or nil when
// the row is no chain or its end has the row's value everywhere.
func chainEnds(row diff.SubtreeRow) []float64 {
	if row.Chain == nil {
		return nil
	}
	differ := false
	ends := make([]float64, len(row.Profiles))
	for i, p := range row.Profiles {
		ends[i] = p.EndPct
		differ = differ || p.EndValue != p.Value
	}
	if !differ {
		return nil
	}
	return ends
}

// diffCSVHeader is the one header row of `diff --format csv`: kind and name,
// then per profile (base first) its figures prefixed by its label, then per
// target the changes suffixed by its label. Kinds: function, subsystem,
// subtree (name is the path joined by ';'; figures in the inclusive
// columns), attribution (name is a subsystem or "total"; figure in
// delta_us_per_op_TARGET). Last, for a subtree row merging a pass-through
// chain, chain (its functions joined by ';') and per profile the share of
// the chain's end.
func diffCSVHeader(r *diff.Result) []string {
	h := []string{"kind", "name", "only_in"}
	for _, l := range r.Labels() {
		h = append(h, l+"_inclusive", l+"_self", l+"_inclusive_pct", l+"_self_pct", l+"_inclusive_us_per_op", l+"_self_us_per_op")
	}
	for _, l := range r.Labels()[1:] {
		h = append(h, "delta_pp_"+l, "self_delta_pp_"+l, "delta_us_per_op_"+l, "ratio_"+l)
	}
	h = append(h, "chain")
	for _, l := range r.Labels() {
		h = append(h, l+"_chain_end_pct")
	}
	return h
}

func diffCSVRows(r *diff.Result, n int) [][]string {
	np := len(r.Summaries)
	width := 3 + 6*np + 4*(np-1) + 1 + np
	newRow := func(kind, name, onlyIn string) []string {
		row := make([]string, width)
		row[0], row[1], row[2] = kind, name, onlyIn
		return row
	}
	pcol := func(p int) int { return 3 + 6*p }
	tcol := func(t int) int { return 3 + 6*np + 4*t }
	chainCol := 3 + 6*np + 4*(np-1)
	var rows [][]string
	for _, f := range top(r.Functions, n) {
		row := newRow("function", f.Name, f.OnlyIn)
		for p, sh := range f.Profiles {
			c := pcol(p)
			row[c], row[c+1], row[c+2], row[c+3] = itoa(sh.Inclusive), itoa(sh.Self), f2(sh.InclusivePct), f2(sh.SelfPct)
			row[c+4], row[c+5] = optf2(r.HasPerOp, sh.InclusiveMicrosPerOp), optf2(r.HasPerOp, sh.SelfMicrosPerOp)
		}
		for t := range f.DeltaPP {
			c := tcol(t)
			row[c], row[c+1], row[c+3] = sf2(f.DeltaPP[t]), sf2(f.SelfDeltaPP[t]), ratioCSV(f.Ratio[t])
			if r.HasPerOp {
				row[c+2] = sf2(f.DeltaMicrosPerOp[t])
			}
		}
		rows = append(rows, row)
	}
	for _, sub := range r.Subsystems {
		row := newRow("subsystem", sub.Name, "")
		for p, v := range sub.Profiles {
			c := pcol(p)
			row[c], row[c+2], row[c+4] = itoa(v.Value), f2(v.Pct), optf2(r.HasPerOp, v.MicrosPerOp)
		}
		for t := range sub.DeltaPP {
			c := tcol(t)
			row[c], row[c+3] = sf2(sub.DeltaPP[t]), ratioCSV(sub.Ratio[t])
			if r.HasPerOp {
				row[c+2] = sf2(sub.DeltaMicrosPerOp[t])
			}
		}
		rows = append(rows, row)
	}
	for _, t := range r.Subtrees {
		for _, nd := range t.Rows {
			row := newRow("subtree", strings.Join(nd.Path, ";"), "")
			for p, v := range nd.Profiles {
				c := pcol(p)
				row[c], row[c+2] = itoa(v.Value), f2(v.Pct)
			}
			for ti, dpp := range nd.DeltaPP {
				row[tcol(ti)] = sf2(dpp)
			}
			if nd.Chain != nil {
				row[chainCol] = strings.Join(nd.Chain, ";")
				for p, v := range nd.Profiles {
					row[chainCol+1+p] = f2(v.EndPct)
				}
			}
			rows = append(rows, row)
		}
	}
	for ti, a := range r.Attribution {
		row := newRow("attribution", "total", "")
		row[tcol(ti)+2] = sf2(a.Delta)
		rows = append(rows, row)
		for _, part := range a.Parts {
			row := newRow("attribution", part.Subsystem, "")
			row[tcol(ti)+2] = sf2(part.Delta)
			rows = append(rows, row)
		}
	}
	return rows
}

func diffJSON(r *diff.Result, expls []*symbolmap.Explanation, n int, explain bool, warnings []string) *jsonDiff {
	j := &jsonDiff{
		PerOpMissing:   r.PerOpMissing,
		FunctionsTotal: len(r.Functions),
		Functions:      []jsonFunctionDiff{},
		Warnings:       warnings,
	}
	for _, s := range r.Summaries {
		j.Profiles = append(j.Profiles, toJSONProfile(s))
	}
	for _, f := range top(r.Functions, n) {
		jf := jsonFunctionDiff{
			Name: f.Name, DeltaPP: f.DeltaPP, SelfDeltaPP: f.SelfDeltaPP,
			DeltaMicrosPerOp: f.DeltaMicrosPerOp, Ratio: ratiosJSON(f.Ratio), OnlyIn: f.OnlyIn,
		}
		for _, p := range f.Profiles {
			jf.Profiles = append(jf.Profiles,
				toJSONShare(p.Inclusive, p.Self, p.InclusivePct, p.SelfPct, p.InclusiveMicrosPerOp, p.SelfMicrosPerOp, r.HasPerOp))
		}
		j.Functions = append(j.Functions, jf)
	}
	for _, sub := range r.Subsystems {
		js := jsonSubsystemDiff{Name: sub.Name, DeltaPP: sub.DeltaPP, DeltaMicrosPerOp: sub.DeltaMicrosPerOp, Ratio: ratiosJSON(sub.Ratio)}
		for _, v := range sub.Profiles {
			js.Profiles = append(js.Profiles, jsonSubsystemValue{Value: v.Value, Pct: v.Pct, MicrosPerOp: fptr(r.HasPerOp, v.MicrosPerOp)})
		}
		j.Subsystems = append(j.Subsystems, js)
	}
	for ti, t := range r.Subtrees {
		jt := jsonSubtreeDiff{Root: t.Root, Depth: t.Depth}
		for _, s := range r.Summaries {
			jt.Summaries = append(jt.Summaries, s.Subtrees[ti].Summary(0))
		}
		for _, row := range t.Rows {
			jn := jsonNodeDiff{Path: row.Path, Level: row.Level, Chain: row.Chain, Unresolved: row.Unresolved, DeltaPP: row.DeltaPP}
			if jn.DeltaPP == nil {
				jn.DeltaPP = []float64{}
			}
			for _, v := range row.Profiles {
				jv := jsonNodeValue{Value: v.Value, Pct: v.Pct, PctOfRoot: v.PctOfRoot}
				if row.Chain != nil {
					ev := v.EndValue
					jv.EndValue, jv.EndPct = &ev, fptr(true, v.EndPct)
				}
				jn.Profiles = append(jn.Profiles, jv)
			}
			jt.Nodes = append(jt.Nodes, jn)
		}
		j.Subtrees = append(j.Subtrees, jt)
	}
	for _, a := range r.Attribution {
		ja := jsonAttribution{
			Base: a.Base, Target: a.Target, BaseMicrosPerOp: a.BaseMicrosPerOp, TargetMicrosPerOp: a.TargetMicrosPerOp,
			DeltaMicrosPerOp: a.Delta, Sentence: a.Sentence(),
		}
		for _, p := range a.Parts {
			ja.Parts = append(ja.Parts, jsonPart{Subsystem: p.Subsystem, DeltaMicrosPerOp: p.Delta})
		}
		j.Attribution = append(j.Attribution, ja)
	}
	if explain {
		for i, e := range expls {
			j.Rewrites = append(j.Rewrites, jsonProfileRewrites{Profile: r.Summaries[i].Profile.Label, Rewrites: toJSONRewrites(e)})
		}
	}
	return j
}

// distinctInputs fails when two profile arguments are the same input:
// "-" twice (standard input can be read once) or the same file or run
// directory under one name or two. Every command that reads several
// profiles follows this one rule: an input is given once (fold merges
// different files; diff compares different runs).
func distinctInputs(args ...string) error {
	type seen struct {
		arg string
		fi  os.FileInfo
	}
	var prev []seen
	for _, a := range args {
		var fi os.FileInfo
		if a != "-" {
			fi, _ = os.Stat(a) // a missing file is reported when it is read
		}
		for _, p := range prev {
			same := a == p.arg || (fi != nil && p.fi != nil && os.SameFile(fi, p.fi))
			if !same {
				continue
			}
			if a == "-" {
				return usageError("standard input (-) is given twice; it can be read once")
			}
			if a == p.arg {
				return usageError("%s is given twice; give each input once", a)
			}
			return usageError("%s and %s are the same file; give each input once", p.arg, a)
		}
		prev = append(prev, seen{a, fi})
	}
	return nil
}

// subsystemMicrosCells are a subsystem's µs/op in each profile and their
// changes. With an attribution they are its figures (rounded once, adding
// up to each profile's cpu/o, the differences those of the figures shown),
// so that the table and the sentence under it say the same numbers.
func subsystemMicrosCells(r *diff.Result, sub diff.SubsystemDiff) []string {
	nt := len(r.Summaries) - 1
	var cells []string
	if len(r.Attribution) == nt {
		parts := make([]*diff.AttributionPart, nt)
		for i, a := range r.Attribution {
			for j := range a.Parts {
				if a.Parts[j].Subsystem == sub.Name {
					parts[i] = &a.Parts[j]
				}
			}
		}
		if !slices.Contains(parts, nil) {
			cells = append(cells, f2(parts[0].Base))
			for _, p := range parts {
				cells = append(cells, f2(p.Target))
			}
			for _, p := range parts {
				cells = append(cells, sf2(p.Delta))
			}
			return cells
		}
	}
	for _, p := range sub.Profiles {
		cells = append(cells, f2(p.MicrosPerOp))
	}
	for i := 0; i < nt; i++ {
		cells = append(cells, shownDelta(sub.Profiles[0].MicrosPerOp, sub.Profiles[i+1].MicrosPerOp))
	}
	return cells
}

// shownDelta is the change from base to target as the reader computes it
// from the two figures shown: both rounded to 0.01 first (one rounding).
func shownDelta(base, target float64) string {
	return sf2(round2(target) - round2(base))
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }
