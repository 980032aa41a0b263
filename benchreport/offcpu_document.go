package benchreport

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/flamegraph"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/report"
)

// The off-CPU tables and graphs of a workload (offcpu.go).

// offFlag is " !" when server's off-CPU figures in w cannot be trusted
// (OffCPUFigures.Untrusted) or its cell cannot be (Version.Untrusted).
func (w *Workload) offFlag(server string) string {
	v := w.version(server)
	if v != nil && (v.Untrusted != "" || v.OffCPU != nil && v.OffCPU.Untrusted != "") {
		return " " + untrustedMark
	}
	return ""
}

// hasOffCPU says whether a version of the workload has off-CPU figures.
func (w *Workload) hasOffCPU() bool {
	for _, v := range w.Versions {
		if v.OffCPU != nil {
			return true
		}
	}
	return false
}

// offCPUIntro is the report's sentence on off-CPU profiles.
func (r *Report) offCPUIntro() string {
	switch r.OffCPU {
	case OffCPUNone:
		return "Off-CPU profiles: none (no profiled window has offcpu.folded: the lab records them with capture.off_cpu, record with --off-cpu)."
	case OffCPUAll:
		return "Off-CPU profiles: in every profiled window (off-CPU sections under each workload)."
	case OffCPUSome:
		return fmt.Sprintf("Off-CPU profiles: in %d profiled window(s) short of all; the runs without one are listed under Runs without off-CPU profiles, and each off-CPU figure is over the repeats that have one.", len(r.OffCPUMissing))
	}
	return ""
}

// offCPUMissingSection lists the usable runs without an off-CPU profile.
func (r *Report) offCPUMissingSection() report.Section {
	s := report.Section{Title: "Runs without off-CPU profiles", Columns: []report.Column{report.TextColumn("workload"), report.TextColumn("version"), report.NumColumn("repeat"), report.TextColumn("reason")}}
	for _, m := range r.OffCPUMissing {
		s.Rows = append(s.Rows, []report.Cell{txt(m.Workload), txt(m.Server), txt(fmt.Sprint(m.Repeat)), txt(m.Reason)})
	}
	return s
}

// offCPUSections are the workload's off-CPU tables: the figures per
// operation, and the changes against the base attributed to subsystems;
// none when no version has off-CPU figures.
func (r *Report) offCPUSections(w *Workload) []report.Section {
	if !w.hasOffCPU() {
		return nil
	}
	out := []report.Section{r.offCPUTable(w)}
	if len(w.OffCPUComparisons) > 0 {
		out = append(out,
			r.offCPUAttributionSection(w, "context switches", func(c *OffCPUComparison) *OffCPUAttribution { return c.Switches }),
			r.offCPUAttributionSection(w, "off-CPU time", func(c *OffCPUComparison) *OffCPUAttribution { return c.Time }))
	}
	if r.svg {
		out = append(out, r.offCPUGraphSection(w))
	}
	return out
}

// offCell is a figure's median with its spread, or "-".
func offCell(f *Figure) string {
	if f == nil {
		return "-"
	}
	return report.F2(f.Median) + spread(f, 1, report.F2)
}

func (r *Report) offCPUTable(w *Workload) report.Section {
	s := report.Section{Title: "Off-CPU per operation (profiled windows)", Columns: []report.Column{
		report.TextColumn("version"), report.NumColumn("cs/op"), report.NumColumn("vol cs/op"), report.NumColumn("invol cs/op"), report.NumColumn("rel cs/op"),
		report.NumColumn("off-CPU µs/op"), report.NumColumn("vol µs/op"), report.NumColumn("invol µs/op"), report.NumColumn("rel µs/op"),
		report.NumColumn("/proc cs/o profiled"),
	}}
	unprofiled := false
	for _, v := range w.Versions {
		unprofiled = unprofiled || v.OffCPU != nil && v.FiguresWindow != fold.WindowProfiled
	}
	if unprofiled {
		s.Columns = append(s.Columns, report.NumColumn("cs/o unprofiled"))
	}
	var notes []string
	var tests []*Test
	for _, v := range w.Versions {
		head := txt(r.Base + " (base)")
		if v.Server != r.Base {
			head = txt(v.Server)
		}
		head = txt(head.Text + w.offFlag(v.Server))
		o := v.OffCPU
		if o == nil {
			cell := "-"
			if v.Missing != "" {
				cell = "missing"
			} else {
				notes = append(notes, fmt.Sprintf("%s: no off-CPU profile (%s).", v.Server, offReasons(v)))
			}
			row := []report.Cell{head}
			for range s.Columns[1:] {
				row = append(row, txt(cell))
			}
			s.Rows = append(s.Rows, row)
			continue
		}
		var rcs, rus *float64
		if o.Relative != nil {
			rcs, rus = o.Relative.CSPerOp, o.Relative.MicrosPerOp
		}
		row := []report.Cell{head,
			txt(offCell(o.CSPerOp)), txt(opt(o.VoluntaryCSPerOp, report.F2)), txt(opt(o.InvoluntaryCSPerOp, report.F2)), txt(marked(optRatio(rcs), o.CSPerOpTest)),
			txt(offCell(o.MicrosPerOp)), txt(opt(o.VoluntaryMicrosPerOp, report.F2)), txt(opt(o.InvoluntaryMicrosPerOp, report.F2)), txt(marked(optRatio(rus), o.MicrosPerOpTest)),
			txt(offCell(o.ProcCSPerOp)),
		}
		if unprofiled {
			cell := "-"
			if v.FiguresWindow == fold.WindowUnprofiled {
				cell = offCell(v.CSPerOp)
			}
			row = append(row, txt(cell))
		}
		s.Rows = append(s.Rows, row)
		for _, t := range []*Test{o.CSPerOpTest, o.MicrosPerOpTest} {
			if t != nil {
				tests = append(tests, t)
			}
		}
		for _, m := range o.Missing {
			notes = append(notes, fmt.Sprintf("%s: %s (its off-CPU figures are over the %d repeat(s) with one).", v.Server, m, o.Repeats))
		}
		for _, wn := range o.Warnings {
			notes = append(notes, v.Server+": "+wn)
		}
		if o.Untrusted != "" {
			notes = append(notes, fmt.Sprintf("%s %s: %s.", v.Server, untrustedMark, o.Untrusted))
		}
	}
	s.Notes = append(s.Notes, "These come from the profiled windows alone (the off-CPU program runs only there): cs/op are the switches it counted per operation, voluntary (the thread blocked) and involuntary (it was preempted) apart; off-CPU µs/op the time the server's threads spent off the CPU per operation, summed over threads. rel: over "+r.Base+"'s median. (lo–hi, n=N): the lowest and highest repeat and the number of repeats with an off-CPU profile.")
	s.Notes = append(s.Notes, fmt.Sprintf("/proc cs/o profiled: /proc's context switches per operation over the same profiled windows, which the counted switches are checked against (a warning, and %s, when a repeat's differ by more than %d%%).", untrustedMark, fold.OffCPUGapPct))
	if unprofiled {
		s.Notes = append(s.Notes, "cs/o unprofiled: /proc's over the windows without a sampler (the throughput table's cs/o); /proc cs/o profiled over it is how much profiling changed switching. The two are never mixed: every other off-CPU figure is the profiled windows'.")
	}
	if len(tests) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("%s before a rel figure: within noise, the repeats' cs/op (or µs/op) against %s's by Welch's t-test and a permutation test. ", noise, r.Base)+familyNote(tests, r.Alpha, "this table"))
	}
	s.Notes = append(s.Notes, notes...)
	return s
}

// offReasons says why a cell's usable repeats have no off-CPU profile.
func offReasons(v *Version) string {
	if v.OffCPU != nil {
		return strings.Join(v.OffCPU.Missing, "; ")
	}
	return v.offMissing
}

// offCPUAttributionSection is the change of one off-CPU quantity per
// operation against the base, split among subsystems (as `flamediff diff
// --off-cpu` splits it), voluntary and involuntary apart.
func (r *Report) offCPUAttributionSection(w *Workload, quantity string, of func(*OffCPUComparison) *OffCPUAttribution) report.Section {
	unit := of(w.OffCPUComparisons[0]).Unit
	s := report.Section{Title: fmt.Sprintf("Change in %s per operation against %s (off-CPU profiles)", quantity, r.Base),
		Columns: []report.Column{report.TextColumn("subsystem")}}
	for _, c := range w.OffCPUComparisons {
		f := w.offFlag(c.Server)
		s.Columns = append(s.Columns, report.NumColumn("Δ"+unit+" "+c.Server+f), report.NumColumn("Δvol "+c.Server+f), report.NumColumn("Δinvol "+c.Server+f))
	}
	var tests []*Test
	total := []report.Cell{txt("total")}
	for _, c := range w.OffCPUComparisons {
		a := of(c)
		total = append(total, txt(report.Signed(a.Delta)), txt(report.Signed(a.DeltaVoluntary)), txt(report.Signed(a.DeltaInvoluntary)))
	}
	s.Rows = append(s.Rows, total)
	if r.subsystem == nil {
		s.Notes = append(s.Notes, "A symbol map with subsystems splits these changes among subsystems.")
	}
	for _, name := range r.subNames {
		row := []report.Cell{txt(name)}
		nonzero := false
		for _, c := range w.OffCPUComparisons {
			cells := []string{report.Signed(0), report.Signed(0), report.Signed(0)}
			for _, p := range of(c).Parts {
				if p.Subsystem != name {
					continue
				}
				cells = []string{marked(report.Signed(p.Delta), p.Test), report.Signed(p.DeltaVoluntary), report.Signed(p.DeltaInvoluntary)}
				if len(p.RoundDeltas) > 0 {
					cells[0] += " (" + report.Signed(slices.Min(p.RoundDeltas)) + " to " + report.Signed(slices.Max(p.RoundDeltas)) + ")"
				}
				if p.Test != nil {
					tests = append(tests, p.Test)
				}
				for _, x := range []float64{p.Delta, p.DeltaVoluntary, p.DeltaInvoluntary} {
					nonzero = nonzero || math.Round(x*100) != 0
				}
			}
			for _, c := range cells {
				row = append(row, txt(c))
			}
		}
		if nonzero {
			s.Rows = append(s.Rows, row)
		}
	}
	for _, c := range w.OffCPUComparisons {
		a := of(c)
		if a.Sentence != "" {
			s.Notes = append(s.Notes, fmt.Sprintf("%s (%s %s → %s)", a.Sentence, unit, report.F2(a.BasePerOp), report.F2(a.TargetPerOp)))
		} else {
			s.Notes = append(s.Notes, fmt.Sprintf("%s → %s: %s %s → %s, %s", r.Base, c.Server, unit, report.F2(a.BasePerOp), report.F2(a.TargetPerOp), report.Signed(a.Delta)))
		}
	}
	if len(tests) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("(a to b): the lowest and highest change repeat by repeat (the version's repeat k against the base's repeat k, each the subsystem's share of that repeat's off-CPU profile times its %s). %s: within noise, the subsystem's %s over the repeats of the two versions compared.", unit, noise, unit)+" "+familyNote(tests, r.Alpha, "this table"))
	}
	s.Notes = append(s.Notes, "From the profiled windows' off-CPU profiles, each version's repeats pooled (stacks and operations summed over the repeats with an off-CPU profile). Δ: each figure rounded once to 0.01, so that the parts add up to the total; Δvol and Δinvol split the change by the kind of switch (not rounded first: their sum can differ from Δ by 0.01).")
	return s
}

// OffCPUGraphPath is where WriteFiles puts a version's off-CPU flame
// graph under a workload, of switches (kind "cs") or of time off the CPU
// ("us"), as PlainGraphPath.
func OffCPUGraphPath(workload, server, kind string) string {
	return path.Join(SVGDir, safeName(workload), safeName(server)+".offcpu-"+kind+".svg")
}

// OffCPUDiffGraphPath is where WriteFiles puts the differential off-CPU
// flame graph from the base to a version, as OffCPUGraphPath.
func OffCPUDiffGraphPath(workload, base, server, kind string) string {
	return path.Join(SVGDir, safeName(workload), safeName(base)+"-vs-"+safeName(server)+".offcpu-"+kind+".svg")
}

// offCPUGraphs are the workload's off-CPU graphs: per version with
// off-CPU profiles, switches then time, then the differential graphs from
// the base.
func (r *Report) offCPUGraphs(w *Workload) []offGraph {
	var out []offGraph
	kinds := []struct{ kind, quantity, unit string }{{"cs", "context switches", "cs/op"}, {"us", "off-CPU time", "µs/op"}}
	for _, v := range w.Versions {
		if w.offMerged[v.Server] == nil {
			continue
		}
		for _, k := range kinds {
			out = append(out, offGraph{title: fmt.Sprintf("%s %s", v.Server, k.quantity), href: OffCPUGraphPath(w.Name, v.Server, k.kind), server: v.Server, kind: k.kind, quantity: k.quantity, unit: k.unit})
		}
	}
	if w.offMerged[r.Base] == nil {
		return out
	}
	for _, v := range w.Versions {
		if w.offMerged[v.Server] == nil || v.Server == r.Base {
			continue
		}
		for _, k := range kinds {
			out = append(out, offGraph{title: fmt.Sprintf("%s → %s %s", r.Base, v.Server, k.quantity), href: OffCPUDiffGraphPath(w.Name, r.Base, v.Server, k.kind), server: v.Server, from: r.Base, kind: k.kind, quantity: k.quantity, unit: k.unit, diff: true})
		}
	}
	// The steps of the off-CPU series not from the base.
	if w.Series == nil {
		return out
	}
	drawn := map[string]bool{}
	for _, f := range w.Series.OffCPU {
		for _, st := range f.Steps {
			if st.Graph == "" || drawn[st.Graph] || st.Previous == r.Base {
				continue
			}
			drawn[st.Graph] = true
			k := kinds[0]
			if strings.HasSuffix(st.Graph, ".offcpu-us.svg") {
				k = kinds[1]
			}
			out = append(out, offGraph{title: fmt.Sprintf("step %s → %s %s", st.Previous, st.Server, k.quantity), href: st.Graph, server: st.Server, from: st.Previous, kind: k.kind, quantity: k.quantity, unit: k.unit, diff: true})
		}
	}
	return out
}

// offGraph is one off-CPU graph of a workload.
type offGraph struct {
	// from is the version a differential graph is drawn from.
	title, href, server, from, kind, quantity, unit string
	diff                                            bool
}

// offGraphsTitle is the title of the section listing the off-CPU graphs
// in the markdown report; the HTML page shows the graphs themselves.
const offGraphsTitle = "Off-CPU flame graphs"

// withoutOffGraphs leaves the section listing the off-CPU graphs out.
func withoutOffGraphs(ss []report.Section) []report.Section {
	out := ss[:0:0]
	for _, s := range ss {
		if s.Title != offGraphsTitle {
			out = append(out, s)
		}
	}
	return out
}

// offCPUGraphSection lists the workload's off-CPU graphs (markdown and
// the HTML page, which shows them too).
func (r *Report) offCPUGraphSection(w *Workload) report.Section {
	s := report.Section{Title: offGraphsTitle, Columns: []report.Column{report.TextColumn("graph"), report.TextColumn("file")}}
	for _, g := range r.offCPUGraphs(w) {
		s.Rows = append(s.Rows, []report.Cell{txt(g.title), txt(g.href)})
	}
	s.Notes = append(s.Notes, "Blue graphs (the off-CPU palette): stacks where the server's threads left the CPU, by switches or by time off it, each version's repeats merged; leaves [voluntary] (teal) and [involuntary] (amber). Differential graphs are normalised per operation: red, more per operation than "+r.Base+"; blue, fewer.")
	return s
}

// renderOffCPUGraphs draws the workload's off-CPU graphs with draw.
func (r *Report) renderOffCPUGraphs(w *Workload, draw func(string, string, func() (*flamegraph.Graph, error))) {
	for _, g := range r.offCPUGraphs(w) {
		p := w.offMerged[g.server]
		pick := func(q *offPair) *fold.Profile {
			if g.kind == "cs" {
				return q.switches
			}
			return q.time
		}
		o := r.graphOptions()
		if !g.diff {
			v := w.version(g.server)
			o.Title = fmt.Sprintf("%s: %s, %s", w.Name, g.server, g.quantity)
			f := v.OffCPU.CSPerOp
			if g.kind == "us" {
				f = v.OffCPU.MicrosPerOp
			}
			o.Subtitle = fmt.Sprintf("%s %s (median), %d run(s), profiled windows", report.F2(f.Median), g.unit, v.OffCPU.Repeats)
			draw(g.title, g.href, func() (*flamegraph.Graph, error) { return flamegraph.Layout(pick(p), o) })
			continue
		}
		from := w.offMerged[g.from]
		o.Title = fmt.Sprintf("%s: %s → %s, %s", w.Name, g.from, g.server, g.quantity)
		if g.from != r.Base {
			o.Title = fmt.Sprintf("%s: step %s → %s, %s", w.Name, g.from, g.server, g.quantity)
		}
		o.Subtitle = fmt.Sprintf("Change in %s per operation (%s); widths follow %s", g.quantity, g.unit, g.server)
		o.Normalize = flamegraph.NormalizePerOp
		o.BaseLabel, o.TargetLabel = g.from, g.server
		draw(g.title, g.href, func() (*flamegraph.Graph, error) { return flamegraph.LayoutDiff(pick(from), pick(p), o) })
	}
}

// writeOffCPUWarnings prints the runs without off-CPU profiles and the
// cells whose off-CPU switches could not be trusted, for the summary.
func (r *Report) writeOffCPUWarnings(printf func(string, ...any)) {
	if r.OffCPU == OffCPUAll || r.OffCPU == OffCPUSome {
		printf("%s\n", r.offCPUIntro())
	}
	for _, m := range r.OffCPUMissing {
		printf("no off-CPU profile: %s on %s, repeat %d: %s\n", m.Workload, m.Server, m.Repeat, m.Reason)
	}
	for _, wl := range r.Workloads {
		for _, v := range wl.Versions {
			if v.OffCPU == nil {
				continue
			}
			if v.OffCPU.Untrusted != "" {
				printf("%s off-CPU figures cannot be trusted: %s on %s: %s\n", untrustedMark, wl.Name, v.Server, v.OffCPU.Untrusted)
			}
			for _, w := range v.OffCPU.Warnings {
				printf("warning: %s on %s: %s\n", wl.Name, v.Server, w)
			}
		}
	}
}

// writeOffCPUSummary prints, per workload with off-CPU comparisons, the
// change in switches and time off the CPU per operation against the base
// and their attribution, for the summary.
func (r *Report) writeOffCPUSummary(printf func(string, ...any)) {
	for _, wl := range r.Workloads {
		if len(wl.OffCPUComparisons) == 0 {
			continue
		}
		printf("\n%s: off-CPU per operation against %s (profiled windows)\n", wl.Name, r.Base)
		for _, c := range wl.OffCPUComparisons {
			for _, a := range []*OffCPUAttribution{c.Switches, c.Time} {
				printf("  %s%s: %s %s → %s %s (%s; vol %s, invol %s)\n", c.Server, wl.offFlag(c.Server), a.Quantity, report.F2(a.BasePerOp), report.F2(a.TargetPerOp), a.Unit,
					report.Signed(a.Delta), report.Signed(a.DeltaVoluntary), report.Signed(a.DeltaInvoluntary))
				var parts []string
				for _, p := range a.Parts {
					if math.Round(p.Delta*100) != 0 {
						parts = append(parts, p.Subsystem+" "+report.Signed(p.Delta))
					}
				}
				if len(parts) > 0 {
					printf("    by subsystem (%s): %s\n", a.Unit, strings.Join(parts, ", "))
				}
			}
		}
	}
}
