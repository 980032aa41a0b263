package benchreport

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flamediff/flamediff/report"
)

// HostRow is one version's whole-machine figures under a workload, from
// run.json's host block (docs/run-json.md): the client, flamediff and the
// sampler included, as vmstat-based reports measure. They are not the
// server's own cpu/o and cs/o.
type HostRow struct {
	Server string `json:"server"`
	// Repeats is how many of the version's runs recorded the host.
	Repeats int `json:"repeats"`
	// CPUPerOp is busy CPU of every CPU in µs per operation, CSPerOp the
	// machine's context switches per operation; StealPct the steal time
	// in % of the window's CPU time.
	CPUPerOp *Figure `json:"cpu_us_per_op,omitempty"`
	CSPerOp  *Figure `json:"ctxt_per_op,omitempty"`
	StealPct *Figure `json:"steal_pct,omitempty"`
	// CPUFreq is "not exposed", "unchanged", or "changed in N of M runs".
	CPUFreq string `json:"cpu_freq,omitempty"`
	// Relative holds the medians of CPUPerOp and CSPerOp divided by the
	// base's; nil for a version or base without them.
	Relative *HostRelative `json:"relative,omitempty"`
}

// HostRelative is a version's host figures over the base's (a field is
// nil when either side lacks the figure or the base's is 0).
type HostRelative struct {
	CPUPerOp *float64 `json:"cpu_us_per_op,omitempty"`
	CSPerOp  *float64 `json:"ctxt_per_op,omitempty"`
}

// relateHost sets each row's figures relative to the base's row.
func relateHost(rows []*HostRow, base string) {
	var b *HostRow
	for _, h := range rows {
		if h.Server == base && h.Repeats > 0 {
			b = h
		}
	}
	if b == nil {
		return
	}
	for _, h := range rows {
		if h.Repeats == 0 {
			continue
		}
		hr := &HostRelative{CPUPerOp: rel(h.CPUPerOp, b.CPUPerOp), CSPerOp: rel(h.CSPerOp, b.CSPerOp)}
		if hr.CPUPerOp != nil || hr.CSPerOp != nil {
			h.Relative = hr
		}
	}
}

// hostRows returns the host figures of each server's usable runs, in
// servers' order; nil when no run recorded them.
func hostRows(servers []string, runsOf map[string][]*loaded) []*HostRow {
	var rows []*HostRow
	found := false
	for _, srv := range servers {
		row := &HostRow{Server: srv}
		rows = append(rows, row)
		var cpu, cs, steal []float64
		exposed, changed := 0, 0
		for _, l := range runsOf[srv] {
			// The window the per-op figures come from: the unprofiled one
			// where there is one, so that the sampler is not in them.
			h := l.meas.Host
			if h == nil {
				continue
			}
			row.Repeats++
			if h.CPUMicrosPerOp > 0 {
				cpu = append(cpu, h.CPUMicrosPerOp)
				cs = append(cs, h.CtxSwitchesPerOp)
			}
			steal = append(steal, 100*h.StealShare)
			if f := h.CPUFreq; f != nil && f.Exposed {
				exposed++
				if f.Changed {
					changed++
				}
			}
		}
		if row.Repeats == 0 {
			continue
		}
		found = true
		if len(cpu) > 0 {
			row.CPUPerOp, row.CSPerOp = figureOf(cpu), figureOf(cs)
		}
		row.StealPct = figureOf(steal)
		switch {
		case exposed == 0:
			row.CPUFreq = "not exposed"
		case changed == 0:
			row.CPUFreq = "unchanged"
		default:
			row.CPUFreq = fmt.Sprintf("changed in %d of %d runs", changed, exposed)
		}
	}
	if !found {
		return nil
	}
	return rows
}

// placementOf says where the runs' servers and clients ran: the
// placement asked (run.json placement.asked) with the CPUs found, and the
// runs where it did not hold; "" when no run recorded it.
func placementOf(runs []*loaded) string {
	asked := map[string]int{}
	var notHeld []string
	recorded := 0
	for _, l := range runs {
		p := l.meas.Placement
		if p == nil {
			continue
		}
		if q := l.p.Meta.Placement; q != nil && len(q.Mismatched) > 0 && len(p.Mismatched) == 0 {
			p = q // the profiled window's did not hold: say so
		}
		recorded++
		desc := p.Asked
		switch {
		case p.ServerCPUs != "" && p.ServerCPUs == p.ClientCPUs:
			desc += fmt.Sprintf(" (server threads and client on CPU %s)", p.ServerCPUs)
		case p.ServerCPUs != "" || p.ClientCPUs != "":
			desc += fmt.Sprintf(" (server threads on CPU %s, client on CPU %s)", orDash(p.ServerCPUs), orDash(p.ClientCPUs))
		case p.Asked == "none":
			desc += " (left to the scheduler)"
		}
		asked[desc]++
		if len(p.Mismatched) > 0 {
			notHeld = append(notHeld, fmt.Sprintf("%s on %s repeat %d", l.run.Workload, l.run.Server, max(l.run.Repeat, 1)))
		}
	}
	if recorded == 0 {
		return ""
	}
	descs := make([]string, 0, len(asked))
	for d := range asked {
		descs = append(descs, d)
	}
	sort.Strings(descs)
	var b strings.Builder
	if len(descs) == 1 {
		fmt.Fprintf(&b, "Placement: %s, in every run that recorded it (%d of %d).", descs[0], recorded, len(runs))
	} else {
		parts := make([]string, len(descs))
		for i, d := range descs {
			parts[i] = fmt.Sprintf("%s in %d runs", d, asked[d])
		}
		fmt.Fprintf(&b, "Placement DIFFERS between runs: %s; their figures are not comparable.", strings.Join(parts, "; "))
	}
	if len(notHeld) > 0 {
		slices.Sort(notHeld)
		fmt.Fprintf(&b, " It did not hold (threads elsewhere at the window's end, run.json placement.mismatched) in: %s.", strings.Join(notHeld, ", "))
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// hostSections are the tables of the whole machine's figures of a
// workload: absolute, then relative to the base, as the server's own.
func (r *Report) hostSections(w *Workload) []report.Section {
	out := []report.Section{r.hostSection(w)}
	if !slices.ContainsFunc(w.Host, func(h *HostRow) bool { return h.Relative != nil }) {
		return out
	}
	s := report.Section{Title: "Host relative to " + r.Base,
		Columns: []report.Column{report.TextColumn("version"), report.NumColumn("host cpu/o"), report.NumColumn("host cs/o")}}
	for _, h := range w.Host {
		row := []report.Cell{txt(r.serverHead(w, h.Server)), txt("-"), txt("-")}
		if h.Relative != nil {
			row[1], row[2] = txt(optRatio(h.Relative.CPUPerOp)), txt(optRatio(h.Relative.CSPerOp))
		}
		s.Rows = append(s.Rows, row)
	}
	s.Notes = append(s.Notes, fmt.Sprintf("Each version's host median divided by %s's: above 1, the machine as a whole spends more per operation.", r.Base))
	return append(out, s)
}

// hostSection is the table of the whole machine's figures of a workload.
func (r *Report) hostSection(w *Workload) report.Section {
	s := report.Section{Title: "Host: the whole machine, client included",
		Columns: []report.Column{report.TextColumn("version"), report.NumColumn("n"), report.NumColumn("host cpu/o µs"), report.NumColumn("host cs/o"),
			report.NumColumn("steal %"), report.TextColumn("CPU frequency")}}
	for _, h := range w.Host {
		if h.Repeats == 0 {
			s.Rows = append(s.Rows, []report.Cell{txt(r.serverHead(w, h.Server)), txt("0"), txt("-"), txt("-"), txt("-"), txt("-")})
			continue
		}
		s.Rows = append(s.Rows, []report.Cell{txt(r.serverHead(w, h.Server)), txt(fmt.Sprint(h.Repeats)), txt(hostFigure(h.CPUPerOp)), txt(hostFigure(h.CSPerOp)),
			txt(hostFigure(h.StealPct)), txt(h.CPUFreq)})
	}
	s.Notes = append(s.Notes, "From /proc/stat over each window: busy CPU of every CPU (user, nice, system, irq, softirq) and the machine's context switches, per operation of the server; they include sysbench, flamediff and the sampler, as vmstat-based reports do, unlike the server's own cpu/o and cs/o above. Median (min–max) over the runs, from the unprofiled windows where the runs have them; steal %: time the hypervisor ran other guests, in % of the window's CPU time.")
	return s
}

// hostFigure is a figure's median with its range when there are several.
func hostFigure(f *Figure) string {
	if f == nil {
		return "-"
	}
	if len(f.Values) < 2 {
		return report.F2(f.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", report.F2(f.Median), report.F2(f.Min), report.F2(f.Max))
}
