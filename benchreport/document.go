package benchreport

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
)

// The report as titled tables, rendered by the markdown, HTML and summary
// writers alike, so that they show the same figures.

// nameWidth is the most runes a function name takes in a table cell (and
// in a heading or the summary): longer names (C++ templates run to
// thousands of characters) are shortened in the middle (names.Shorten), so
// that one name does not push a table off the page. 80 keeps every name of
// the MariaDB fixtures whole. report.json has every name whole, and the
// HTML page gives the whole name as the cell's tooltip.
const nameWidth = 80

// chainSep joins the functions of a chain row.
const chainSep = " → "

// nameCell is the cell of a function, or of a chain of functions joined
// by chainSep, at level; each name is shortened to nameWidth, and suffix
// (figures) added after them, in the name's code span. The whole text is
// the cell's Title (the HTML tooltip) when it differs.
func nameCell(chain []string, level int, suffix string) report.Cell {
	short := make([]string, len(chain))
	whole := make([]string, len(chain))
	for i, n := range chain {
		short[i], whole[i] = names.Shorten(n, nameWidth), names.Clean(n)
	}
	c := report.Cell{Text: strings.Join(short, chainSep) + suffix, Name: true, Level: level}
	if w := strings.Join(whole, chainSep) + suffix; w != c.Text {
		c.Title = w
	}
	return c
}

// minShare is the share (in %) under which a subtree row is left out of the
// markdown and HTML tables, in every version (report.json has them all).
const minShare = 0.5

// noise marks a difference from the base that is within noise.
const noise = "≈"

// txt is a plain cell.
func txt(s string) report.Cell { return report.Text(s) }

// fmtP prints a p-value.
func fmtP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return report.F3(p)
}

// opt prints a figure's median with format, or "-" when it is absent.
func opt(f *Figure, format func(float64) string) string {
	if f == nil {
		return "-"
	}
	return format(f.Median)
}

func optRatio(r *float64) string {
	if r == nil {
		return "-"
	}
	return report.F2(*r)
}

// marked prefixes s with the noise mark when t says the difference is
// within noise.
func marked(s string, t *Test) string {
	if t != nil && !t.Significant {
		return noise + s
	}
	return s
}

// untrustedMark follows every figure and name of a cell that cannot be
// trusted (Version.Untrusted), in every table.
const untrustedMark = "!"

// serverHead names a version in a table of workload w: the base gets
// " (base)", a cell that cannot be trusted the untrusted mark.
func (r *Report) serverHead(w *Workload, s string) string {
	h := s
	if s == r.Base {
		h += " (base)"
	}
	return h + w.flag(s)
}

// flag is " !" when server's cell of w cannot be trusted, else "".
func (w *Workload) flag(server string) string {
	if v := w.version(server); v != nil && v.Untrusted != "" {
		return " " + untrustedMark
	}
	return ""
}

// spread is " (min–max, n=N)" of f's values each divided by div (1 for
// the values themselves), or " (n=1)" for one value.
func spread(f *Figure, div float64, format func(float64) string) string {
	if len(f.Values) < 2 {
		return " (n=1)"
	}
	return fmt.Sprintf(" (%s–%s, n=%d)", format(f.Min/div), format(f.Max/div), len(f.Values))
}

// rqpsCell is a version's rQPS with its noise mark, the spread of its
// repeats' QPS over the base's median, and the untrusted mark.
func (r *Report) rqpsCell(w *Workload, v *Version) string {
	bv := w.version(r.Base)
	return marked(report.F2(*v.RQPS), v.QPSTest) + spread(v.QPS, bv.QPS.Median, report.F2) + w.flag(v.Server)
}

func (r *Report) title() string {
	return names.Clean(fmt.Sprintf("Benchmark report: %s (base %s)", strings.Join(r.Servers, ", "), r.Base))
}

// intro says what the report is made of.
func (r *Report) intro() []string {
	rep := "one run"
	if r.Repeats > 1 {
		rep = fmt.Sprintf("%d repeats, medians", r.Repeats)
	}
	windows := "throughput and per-op figures from windows without a sampler (unprofiled), profiles from separate profiled windows."
	switch r.FiguresWindow {
	case fold.WindowProfiled:
		windows = "throughput and per-op figures from the profiled windows (no unprofiled windows were given: the sampler's cost is in them)."
	case windowMixed:
		windows = "throughput and per-op figures from unprofiled windows where the repeat has one, else from its profiled window (see each cell)."
	}
	out := []string{fmt.Sprintf("%d workload(s) on %d version(s), %s per cell; symbol map %s; subtrees of %s (depth %d); %s",
		len(r.Workloads), len(r.Servers), rep, r.Map, strings.Join(r.Roots, ", "), r.Depth, windows)}
	if off := r.offCPUIntro(); off != "" {
		out = append(out, off)
	}
	return names.CleanAll(out)
}

// rqpsSection is the table published regression reports lead with.
func (r *Report) rqpsSection() report.Section {
	s := report.Section{Title: fmt.Sprintf("Relative QPS (rQPS: QPS / QPS of %s)", r.Base)}
	s.Columns = []report.Column{report.TextColumn("workload")}
	for _, srv := range r.Servers {
		s.Columns = append(s.Columns, report.NumColumn(srv))
	}
	for _, w := range r.Workloads {
		row := []report.Cell{txt(w.Name)}
		for _, v := range w.Versions {
			switch {
			case v.Missing != "":
				row = append(row, txt("missing"))
			case v.RQPS == nil:
				row = append(row, txt("-"))
			default:
				row = append(row, txt(r.rqpsCell(w, v)))
			}
		}
		s.Rows = append(s.Rows, row)
	}
	s.Notes = append(s.Notes, fmt.Sprintf("(lo–hi, n=N): the lowest and highest repeat's QPS over %s's median QPS, and the number of repeats.", r.Base))
	for _, w := range r.Workloads {
		if w.RowsPerOp > 0 {
			s.Notes = append(s.Notes, w.rowsNote())
		}
	}
	if r.Repeats > 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("Medians of %d repeats, the versions interleaved in rounds. %s marks a difference from %s within noise: not significant by both Welch's t-test and a permutation test over the repeats, the tests of one table judged together at α = %g (p-values and cutoffs under each workload); without %s it is significant.",
			r.Repeats, noise, r.Base, r.Alpha, noise))
	} else {
		s.Notes = append(s.Notes, "One run per cell: no spread and no test of significance; run more repeats (bench --repeat 3) before quoting a difference.")
	}
	if r.anyUntrusted() {
		s.Notes = append(s.Notes, untrustedMark+": the cell cannot be trusted: a repeat differs from the others by more than the noise allows (which and why: under the workload, and in the summary).")
	}
	if len(r.Missing) > 0 {
		s.Notes = append(s.Notes, "missing: no usable run; see Missing runs for why.")
	}
	return s
}

func (r *Report) missingSection() report.Section {
	s := report.Section{Title: "Missing runs", Columns: []report.Column{report.TextColumn("workload"), report.TextColumn("version"), report.NumColumn("repeat"), report.TextColumn("reason")}}
	for _, m := range r.Missing {
		rep := "all"
		if m.Repeat > 0 {
			rep = fmt.Sprint(m.Repeat)
		}
		s.Rows = append(s.Rows, []report.Cell{txt(m.Workload), txt(m.Server), txt(rep), txt(m.Reason)})
	}
	return s
}

// overview is what comes before the workloads, cleaned.
func (r *Report) overview() []report.Section {
	out := []report.Section{r.rqpsSection()}
	if r.Placement != "" {
		out[0].Intro = append(out[0].Intro, r.Placement)
	}
	if len(r.Missing) > 0 {
		out = append(out, r.missingSection())
	}
	if len(r.OffCPUMissing) > 0 {
		out = append(out, r.offCPUMissingSection())
	}
	return cleanSections(out)
}

// workloadSections are the tables of one workload, cleaned.
func (r *Report) workloadSections(w *Workload) []report.Section {
	var out []report.Section
	out = append(out, r.costSection(w), r.relativeSection(w))
	if r.Repeats > 1 {
		out = append(out, r.repeatsSection(w))
	}
	if len(w.Comparisons) > 0 {
		out = append(out, r.attributionSection(w), r.topSelfSection(w))
	}
	out = append(out, r.offCPUSections(w)...)
	if w.Host != nil {
		out = append(out, r.hostSections(w)...)
	}
	out = append(out, r.seriesSections(w)...)
	for _, t := range w.Subtrees {
		out = append(out, r.subtreeSection(w, t))
	}
	if len(w.Notes) > 0 {
		out[0].Intro = append(out[0].Intro, w.Notes...)
	}
	return cleanSections(out)
}

// anyUntrusted says whether a cell of the report cannot be trusted.
func (r *Report) anyUntrusted() bool {
	for _, w := range r.Workloads {
		for _, v := range w.Versions {
			if v.Untrusted != "" {
				return true
			}
		}
	}
	return false
}

// rowsNote says that w's throughput is rows per second.
func (w *Workload) rowsNote() string {
	return fmt.Sprintf("%s: throughput in %s, rows read per second: %d rows per operation (its table) × o/s; its rQPS is the same ratio.", w.Name, w.ThroughputUnit, w.RowsPerOp)
}

func (r *Report) costSection(w *Workload) report.Section {
	s := report.Section{Title: "Throughput and cost per operation",
		Columns: []report.Column{report.TextColumn("version"), report.NumColumn("o/s"), report.NumColumn("rQPS"), report.NumColumn("cpu/o µs"), report.NumColumn("cs/o"), report.NumColumn("r/o"), report.NumColumn("rKB/o"), report.NumColumn("wKB/o")}}
	rows := w.RowsPerOp > 0
	if rows { // the throughput, after o/s
		s.Columns = slices.Insert(s.Columns, 2, report.NumColumn(w.ThroughputUnit))
	}
	// Per-second QPS add the within-run noise, unprofiled windows the
	// sampler's effect.
	cv, effect := false, false
	for _, v := range w.Versions {
		cv = cv || v.QPSCVPct != nil
		effect = effect || v.SamplerEffect != nil
	}
	if cv {
		s.Columns = append(s.Columns, report.NumColumn("QPS cv %"))
	}
	if effect {
		s.Columns = append(s.Columns, report.NumColumn("sampler"))
	}
	// Runs that recorded the CPU their samples stand for add a column,
	// and runs that recorded their stack completeness two.
	stacks, sampled, env := false, false, false
	for _, v := range w.Versions {
		stacks = stacks || v.StackCompletePct != nil
		sampled = sampled || v.SampledPct != nil
		env = env || v.SchedWakePct != nil
	}
	if sampled {
		s.Columns = append(s.Columns, report.NumColumn("sampled %"))
	}
	if env {
		s.Columns = append(s.Columns, report.NumColumn("sched+wake %"))
	}
	if stacks {
		s.Columns = append(s.Columns, report.NumColumn("complete %"), report.TextColumn("unwind"))
	}
	var warnings []string
	for _, v := range w.Versions {
		if v.Missing != "" {
			row := []report.Cell{txt(r.serverHead(w, v.Server)), txt("missing"), txt("-"), txt("-"), txt("-"), txt("-"), txt("-"), txt("-")}
			if rows {
				row = append(row, txt("-"))
			}
			if cv {
				row = append(row, txt("-"))
			}
			if effect {
				row = append(row, txt("-"))
			}
			if sampled {
				row = append(row, txt("-"))
			}
			if env {
				row = append(row, txt("-"))
			}
			if stacks {
				row = append(row, txt("-"), txt("-"))
			}
			s.Rows = append(s.Rows, row)
			s.Notes = append(s.Notes, fmt.Sprintf("%s: missing: %s", v.Server, v.Missing))
			continue
		}
		rq := "-"
		if v.RQPS != nil {
			rq = r.rqpsCell(w, v)
		}
		row := []report.Cell{txt(r.serverHead(w, v.Server)), txt(report.F2(v.QPS.Median) + spread(v.QPS, 1, report.F2)), txt(rq),
			txt(marked(report.F2(v.CPUPerOp.Median), v.CPUPerOpTest) + spread(v.CPUPerOp, 1, report.F2)),
			txt(opt(v.CSPerOp, report.F3)), txt(opt(v.ReadsPerOp, report.F3)), txt(opt(v.ReadKBPerOp, report.F3)), txt(opt(v.WriteKBPerOp, report.F3))}
		if rows {
			tp := "-"
			if v.Throughput != nil {
				tp = report.F2(v.Throughput.Median) + spread(v.Throughput, 1, report.F2)
			}
			row = slices.Insert(row, 2, txt(tp))
		}
		if cv {
			row = append(row, txt(opt(v.QPSCVPct, report.F2)))
		}
		if effect {
			e := "-"
			if v.SamplerEffect != nil {
				e = marked(report.F2(v.SamplerEffect.Median), v.SamplerEffectTest) + spread(v.SamplerEffect, 1, report.F2)
			}
			row = append(row, txt(e))
		}
		if sampled {
			row = append(row, txt(opt(v.SampledPct, report.F2)))
		}
		if env {
			row = append(row, txt(opt(v.SchedWakePct, report.F2)))
		}
		if stacks {
			unwind := v.Unwind
			if unwind == "" {
				unwind = "-"
			}
			row = append(row, txt(opt(v.StackCompletePct, report.F2)), txt(unwind))
		}
		s.Rows = append(s.Rows, row)
		if v.Repeats < r.Repeats {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: %d of %d repeats usable (see Missing runs).", v.Server, v.Repeats, r.Repeats))
		}
		if v.Untrusted != "" {
			warnings = append(warnings, fmt.Sprintf("%s %s: cannot be trusted: %s.", untrustedMark, v.Server, v.Untrusted))
		}
		for _, w := range v.Warnings {
			warnings = append(warnings, fmt.Sprintf("warning: %s: %s", v.Server, w))
		}
	}
	note := "Per operation: cpu/o CPU µs, cs/o context switches, r/o storage reads, rKB/o and wKB/o KB read and written; o/s operations per second; (lo–hi, n=N): the lowest and highest repeat and the number of repeats; \"-\": not measured."
	switch r.FiguresWindow {
	case fold.WindowUnprofiled:
		note += " All from windows without a sampler (unprofiled)."
	case fold.WindowProfiled:
		note += " All from the profiled windows: the sampler's cost is in them."
	}
	if cv {
		note += fmt.Sprintf(" QPS cv %%: the coefficient of variation of the workload's per-second QPS within a window (median over the repeats), the noise a repeat is judged by: one that differs from the cell's median by more than %d times it (at least %d%%) is flagged %s.", outlierCVs, outlierFloorPct, untrustedMark)
	}
	if effect {
		note += fmt.Sprintf(" sampler: QPS of the profiled window over the unprofiled one's, per repeat (median, lo–hi): the sampler's effect on throughput; %s: within noise (the two windows' QPS compared over the repeats, the versions judged together as in the other tables).", noise)
	}
	if sampled {
		note = strings.TrimSuffix(note, ".") + "; sampled %: the CPU the samples stand for, in % of the CPU the server was accounted (median over the repeats; below 100 a sampler missed CPU, see docs/fidelity.md)."
	}
	if env {
		note = strings.TrimSuffix(note, ".") + "; sched+wake %: the share of the profiled window's samples in the kernel's scheduling, wake-up and IPI paths (median over the repeats): CPU the machine spends moving threads between sleep and CPU, not the database's own work; when it is large, the version differences are partly the environment's (docs/lab.md)."
	}
	if stacks {
		note = strings.TrimSuffix(note, ".") + "; complete %: samples whose stack reaches a thread root (median over the repeats that recorded it), unwind: how stacks were walked."
	}
	if rows {
		note += " " + w.rowsNote()
	}
	s.Notes = append(s.Notes, note)
	s.Notes = append(s.Notes, warnings...)
	return s
}

func (r *Report) relativeSection(w *Workload) report.Section {
	s := report.Section{Title: "Relative to " + r.Base,
		Columns: []report.Column{report.TextColumn("version"), report.NumColumn("o/s"), report.NumColumn("cpu/o"), report.NumColumn("cs/o"), report.NumColumn("r/o"), report.NumColumn("rKB/o"), report.NumColumn("wKB/o")}}
	for _, v := range w.Versions {
		row := []report.Cell{txt(r.serverHead(w, v.Server))}
		if v.Missing != "" || v.Relative == nil {
			fill := "-"
			if v.Missing != "" {
				fill = "missing"
			}
			for range 6 {
				row = append(row, txt(fill))
			}
		} else {
			x := v.Relative
			row = append(row, txt(marked(optRatio(x.QPS), v.QPSTest)), txt(marked(optRatio(x.CPUPerOp), v.CPUPerOpTest)), txt(optRatio(x.CSPerOp)),
				txt(optRatio(x.ReadsPerOp)), txt(optRatio(x.ReadKBPerOp)), txt(optRatio(x.WriteKBPerOp)))
		}
		s.Rows = append(s.Rows, row)
	}
	s.Notes = append(s.Notes, fmt.Sprintf("Each version's median divided by %s's: above 1, more of it (o/s: faster; per-op costs: more expensive).", r.Base))
	return s
}

func (r *Report) repeatsSection(w *Workload) report.Section {
	s := report.Section{Title: "Repeats: median, spread and significance against " + r.Base,
		Columns: []report.Column{report.TextColumn("version"), report.TextColumn("figure"), report.NumColumn("n"), report.NumColumn("median"), report.NumColumn("min–max"), report.NumColumn("Δ vs base"), report.NumColumn("Welch p"), report.NumColumn("permutation p"), report.TextColumn("verdict")}}
	bv := w.version(r.Base)
	for _, v := range w.Versions {
		if v.Missing != "" {
			continue
		}
		for _, f := range []struct {
			name    string
			fig, bf *Figure
			test    *Test
		}{{"o/s", v.QPS, bv.QPS, v.QPSTest}, {"cpu/o µs", v.CPUPerOp, bv.CPUPerOp, v.CPUPerOpTest}} {
			row := []report.Cell{txt(r.serverHead(w, v.Server)), txt(f.name), txt(fmt.Sprint(v.Repeats)), txt(report.F2(f.fig.Median)),
				txt(report.F2(f.fig.Min) + "–" + report.F2(f.fig.Max))}
			switch {
			case v.Server == r.Base:
				row = append(row, txt("-"), txt("-"), txt("-"), txt("base"))
			case bv.Missing != "" || f.bf.Median == 0:
				row = append(row, txt("-"), txt("-"), txt("-"), txt("no base"))
			default:
				row = append(row, txt(report.Signed((f.fig.Median/f.bf.Median-1)*100)+"%"))
				if f.test == nil {
					row = append(row, txt("-"), txt("-"), txt("too few repeats"))
				} else {
					verdict := "significant"
					if !f.test.Significant {
						verdict = "within noise"
					}
					row = append(row, txt(fmtP(f.test.WelchP)), txt(fmtP(f.test.PermutationP)), txt(verdict))
				}
			}
			s.Rows = append(s.Rows, row)
		}
	}
	floor := 1.0
	var judged []*Test
	for _, v := range w.Versions {
		if v.QPSTest != nil {
			floor = math.Min(floor, v.QPSTest.MinPermutationP)
			judged = append(judged, v.QPSTest, v.CPUPerOpTest)
		}
	}
	if len(judged) > 0 {
		s.Notes = append(s.Notes, familyNote(judged, r.Alpha, "this table")+fmt.Sprintf(" Significant: Welch's p below the cutoff and the permutation p at most the cutoff or, when so few repeats cannot go that low, at its floor (%s here: every base value beyond every version value).", fmtP(floor)))
	}
	return s
}

// familyNote says how the tests of one table were judged together
// (diff.Family): how many, at which α, and the cutoff they came to.
func familyNote(tests []*Test, alpha float64, what string) string {
	n, cutoff := 0, 0.0
	for _, t := range tests {
		if t != nil {
			n, cutoff = t.Family, t.Level
		}
	}
	return fmt.Sprintf("The %d tests of %s are judged together at α = %g (Benjamini–Hochberg: when nothing differs, the chance of any mark of significance among them stays under α): cutoff %s, k·α/%d for the largest k whose k-th smallest Welch p is below it.",
		n, what, alpha, fmtP(cutoff), n)
}

func (r *Report) attributionSection(w *Workload) report.Section {
	s := report.Section{Title: "Change in CPU per operation against " + r.Base}
	if r.subsystem == nil {
		s.Columns = []report.Column{report.TextColumn("version"), report.NumColumn(r.Base + " µs/op"), report.NumColumn("µs/op"), report.NumColumn("Δµs/op")}
		for _, c := range w.Comparisons {
			s.Rows = append(s.Rows, []report.Cell{txt(c.Server + w.flag(c.Server)), txt(report.F2(c.BaseMicrosPerOp)), txt(report.F2(c.TargetMicrosPerOp)), txt(report.Signed(c.TargetMicrosPerOp - c.BaseMicrosPerOp))})
		}
		s.Notes = append(s.Notes, "A symbol map with subsystems splits these changes among subsystems.")
		return s
	}
	s.Columns = []report.Column{report.TextColumn("subsystem")}
	for _, c := range w.Comparisons {
		s.Columns = append(s.Columns, report.NumColumn("Δµs/op "+c.Server+w.flag(c.Server)))
	}
	var tests []*Test
	total := []report.Cell{txt("total")}
	for _, c := range w.Comparisons {
		total = append(total, txt(report.Signed(c.Attribution.DeltaMicrosPerOp)))
	}
	s.Rows = append(s.Rows, total)
	for _, name := range r.subNames {
		row := []report.Cell{txt(name)}
		nonzero := false
		for _, c := range w.Comparisons {
			cell := report.Signed(0)
			for _, p := range c.Attribution.Parts {
				if p.Subsystem != name {
					continue
				}
				nonzero = nonzero || math.Round(p.DeltaMicrosPerOp*100) != 0
				cell = marked(report.Signed(p.DeltaMicrosPerOp), p.Test)
				if len(p.RoundDeltas) > 0 {
					cell += " (" + report.Signed(slices.Min(p.RoundDeltas)) + " to " + report.Signed(slices.Max(p.RoundDeltas)) + ")"
				}
				if p.Test != nil {
					tests = append(tests, p.Test)
				}
			}
			row = append(row, txt(cell))
		}
		if nonzero {
			s.Rows = append(s.Rows, row)
		}
	}
	for _, c := range w.Comparisons {
		s.Notes = append(s.Notes, fmt.Sprintf("%s (cpu/o %s → %s µs)", c.Attribution.Sentence, report.F2(c.BaseMicrosPerOp), report.F2(c.TargetMicrosPerOp)))
	}
	if r.Repeats > 1 {
		s.Notes = append(s.Notes, "Split by the subsystem shares of the repeats merged, scaled to the median cpu/o of the profiled windows.")
	}
	if len(tests) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("(a to b): the lowest and highest change repeat by repeat (the version's repeat k against the base's repeat k, each the subsystem's share of that repeat's profile times its cpu/o). %s: within noise, the subsystem's µs/op over the repeats of the two versions compared.", noise)+" "+familyNote(tests, r.Alpha, "this table"))
	}
	if r.FiguresWindow != fold.WindowProfiled {
		s.Notes = append(s.Notes, "These cpu/o are the profiled windows' own (the CPU and operations of the windows the stacks were sampled in), so they include the sampler's cost; the throughput and cost table has the unprofiled cpu/o.")
	}
	return s
}

func (r *Report) topSelfSection(w *Workload) report.Section {
	s := report.Section{Title: fmt.Sprintf("Largest changes in self CPU per operation (top %d per version)", topSelf),
		Columns: []report.Column{report.TextColumn("version"), report.TextColumn("function"), report.NumColumn(r.Base + " µs/op"), report.NumColumn("µs/op"), report.NumColumn("Δµs/op")}}
	for _, c := range w.Comparisons {
		for _, f := range c.TopSelf {
			s.Rows = append(s.Rows, []report.Cell{txt(c.Server + w.flag(c.Server)), nameCell([]string{f.Name}, 0, ""), txt(report.F2(f.BaseMicrosPerOp)), txt(report.F2(f.TargetMicrosPerOp)), txt(report.Signed(f.DeltaMicrosPerOp))})
		}
	}
	return s
}

// rowName is a subtree row's name cell: a chain of more than 4 functions
// shows its first two and its last; "(end x%, y%)" gives the chain end's
// median shares when they differ from the row's.
func rowName(row *SubtreeRow) report.Cell {
	chain := []string{row.Path[len(row.Path)-1]}
	switch n := len(row.Chain); {
	case n > 4:
		chain = []string{row.Chain[0], row.Chain[1], "…", row.Chain[n-1]}
	case n > 1:
		chain = row.Chain
	}
	suffix := ""
	if len(row.ends) > 0 {
		ps := make([]string, len(row.ends))
		for i, e := range row.ends {
			ps[i] = report.F2(e) + "%"
		}
		suffix = " (end " + strings.Join(ps, ", ") + ")"
	}
	return nameCell(chain, row.Level, suffix)
}

func (r *Report) subtreeSection(w *Workload, t *Subtree) report.Section {
	s := report.Section{Title: fmt.Sprintf("Subtree %s (depth %d, %% of each profile's total)", names.Shorten(t.Root, nameWidth), t.Depth)}
	s.Columns = []report.Column{report.TextColumn("function")}
	for _, srv := range t.Servers {
		s.Columns = append(s.Columns, report.NumColumn(srv+w.flag(srv)+" %"))
	}
	hasBase := slices.Contains(t.Servers, r.Base)
	var targets []int
	if hasBase {
		for i, srv := range t.Servers {
			if srv != r.Base {
				targets = append(targets, i)
				s.Columns = append(s.Columns, report.NumColumn("Δpp "+srv+w.flag(srv)))
			}
		}
	}
	tests := false
	for _, row := range t.Rows {
		for _, x := range row.Tests {
			tests = tests || x != nil
		}
	}
	if tests {
		for _, i := range targets {
			s.Columns = append(s.Columns, report.NumColumn("p "+t.Servers[i]+" (Welch/perm)"))
		}
	}
	hidden, chains := 0, false
	for ri, row := range t.Rows {
		top := 0.0
		for _, sh := range row.Shares {
			top = math.Max(top, sh.Median)
		}
		if ri > 0 && top < minShare {
			hidden++
			continue
		}
		chains = chains || row.Chain != nil
		cells := []report.Cell{rowName(row)}
		for _, sh := range row.Shares {
			v := report.F2(sh.Median)
			if len(sh.Values) > 1 {
				v += " (" + report.F2(sh.Min) + "–" + report.F2(sh.Max) + ")"
			}
			cells = append(cells, txt(v))
		}
		for _, i := range targets {
			cells = append(cells, txt(marked(report.Signed(*row.DeltaPP[i]), row.Tests[i])))
		}
		if tests {
			for _, i := range targets {
				if x := row.Tests[i]; x != nil {
					cells = append(cells, txt(fmtP(x.WelchP)+"/"+fmtP(x.PermutationP)))
				} else {
					cells = append(cells, txt("-"))
				}
			}
		}
		s.Rows = append(s.Rows, cells)
	}
	for i, srv := range t.Servers {
		s.Notes = append(s.Notes, srv+": "+t.sentence(i, nameWidth))
	}
	for _, srv := range r.Servers {
		if !slices.Contains(t.Servers, srv) {
			s.Notes = append(s.Notes, srv+": missing (no usable run).")
		}
	}
	if hidden > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%d rows under %g%% in every version are left out (report.json has them all).", hidden, minShare))
	}
	if t.SkippedUnresolved {
		s.Notes = append(s.Notes, "Unresolved frames ([mariadbd], [libc.so.6], ...) are looked through: their callees sit under the nearest named caller, and [unresolved] rows hold the stacks that end inside them.")
	}
	if chains {
		s.Notes = append(s.Notes, fmt.Sprintf("a → b: b holds at least %g%% of a in every profile, shown as one row with a's value and b's callees; \"end\" is b's share when it differs.", t.Threshold*100))
	}
	if r.Repeats > 1 {
		s.Notes = append(s.Notes, fmt.Sprintf("Shares are medians over the repeats, (min–max) their spread; %s marks a change within noise.", noise))
		if tests {
			var all []*Test
			for _, row := range t.Rows {
				all = append(all, row.Tests...)
			}
			s.Notes = append(s.Notes, familyNote(all, r.Alpha, "this subtree (its rows shown and left out)"))
		}
	}
	return s
}
