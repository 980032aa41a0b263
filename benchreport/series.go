package benchreport

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/report"
	"github.com/flamediff/flamediff/symbolmap"
)

// Version series. The servers of a report are in the config's order, which
// the lab takes as release order; with three or more versions with
// figures, every figure of a workload is also a series over them, and the
// report marks where it stepped beyond the noise. The rule (docs/lab.md):
//
// For a figure whose series has n ≥ seriesMinVersions versions v_0 … v_{n-1},
// each with its repeats (every version of the series needs at least two),
// and a segment starting at s (0 at first), every split k in s+1 … n-1 is
// tested: the repeats of v_s … v_{k-1} pooled (before) against those of
// v_k … v_{n-1} pooled (after), by diff.Compare (Welch's t-test and the
// permutation test). The splits of every figure of one table are judged
// together (diff.Family). Split k is a step when its test is significant
// and the series has the shape of a step there: with m the midpoint
// between the before and after means, every version from v_k on has its
// median on the after side of m (the new level stays), and every version
// of the segment before v_k on the before side (the old level held until
// then: a transient spike is no step). The first such k is the figure's
// change point. Later steps: the same rule on the segment from the step
// on (s = k), its splits judged as a family of their own (every figure's
// splits of that stage), until no figure steps again.
const seriesMinVersions = 3

// Step directions (Step.Direction).
const (
	stepUp   = "up"
	stepDown = "down"
)

// Series is a workload's figures as series over its versions in the
// report's server order (the config's, taken as release order); nil when
// fewer than three versions have figures.
type Series struct {
	// Servers are the versions of the series: those with figures, in
	// Report.Servers order.
	Servers []string `json:"servers"`
	// Tested says whether steps were looked for: every version of the
	// series has at least two repeats. Note says why not, or what the
	// series leaves out.
	Tested bool     `json:"tested"`
	Notes  []string `json:"notes,omitempty"`
	// Figures are the series of the throughput and per-op figures (o/s,
	// cpu/o, cs/o, r/o, rKB/o, wKB/o; those the runs measured), judged as
	// one family; Subsystems the series of each subsystem's µs/op in the
	// profiled windows (a map with subsystems), judged as another.
	Figures    []*SeriesFigure `json:"figures"`
	Subsystems []*SeriesFigure `json:"subsystems,omitempty"`
	// OffCPU are the series of the off-CPU figures per operation of the
	// profiled windows (cs/op, vol and invol cs/op, off-CPU µs/op), judged
	// as a third family; nil without off-CPU profiles (offcpu.go).
	OffCPU []*SeriesFigure `json:"off_cpu,omitempty"`
	// Families are the families the splits were judged in, one per table
	// and stage.
	Families []SeriesFamily `json:"families,omitempty"`
}

// SeriesFamily is one family of splits judged together (diff.Family):
// Table is "figures", "subsystems" or "off_cpu", Stage 1 for the change points, Tests
// how many splits, Level the cutoff they came to.
type SeriesFamily struct {
	Table string  `json:"table"`
	Stage int     `json:"stage"`
	Tests int     `json:"tests"`
	Level float64 `json:"level"`
}

// SeriesFigure is one figure's series.
type SeriesFigure struct {
	// Name is the figure as the tables head it ("o/s", "cpu/o µs") or the
	// subsystem; Key the version's report.json field it comes from
	// ("qps", "cpu_us_per_op", …; "subsystem_us_per_op" for a subsystem).
	Name string `json:"name"`
	Key  string `json:"key"`
	// Medians has one entry per Series.Servers: the median over the
	// version's repeats, null where the version did not measure it.
	Medians []*float64 `json:"medians"`
	// ChangePoint is the first step, nil when the figure did not step
	// beyond the noise (or was not tested); Steps every step found, in
	// order, the change point first.
	ChangePoint *Step   `json:"change_point,omitempty"`
	Steps       []*Step `json:"steps,omitempty"`

	// values are the repeats per Series.Servers, nil where not measured.
	values [][]float64
	format func(float64) string
}

// Step is where a figure's series stepped beyond the noise and stayed.
type Step struct {
	// Server is the first version on the new level; Previous the version
	// before it in the series (the differential flame graph of the step
	// is Previous → Server); From the first version of the before group
	// (the series' first, or the previous step's version).
	Server   string `json:"server"`
	Previous string `json:"previous"`
	From     string `json:"from"`
	// Direction is "up" or "down"; Before and After are the medians of
	// the pooled repeats of the two groups, Ratio After over Before (nil
	// when Before is 0).
	Direction string   `json:"direction"`
	Before    float64  `json:"before"`
	After     float64  `json:"after"`
	Ratio     *float64 `json:"ratio,omitempty"`
	// Test compares the pooled repeats of the two groups; its family is
	// every split of the table's figures at this stage.
	Test *Test `json:"test"`
	// Stage is 1 for the change point, 2 for the step found after it, …
	Stage int `json:"stage"`
	// Graph is the differential flame graph of the step
	// (DiffGraphPath(workload, Previous, Server)), when the report draws
	// flame graphs and both versions have a profile.
	Graph string `json:"graph,omitempty"`
}

// mark is the step's mark in the tables: "▲ step +30.0%".
func (s *Step) mark() string {
	arrow := "▲"
	if s.Direction == stepDown {
		arrow = "▼"
	}
	m := arrow + " step"
	if s.Ratio != nil {
		m += fmt.Sprintf(" %+.1f%%", 100*(*s.Ratio-1))
	}
	return m
}

// split is one tested split of a figure's series.
type split struct {
	fig        *SeriesFigure
	start, k   int // positions in pos
	pos        []int
	sig        *diff.Significance
	meanB      float64
	meanA      float64
	medB, medA float64
}

// present is the positions of the versions that measured the figure.
func (f *SeriesFigure) present() []int {
	var pos []int
	for i, v := range f.values {
		if len(v) > 0 {
			pos = append(pos, i)
		}
	}
	return pos
}

func pooled(values [][]float64, pos []int) []float64 {
	var out []float64
	for _, i := range pos {
		out = append(out, values[i]...)
	}
	return out
}

// findSteps applies the rule above to the figures of one table, the
// versions named servers; it sets their Steps and ChangePoint and returns
// the families it judged.
func findSteps(figs []*SeriesFigure, servers []string, alpha float64, table string) []SeriesFamily {
	var fams []SeriesFamily
	start := make([]int, len(figs))
	for i, f := range figs {
		if len(f.present()) < seriesMinVersions {
			start[i] = -1
		}
	}
	for stage := 1; ; stage++ {
		var splits []*split
		for i, f := range figs {
			if start[i] < 0 {
				continue
			}
			pos := f.present()
			for k := start[i] + 1; k < len(pos); k++ {
				b, a := pooled(f.values, pos[start[i]:k]), pooled(f.values, pos[k:])
				s := diff.Compare(b, a, alpha)
				sb, sa := diff.SampleOf(b), diff.SampleOf(a)
				splits = append(splits, &split{fig: f, start: start[i], k: k, pos: pos, sig: &s, meanB: sb.Mean, meanA: sa.Mean, medB: sb.Median, medA: sa.Median})
			}
		}
		if len(splits) == 0 {
			return fams
		}
		sigs := make([]*diff.Significance, len(splits))
		for i, s := range splits {
			sigs[i] = s.sig
		}
		diff.Family(sigs, alpha)
		fams = append(fams, SeriesFamily{Table: table, Stage: stage, Tests: len(sigs), Level: sigs[0].Level})
		found := false
		for i, f := range figs {
			if start[i] < 0 {
				continue
			}
			var step *split
			for _, s := range splits {
				if s.fig == f && s.sig.Significant && s.stepShaped() {
					step = s
					break
				}
			}
			if step == nil {
				start[i] = -1
				continue
			}
			found = true
			st := &Step{Server: servers[step.pos[step.k]], Previous: servers[step.pos[step.k-1]], From: servers[step.pos[step.start]],
				Direction: stepUp, Before: step.medB, After: step.medA, Test: testOf(*step.sig), Stage: stage}
			if step.meanA < step.meanB {
				st.Direction = stepDown
			}
			if step.medB != 0 {
				r := step.medA / step.medB
				st.Ratio = &r
			}
			f.Steps = append(f.Steps, st)
			if f.ChangePoint == nil {
				f.ChangePoint = st
			}
			start[i] = step.k
			if len(step.pos)-step.k < 2 {
				start[i] = -1
			}
		}
		if !found {
			return fams
		}
	}
}

// stepShaped says whether the series has a step's shape at the split:
// every version of the segment before it on the before side of the
// midpoint between the two groups' means, every one from it on the after
// side (medians).
func (s *split) stepShaped() bool {
	d := s.meanA - s.meanB
	if d == 0 || math.IsNaN(d) {
		return false
	}
	mid := (s.meanA + s.meanB) / 2
	for j := s.start; j < len(s.pos); j++ {
		m := diff.SampleOf(s.fig.values[s.pos[j]]).Median
		side := (m - mid) * d // > 0: after side
		if j < s.k && side >= 0 || j >= s.k && side <= 0 {
			return false
		}
	}
	return true
}

// seriesFigureSpecs are the throughput and per-op figures a series shows.
var seriesFigureSpecs = []struct {
	name, key string
	get       func(*Version) *Figure
	format    func(float64) string
}{
	{"o/s", "qps", func(v *Version) *Figure { return v.QPS }, report.F2},
	{"cpu/o µs", "cpu_us_per_op", func(v *Version) *Figure { return v.CPUPerOp }, report.F2},
	{"cs/o", "cs_per_op", func(v *Version) *Figure { return v.CSPerOp }, report.F3},
	{"r/o", "reads_per_op", func(v *Version) *Figure { return v.ReadsPerOp }, report.F3},
	{"rKB/o", "read_kb_per_op", func(v *Version) *Figure { return v.ReadKBPerOp }, report.F3},
	{"wKB/o", "write_kb_per_op", func(v *Version) *Figure { return v.WriteKBPerOp }, report.F3},
}

// newSeriesFigure makes a figure's series from its repeats per version
// (nil: not measured), or nil when no version measured it.
func newSeriesFigure(name, key string, values [][]float64, format func(float64) string) *SeriesFigure {
	f := &SeriesFigure{Name: name, Key: key, values: values, format: format, Medians: make([]*float64, len(values))}
	measured := false
	for i, v := range values {
		if len(v) > 0 {
			m := diff.SampleOf(v).Median
			f.Medians[i] = &m
			measured = true
		}
	}
	if !measured {
		return nil
	}
	return f
}

// computeSeries makes the workload's series and finds their steps, when
// three or more of its versions have figures. Subsystem series come from
// each profiled repeat (its subsystem share times its own cpu/o), as the
// attribution's parts.
func computeSeries(rep *Report, w *Workload, runsOf map[string][]*loaded, m *symbolmap.Map) {
	var vs []*Version
	var left []string
	for _, v := range w.Versions {
		if v.Missing == "" {
			vs = append(vs, v)
		} else {
			left = append(left, v.Server)
		}
	}
	if len(vs) < seriesMinVersions {
		return
	}
	s := &Series{Servers: []string{}, Figures: []*SeriesFigure{}, Tested: true}
	var few []string
	for _, v := range vs {
		s.Servers = append(s.Servers, v.Server)
		if v.Repeats < 2 {
			few = append(few, v.Server)
		}
	}
	for _, sp := range seriesFigureSpecs {
		values := make([][]float64, len(vs))
		for i, v := range vs {
			if f := sp.get(v); f != nil {
				values[i] = f.Values
			}
		}
		if f := newSeriesFigure(sp.name, sp.key, values, sp.format); f != nil {
			s.Figures = append(s.Figures, f)
		}
	}
	if m.HasSubsystems() {
		s.Subsystems = subsystemSeries(vs, runsOf, m)
	}
	s.OffCPU = offCPUSeries(vs)
	if len(left) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("Left out of the series (no usable run): %s.", strings.Join(left, ", ")))
	}
	if n := kindsNote(vs, runsOf); n != "" {
		s.Notes = append(s.Notes, n)
	}
	switch {
	case len(few) == len(vs):
		s.Tested = false
		s.Notes = append(s.Notes, "One run per cell: no test of significance, so no step is marked; run more repeats (bench --repeat 3) to find where a figure steps.")
	case len(few) > 0:
		s.Tested = false
		s.Notes = append(s.Notes, fmt.Sprintf("Fewer than two repeats for %s: no test of significance, so no step is marked.", strings.Join(few, ", ")))
	}
	if s.Tested {
		s.Families = append(findSteps(s.Figures, s.Servers, rep.Alpha, "figures"), findSteps(s.Subsystems, s.Servers, rep.Alpha, "subsystems")...)
		s.Families = append(s.Families, findSteps(s.OffCPU, s.Servers, rep.Alpha, seriesOffCPU)...)
		if rep.svg {
			offCPUStepGraphs(w, s.OffCPU)
			for _, f := range slices.Concat(s.Figures, s.Subsystems) {
				for _, st := range f.Steps {
					if w.merged[st.Previous] != nil && w.merged[st.Server] != nil {
						st.Graph = DiffGraphPath(w.Name, st.Previous, st.Server)
					}
				}
			}
		}
	}
	w.Series = s
}

// subsystemSeries are the series of each subsystem's µs/op over the
// profiled repeats of the versions vs, in the map's order (then any other
// subsystem a stack was put in, sorted).
func subsystemSeries(vs []*Version, runsOf map[string][]*loaded, m *symbolmap.Map) []*SeriesFigure {
	known := m.Subsystems()
	var extra []string
	per := map[string][][]float64{}
	for i, v := range vs {
		for ri, l := range runsOf[v.Server] {
			for _, sh := range diff.Subsystems(l.p, m.Subsystem, known) {
				if !slices.Contains(known, sh.Name) && !slices.Contains(extra, sh.Name) {
					extra = append(extra, sh.Name)
				}
				if per[sh.Name] == nil {
					per[sh.Name] = make([][]float64, len(vs))
				}
				col := per[sh.Name]
				for len(col[i]) < ri {
					col[i] = append(col[i], 0) // absent from an earlier repeat
				}
				col[i] = append(col[i], sh.MicrosPerOp)
			}
		}
	}
	slices.Sort(extra)
	var out []*SeriesFigure
	for _, n := range slices.Concat(known, extra) {
		col := per[n]
		if col == nil {
			continue
		}
		for i, v := range vs {
			for len(col[i]) < len(runsOf[v.Server]) {
				col[i] = append(col[i], 0)
			}
		}
		if f := newSeriesFigure(n, "subsystem_us_per_op", col, report.F2); f != nil {
			out = append(out, f)
		}
	}
	return out
}

// seriesSections are the workload's series tables: its figures, then its
// subsystems'; none without a series.
func (r *Report) seriesSections(w *Workload) []report.Section {
	s := w.Series
	if s == nil {
		return nil
	}
	out := []report.Section{r.seriesSection(w, s.Figures, "figures",
		"Version series: "+strings.Join(s.Servers, " → "))}
	if len(s.Subsystems) > 0 {
		out = append(out, r.seriesSection(w, s.Subsystems, "subsystems",
			"Version series by subsystem (µs/op, profiled windows)"))
	}
	if len(s.OffCPU) > 0 {
		out = append(out, r.seriesSection(w, s.OffCPU, seriesOffCPU,
			"Version series off-CPU (per operation, profiled windows)"))
	}
	return out
}

func (r *Report) seriesSection(w *Workload, figs []*SeriesFigure, table, title string) report.Section {
	s := w.Series
	sec := report.Section{Title: title, Columns: []report.Column{report.TextColumn("figure")}}
	if table == "subsystems" {
		sec.Columns[0] = report.TextColumn("subsystem")
	}
	for _, srv := range s.Servers {
		sec.Columns = append(sec.Columns, report.NumColumn(r.serverHead(w, srv)))
	}
	sec.Columns = append(sec.Columns, report.TextColumn("change point"))
	var graphs []string
	hidden := 0
	for _, f := range figs {
		if table == "subsystems" && !slices.ContainsFunc(f.Medians, func(m *float64) bool { return m != nil && report.F2(*m) != report.F2(0) }) {
			hidden++
			continue
		}
		row := []report.Cell{txt(f.Name)}
		for i, srv := range s.Servers {
			c := "-"
			if m := f.Medians[i]; m != nil {
				c = f.format(*m)
			}
			for _, st := range f.Steps {
				if st.Server == srv {
					c += " " + st.mark()
				}
			}
			row = append(row, txt(c))
		}
		cp := txt("-")
		switch {
		case !s.Tested:
		case len(f.Steps) == 0:
			cp = txt("none")
		default:
			var parts []string
			for _, st := range f.Steps {
				parts = append(parts, fmt.Sprintf("%s %s (from %s, p %s/%s)", st.Server, st.mark(), st.Previous, fmtP(st.Test.WelchP), fmtP(st.Test.PermutationP)))
				if st.Graph != "" && !slices.Contains(graphs, st.Graph) {
					graphs = append(graphs, st.Graph)
				}
			}
			cp = txt(strings.Join(parts, "; "))
			cp.Href = f.ChangePoint.Graph
		}
		row = append(row, cp)
		sec.Rows = append(sec.Rows, row)
	}
	switch table {
	case "figures":
		sec.Notes = append(sec.Notes, "Each figure over the versions in the config's order, taken as release order: medians over the repeats (the throughput and cost table's).")
	case seriesOffCPU:
		sec.Notes = append(sec.Notes, "Each off-CPU figure per operation of the profiled windows (the off-CPU table's), medians over the repeats with an off-CPU profile; a version without one is \"-\".")
	default:
		sec.Notes = append(sec.Notes, "Each subsystem's CPU µs per operation in the profiled windows (its share of each repeat's profile times that repeat's cpu/o, as in the attribution), medians over the repeats.")
	}
	if hidden > 0 {
		sec.Notes = append(sec.Notes, fmt.Sprintf("%d subsystems at 0.00 µs/op in every version are left out (report.json has them; their splits are in the family below).", hidden))
	}
	sec.Notes = append(sec.Notes, s.Notes...)
	if !s.Tested {
		return sec
	}
	if table != "figures" {
		sec.Notes = append(sec.Notes, "▲ step / ▼ step: as in the version series above, by the same rule; this table's splits are a family of their own.")
	} else {
		sec.Notes = append(sec.Notes, "▲ step / ▼ step marks the version at which a figure stepped beyond the noise and stayed, with the change from the median of the repeats before (from the first version, or the previous step) to the median of the repeats from it on. "+
			"Rule: every split of the series is tested, the repeats of the versions before it pooled against those from it on (Welch's t-test and a permutation test); a split is a step when significant and every version from it on has its median on the new side of the midpoint between the two groups' means, every version before it on the old side (a spike that goes back is no step). "+
			"The first step is the change point; after it the same rule is applied to the versions from the step on, for later steps. A series that steps and comes back marks nothing; a steady drift is marked as a staircase (docs/lab.md).")
	}
	for _, fam := range s.Families {
		if fam.Table != table {
			continue
		}
		what := "The %d splits of this table are judged together"
		if fam.Stage > 1 {
			what = fmt.Sprintf("Later steps, stage %d: its %%d splits are judged together", fam.Stage)
		}
		sec.Notes = append(sec.Notes, fmt.Sprintf(what+" at α = %g (Benjamini–Hochberg): cutoff %s.", fam.Tests, r.Alpha, fmtP(fam.Level)))
	}
	if len(graphs) > 0 {
		sec.Notes = append(sec.Notes, "Differential flame graph of each step (the version before → the step's version, per operation): "+strings.Join(graphs, ", ")+".")
	}
	return sec
}

// seriesSummary is the summary's line about the workload's series, "" without one.
func (w *Workload) seriesSummary() string {
	s := w.Series
	if s == nil {
		return ""
	}
	head := fmt.Sprintf("%s: version series %s: ", w.Name, strings.Join(s.Servers, " → "))
	if !s.Tested {
		return head + "no step can be marked (fewer than two repeats per version)"
	}
	var steps []string
	for i, f := range slices.Concat(s.Figures, s.Subsystems, s.OffCPU) {
		name := f.Name
		if i >= len(s.Figures) && i < len(s.Figures)+len(s.Subsystems) {
			name += " µs/op"
		}
		for _, st := range f.Steps {
			steps = append(steps, fmt.Sprintf("%s %s at %s (from %s)", name, st.mark(), st.Server, st.Previous))
		}
	}
	if len(steps) == 0 {
		return head + "no figure stepped beyond the noise"
	}
	return head + strings.Join(steps, "; ")
}

// kindsNote warns when the series runs across server kinds (run.json
// server_version: MariaDB's say so), "" when it does not or no run says.
func kindsNote(vs []*Version, runsOf map[string][]*loaded) string {
	var mariadb, mysql []string
	for _, v := range vs {
		ver := ""
		for _, l := range runsOf[v.Server] {
			if ver = l.meas.ServerVersion; ver == "" {
				ver = l.p.Meta.ServerVersion
			}
			if ver != "" {
				break
			}
		}
		switch {
		case ver == "":
		case strings.Contains(strings.ToLower(ver), "mariadb"):
			mariadb = append(mariadb, v.Server)
		default:
			mysql = append(mysql, v.Server)
		}
	}
	if len(mariadb) == 0 || len(mysql) == 0 {
		return ""
	}
	return fmt.Sprintf("The series runs across server kinds (MariaDB: %s; MySQL: %s): it is no release order, and a step where the kind changes is the change of server.",
		strings.Join(mariadb, ", "), strings.Join(mysql, ", "))
}
