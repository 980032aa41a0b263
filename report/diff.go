package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/symbolmap"
)

// targetHead names a per-target column: "Δpp" with one target, "Δpp 11.8"
// with several.
func targetHead(r *diff.Result, head string, i int) string {
	if len(r.Summaries) == 2 {
		return head
	}
	return head + " " + r.Summaries[i+1].Profile.Label
}

// targetColumns are one numeric column per target, named by targetHead.
func targetColumns(r *diff.Result, heads ...string) []Column {
	var cols []Column
	for i := 0; i < len(r.Summaries)-1; i++ {
		for _, h := range heads {
			cols = append(cols, Column{targetHead(r, h, i), true})
		}
	}
	return cols
}

// profileColumns are one numeric column per profile: its label and suffix.
func profileColumns(labels []string, suffix string) []Column {
	cols := make([]Column, len(labels))
	for i, l := range labels {
		cols[i] = Column{l + suffix, true}
	}
	return cols
}

// Diff is the document of `flamediff diff`: the run figures, the functions
// by largest change in inclusive share, the subsystems and the attribution
// of the change in CPU per operation, one breakdown per root, the
// functions found in one profile only, the rewrites (with
// Options.Explain), then notes and warnings.
func Diff(r *diff.Result, expls []*symbolmap.Explanation, o Options) *Document {
	labs := r.Labels()
	d := &Document{Title: fmt.Sprintf("Diff: %s (base) vs %s", labs[0], strings.Join(labs[1:], ", "))}
	if f := r.Summaries[0].Profile; f.OffCPU {
		d.Title = fmt.Sprintf("Diff of %s: %s (base) vs %s", f.Quantity, labs[0], strings.Join(labs[1:], ", "))
	}
	d.Sections = append(d.Sections, runSection(r.Summaries, o.Format), diffFunctions(r, o))
	if r.Subsystems != nil {
		d.Sections = append(d.Sections, diffSubsystems(r))
	}
	for ti := range r.Subtrees {
		d.Sections = append(d.Sections, diffSubtree(r, ti, o))
	}
	if s, ok := onlyInOne(r, o); ok {
		d.Sections = append(d.Sections, s)
	}
	if o.Explain {
		d.Sections = append(d.Sections, DiffRewrites(r, expls, o.Format)...)
	}
	if r.PerOpMissing != "" {
		d.Notes = append(d.Notes, "note: "+r.PerOpMissing)
	}
	d.Notes = append(d.Notes, warnings(o.Warnings)...)
	return d
}

// DiffRewrites are the rewrites sections of Diff, one per profile
// ("Rewrites in LABEL"), names marked up for format f: a format with no
// place for them (CSV) has them printed apart.
func DiffRewrites(r *diff.Result, expls []*symbolmap.Explanation, f Format) []Section {
	labs := r.Labels()
	out := make([]Section, len(expls))
	for i, e := range expls {
		out[i] = Rewrites("Rewrites in "+labs[i], e, f)
	}
	return out
}

func diffFunctions(r *diff.Result, o Options) Section {
	labs := r.Labels()
	nt := len(labs) - 1
	pf := r.Summaries[0].Profile
	by := "by largest change in inclusive share"
	if pf.OffCPU {
		by += " of " + pf.Quantity
	}
	s := Section{Title: fmt.Sprintf("Functions (%d of %d, %s)", len(top(r.Functions, o.Top)), len(r.Functions), by)}
	s.Columns = append(s.Columns, Column{"function", false})
	s.Columns = append(s.Columns, profileColumns(labs, " incl %")...)
	s.Columns = append(s.Columns, targetColumns(r, "Δpp", "ratio")...)
	s.Columns = append(s.Columns, profileColumns(labs, " self %")...)
	s.Columns = append(s.Columns, targetColumns(r, "self Δpp")...)
	if r.HasPerOp {
		s.Columns = append(s.Columns, profileColumns(labs, " "+perOpHead(pf, ""))...)
		s.Columns = append(s.Columns, targetColumns(r, perOpHead(pf, "Δ"))...)
	}
	for _, f := range top(r.Functions, o.Top) {
		row := []string{}
		for _, p := range f.Profiles {
			row = append(row, F2(p.InclusivePct))
		}
		for i := 0; i < nt; i++ {
			row = append(row, Delta(f.Profiles[0].InclusivePct, f.Profiles[i+1].InclusivePct), RatioText(f.Ratio[i]))
		}
		for _, p := range f.Profiles {
			row = append(row, F2(p.SelfPct))
		}
		for i := 0; i < nt; i++ {
			row = append(row, Delta(f.Profiles[0].SelfPct, f.Profiles[i+1].SelfPct))
		}
		if r.HasPerOp {
			for _, p := range f.Profiles {
				row = append(row, F2(p.InclusiveMicrosPerOp))
			}
			for i := 0; i < nt; i++ {
				row = append(row, Delta(f.Profiles[0].InclusiveMicrosPerOp, f.Profiles[i+1].InclusiveMicrosPerOp))
			}
		}
		s.Rows = append(s.Rows, append([]Cell{nameCell(o.Format, f.Name, 0)}, texts(row)...))
	}
	return s
}

// texts are plain cells.
func texts(ss []string) []Cell {
	out := make([]Cell, len(ss))
	for i, s := range ss {
		out[i] = Text(s)
	}
	return out
}

func diffSubsystems(r *diff.Result) Section {
	labs := r.Labels()
	nt := len(labs) - 1
	pf := r.Summaries[0].Profile
	s := Section{Title: quantityTitle(pf, "Subsystems")}
	s.Columns = append(s.Columns, Column{"subsystem", false})
	s.Columns = append(s.Columns, profileColumns(labs, " %")...)
	s.Columns = append(s.Columns, targetColumns(r, "Δpp", "ratio")...)
	if r.HasPerOp {
		s.Columns = append(s.Columns, profileColumns(labs, " "+perOpHead(pf, ""))...)
		s.Columns = append(s.Columns, targetColumns(r, perOpHead(pf, "Δ"))...)
		if pf.OffCPU {
			s.Columns = append(s.Columns, targetColumns(r, perOpHead(pf, "Δvol"), perOpHead(pf, "Δinvol"))...)
		}
	}
	for _, sub := range r.Subsystems {
		row := []string{sub.Name}
		for _, p := range sub.Profiles {
			row = append(row, F2(p.Pct))
		}
		for i := 0; i < nt; i++ {
			row = append(row, Delta(sub.Profiles[0].Pct, sub.Profiles[i+1].Pct), RatioText(sub.Ratio[i]))
		}
		if r.HasPerOp {
			row = append(row, subsystemMicrosCells(r, sub)...)
			if pf.OffCPU {
				row = append(row, kindDeltaCells(r, sub)...)
			}
		}
		s.AddRow(row...)
	}
	for _, a := range r.Attribution {
		s.Notes = append(s.Notes, "Change in "+pf.Quantity+" per operation, "+a.Sentence())
	}
	return s
}

func diffSubtree(r *diff.Result, ti int, o Options) Section {
	labs := r.Labels()
	t := r.Subtrees[ti]
	s := Section{Title: fmt.Sprintf("Subtree %s (depth %d, %% of each profile's total)", t.Root, t.Depth)}
	s.Columns = append(s.Columns, Column{"function", false})
	s.Columns = append(s.Columns, profileColumns(labs, " %")...)
	s.Columns = append(s.Columns, targetColumns(r, "Δpp")...)
	chains := false
	for _, row := range t.Rows {
		chains = chains || row.Chain != nil
		cells := []Cell{rowCell(o.Format, row.Path[len(row.Path)-1], row.Chain, row.Level, chainEnds(row))}
		for _, p := range row.Profiles {
			cells = append(cells, Text(F2(p.Pct)))
		}
		for i := range row.DeltaPP {
			cells = append(cells, Text(Delta(row.Profiles[0].Pct, row.Profiles[i+1].Pct)))
		}
		s.Rows = append(s.Rows, cells)
	}
	for i, sum := range r.Summaries {
		s.Notes = append(s.Notes, labs[i]+": "+sum.Subtrees[ti].SummaryWith(0, noteName(o.Format)))
	}
	s.Notes = append(s.Notes, subtreeNotes(t.SkippedUnresolved, chains, t.Threshold, o.CollapseFlags)...)
	return s
}

// onlyInOne is the section of the functions found in one profile only, if any.
func onlyInOne(r *diff.Result, o Options) (Section, bool) {
	labs := r.Labels()
	var only []diff.FunctionDiff
	for _, f := range r.Functions {
		if f.OnlyIn != "" {
			only = append(only, f)
		}
	}
	if len(only) == 0 {
		return Section{}, false
	}
	s := Section{
		Title:   fmt.Sprintf("Only in one profile (%d of %d shown; a rename missing from the symbol map shows up here)", len(top(only, o.Top)), len(only)),
		Columns: []Column{{"function", false}, {"only in", false}, {"incl %", true}},
	}
	for _, f := range top(only, o.Top) {
		pct := 0.0
		for i, p := range f.Profiles {
			if labs[i] == f.OnlyIn {
				pct = p.InclusivePct
			}
		}
		s.Rows = append(s.Rows, []Cell{nameCell(o.Format, f.Name, 0), Text(f.OnlyIn), Text(F2(pct))})
	}
	return s, true
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

// kindDeltaCells are, per target, the change in a subsystem's voluntary
// and involuntary switches (or time off the CPU) per operation, of an
// off-CPU diff with per-op figures.
func kindDeltaCells(r *diff.Result, sub diff.SubsystemDiff) []string {
	per := func(i int, v int64) float64 { return kindPerOp(r.Summaries[i].Profile, v) }
	b := sub.Profiles[0]
	var cells []string
	for i, v := range sub.Profiles[1:] {
		cells = append(cells, Delta(per(0, b.Voluntary), per(i+1, v.Voluntary)), Delta(per(0, b.Involuntary), per(i+1, v.Involuntary)))
	}
	return cells
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
			cells = append(cells, F2(parts[0].Base))
			for _, p := range parts {
				cells = append(cells, F2(p.Target))
			}
			for _, p := range parts {
				cells = append(cells, Signed(p.Delta))
			}
			return cells
		}
	}
	for _, p := range sub.Profiles {
		cells = append(cells, F2(p.MicrosPerOp))
	}
	for i := 0; i < nt; i++ {
		cells = append(cells, Delta(sub.Profiles[0].MicrosPerOp, sub.Profiles[i+1].MicrosPerOp))
	}
	return cells
}

// diffCSVHeader is the one header row of a diff's CSV: kind and name, then
// per profile (base first) its figures prefixed by its label, then per
// target the changes suffixed by its label. Kinds: function, subsystem,
// subtree (name is the path joined by ';'; figures in the inclusive
// columns), attribution (name is a subsystem or "total"; figure in
// delta_us_per_op_TARGET). Last, for a subtree row merging a pass-through
// chain, chain (its functions joined by ';') and per profile the share of
// the chain's end. Off-CPU profiles' per-op columns say their unit:
// offcpu_us_per_op (off-CPU time) or cs_per_op (switches) in place of
// us_per_op, and more columns follow the chain's: per profile
// LABEL_voluntary and LABEL_involuntary (a function's inclusive value or a
// subsystem's, split by the kind of switch), then per target
// delta_voluntary_UNIT_TARGET and delta_involuntary_UNIT_TARGET (a
// subsystem's change per operation of each kind, the Δvol and Δinvol of
// the text table).
func diffCSVHeader(r *diff.Result) []string {
	u := csvPerOp(r.Summaries[0].Profile)
	h := []string{"kind", "name", "only_in"}
	for _, l := range r.Labels() {
		h = append(h, l+"_inclusive", l+"_self", l+"_inclusive_pct", l+"_self_pct", l+"_inclusive_"+u, l+"_self_"+u)
	}
	for _, l := range r.Labels()[1:] {
		h = append(h, "delta_pp_"+l, "self_delta_pp_"+l, "delta_"+u+"_"+l, "ratio_"+l)
	}
	h = append(h, "chain")
	for _, l := range r.Labels() {
		h = append(h, l+"_chain_end_pct")
	}
	if r.Summaries[0].Profile.OffCPU {
		for _, l := range r.Labels() {
			h = append(h, l+"_voluntary", l+"_involuntary")
		}
		for _, l := range r.Labels()[1:] {
			h = append(h, "delta_voluntary_"+u+"_"+l, "delta_involuntary_"+u+"_"+l)
		}
	}
	return h
}

// diffCSV places the cells of a diff's CSV rows (see diffCSVHeader).
type diffCSV struct {
	r    *diff.Result
	np   int
	off  bool // off-CPU: the kind columns follow the chain's
	rows [][]string
}

func (c *diffCSV) row(kind, name, onlyIn string) []string {
	n := 3 + 6*c.np + 4*(c.np-1) + 1 + c.np
	if c.off {
		n += 2*c.np + 2*(c.np-1)
	}
	row := make([]string, n)
	row[0], row[1], row[2] = kind, name, onlyIn
	return row
}

// pcol is the first column of profile p; tcol that of target t; chainCol
// the chain column.
func (c *diffCSV) pcol(p int) int   { return 3 + 6*p }
func (c *diffCSV) tcol(t int) int   { return 3 + 6*c.np + 4*t }
func (c *diffCSV) chainCol() int    { return 3 + 6*c.np + 4*(c.np-1) }
func (c *diffCSV) add(row []string) { c.rows = append(c.rows, row) }

// kcol is the voluntary column of profile p (off-CPU), kdcol the
// voluntary change column of target t.
func (c *diffCSV) kcol(p int) int  { return c.chainCol() + 1 + c.np + 2*p }
func (c *diffCSV) kdcol(t int) int { return c.chainCol() + 1 + 3*c.np + 2*t }

// DiffCSV writes the CSV of `flamediff diff`: the first n functions (0:
// all), the subsystems, every subtree row and the attributions, names
// whole.
func DiffCSV(w io.Writer, r *diff.Result, n int) error {
	c := &diffCSV{r: r, np: len(r.Summaries), off: r.Summaries[0].Profile.OffCPU}
	for _, f := range top(r.Functions, n) {
		row := c.row("function", f.Name, f.OnlyIn)
		for p, sh := range f.Profiles {
			i := c.pcol(p)
			row[i], row[i+1], row[i+2], row[i+3] = Int(sh.Inclusive), Int(sh.Self), F2(sh.InclusivePct), F2(sh.SelfPct)
			row[i+4], row[i+5] = OptF2(r.HasPerOp, sh.InclusiveMicrosPerOp), OptF2(r.HasPerOp, sh.SelfMicrosPerOp)
			if c.off {
				row[c.kcol(p)], row[c.kcol(p)+1] = Int(sh.Voluntary), Int(sh.Involuntary)
			}
		}
		for t := range f.DeltaPP {
			i := c.tcol(t)
			row[i], row[i+1], row[i+3] = Signed(f.DeltaPP[t]), Signed(f.SelfDeltaPP[t]), RatioCSV(f.Ratio[t])
			if r.HasPerOp {
				row[i+2] = Signed(f.DeltaMicrosPerOp[t])
			}
		}
		c.add(row)
	}
	for _, sub := range r.Subsystems {
		row := c.row("subsystem", sub.Name, "")
		for p, v := range sub.Profiles {
			i := c.pcol(p)
			row[i], row[i+2], row[i+4] = Int(v.Value), F2(v.Pct), OptF2(r.HasPerOp, v.MicrosPerOp)
			if c.off {
				row[c.kcol(p)], row[c.kcol(p)+1] = Int(v.Voluntary), Int(v.Involuntary)
			}
		}
		if c.off && r.HasPerOp {
			copy(row[c.kdcol(0):], kindDeltaCells(r, sub))
		}
		for t := range sub.DeltaPP {
			i := c.tcol(t)
			row[i], row[i+3] = Signed(sub.DeltaPP[t]), RatioCSV(sub.Ratio[t])
			if r.HasPerOp {
				row[i+2] = Signed(sub.DeltaMicrosPerOp[t])
			}
		}
		c.add(row)
	}
	c.subtrees()
	c.attributions()
	return WriteCSV(w, diffCSVHeader(r), c.rows)
}

func (c *diffCSV) subtrees() {
	for _, t := range c.r.Subtrees {
		for _, nd := range t.Rows {
			row := c.row("subtree", strings.Join(nd.Path, ";"), "")
			for p, v := range nd.Profiles {
				i := c.pcol(p)
				row[i], row[i+2] = Int(v.Value), F2(v.Pct)
			}
			for ti, dpp := range nd.DeltaPP {
				row[c.tcol(ti)] = Signed(dpp)
			}
			if nd.Chain != nil {
				row[c.chainCol()] = strings.Join(nd.Chain, ";")
				for p, v := range nd.Profiles {
					row[c.chainCol()+1+p] = F2(v.EndPct)
				}
			}
			c.add(row)
		}
	}
}

func (c *diffCSV) attributions() {
	for ti, a := range c.r.Attribution {
		row := c.row("attribution", "total", "")
		row[c.tcol(ti)+2] = Signed(a.Delta)
		c.add(row)
		for _, part := range a.Parts {
			row := c.row("attribution", part.Subsystem, "")
			row[c.tcol(ti)+2] = Signed(part.Delta)
			c.add(row)
		}
	}
}

// DiffJSON is the JSON of `flamediff diff` (JSONDiff): figures unrounded,
// names whole, the first Options.Top functions.
func DiffJSON(r *diff.Result, expls []*symbolmap.Explanation, o Options) *JSONDiff {
	j := &JSONDiff{
		PerOpMissing:   r.PerOpMissing,
		FunctionsTotal: len(r.Functions),
		Functions:      []JSONFunctionDiff{},
		Warnings:       warnings(o.Warnings),
	}
	for _, s := range r.Summaries {
		j.Profiles = append(j.Profiles, profileJSON(s))
	}
	for _, f := range top(r.Functions, o.Top) {
		jf := JSONFunctionDiff{
			Name: f.Name, DeltaPP: f.DeltaPP, SelfDeltaPP: f.SelfDeltaPP,
			DeltaMicrosPerOp: f.DeltaMicrosPerOp, Ratio: ratiosJSON(f.Ratio), OnlyIn: f.OnlyIn,
		}
		off := r.Summaries[0].Profile.OffCPU
		for _, p := range f.Profiles {
			js := shareJSON(p.Inclusive, p.Self, p.InclusivePct, p.SelfPct, p.InclusiveMicrosPerOp, p.SelfMicrosPerOp, r.HasPerOp)
			js.Voluntary, js.Involuntary = int64Ptr(off, p.Voluntary), int64Ptr(off, p.Involuntary)
			jf.Profiles = append(jf.Profiles, js)
		}
		j.Functions = append(j.Functions, jf)
	}
	for _, sub := range r.Subsystems {
		js := JSONSubsystemDiff{Name: sub.Name, DeltaPP: sub.DeltaPP, DeltaMicrosPerOp: sub.DeltaMicrosPerOp, Ratio: ratiosJSON(sub.Ratio)}
		for _, v := range sub.Profiles {
			off := r.Summaries[0].Profile.OffCPU
			js.Profiles = append(js.Profiles, JSONSubsystemValue{Value: v.Value, Pct: v.Pct, MicrosPerOp: ptr(r.HasPerOp, v.MicrosPerOp),
				Voluntary: int64Ptr(off, v.Voluntary), Involuntary: int64Ptr(off, v.Involuntary)})
		}
		j.Subsystems = append(j.Subsystems, js)
	}
	for ti := range r.Subtrees {
		j.Subtrees = append(j.Subtrees, subtreeDiffJSON(r, ti))
	}
	for _, a := range r.Attribution {
		ja := JSONAttribution{
			Base: a.Base, Target: a.Target, BaseMicrosPerOp: a.BaseMicrosPerOp, TargetMicrosPerOp: a.TargetMicrosPerOp,
			DeltaMicrosPerOp: a.Delta, Sentence: a.Sentence(),
		}
		if r.Summaries[0].Profile.OffCPU {
			ja.Quantity, ja.Unit = a.Quantity, a.Unit
		}
		for _, p := range a.Parts {
			ja.Parts = append(ja.Parts, JSONPart{Subsystem: p.Subsystem, DeltaMicrosPerOp: p.Delta})
		}
		j.Attribution = append(j.Attribution, ja)
	}
	if o.Explain {
		for i, e := range expls {
			j.Rewrites = append(j.Rewrites, JSONProfileRewrites{Profile: r.Summaries[i].Profile.Label, Rewrites: rewritesJSON(e)})
		}
	}
	return j
}

func subtreeDiffJSON(r *diff.Result, ti int) JSONSubtreeDiff {
	t := r.Subtrees[ti]
	jt := JSONSubtreeDiff{Root: t.Root, Depth: t.Depth}
	for _, s := range r.Summaries {
		jt.Summaries = append(jt.Summaries, s.Subtrees[ti].Summary(0))
	}
	for _, row := range t.Rows {
		jn := JSONNodeDiff{Path: row.Path, Level: row.Level, Chain: row.Chain, Unresolved: row.Unresolved, DeltaPP: row.DeltaPP}
		if jn.DeltaPP == nil {
			jn.DeltaPP = []float64{}
		}
		for _, v := range row.Profiles {
			jv := JSONNodeValue{Value: v.Value, Pct: v.Pct, PctOfRoot: v.PctOfRoot}
			if row.Chain != nil {
				ev := v.EndValue
				jv.EndValue, jv.EndPct = &ev, ptr(true, v.EndPct)
			}
			jn.Profiles = append(jn.Profiles, jv)
		}
		jt.Nodes = append(jt.Nodes, jn)
	}
	return jt
}
