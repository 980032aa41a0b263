package benchreport

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"

	"github.com/flamediff/flamediff/chart"
	"github.com/flamediff/flamediff/internal/names"
)

// htmlChart is one chart of index.html: an inline <svg>, or why there is
// none.
type htmlChart struct {
	Title string
	SVG   template.HTML
	Err   string
}

// draw renders the charts for the page; a chart that cannot be drawn says
// why in its place rather than failing the report.
func draw(bs []chart.Bars) []htmlChart {
	var out []htmlChart
	for _, b := range bs {
		var buf bytes.Buffer
		if err := b.Element(&buf); err != nil {
			out = append(out, htmlChart{Title: b.Title, Err: err.Error()})
			continue
		}
		out = append(out, htmlChart{Title: b.Title, SVG: template.HTML(buf.String())}) //nolint:gosec // written by package chart, which escapes the names
	}
	return out
}

// others are the servers compared with the base, in report order, and
// their colours: the series of the version charts, a version in the same
// colour in each.
func (r *Report) others() ([]string, []color.Color) {
	var out []string
	var colors []color.Color
	for i, s := range r.Servers {
		if s != r.Base {
			out = append(out, s)
			colors = append(colors, chart.Color(i))
		}
	}
	return out, colors
}

// value is *p, or NaN when nil.
func value(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// overviewCharts is the rQPS of every workload and version, a bar per
// version beside a line at 1.0 (the base); none without a base or with
// only the base.
func (r *Report) overviewCharts() []chart.Bars {
	others, colors := r.others()
	if r.Base == "" || len(others) == 0 || len(r.Workloads) == 0 {
		return nil
	}
	one := 1.0
	b := chart.Bars{Title: names.Clean("Relative QPS by workload"), YLabel: names.Clean("QPS / QPS of " + r.Base), Series: names.CleanAll(others), Colors: colors, Ref: &one,
		Width: 600, Height: 280}
	b.Values = make([][]float64, len(others))
	for _, w := range r.Workloads {
		b.Groups = append(b.Groups, names.Clean(w.Name))
		for s, srv := range others {
			v := math.NaN()
			if ver := w.version(srv); ver != nil && ver.Missing == "" {
				v = value(ver.RQPS)
			}
			b.Values[s] = append(b.Values[s], v)
		}
	}
	return []chart.Bars{b}
}

// ratioMetrics are the per-op figures of the hardware table, as ratios to
// the base.
var ratioMetrics = []struct {
	name string
	of   func(*Relative) *float64
}{
	{"o/s", func(r *Relative) *float64 { return r.QPS }},
	{"cpu/o", func(r *Relative) *float64 { return r.CPUPerOp }},
	{"cs/o", func(r *Relative) *float64 { return r.CSPerOp }},
	{"r/o", func(r *Relative) *float64 { return r.ReadsPerOp }},
	{"rKB/o", func(r *Relative) *float64 { return r.ReadKBPerOp }},
	{"wKB/o", func(r *Relative) *float64 { return r.WriteKBPerOp }},
}

// workloadCharts are w's per-op ratios to the base (a group per figure,
// leaving out figures no version has a ratio for, such as r/o when
// nothing was read) and the change in cpu/o of each version split by
// subsystem (stacked, from the attribution of the profiles).
func (r *Report) workloadCharts(w *Workload) []chart.Bars {
	others, colors := r.others()
	if r.Base == "" || len(others) == 0 {
		return nil
	}
	var out []chart.Bars
	one := 1.0
	ratios := chart.Bars{Title: names.Clean(w.Name + ": per-op figures relative to " + r.Base), YLabel: "version / " + names.Clean(r.Base),
		Series: names.CleanAll(others), Colors: colors, Ref: &one, Values: make([][]float64, len(others)), Width: chartWidth, Height: chartHeight}
	for _, m := range ratioMetrics {
		row := make([]float64, len(others))
		any := false
		for s, srv := range others {
			row[s] = math.NaN()
			if v := w.version(srv); v != nil && v.Missing == "" && v.Relative != nil {
				row[s] = value(m.of(v.Relative))
				any = any || !math.IsNaN(row[s])
			}
		}
		if !any {
			continue
		}
		ratios.Groups = append(ratios.Groups, m.name)
		for s := range others {
			ratios.Values[s] = append(ratios.Values[s], row[s])
		}
	}
	if len(ratios.Groups) > 0 {
		out = append(out, ratios)
	}
	if parts := r.deltaBySubsystem(w); parts != nil {
		out = append(out, *parts)
	}
	return out
}

// chartWidth and chartHeight are a workload chart's size in points: two
// side by side in a window 1200 pixels wide.
const chartWidth, chartHeight = 420, 260

// deltaBySubsystem is the stacked chart of w's attributions: a bar per
// compared version, a part per subsystem that changed in one of them (in
// the map's order, then the order they first appear; a subsystem in the
// same colour in every workload); nil when no comparison has an
// attribution.
func (r *Report) deltaBySubsystem(w *Workload) *chart.Bars {
	var groups []string
	var atts []*Attribution
	for _, c := range w.Comparisons {
		if c.Attribution != nil {
			groups = append(groups, names.Clean(c.Server))
			atts = append(atts, c.Attribution)
		}
	}
	if len(atts) == 0 {
		return nil
	}
	var subs []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			subs = append(subs, s)
		}
	}
	changed := map[string]bool{}
	for _, a := range atts {
		for _, p := range a.Parts {
			if math.Round(p.DeltaMicrosPerOp*100) != 0 {
				changed[p.Subsystem] = true
			}
		}
	}
	if len(changed) == 0 {
		return nil
	}
	// The map's subsystems keep their place in the palette whether they
	// changed or not; the others follow.
	index := map[string]int{}
	for i, s := range r.subNames {
		index[s] = i
	}
	for _, s := range r.subNames {
		if changed[s] {
			add(s)
		}
	}
	for _, a := range atts {
		for _, p := range a.Parts {
			if changed[p.Subsystem] {
				if _, ok := index[p.Subsystem]; !ok {
					index[p.Subsystem] = len(index)
				}
				add(p.Subsystem)
			}
		}
	}
	colors := make([]color.Color, len(subs))
	for i, s := range subs {
		colors[i] = chart.Color(index[s])
	}
	b := chart.Bars{Title: names.Clean(fmt.Sprintf("%s: change in cpu/o from %s by subsystem", w.Name, r.Base)), YLabel: "µs/op", Stacked: true,
		Groups: groups, Series: names.CleanAll(subs), Colors: colors, Values: make([][]float64, len(subs)), Width: chartWidth, Height: chartHeight}
	for s, sub := range subs {
		b.Values[s] = make([]float64, len(atts))
		for g, a := range atts {
			for _, p := range a.Parts {
				if p.Subsystem == sub {
					b.Values[s][g] = p.DeltaMicrosPerOp
				}
			}
		}
	}
	return &b
}
