package benchreport

import (
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/flamediff/flamediff/internal/browsertest"
)

// TestChartsFigures checks that the charts show the report's own figures:
// the rQPS chart each version's rQPS (NaN where a version has no run), the
// ratio chart its per-op ratios, the stacked chart the attribution's parts,
// adding up to each version's change in cpu/o, without the subsystems
// that did not change.
func TestChartsFigures(t *testing.T) {
	runs := fixtureRuns()
	// 11.8 has no run under update-index.
	runs = slices.DeleteFunc(runs, func(r Run) bool { return r.Server == "11.8" && r.Workload == "update-index" })
	r := mustBuild(t, runs, fixtureOptions(t))

	others := []string{"10.5", "11.8"}
	ov := r.overviewCharts()
	if len(ov) != 1 {
		t.Fatalf("%d overview charts, want 1", len(ov))
	}
	q := ov[0]
	if !slices.Equal(q.Groups, fixtureWorkloads) || !slices.Equal(q.Series, others) || q.Ref == nil || *q.Ref != 1 {
		t.Fatalf("rQPS chart: groups %q series %q ref %v; want %q, %q, 1", q.Groups, q.Series, q.Ref, fixtureWorkloads, others)
	}
	for g, w := range r.Workloads {
		for s, srv := range others {
			got, v := q.Values[s][g], w.version(srv)
			switch {
			case v.Missing != "":
				if !math.IsNaN(got) {
					t.Errorf("rQPS chart %s %s = %v, want NaN (missing)", w.Name, srv, got)
				}
			case got != *v.RQPS:
				t.Errorf("rQPS chart %s %s = %v, want %v", w.Name, srv, got, *v.RQPS)
			}
		}
	}
	if w := r.Workloads[1]; w.version("11.8").Missing == "" {
		t.Fatalf("11.8 under %s is not missing", w.Name)
	}

	for _, w := range r.Workloads {
		charts := r.workloadCharts(w)
		if len(charts) != 2 {
			t.Fatalf("%s: %d charts, want ratios and subsystems", w.Name, len(charts))
		}
		ratios, parts := charts[0], charts[1]
		// The fixtures record no storage figures: only o/s and cpu/o
		// have ratios, as in the tables.
		if want := []string{"o/s", "cpu/o"}; !slices.Equal(ratios.Groups, want) {
			t.Errorf("%s ratio chart groups %q, want %q", w.Name, ratios.Groups, want)
		}
		for s, srv := range others {
			v := w.version(srv)
			for g, want := range []*float64{relOf(v, func(r *Relative) *float64 { return r.QPS }), relOf(v, func(r *Relative) *float64 { return r.CPUPerOp })} {
				got := ratios.Values[s][g]
				if want == nil && !math.IsNaN(got) || want != nil && got != *want {
					t.Errorf("%s ratio chart %s %s = %v, want %v", w.Name, srv, ratios.Groups[g], got, want)
				}
			}
		}
		if !parts.Stacked {
			t.Errorf("%s subsystem chart is not stacked", w.Name)
		}
		var compared []string
		for _, c := range w.Comparisons {
			compared = append(compared, c.Server)
		}
		if !slices.Equal(parts.Groups, compared) {
			t.Errorf("%s subsystem chart groups %q, want the compared versions %q", w.Name, parts.Groups, compared)
		}
		for g, c := range w.Comparisons {
			var sum float64
			for s := range parts.Series {
				sum += parts.Values[s][g]
			}
			if math.Abs(sum-c.Attribution.DeltaMicrosPerOp) > 0.005 {
				t.Errorf("%s %s: parts add up to %.2f µs/op, the attribution's change is %.2f", w.Name, c.Server, sum, c.Attribution.DeltaMicrosPerOp)
			}
			for _, p := range c.Attribution.Parts {
				i := slices.Index(parts.Series, p.Subsystem)
				if math.Round(p.DeltaMicrosPerOp*100) == 0 {
					continue
				}
				if i < 0 || parts.Values[i][g] != p.DeltaMicrosPerOp {
					t.Errorf("%s %s %s: chart has %v, attribution %v", w.Name, c.Server, p.Subsystem, parts.Values, p.DeltaMicrosPerOp)
				}
			}
		}
		for s, sub := range parts.Series {
			if !slices.ContainsFunc(parts.Values[s], func(v float64) bool { return math.Round(v*100) != 0 }) {
				t.Errorf("%s subsystem chart shows %s, which changed in no version", w.Name, sub)
			}
		}
	}
}

func relOf(v *Version, f func(*Relative) *float64) *float64 {
	if v.Missing != "" || v.Relative == nil {
		return nil
	}
	return f(v.Relative)
}

// TestChartsOneVersion checks that a report of the base alone draws no
// chart: there is nothing to compare.
func TestChartsOneVersion(t *testing.T) {
	var runs []Run
	for _, r := range fixtureRuns() {
		if r.Server == fixtureBase {
			runs = append(runs, r)
		}
	}
	opts := fixtureOptions(t)
	opts.Servers = []string{fixtureBase}
	r := mustBuild(t, runs, opts)
	if c := r.overviewCharts(); len(c) != 0 {
		t.Errorf("base alone: %d overview charts", len(c))
	}
	for _, w := range r.Workloads {
		if c := r.workloadCharts(w); len(c) != 0 {
			t.Errorf("base alone: %s has %d charts", w.Name, len(c))
		}
	}
}

// TestChartsInBrowser opens index.html in headless Chromium and checks what
// a reader sees: every chart drawn inline inside the page's width, no
// request leaving the machine, and the bars of the rQPS chart as tall as
// their figures say (heights in the ratio of the rQPS values). The
// screenshot is kept as a test artifact: go test ./benchreport -run
// ChartsInBrowser -artifacts -outputdir DIR.
func TestChartsInBrowser(t *testing.T) {
	ctx := browsertest.Start(t, 1280, 2400)
	opts := fixtureOptions(t)
	opts.SVG = true
	r := mustBuild(t, fixtureRuns(), opts)
	dir := t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	u := (&url.URL{Scheme: "file", Path: filepath.Join(dir, HTMLFile)}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(".charts svg"))); err != nil {
		t.Fatalf("open %s: %v", u, err)
	}

	want := len(r.overviewCharts())
	for _, w := range r.Workloads {
		want += len(r.workloadCharts(w))
	}
	type box struct{ X, Y, W, H float64 }
	boxes := browsertest.Eval[[]box](t, ctx, `[...document.querySelectorAll(".charts svg")].map(s => { const b = s.getBoundingClientRect(); return {X: b.x, Y: b.y, W: b.width, H: b.height}; })`)
	if len(boxes) != want || want != 5 {
		t.Fatalf("%d charts on the page, %d drawn by the report, want 5 (rQPS, and ratios and subsystems per workload)", len(boxes), want)
	}
	width := browsertest.Eval[float64](t, ctx, `document.documentElement.clientWidth`)
	for i, b := range boxes {
		if b.W < 200 || b.H < 100 || b.X < 0 || b.X+b.W > width {
			t.Errorf("chart %d at %+v: not drawn inside the page (%v px wide)", i, b, width)
		}
	}
	external := browsertest.Eval[[]string](t, ctx, `performance.getEntriesByType("resource").map(e => e.name).filter(n => !n.startsWith("file:"))`)
	if len(external) > 0 {
		t.Errorf("the page requested %q: charts must need no network", external)
	}

	// Bars of the rQPS chart: the filled paths of a version's colour, the
	// last one (rightmost) being its legend entry.
	q := r.overviewCharts()[0]
	for s, srv := range q.Series {
		cr, cg, cb, _ := q.Colors[s].RGBA()
		fill := fmt.Sprintf("fill:#%02X%02X%02X", cr>>8, cg>>8, cb>>8)
		heights := browsertest.Eval[[]float64](t, ctx, fmt.Sprintf(`(() => {
			const ps = [...document.querySelector(".charts svg").querySelectorAll("path")].filter(p => (p.getAttribute("style") || "").includes(%q));
			return ps.map(p => p.getBoundingClientRect()).sort((a, b) => a.x - b.x).slice(0, -1).map(b => b.height);
		})()`, fill))
		if len(heights) != len(q.Groups) {
			t.Fatalf("%s: %d bars of %s in the rQPS chart, want %d", srv, len(heights), fill, len(q.Groups))
		}
		for g := 1; g < len(heights); g++ {
			got, wantRatio := heights[g]/heights[0], q.Values[s][g]/q.Values[s][0]
			if math.Abs(got/wantRatio-1) > 0.02 {
				t.Errorf("%s: bar heights %v in ratio %.3f, rQPS %v in ratio %.3f", srv, heights, got, []float64{q.Values[s][0], q.Values[s][g]}, wantRatio)
			}
		}
	}
	texts := browsertest.Eval[string](t, ctx, `[...document.querySelectorAll(".charts svg")].map(s => s.textContent).join("\n")`)
	for _, w := range fixtureWorkloads {
		if !strings.Contains(texts, w) {
			t.Errorf("no chart names workload %s", w)
		}
	}
	browsertest.Shot(t, ctx, "bench-report-charts.png")
}
