package benchreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/report"
)

// synthSeries is a series of len(levels) versions, each with repeats
// values level × (1 + noise × a standard normal draw), from a fixed seed.
func synthSeries(levels []float64, repeats int, noise float64, rng *rand.Rand) [][]float64 {
	out := make([][]float64, len(levels))
	for i, l := range levels {
		for range repeats {
			out[i] = append(out[i], l*(1+noise*rng.NormFloat64()))
		}
	}
	return out
}

func versionNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("v%d", i)
	}
	return out
}

// pooledMedian is the median of the repeats of versions [from, to),
// computed here, not by the code under test.
func pooledMedian(values [][]float64, from, to int) float64 {
	var all []float64
	for _, v := range values[from:to] {
		all = append(all, v...)
	}
	slices.Sort(all)
	n := len(all)
	if n%2 == 1 {
		return all[n/2]
	}
	return (all[n/2-1] + all[n/2]) / 2
}

// patternSeries is a series of len(levels) versions, 4 repeats each: the
// level times 1 + (-1.2%, -0.4%, +0.4%, +1.2%) (a standard deviation of
// about 1%), the pattern rotated by one from version to version, so that
// the repeats differ from version to version but every version's mean is
// its level.
func patternSeries(levels []float64) [][]float64 {
	pattern := []float64{-0.012, -0.004, 0.004, 0.012}
	out := make([][]float64, len(levels))
	for i, l := range levels {
		for k := range pattern {
			out[i] = append(out[i], l*(1+pattern[(k+i)%len(pattern)]))
		}
	}
	return out
}

// TestFindSteps: synthetic series of 5 versions × 4 repeats with about 1%
// noise and a known shape; the steps found are the ones planted, with the
// size planted. (Random noise: TestFindStepsAARate.)
func TestFindSteps(t *testing.T) {
	type want struct {
		at, from  int // the step's version, the first of its before group
		direction string
	}
	tests := []struct {
		name   string
		levels []float64
		want   []want
	}{
		{"step up at 3", []float64{100, 100, 100, 130, 130}, []want{{3, 0, stepUp}}},
		{"no step (A/A)", []float64{100, 100, 100, 100, 100}, nil},
		{"spike at 2 that goes back", []float64{100, 100, 130, 100, 100}, nil},
		{"dip at 1 that goes back", []float64{100, 75, 100, 100, 100}, nil},
		{"step down at 2", []float64{100, 100, 75, 75, 75}, []want{{2, 0, stepDown}}},
		{"step at the first version after the first", []float64{100, 130, 130, 130, 130}, []want{{1, 0, stepUp}}},
		{"step at the last version", []float64{100, 100, 100, 100, 130}, []want{{4, 0, stepUp}}},
		{"two steps up", []float64{100, 120, 120, 144, 144}, []want{{1, 0, stepUp}, {3, 1, stepUp}}},
		{"up, then down below the start for good", []float64{100, 130, 130, 60, 60}, []want{{3, 0, stepDown}}},
		{"up and back: nothing stays", []float64{100, 130, 130, 100, 100}, nil},
		{"steady drift of 5% a version", []float64{100, 105, 110, 115, 120}, []want{{2, 0, stepUp}, {3, 2, stepUp}, {4, 3, stepUp}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			values := patternSeries(tt.levels)
			f := newSeriesFigure("o/s", "qps", values, report.F2)
			servers := versionNames(len(tt.levels))
			fams := findSteps([]*SeriesFigure{f}, servers, diff.DefaultAlpha, "figures")
			if len(fams) == 0 || fams[0].Tests != len(tt.levels)-1 {
				t.Errorf("families %+v, want the first of %d splits", fams, len(tt.levels)-1)
			}
			if len(f.Steps) != len(tt.want) {
				t.Fatalf("levels %v: %d steps %+v, want %d", tt.levels, len(f.Steps), f.Steps, len(tt.want))
			}
			if len(tt.want) == 0 {
				if f.ChangePoint != nil {
					t.Errorf("change point %+v without a step", f.ChangePoint)
				}
				return
			}
			if f.ChangePoint != f.Steps[0] {
				t.Errorf("change point %+v is not the first step %+v", f.ChangePoint, f.Steps[0])
			}
			for k, w := range tt.want {
				st := f.Steps[k]
				if st.Server != servers[w.at] || st.Previous != servers[w.at-1] || st.From != servers[w.from] || st.Direction != w.direction || st.Stage != k+1 {
					t.Errorf("step %d = %s from %s (previous %s), %s, stage %d; want %s from %s (previous %s), %s, stage %d",
						k+1, st.Server, st.From, st.Previous, st.Direction, st.Stage, servers[w.at], servers[w.from], servers[w.at-1], w.direction, k+1)
				}
				// The step's size, against the planted levels and
				// recomputed from the values.
				// A later step's versions are in this one's after group.
				wantRatio := pooledMedian(values, w.at, len(tt.levels)) / pooledMedian(values, w.from, w.at)
				if st.Ratio == nil || math.Abs(*st.Ratio-wantRatio) > 1e-12 {
					t.Errorf("step %d ratio %v, want %v", k+1, st.Ratio, wantRatio)
				}
				if k == len(tt.want)-1 {
					planted := tt.levels[w.at] / tt.levels[w.at-1]
					if st.Ratio != nil && math.Abs(*st.Ratio/planted-1) > 0.02 {
						t.Errorf("last step ratio %v, planted %v", *st.Ratio, planted)
					}
				}
				if st.Test == nil || !st.Test.Significant || st.Test.Family != fams[k].Tests {
					t.Errorf("step %d test %+v, want significant in a family of %d", k+1, st.Test, fams[k].Tests)
				}
			}
		})
	}
}

// TestFindStepsFamily: the splits of every figure of a table are judged
// together; a figure measured in fewer than three versions has no splits.
func TestFindStepsFamily(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 100))
	a := newSeriesFigure("o/s", "qps", synthSeries([]float64{100, 100, 130, 130}, 3, 0.01, rng), report.F2)
	b := newSeriesFigure("cpu/o µs", "cpu_us_per_op", synthSeries([]float64{50, 50, 50, 50}, 3, 0.01, rng), report.F2)
	short := synthSeries([]float64{1, 1, 2, 2}, 3, 0.01, rng)
	short[0], short[1] = nil, nil
	c := newSeriesFigure("cs/o", "cs_per_op", short, report.F3)
	fams := findSteps([]*SeriesFigure{a, b, c}, versionNames(4), diff.DefaultAlpha, "figures")
	if len(fams) < 1 || fams[0].Tests != 6 {
		t.Fatalf("families %+v, want the first of 6 splits (3 per figure of four versions, none for the one of two)", fams)
	}
	if a.ChangePoint == nil || a.ChangePoint.Server != "v2" || a.ChangePoint.Test.Family != 6 {
		t.Errorf("o/s change point %+v, want v2 judged in a family of 6", a.ChangePoint)
	}
	if b.ChangePoint != nil || c.ChangePoint != nil {
		t.Errorf("change points %+v, %+v on a flat series and one of two versions", b.ChangePoint, c.ChangePoint)
	}
}

// TestFindStepsAARate: over 400 simulated A/A series (5 versions × 3
// repeats, 2% noise, two figures judged together), the rule marks a step
// in at most 5% of them (the family's α); and it finds a 10% step in
// most (the log has how often, and how often a 4% step).
func TestFindStepsAARate(t *testing.T) {
	const runs = 400
	rng := rand.New(rand.NewPCG(18, 18))
	count := func(levels []float64) (marked int) {
		for range runs {
			figs := []*SeriesFigure{
				newSeriesFigure("o/s", "qps", synthSeries(levels, 3, 0.02, rng), report.F2),
				newSeriesFigure("cpu/o µs", "cpu_us_per_op", synthSeries([]float64{50, 50, 50, 50, 50}, 3, 0.02, rng), report.F2),
			}
			findSteps(figs, versionNames(5), diff.DefaultAlpha, "figures")
			if figs[0].ChangePoint != nil || figs[1].ChangePoint != nil {
				marked++
			}
		}
		return marked
	}
	aa := count([]float64{100, 100, 100, 100, 100})
	step := count([]float64{100, 100, 110, 110, 110})
	small := count([]float64{100, 100, 104, 104, 104})
	t.Logf("A/A: %d of %d series marked; 10%% step at v2: %d; 4%% step: %d", aa, runs, step, small)
	if aa > runs*5/100 {
		t.Errorf("A/A: %d of %d series marked, want at most 5%%", aa, runs)
	}
	if step < runs*80/100 {
		t.Errorf("10%% step with 2%% noise: found in %d of %d series, want at least 80%%", step, runs)
	}
}

// seriesRuns are point-select on versions 1.0 to 1.4, four repeats each:
// the unprofiled windows are 10.11's run.json with QPS and operations
// scaled by level[v] × (1 + 1% noise) and CPU by (1 + 1% noise), so that
// QPS steps by level and every per-op count by its inverse; the profiled
// windows are 10.11's fixture for 1.0–1.2 and 11.8's for 1.3–1.4, so
// that the profile steps at 1.3 too.
func seriesRuns(t *testing.T, servers []string, levels []float64, repeats int) ([]Run, [][]float64) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(18, 2))
	src := fixtureDir("10.11", "point-select")
	qps0 := rawMeta(t, src)["qps"]
	var runs []Run
	qps := make([][]float64, len(servers))
	for i, s := range servers {
		profiled := fixtureDir("10.11", "point-select")
		if i >= 3 {
			profiled = fixtureDir("11.8", "point-select")
		}
		for k := range repeats {
			qf := levels[i] * (1 + 0.01*rng.NormFloat64())
			cf := 1 + 0.01*rng.NormFloat64()
			m := filepath.Join(dir, fmt.Sprintf("measure-%s-%d", s, k+1))
			measureRun(t, src, m, qf, cf, []float64{990, 1000, 1010, 1000})
			runs = append(runs, Run{Server: s, Workload: "point-select", Repeat: k + 1, Dir: profiled, MeasureDir: m})
			qps[i] = append(qps[i], qps0*qf)
		}
	}
	return runs, qps
}

// TestSeriesReport: a series with a known step of +30% in QPS at 1.3
// (-23% in every per-op count) through Build and WriteFiles: marked at
// 1.3 and nowhere else, its size the planted one, the step's flame graph
// drawn and linked; the section is golden.
func TestSeriesReport(t *testing.T) {
	servers := []string{"1.0", "1.1", "1.2", "1.3", "1.4"}
	runs, qps := seriesRuns(t, servers, []float64{1, 1, 1, 1.3, 1.3}, 4)
	r := mustBuild(t, runs, Options{Base: "1.0", Servers: servers, Map: loadMariaDBMap(t), SVG: true})
	w := r.Workloads[0]
	s := w.Series
	if s == nil || !s.Tested || !slices.Equal(s.Servers, servers) {
		t.Fatalf("series %+v, want tested over %v", s, servers)
	}
	byName := map[string]*SeriesFigure{}
	for _, f := range s.Figures {
		byName[f.Name] = f
	}
	ops, cpu := byName["o/s"], byName["cpu/o µs"]
	if ops == nil || cpu == nil {
		t.Fatalf("figures %v lack o/s or cpu/o", s.Figures)
	}
	wantRatio := pooledMedian(qps, 3, 5) / pooledMedian(qps, 0, 3)
	for _, c := range []struct {
		f         *SeriesFigure
		direction string
	}{{ops, stepUp}, {cpu, stepDown}} {
		cp := c.f.ChangePoint
		if cp == nil || len(c.f.Steps) != 1 {
			t.Fatalf("%s: steps %+v, want one at 1.3", c.f.Name, c.f.Steps)
		}
		if cp.Server != "1.3" || cp.Previous != "1.2" || cp.From != "1.0" || cp.Direction != c.direction || !cp.Test.Significant {
			t.Errorf("%s change point %+v, want 1.3 from 1.0 (previous 1.2), %s, significant", c.f.Name, cp, c.direction)
		}
		if got, want := cp.Graph, "svg/point-select/1.2-vs-1.3.svg"; got != want {
			t.Errorf("%s step graph %q, want %q", c.f.Name, got, want)
		}
	}
	if r := *ops.ChangePoint.Ratio; math.Abs(r-wantRatio) > 1e-9 || math.Abs(r/1.3-1) > 0.02 {
		t.Errorf("o/s step ratio %v, want %v (the QPS given), about 1.30", r, wantRatio)
	}
	if r := *cpu.ChangePoint.Ratio; math.Abs(r*1.3-1) > 0.03 {
		t.Errorf("cpu/o step ratio %v, want about 1/1.3", r)
	}
	// The profile steps at 1.3 (10.11's profile, then 11.8's): network's
	// µs/op is 22.12 before and 41.39 after (report.md of the fixtures).
	for _, f := range s.Subsystems {
		for _, st := range f.Steps {
			if st.Server != "1.3" {
				t.Errorf("subsystem %s steps at %s, want only at 1.3 where the profile changes", f.Name, st.Server)
			}
		}
		if f.Name == "network" && (f.ChangePoint == nil || f.ChangePoint.Direction != stepUp) {
			t.Errorf("network: change point %+v, want up at 1.3", f.ChangePoint)
		}
	}
	dir := t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	graph := filepath.Join(dir, "svg", "point-select", "1.2-vs-1.3.svg")
	data, err := os.ReadFile(graph)
	if err != nil {
		t.Fatalf("step graph: %v", err)
	}
	if err := wellFormed(data); err != nil {
		t.Errorf("step graph is not well-formed: %v", err)
	}
	html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(html, []byte(`<a href="svg/point-select/1.2-vs-1.3.svg">1.3 ▲ step`)) {
		t.Error("index.html's series section does not link the step's graph")
	}
	md := markdown(t, r)
	for _, want := range []string{"1.2-vs-1.3.svg", "| o/s |", "▲ step +", "▼ step -"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Workloads []struct {
			Series struct {
				Figures []struct {
					Name        string
					ChangePoint *struct {
						Server, Direction string
						Ratio             float64
						Test              struct {
							WelchP float64 `json:"welch_p"`
						}
					} `json:"change_point"`
				}
			}
		}
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if f := back.Workloads[0].Series.Figures[0]; f.Name != "o/s" || f.ChangePoint == nil || f.ChangePoint.Server != "1.3" || f.ChangePoint.Direction != stepUp || f.ChangePoint.Ratio != *ops.ChangePoint.Ratio {
		t.Errorf("report.json series figure 0 = %+v, want o/s with its change point at 1.3, up", f)
	}
	var sec bytes.Buffer
	for _, s := range cleanSections(r.seriesSections(w)) {
		report.WriteMarkdownSection(&sec, &s, report.MarkdownOptions{Heading: "###", EscapeText: true})
	}
	golden(t, "series.md", sec.Bytes())
	for name, write := range map[string]func(*bytes.Buffer) error{
		"rqps.txt": func(b *bytes.Buffer) error { return r.WriteRQPSText(b) },
		"rqps.csv": func(b *bytes.Buffer) error { return r.WriteRQPSCSV(b) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		golden(t, "series-"+name, b.Bytes())
		onDisk, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(onDisk, b.Bytes()) {
			t.Errorf("%s on disk differs from what the writer writes (%v)", name, err)
		}
	}
}

// TestSeriesNone: two versions make no series; one repeat per cell makes
// one without tests, and the report says why nothing is marked.
func TestSeriesNone(t *testing.T) {
	runs, _ := seriesRuns(t, []string{"1.0", "1.1"}, []float64{1, 1.3}, 3)
	r := mustBuild(t, runs, Options{Servers: []string{"1.0", "1.1"}})
	if s := r.Workloads[0].Series; s != nil {
		t.Errorf("two versions: series %+v, want none", s)
	}
	if md := markdown(t, r); strings.Contains(md, "Version series") {
		t.Error("two versions: report.md has a version series")
	}
	servers := []string{"1.0", "1.1", "1.2", "1.3", "1.4"}
	runs, _ = seriesRuns(t, servers, []float64{1, 1, 1, 2, 2}, 1)
	r = mustBuild(t, runs, Options{Servers: servers})
	s := r.Workloads[0].Series
	if s == nil || s.Tested || len(s.Families) != 0 {
		t.Fatalf("one repeat: series %+v, want one, not tested", s)
	}
	for _, f := range s.Figures {
		if len(f.Steps) != 0 {
			t.Errorf("one repeat: %s has steps %+v", f.Name, f.Steps)
		}
	}
	if md := markdown(t, r); !strings.Contains(md, "One run per cell: no test of significance, so no step is marked") {
		t.Error("one repeat: report.md does not say why no step is marked")
	}
}

// TestSeriesKinds: a series across MariaDB and MySQL (run.json
// server_version) says it is no release order.
func TestSeriesKinds(t *testing.T) {
	dir := t.TempDir()
	mysql := filepath.Join(dir, "mysql")
	copyRun(t, fixtureDir("11.8", "point-select"), mysql, func(m map[string]any) { m["server_version"] = "9.7.4" }, nil)
	runs := []Run{
		{Server: "10.5", Workload: "w", Dir: fixtureDir("10.5", "point-select")},
		{Server: "10.11", Workload: "w", Dir: fixtureDir("10.11", "point-select")},
		{Server: "9.7", Workload: "w", Dir: mysql},
	}
	r := mustBuild(t, runs, Options{})
	want := "The series runs across server kinds (MariaDB: 10.5, 10.11; MySQL: 9.7)"
	if s := r.Workloads[0].Series; s == nil || !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
		t.Errorf("series %+v: notes lack %q", s, want)
	}
	runs[2].Dir = fixtureDir("11.8", "point-select")
	r = mustBuild(t, runs, Options{})
	if s := r.Workloads[0].Series; s == nil || slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "server kinds") }) {
		t.Errorf("MariaDB only: series %+v, want one without a note about kinds", s)
	}
}
