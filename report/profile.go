package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap"
)

// Options say what the document of a profile (Profile) or of a diff (Diff)
// shows and for which writer it is built.
type Options struct {
	// Format is FormatTable, FormatMarkdown or FormatHTML: how names are
	// shortened and marked.
	Format Format
	// Top is how many rows the function tables show; 0 means all.
	Top int
	// Explain adds the rewrites of the symbol map.
	Explain bool
	// Warnings are printed after the tables, each as "warning: W"
	// (diff.Summary.Warnings, diff.Result.Warnings).
	Warnings []string
	// CollapseFlags, when set, adds to the notes under a breakdown how to
	// turn its defaults off (the command's flags, such as
	// "--keep-unresolved"); the library names none itself.
	CollapseFlags *CollapseFlags
}

// CollapseFlags name the command-line flags that turn the breakdown
// defaults off, for the notes under a breakdown.
type CollapseFlags struct {
	KeepUnresolved, NoCollapse string
}

// top returns the first n of xs (all of them when n is 0).
func top[T any](xs []T, n int) []T {
	if n > 0 && len(xs) > n {
		return xs[:n]
	}
	return xs
}

// warnings prefixes each warning with "warning: ".
func warnings(ws []string) []string {
	var out []string
	for _, w := range ws {
		out = append(out, "warning: "+w)
	}
	return out
}

// nameCell is a function name (or a chain "a → b") at level: invalid UTF-8
// replaced and, in tables and markdown, each name longer than names.Width
// runes shortened in the middle (the HTML writer shortens them itself,
// with the whole name as tooltip; JSON and CSV keep names whole).
func nameCell(f Format, name string, level int) Cell {
	c := Cell{Text: names.ShortenChain(name, names.Width), Name: true, Level: level}
	if f == FormatHTML {
		c.Text = names.Clean(name)
	}
	return c
}

// rowCell is a subtree row's name (a function, or a chain "a → b"; a chain
// of more than 4 functions shows its first two and its last) and, when a
// chain's end has less than its start, the end's share(s):
// "a → b (end 66.43%)".
func rowCell(f Format, name string, chain []string, level int, end []float64) Cell {
	label := name
	switch {
	case len(chain) > 4:
		label = fmt.Sprintf("%s → %s → … → %s", chain[0], chain[1], chain[len(chain)-1])
	case len(chain) > 1:
		label = strings.Join(chain, " → ")
	}
	c := nameCell(f, label, level)
	if len(end) == 0 {
		return c
	}
	pcts := make([]string, len(end))
	for i, e := range end {
		pcts[i] = F2(e) + "%"
	}
	c.Suffix = " (end " + strings.Join(pcts, ", ") + ")"
	return c
}

// noteName formats a function name in a sentence under a table: shortened
// like the table's cells (the HTML page's notes wrap and keep it whole).
func noteName(f Format) func(string) string {
	if f == FormatHTML {
		return names.Clean
	}
	return func(s string) string { return names.Shorten(s, names.Width) }
}

// subtreeNotes explain the transparent unresolved frames and the chains of
// a breakdown, when it has any.
func subtreeNotes(skipped, chains bool, threshold float64, flags *CollapseFlags) []string {
	var notes []string
	if skipped {
		n := "Unresolved frames ([mariadbd], [libc.so.6], ...) are looked through: their callees sit under the nearest named caller, and " +
			diff.UnresolvedName + " rows hold the stacks that end inside them"
		if flags != nil && flags.KeepUnresolved != "" {
			n += " (" + flags.KeepUnresolved + " shows them as rows)"
		}
		notes = append(notes, n+".")
	}
	if chains {
		n := fmt.Sprintf("a → b: b holds at least %g%% of a, shown as one row with a's value and b's callees; \"end\" is b's share when it differs", threshold*100)
		if flags != nil && flags.NoCollapse != "" {
			n += " (" + flags.NoCollapse + " shows every level)"
		}
		notes = append(notes, n+".")
	}
	return notes
}

// runSection is the per-op block: one row per profile. When a profile's
// run recorded the CPU its samples stand for, "sampled %" shows it in
// percent of the accounted CPU for every profile. When a profile's run
// recorded its stack completeness, two columns show it for every profile:
// "complete %", the share of samples whose stack reaches a thread root,
// and "unwind", how the stacks were walked ("-": not recorded). When a
// profile has kernel frames, "sched+wake %" is the share of its samples in
// the kernel's scheduling, wake-up and IPI paths (diff.Environment): a
// profile where it is large measures the machine's thread switching more
// than the program ("-": recorded without kernel frames). When a profile
// is off-CPU, three columns show its own figures per operation: the whole
// profile ("off-CPU µs/o" or "off-CPU cs/o", beside the run's cs/o from
// /proc) and its voluntary and involuntary parts.
func runSection(sums []*diff.Summary, f Format) Section {
	s := Section{
		Title: "Run",
		Columns: []Column{{"profile", false}, {"unit", false}, {"total", true}, {"cpu s", true}, {"ops", true},
			{"QPS", true}, {"rQPS", true}, {"cpu/o µs", true}, {"cs/o", true}},
	}
	recorded, sampled, kernel, offCPU := false, false, false, false
	for _, sum := range sums {
		recorded = recorded || sum.Recorded != nil
		sampled = sampled || sum.Profile.HasSampled
		kernel = kernel || sum.Profile.Environment.Kernel
		offCPU = offCPU || sum.Profile.OffCPU
	}
	if offCPU {
		u := strings.TrimSuffix(sums[0].Profile.PerOpUnit, "/op")
		s.Columns = append(s.Columns, Column{"off-CPU " + u + "/o", true}, Column{"vol " + u + "/o", true}, Column{"invol " + u + "/o", true})
	}
	if sampled {
		s.Columns = append(s.Columns, Column{"sampled %", true})
	}
	if kernel {
		s.Columns = append(s.Columns, Column{"sched+wake %", true})
	}
	if recorded {
		s.Columns = append(s.Columns, Column{"complete %", true}, Column{"unwind", false})
	}
	for _, sum := range sums {
		p := sum.Profile
		row := []string{p.Label, p.CountUnit, Int(p.Total), "-", "-", "-", "-", "-", "-"}
		if p.HasCPU {
			row[3], row[7] = F2(p.CPUSeconds), F2(p.MicrosPerOp)
		}
		if p.HasPerOp {
			row[4] = Int(p.Operations)
		}
		if p.QPS > 0 {
			row[5] = F2(p.QPS)
		}
		if p.RelativeQPS > 0 {
			row[6] = F2(p.RelativeQPS)
		}
		if p.HasCtxSwitches {
			row[8] = F2(p.CtxSwitchesPerOp)
		}
		if f == FormatMarkdown {
			row[0] = "`" + row[0] + "`"
		}
		if offCPU {
			if p.HasPerOp {
				row = append(row, F2(p.PerOp), F2(kindPerOp(p, p.Voluntary)), F2(kindPerOp(p, p.Involuntary)))
			} else {
				row = append(row, "-", "-", "-")
			}
		}
		if sampled {
			pct := "-"
			if p.HasSampled {
				pct = F2(p.SampledPct)
			}
			row = append(row, pct)
		}
		if kernel {
			env := "-"
			if e := p.Environment; e.Kernel {
				env = F2(100 * e.Total())
			}
			row = append(row, env)
		}
		if recorded {
			complete, method := "-", "-"
			if u := sum.Recorded; u != nil {
				complete = F2(100 * u.Complete)
				if u.Method != "" {
					method = u.Method
				}
			}
			row = append(row, complete, method)
		}
		s.AddRow(row...)
	}
	return s
}

// Rewrites is the section of the rewrites a symbol map made (original
// symbol, result, rule, value), or a note that there were none.
func Rewrites(title string, e *symbolmap.Explanation, f Format) Section {
	s := Section{Title: title, Columns: []Column{{"original", false}, {"result", false}, {"rule", false}, {"value", true}}}
	if e != nil {
		for _, r := range e.Rewrites {
			res := r.Result
			if res == "" {
				res = "(elided)"
			}
			s.Rows = append(s.Rows, []Cell{nameCell(f, r.Original, 0), nameCell(f, res, 0), Text(r.Rule), Text(Int(r.Value))})
		}
	}
	if len(s.Rows) == 0 {
		s.Notes = append(s.Notes, "no symbol was rewritten")
	}
	return s
}

// Profile is the document of `flamediff report`: the run figures, the
// functions by inclusive share, the subsystems, one breakdown per root,
// the rewrites (with Options.Explain), then notes and warnings.
func Profile(sum *diff.Summary, expl *symbolmap.Explanation, o Options) *Document {
	d := &Document{Title: fmt.Sprintf("Profile %s: %d %s", sum.Profile.Label, sum.Profile.Total, sum.Profile.CountUnit)}
	if sum.Profile.OffCPU {
		d.Title = fmt.Sprintf("Profile %s: %s, %d %s", sum.Profile.Label, sum.Profile.Quantity, sum.Profile.Total, sum.Profile.CountUnit)
	}
	d.Sections = append(d.Sections, runSection([]*diff.Summary{sum}, o.Format), profileFunctions(sum, o))
	if sum.Subsystems != nil {
		d.Sections = append(d.Sections, profileSubsystems(sum))
	}
	for _, t := range sum.Subtrees {
		d.Sections = append(d.Sections, profileSubtree(sum, t, o))
	}
	if o.Explain {
		d.Sections = append(d.Sections, Rewrites("Rewrites", expl, o.Format))
	}
	if sum.PerOpMissing != "" {
		d.Notes = append(d.Notes, "note: "+sum.PerOpMissing)
	}
	d.Notes = append(d.Notes, warnings(o.Warnings)...)
	return d
}

func profileFunctions(sum *diff.Summary, o Options) Section {
	f := sum.Profile
	perOp := f.HasPerOp
	by := "by inclusive share"
	if f.OffCPU {
		by += " of " + f.Quantity
	}
	s := Section{
		Title:   fmt.Sprintf("Functions (%d of %d, %s)", len(top(sum.Functions, o.Top)), len(sum.Functions), by),
		Columns: []Column{{"function", false}, {"inclusive", true}, {"self", true}, {"incl %", true}, {"self %", true}},
	}
	if perOp {
		s.Columns = append(s.Columns, Column{perOpHead(f, "incl"), true}, Column{perOpHead(f, "self"), true})
	}
	if f.OffCPU {
		s.Columns = append(s.Columns, kindColumns(f)...)
	}
	for _, fn := range top(sum.Functions, o.Top) {
		row := []Cell{nameCell(o.Format, fn.Name, 0), Text(Int(fn.Inclusive)), Text(Int(fn.Self)), Text(F2(fn.InclusivePct)), Text(F2(fn.SelfPct))}
		if perOp {
			row = append(row, Text(F2(fn.InclusiveMicrosPerOp)), Text(F2(fn.SelfMicrosPerOp)))
		}
		if f.OffCPU {
			row = append(row, kindCells(f, fn.Voluntary, fn.Involuntary)...)
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

func profileSubsystems(sum *diff.Summary) Section {
	f := sum.Profile
	perOp := f.HasPerOp
	s := Section{Title: quantityTitle(f, "Subsystems"), Columns: []Column{{"subsystem", false}, {"value", true}, {"%", true}}}
	if perOp {
		s.Columns = append(s.Columns, Column{perOpHead(f, ""), true})
	}
	if f.OffCPU {
		s.Columns = append(s.Columns, kindColumns(f)...)
	}
	for _, sub := range sum.Subsystems {
		row := []Cell{Text(sub.Name), Text(Int(sub.Value)), Text(F2(sub.Pct))}
		if perOp {
			row = append(row, Text(F2(sub.MicrosPerOp)))
		}
		if f.OffCPU {
			row = append(row, kindCells(f, sub.Voluntary, sub.Involuntary)...)
		}
		s.Rows = append(s.Rows, row)
	}
	return s
}

func profileSubtree(sum *diff.Summary, t *diff.SubtreeResult, o Options) Section {
	perOp := sum.Profile.HasPerOp
	s := Section{
		Title:   fmt.Sprintf("Subtree %s (depth %d)", noteName(o.Format)(t.Root.Name), t.Depth),
		Columns: []Column{{"function", false}, {"value", true}, {"self", true}, {"% of total", true}, {"% of root", true}},
		Notes:   []string{t.SummaryWith(0, noteName(o.Format))},
	}
	if perOp {
		s.Columns = append(s.Columns, Column{perOpHead(sum.Profile, ""), true})
	}
	chains := false
	t.Walk(func(_ []string, level int, nd *diff.Node) {
		chains = chains || nd.Chain != nil
		var end []float64
		if nd.EndValue != nd.Value {
			end = []float64{nd.EndPct}
		}
		row := []Cell{rowCell(o.Format, nd.Name, nd.Chain, level, end), Text(Int(nd.Value)), Text(Int(nd.Self)), Text(F2(nd.Pct)), Text(F2(nd.PctOfRoot))}
		if perOp {
			row = append(row, Text(F2(nd.Pct/100*sum.Profile.PerOp)))
		}
		s.Rows = append(s.Rows, row)
	})
	s.Notes = append(s.Notes, subtreeNotes(t.SkippedUnresolved, chains, t.Threshold, o.CollapseFlags)...)
	return s
}

// profileCSVHeader is the one header row of a profile's CSV. Every row has
// a kind: function, subsystem or subtree (name is then the path from the
// root, joined by ';'). Cells that do not apply to a kind are empty. For a
// subtree row that merges a pass-through chain, chain lists its functions
// joined by ';' and chain_end_pct is the share of the chain's end. An
// off-CPU profile's per-op columns are named inclusive_offcpu_us_per_op
// and self_offcpu_us_per_op (off-CPU time) or inclusive_cs_per_op and
// self_cs_per_op (switches), and two columns follow, voluntary and
// involuntary: the inclusive value (or a subsystem's) split by the kind of
// switch.
var profileCSVHeader = []string{"kind", "name", "inclusive", "self", "inclusive_pct", "self_pct", "pct_of_root", "inclusive_us_per_op", "self_us_per_op", "chain", "chain_end_pct"}

// ProfileCSV writes the CSV of `flamediff report`: the first n functions
// (0: all), the subsystems and every subtree row, names whole.
func ProfileCSV(w io.Writer, sum *diff.Summary, n int) error {
	pf := sum.Profile
	perOp := pf.HasPerOp
	header := profileCSVHeader
	if pf.OffCPU {
		header = slices.Clone(header)
		header[7], header[8] = "inclusive_"+csvPerOp(pf), "self_"+csvPerOp(pf)
		header = append(header, "voluntary", "involuntary")
	}
	kind := func(row []string, vol, invol int64) []string {
		if pf.OffCPU {
			row = append(row, Int(vol), Int(invol))
		}
		return row
	}
	var rows [][]string
	for _, f := range top(sum.Functions, n) {
		rows = append(rows, kind([]string{"function", f.Name, Int(f.Inclusive), Int(f.Self), F2(f.InclusivePct), F2(f.SelfPct), "",
			OptF2(perOp, f.InclusiveMicrosPerOp), OptF2(perOp, f.SelfMicrosPerOp), "", ""}, f.Voluntary, f.Involuntary))
	}
	for _, sub := range sum.Subsystems {
		rows = append(rows, kind([]string{"subsystem", sub.Name, Int(sub.Value), "", F2(sub.Pct), "", "", OptF2(perOp, sub.MicrosPerOp), "", "", ""},
			sub.Voluntary, sub.Involuntary))
	}
	for _, t := range sum.Subtrees {
		t.Walk(func(path []string, _ int, nd *diff.Node) {
			row := []string{"subtree", strings.Join(path, ";"), Int(nd.Value), Int(nd.Self), F2(nd.Pct), "", F2(nd.PctOfRoot),
				OptF2(perOp, nd.Pct/100*pf.PerOp), "", strings.Join(nd.Chain, ";"), OptF2(nd.Chain != nil, nd.EndPct)}
			if pf.OffCPU {
				row = append(row, "", "")
			}
			rows = append(rows, row)
		})
	}
	return WriteCSV(w, header, rows)
}

// ProfileJSON is the JSON of `flamediff report` (JSONReport): figures
// unrounded, names whole, the first Options.Top functions.
func ProfileJSON(sum *diff.Summary, expl *symbolmap.Explanation, o Options) *JSONReport {
	perOp := sum.Profile.HasPerOp
	j := &JSONReport{
		Profile:        profileJSON(sum),
		PerOpMissing:   sum.PerOpMissing,
		FunctionsTotal: len(sum.Functions),
		Functions:      []JSONFunction{},
		Warnings:       warnings(o.Warnings),
	}
	off := sum.Profile.OffCPU
	for _, f := range top(sum.Functions, o.Top) {
		js := shareJSON(f.Inclusive, f.Self, f.InclusivePct, f.SelfPct, f.InclusiveMicrosPerOp, f.SelfMicrosPerOp, perOp)
		js.Voluntary, js.Involuntary = int64Ptr(off, f.Voluntary), int64Ptr(off, f.Involuntary)
		j.Functions = append(j.Functions, JSONFunction{Name: f.Name, JSONShare: js})
	}
	for _, sub := range sum.Subsystems {
		j.Subsystems = append(j.Subsystems, JSONSubsystem{Name: sub.Name, Value: sub.Value, Pct: sub.Pct, MicrosPerOp: ptr(perOp, sub.MicrosPerOp),
			Voluntary: int64Ptr(off, sub.Voluntary), Involuntary: int64Ptr(off, sub.Involuntary)})
	}
	for _, t := range sum.Subtrees {
		js := JSONSubtree{Root: t.Root.Name, Depth: t.Depth, Summary: t.Summary(0)}
		t.Walk(func(path []string, level int, nd *diff.Node) {
			jn := JSONNode{Path: path, Level: level, Value: nd.Value, Self: nd.Self, Pct: nd.Pct, PctOfRoot: nd.PctOfRoot,
				Chain: nd.Chain, Unresolved: nd.Unresolved}
			if nd.Chain != nil {
				ev := nd.EndValue
				jn.EndValue, jn.EndPct = &ev, ptr(true, nd.EndPct)
			}
			js.Nodes = append(js.Nodes, jn)
		})
		j.Subtrees = append(j.Subtrees, js)
	}
	if o.Explain {
		j.Rewrites = rewritesJSON(expl)
	}
	return j
}
