package benchreport

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
	"github.com/flamediff/flamediff/rundir"
	"github.com/flamediff/flamediff/symbolmap"
)

// DefaultRoot is the function whose subtree a report breaks down when
// Options.Roots is empty: where a prepared statement (sysbench with
// prepared statements on) is executed.
const DefaultRoot = "mysqld_stmt_execute"

// DefaultDepth is the number of levels under each root when Options.Depth
// is 0 or less, as `flamediff diff --depth`'s default.
const DefaultDepth = 2

// topSelf is how many functions a Comparison lists.
const topSelf = 8

// Run is one measurement: a run directory written by `flamediff record`
// (stacks.folded and run.json) for one server version, workload and repeat.
type Run struct {
	// Server is the version label ("10.11"); it is also the label the
	// symbol map's label-limited rules see.
	Server string
	// Workload names the benchmark ("point-select").
	Workload string
	// Repeat numbers the measurement from 1 (0 is taken as 1).
	Repeat int
	// Dir is the run directory.
	Dir string
	// Missing, when not empty, says the run did not happen and why (the
	// server failed to start, the fetch failed...); Dir is then not read
	// and the report shows the cell as missing with this reason.
	Missing string
	// MeasureDir is the repeat's unprofiled window, a run directory whose
	// run.json says "window": "unprofiled" (record's sampler none): when it
	// is given, the repeat's throughput and per-op figures come from it,
	// and only the profile (stacks, their per-op scaling, sampled CPU,
	// stack completeness) from Dir; the QPS of Dir against it is the
	// sampler's effect. With neither MeasureDir nor MeasureMissing, every
	// figure comes from Dir (a bench without unprofiled windows).
	MeasureDir string
	// MeasureMissing says why the unprofiled window did not happen; the
	// repeat is then missing.
	MeasureMissing string
}

// Options say what Build computes and how the report is laid out.
type Options struct {
	// Base is the version the relative figures divide by; the first
	// server when empty.
	Base string
	// Servers is the column order; the order of first appearance in the
	// runs when empty. Every run's Server must be listed.
	Servers []string
	// Workloads is the row order; the order of first appearance in the
	// runs when empty. Every run's Workload must be listed.
	Workloads []string
	// Roots are the functions broken down per version ([DefaultRoot] when
	// empty). A root given by an original symbol the map renames is
	// replaced by its canonical name.
	Roots []string
	// Map is applied to every profile (symbolmap.Default() when nil); its
	// subsystems give the attribution of the change in CPU per operation.
	Map *symbolmap.Map
	// Alpha is the significance level (diff.DefaultAlpha when 0).
	Alpha float64
	// Depth is the number of levels under each root (DefaultDepth when 0
	// or less).
	Depth int
	// SVG makes WriteFiles draw the flame graphs.
	SVG bool
	// Hints add a command's advice to the warnings (see diff.Hints).
	Hints diff.Hints
	// RowsPerOp, by workload name, are the rows each operation of the
	// workload reads when its throughput is rows per second (a full
	// scan: its table's rows); such a workload's cells also get
	// Version.Throughput, o/s times RowsPerOp, in RowsUnit. Workloads not
	// in it report operations per second alone.
	RowsPerOp map[string]int
}

// RowsUnit is the unit of the throughput of a workload with
// Options.RowsPerOp.
const RowsUnit = "rows/s"

// ErrInvalid is wrapped by Build's errors about its arguments (as opposed
// to problems with the runs, which the report shows as missing cells).
var ErrInvalid = errors.New("invalid benchmark report input")

// loaded is one usable run.
type loaded struct {
	run  Run
	p    *fold.Profile // mapped; Meta set, Label = Server: the profiled window
	expl *symbolmap.Explanation
	qps  float64 // the profiled window's
	// meas is the metadata the throughput and per-op figures come from:
	// the unprofiled window's, or p.Meta without one; measQPS its rate.
	meas    *fold.Meta
	measQPS float64
	// unprofiled says that meas is an unprofiled window's.
	unprofiled bool
	// off is the profiled window's off-CPU profile; nil without one,
	// offErr then says why and offAbsent whether it was recorded without
	// the off-CPU program (no off-CPU file at all).
	off       *offRun
	offErr    string
	offAbsent bool
	// env is the profiled window's kernel scheduling and wake-up shares,
	// read before its kernel frames were dropped (env.Kernel false: the
	// run kept none).
	env diff.Environment
}

// Build loads every run directory, applies the map, and computes the
// report. It fails (wrapping ErrInvalid) only on inconsistent arguments: no
// runs, a base that is not a server, a run of an unlisted server or
// workload, or two runs of the same cell and repeat. A run that cannot be
// used (missing directory, incomplete capture, unreadable files, no CPU or
// operations in run.json, no samples) is recorded in Report.Missing and, when
// a cell has no usable run left, in that cell's Missing; it is never an error.
func Build(runs []Run, opts Options) (*Report, error) {
	if len(runs) == 0 && (len(opts.Servers) == 0 || len(opts.Workloads) == 0) {
		return nil, fmt.Errorf("benchmark report: %w: no runs", ErrInvalid)
	}
	servers := orderOf(opts.Servers, runs, func(r Run) string { return r.Server })
	workloads := orderOf(opts.Workloads, runs, func(r Run) string { return r.Workload })
	base := opts.Base
	if base == "" {
		base = servers[0]
	}
	if !slices.Contains(servers, base) {
		return nil, fmt.Errorf("benchmark report: %w: base %q is not one of the servers %q", ErrInvalid, base, servers)
	}
	if err := checkUnique(servers, "server"); err != nil {
		return nil, err
	}
	if err := checkUnique(workloads, "workload"); err != nil {
		return nil, err
	}
	type cellKey struct{ workload, server string }
	cells := make(map[cellKey]map[int]Run)
	n := 1
	for _, r := range runs {
		if !slices.Contains(servers, r.Server) {
			return nil, fmt.Errorf("benchmark report: run %s: %w: server %q is not one of %q", r.Dir, ErrInvalid, r.Server, servers)
		}
		if !slices.Contains(workloads, r.Workload) {
			return nil, fmt.Errorf("benchmark report: run %s: %w: workload %q is not one of %q", r.Dir, ErrInvalid, r.Workload, workloads)
		}
		if r.Repeat < 0 {
			return nil, fmt.Errorf("benchmark report: run %s: %w: repeat %d is negative", r.Dir, ErrInvalid, r.Repeat)
		}
		r.Repeat = max(r.Repeat, 1)
		k := cellKey{r.Workload, r.Server}
		if cells[k] == nil {
			cells[k] = make(map[int]Run)
		}
		if prev, ok := cells[k][r.Repeat]; ok {
			return nil, fmt.Errorf("benchmark report: %w: %s on %s repeat %d given twice (%s and %s)", ErrInvalid, r.Workload, r.Server, r.Repeat, prev.Dir, r.Dir)
		}
		cells[k][r.Repeat] = r
		n = max(n, r.Repeat)
	}
	m := opts.Map
	if m == nil {
		m = symbolmap.Default()
	}
	roots := opts.Roots
	if len(roots) == 0 {
		roots = []string{DefaultRoot}
	}
	rep := &Report{
		Base: base, Servers: servers, Repeats: n, Alpha: opts.Alpha, Depth: opts.Depth,
		Map: m.File(), Missing: []MissingRun{}, svg: opts.SVG,
	}
	if rep.Alpha <= 0 {
		rep.Alpha = diff.DefaultAlpha
	}
	if rep.Depth <= 0 {
		rep.Depth = DefaultDepth
	}
	if m.HasSubsystems() {
		rep.subsystem, rep.subNames = m.Subsystem, m.Subsystems()
	}
	var all []*loaded // every usable run, for the placement
	for _, wl := range workloads {
		w := &Workload{Name: wl, Versions: []*Version{}, Subtrees: []*Subtree{}, Comparisons: []*Comparison{}, merged: map[string]*fold.Profile{}, offMerged: map[string]*offPair{}}
		runsOf := make(map[string][]*loaded)
		var effects family
		for _, srv := range servers {
			v := &Version{Server: srv, Dirs: []string{}}
			w.Versions = append(w.Versions, v)
			given := cells[cellKey{wl, srv}]
			if len(given) == 0 {
				v.Missing = "no run given"
				rep.Missing = append(rep.Missing, MissingRun{Workload: wl, Server: srv, Reason: v.Missing})
				continue
			}
			var reasons []string
			for k := 1; k <= n; k++ {
				r, ok := given[k]
				if !ok {
					rep.Missing = append(rep.Missing, MissingRun{Workload: wl, Server: srv, Repeat: k, Reason: "no run given"})
					reasons = append(reasons, fmt.Sprintf("repeat %d: no run given", k))
					continue
				}
				l, err := loadRun(r, m)
				if err != nil {
					rep.Missing = append(rep.Missing, MissingRun{Workload: wl, Server: srv, Repeat: k, Dir: r.Dir, Reason: err.Error()})
					reasons = append(reasons, reasonOf(n, k, err))
					continue
				}
				l.loadOffCPU(m)
				runsOf[srv] = append(runsOf[srv], l)
			}
			if len(runsOf[srv]) == 0 {
				v.Missing = strings.Join(reasons, "; ")
				continue
			}
			fillFigures(v, runsOf[srv], rep.Alpha, opts.Hints, &effects)
			offCPUFigures(v, runsOf[srv])
		}
		effects.judge(rep.Alpha)
		offCPURelative(w, base, rep.Alpha)
		if rows := opts.RowsPerOp[wl]; rows > 0 {
			rowsThroughput(w, rows)
		}
		rep.Workloads = append(rep.Workloads, w)
		w.Host = hostRows(servers, runsOf)
		relateHost(w.Host, rep.Base)
		for _, srv := range servers {
			all = append(all, runsOf[srv]...)
		}
		if err := computeWorkload(rep, w, runsOf, roots, m); err != nil {
			return nil, err
		}
		computeSeries(rep, w, runsOf, m)
	}
	rep.Roots = resolvedRoots(rep, roots)
	rep.FiguresWindow = figuresWindow(rep)
	rep.Placement = placementOf(all)
	if rep.OffCPU = offCPUState(all); rep.OffCPU == OffCPUSome {
		rep.OffCPUMissing = offCPUMissing(all)
	}
	sort.SliceStable(rep.Missing, func(i, j int) bool {
		a, b := rep.Missing[i], rep.Missing[j]
		if a.Workload != b.Workload {
			return slices.Index(workloads, a.Workload) < slices.Index(workloads, b.Workload)
		}
		if a.Server != b.Server {
			return slices.Index(servers, a.Server) < slices.Index(servers, b.Server)
		}
		return a.Repeat < b.Repeat
	})
	return rep, nil
}

// rowsThroughput sets the workload's throughput in rows per second: each
// cell's QPS, repeat by repeat, times rows.
func rowsThroughput(w *Workload, rows int) {
	w.RowsPerOp, w.ThroughputUnit = rows, RowsUnit
	for _, v := range w.Versions {
		if v.QPS == nil {
			continue
		}
		vals := make([]float64, len(v.QPS.Values))
		for i, q := range v.QPS.Values {
			vals[i] = q * float64(rows)
		}
		v.Throughput = figureOf(vals)
	}
}

// figuresWindow is the report's FiguresWindow: its cells' when they agree,
// else mixed ("profiled" when no cell has figures).
func figuresWindow(rep *Report) string {
	got := ""
	for _, w := range rep.Workloads {
		for _, v := range w.Versions {
			switch {
			case v.FiguresWindow == "":
			case got == "":
				got = v.FiguresWindow
			case got != v.FiguresWindow:
				return windowMixed
			}
		}
	}
	if got == "" {
		return fold.WindowProfiled
	}
	return got
}

// orderOf returns given, or the values of key in order of first appearance.
func orderOf(given []string, runs []Run, key func(Run) string) []string {
	if len(given) > 0 {
		return slices.Clone(given)
	}
	var out []string
	for _, r := range runs {
		if k := key(r); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func checkUnique(xs []string, what string) error {
	for i, x := range xs {
		if x == "" {
			return fmt.Errorf("benchmark report: %w: empty %s name", ErrInvalid, what)
		}
		if slices.Contains(xs[:i], x) {
			return fmt.Errorf("benchmark report: %w: %s %q listed twice", ErrInvalid, what, x)
		}
	}
	return nil
}

func reasonOf(n, k int, err error) string {
	if n == 1 {
		return err.Error()
	}
	return fmt.Sprintf("repeat %d: %s", k, err)
}

// loadRun reads one run directory and applies the map. Its errors are the
// reasons a report prints for a missing run.
func loadRun(r Run, m *symbolmap.Map) (*loaded, error) {
	if r.Missing != "" {
		return nil, errors.New(r.Missing)
	}
	if r.Dir == "" {
		return nil, errors.New("no run directory")
	}
	if _, err := os.Stat(r.Dir); err != nil {
		return nil, fmt.Errorf("run directory %w", err)
	}
	meta, err := rundir.ReadMeta(r.Dir)
	if err != nil {
		return nil, err
	}
	qps, err := rundir.Check(meta)
	if err != nil {
		return nil, err
	}
	p, err := rundir.Read(r.Dir, false)
	if err != nil {
		return nil, err
	}
	// The kernel frames the lab records are for the environment's share
	// only: every other figure and the flame graphs are of user stacks.
	env := diff.EnvironmentOf(p)
	if env.Kernel {
		p = p.WithoutKernel()
	}
	mm := *p.Meta
	mm.Label = r.Server
	p.Meta = &mm
	mp, expl := m.Apply(p)
	if mp.Meta == nil {
		mp.Meta = p.Meta
	}
	l := &loaded{run: r, p: mp, expl: expl, qps: qps, meas: mp.Meta, measQPS: qps, env: env}
	if r.MeasureDir == "" && r.MeasureMissing == "" {
		return l, nil
	}
	if err := l.loadUnprofiled(); err != nil {
		return nil, fmt.Errorf("unprofiled window: %w", err)
	}
	return l, nil
}

// loadUnprofiled reads the run's unprofiled window into l.meas.
func (l *loaded) loadUnprofiled() error {
	r := l.run
	if r.MeasureMissing != "" {
		return errors.New(r.MeasureMissing)
	}
	if _, err := os.Stat(r.MeasureDir); err != nil {
		return fmt.Errorf("run directory %w", err)
	}
	meta, err := rundir.ReadMeta(r.MeasureDir)
	if err != nil {
		return err
	}
	if meta.Window != fold.WindowUnprofiled {
		return fmt.Errorf("%s says window %q (sampler %q), not %q", filepath.Join(r.MeasureDir, rundir.MetaFile), meta.Window, meta.Sampler, fold.WindowUnprofiled)
	}
	qps, err := rundir.Check(meta)
	if err != nil {
		return fmt.Errorf("%s: %w", r.MeasureDir, err)
	}
	l.meas, l.measQPS, l.unprofiled = meta, qps, true
	return nil
}

// perOp returns x per operation of each run's figures window (meas), or
// nil when no run measured x (run.json's zero means "not measured").
func perOp(runs []*loaded, x func(*fold.Meta) float64) *Figure {
	vals := make([]float64, len(runs))
	measured := false
	for i, l := range runs {
		v := x(l.meas)
		measured = measured || v != 0
		vals[i] = v / float64(l.meas.Operations)
	}
	if !measured {
		return nil
	}
	return figureOf(vals)
}

// fillFigures sets a cell's figures from its usable runs: throughput and
// per-op figures from their figures windows (unprofiled when given), the
// profile's from the profiled windows, the sampler's effect, the
// within-run noise and the repeats that stand out.
func fillFigures(v *Version, runs []*loaded, alpha float64, h diff.Hints, effects *family) {
	v.Repeats = len(runs)
	qps := make([]float64, len(runs))
	cpu := make([]float64, len(runs))
	pqps := make([]float64, len(runs))
	pcpu := make([]float64, len(runs))
	var cvs []float64
	unprofiled := 0
	for i, l := range runs {
		v.Dirs = append(v.Dirs, l.run.Dir)
		v.repeatNums = append(v.repeatNums, l.run.Repeat)
		qps[i], cpu[i] = l.measQPS, l.meas.CPUMicrosPerOp()
		pqps[i], pcpu[i] = l.qps, l.p.Meta.CPUMicrosPerOp()
		if l.unprofiled {
			unprofiled++
			v.MeasureDirs = append(v.MeasureDirs, l.run.MeasureDir)
		}
		if cv, ok := cvOf(l.meas.WorkloadIntervalQPS); ok {
			cvs = append(cvs, cv)
		}
	}
	v.QPS, v.CPUPerOp = figureOf(qps), figureOf(cpu)
	v.ProfiledQPS, v.ProfiledCPUPerOp = figureOf(pqps), figureOf(pcpu)
	v.CSPerOp = perOp(runs, func(m *fold.Meta) float64 { return float64(m.VoluntaryCtxSwitches + m.InvoluntaryCtxSwitches) })
	v.ReadsPerOp = perOp(runs, func(m *fold.Meta) float64 { return float64(m.ReadOps) })
	v.ReadKBPerOp = perOp(runs, func(m *fold.Meta) float64 { return m.ReadKB })
	v.WriteKBPerOp = perOp(runs, func(m *fold.Meta) float64 { return m.WriteKB })
	switch unprofiled {
	case len(runs):
		v.FiguresWindow = fold.WindowUnprofiled
		effect := make([]float64, len(runs))
		for i := range runs {
			effect[i] = pqps[i] / qps[i]
		}
		v.SamplerEffect = figureOf(effect)
		if len(runs) >= 2 {
			effects.add(&v.SamplerEffectTest, diff.Compare(qps, pqps, alpha))
		}
	case 0:
		v.FiguresWindow = fold.WindowProfiled
	default:
		v.FiguresWindow = windowMixed
	}
	if len(cvs) > 0 {
		v.QPSCVPct = figureOf(cvs)
	}
	outliers(v)
	stackFigures(v, runs, h)
	var env []float64
	for _, l := range runs {
		if l.env.Kernel {
			env = append(env, 100*l.env.Total())
		}
	}
	if len(env) > 0 {
		v.SchedWakePct = figureOf(env)
	}
	var sampled []float64
	for _, l := range runs {
		if pct := l.p.Meta.SampledPct(); pct > 0 {
			sampled = append(sampled, pct)
		}
	}
	if len(sampled) > 0 {
		v.SampledPct = figureOf(sampled)
		v.addMedianWarning(diff.SampledWarning(v.SampledPct.Median), len(runs))
	}
	var rates, corrected []float64
	why := ""
	for _, l := range runs {
		switch u := l.p.Meta.Uncorrected(); {
		case u != "":
			why = u
			rates = append(rates, l.p.Meta.SwitchesPerCPUSecond())
		case l.p.Meta.SwitchCorrected():
			corrected = append(corrected, l.p.Meta.SwitchesPerCPUSecond())
		}
	}
	if len(rates) > 0 {
		v.addMedianWarning(diff.SwitchWarning(why, false, figureOf(rates).Median), len(runs))
	}
	if len(corrected) > 0 {
		v.addMedianWarning(diff.SwitchWarning("", true, figureOf(corrected).Median), len(runs))
	}
}

// addMedianWarning adds w, a warning about the median of a figure over the
// cell's repeats, to v's warnings, saying so when there are several; an
// empty w adds nothing.
func (v *Version) addMedianWarning(w string, repeats int) {
	if w == "" {
		return
	}
	if repeats > 1 {
		w = "median over the repeats: " + w
	}
	v.Warnings = append(v.Warnings, w)
}

// stackFigures fills the cell's recorded stack completeness, unwind
// methods and the warning of its least complete repeat.
func stackFigures(v *Version, runs []*loaded, h diff.Hints) {
	var pcts []float64
	var methods []string
	var worst *diff.Unwinding
	worstRepeat := 0
	for _, l := range runs {
		u := diff.RecordedUnwinding(l.p.Meta)
		if u == nil {
			continue
		}
		pcts = append(pcts, 100*u.Complete)
		if u.Method != "" && !slices.Contains(methods, u.Method) {
			methods = append(methods, u.Method)
		}
		if worst == nil || u.Complete < worst.Complete {
			worst, worstRepeat = u, l.run.Repeat
		}
	}
	if len(pcts) == 0 {
		return
	}
	v.StackCompletePct = figureOf(pcts)
	v.Unwind = strings.Join(methods, ", ")
	hint := ""
	if h.Unwinding != nil {
		hint = h.Unwinding(worst)
	}
	if w := worst.Warning(hint); w != "" {
		if len(runs) > 1 {
			w = fmt.Sprintf("repeat %d: %s", worstRepeat, w)
		}
		v.Warnings = append(v.Warnings, w)
	}
}

// rel is a/b of two figures' medians, nil when either is absent or b is 0.
func rel(a, b *Figure) *float64 {
	if a == nil || b == nil || b.Median == 0 {
		return nil
	}
	r := a.Median / b.Median
	return &r
}

// computeWorkload fills the relative figures, tests, subtrees and
// comparisons of w from its usable runs.
func computeWorkload(rep *Report, w *Workload, runsOf map[string][]*loaded, roots []string, m *symbolmap.Map) error {
	var present []string
	for _, v := range w.Versions {
		if v.Missing == "" {
			present = append(present, v.Server)
		}
	}
	if len(present) == 0 {
		w.Notes = append(w.Notes, "no version has a usable run")
		return nil
	}
	bv := w.version(rep.Base)
	hasBase := bv.Missing == ""
	if !hasBase {
		w.Notes = append(w.Notes, fmt.Sprintf("the base %s has no usable run: no relative figures, significance tests or comparisons", rep.Base))
	}
	var headline family
	for _, v := range w.Versions {
		if v.Missing != "" || !hasBase {
			continue
		}
		v.RQPS = rel(v.QPS, bv.QPS)
		v.Relative = &Relative{
			QPS: rel(v.QPS, bv.QPS), CPUPerOp: rel(v.CPUPerOp, bv.CPUPerOp), CSPerOp: rel(v.CSPerOp, bv.CSPerOp),
			ReadsPerOp: rel(v.ReadsPerOp, bv.ReadsPerOp), ReadKBPerOp: rel(v.ReadKBPerOp, bv.ReadKBPerOp),
			WriteKBPerOp: rel(v.WriteKBPerOp, bv.WriteKBPerOp),
		}
		if v.Server != rep.Base && v.Repeats >= 2 && bv.Repeats >= 2 {
			headline.add(&v.QPSTest, diff.Compare(bv.QPS.Values, v.QPS.Values, rep.Alpha))
			headline.add(&v.CPUPerOpTest, diff.Compare(bv.CPUPerOp.Values, v.CPUPerOp.Values, rep.Alpha))
		}
	}
	headline.judge(rep.Alpha)
	for _, srv := range present {
		mp, err := mergeRuns(srv, runsOf[srv], w.version(srv))
		if err != nil {
			return fmt.Errorf("benchmark report: %s on %s: %w", w.Name, srv, err)
		}
		w.merged[srv] = mp
	}
	// Roots after the map, from the profiles of this workload.
	var all []*loaded
	for _, srv := range present {
		all = append(all, runsOf[srv]...)
	}
	wroots := resolveRoots(roots, all)
	for i, r := range wroots {
		if r != roots[i] {
			w.Notes = append(w.Notes, fmt.Sprintf("root %s is called %s after the symbol map", roots[i], r))
		}
		if !inAny(r, all) {
			w.Notes = append(w.Notes, fmt.Sprintf("root %s occurs in no profile of this workload", r))
		}
	}
	if err := computeOffCPU(rep, w, present, runsOf, m); err != nil {
		return err
	}
	subtrees, err := computeSubtrees(rep, w, present, runsOf, wroots)
	if err != nil {
		return err
	}
	w.Subtrees = subtrees
	if !hasBase {
		return nil
	}
	return computeComparisons(rep, w, present, m, runsOf)
}

// mergeRuns merges a cell's repeats into one profile whose CPU per
// operation and QPS are the medians of the profiled windows: the profile
// is scaled by the CPU and operations of the windows it was sampled in,
// not by the unprofiled windows' (which the per-op tables show).
func mergeRuns(server string, runs []*loaded, v *Version) (*fold.Profile, error) {
	if len(runs) == 1 {
		return runs[0].p, nil
	}
	ps := make([]*fold.Profile, len(runs)-1)
	var ops int64
	var window float64
	for i, l := range runs {
		if i > 0 {
			ps[i-1] = l.p
		}
		ops += l.p.Meta.Operations
		window += l.p.Meta.WindowSeconds
	}
	mp, err := runs[0].p.Merge(ps...)
	if err != nil {
		return nil, err
	}
	first := runs[0].p.Meta
	mp.Meta = &fold.Meta{
		Format: 1, Label: server, Unit: first.Unit, Event: first.Event, Sampler: first.Sampler,
		FrequencyHz: first.FrequencyHz, WindowSeconds: window, Operations: ops,
		CPUSecondsTotal: v.ProfiledCPUPerOp.Median * float64(ops) / 1e6, QPS: v.ProfiledQPS.Median,
	}
	return mp, nil
}

func inAny(root string, runs []*loaded) bool {
	for _, l := range runs {
		if slices.Contains(diff.Frames(l.p), root) {
			return true
		}
	}
	return false
}

// resolveRoots replaces a root that occurs in no profile, but that the map
// renamed, by its canonical name.
func resolveRoots(roots []string, runs []*loaded) []string {
	out := slices.Clone(roots)
	for i, r := range roots {
		if inAny(r, runs) {
			continue
		}
		for _, l := range runs {
			for _, rw := range l.expl.Rewrites {
				if rw.Original == r && rw.Result != "" && out[i] == r {
					out[i] = rw.Result
				}
			}
		}
	}
	return out
}

// resolvedRoots is the report's roots: as resolved in the first workload
// with figures, else as given.
func resolvedRoots(rep *Report, roots []string) []string {
	for _, w := range rep.Workloads {
		if len(w.Subtrees) == len(roots) {
			out := make([]string, len(roots))
			for i, t := range w.Subtrees {
				out[i] = t.Root
			}
			return out
		}
	}
	return slices.Clone(roots)
}

// computeSubtrees compares every usable run of the workload in one
// diff.Compute, so that the rows line up across repeats and versions, then
// summarises each row per version over its repeats.
func computeSubtrees(rep *Report, w *Workload, present []string, runsOf map[string][]*loaded, roots []string) ([]*Subtree, error) {
	var ps []*fold.Profile
	var labels []string
	var col []int // column of each profile
	for ci, srv := range present {
		for k, l := range runsOf[srv] {
			ps = append(ps, l.p)
			labels = append(labels, fmt.Sprintf("%s#%d", srv, k+1))
			col = append(col, ci)
		}
	}
	targets := ps[1:]
	if len(targets) == 0 {
		targets = ps[:1] // Compute needs a target; its columns are ignored
	}
	r, err := diff.Compute(ps[0], targets, diff.Options{Roots: roots, Depth: rep.Depth, Labels: labels})
	if err != nil {
		return nil, fmt.Errorf("benchmark report: %s: %w", w.Name, err)
	}
	baseCol := slices.Index(present, rep.Base)
	var out []*Subtree
	for _, t := range r.Subtrees {
		st := &Subtree{
			Root: t.Root, Depth: t.Depth, Servers: slices.Clone(present), Threshold: t.Threshold,
			SkippedUnresolved: t.SkippedUnresolved, Rows: []*SubtreeRow{},
		}
		var rows family
		for _, row := range t.Rows {
			sr := &SubtreeRow{
				Path: row.Path, Level: row.Level, Label: row.Label(), Chain: row.Chain, Unresolved: row.Unresolved,
				DeltaPP: make([]*float64, len(present)), Tests: make([]*Test, len(present)),
			}
			vals := make([][]float64, len(present))
			ends := make([][]float64, len(present))
			endDiffers := false
			for pi := range ps {
				nv := row.Profiles[pi]
				vals[col[pi]] = append(vals[col[pi]], nv.Pct)
				ends[col[pi]] = append(ends[col[pi]], nv.EndPct)
				endDiffers = endDiffers || row.Chain != nil && nv.EndValue != nv.Value
			}
			for c := range present {
				sr.Shares = append(sr.Shares, *figureOf(vals[c]))
				if endDiffers {
					sr.ends = append(sr.ends, diff.SampleOf(ends[c]).Median)
				}
			}
			if baseCol >= 0 {
				for c := range present {
					if c == baseCol {
						continue
					}
					d := sr.Shares[c].Median - sr.Shares[baseCol].Median
					sr.DeltaPP[c] = &d
					if len(vals[c]) >= 2 && len(vals[baseCol]) >= 2 {
						rows.add(&sr.Tests[c], diff.Compare(vals[baseCol], vals[c], rep.Alpha))
					}
				}
			}
			st.Rows = append(st.Rows, sr)
		}
		rows.judge(rep.Alpha)
		for c := range present {
			st.Summaries = append(st.Summaries, st.sentence(c, 0))
		}
		out = append(out, st)
	}
	return out, nil
}

// summaryCallees is how many callees of the root a subtree's sentence
// names, as diff's one-line summaries do.
const summaryCallees = 6

// sentence is column c's one-line summary of the subtree: the root's share,
// its chain end's when it differs, and its largest callees' ("others" for
// the rest), from the rows, so that each share is the one the table shows
// (with repeats, the median over them, not the share of the repeats
// merged). Names are shortened to width runes (whole when width is 0).
func (t *Subtree) sentence(c, width int) string {
	if len(t.Rows) == 0 {
		return ""
	}
	short := func(n string) string {
		if width > 0 {
			return names.Shorten(n, width)
		}
		return n
	}
	first := func(row *SubtreeRow) string {
		if len(row.Chain) > 1 {
			return row.Chain[0]
		}
		return row.Path[len(row.Path)-1]
	}
	root := t.Rows[0]
	var b strings.Builder
	fmt.Fprintf(&b, "%s %.2f%%", short(first(root)), root.Shares[c].Median)
	if len(root.Chain) > 1 && len(root.ends) > c && report.F2(root.ends[c]) != report.F2(root.Shares[c].Median) {
		fmt.Fprintf(&b, " → %s %.2f%%", short(root.Chain[len(root.Chain)-1]), root.ends[c])
	}
	var kids []*SubtreeRow
	for _, row := range t.Rows[1:] {
		if row.Level == 1 && !row.Unresolved && row.Shares[c].Median > 0 {
			kids = append(kids, row)
		}
	}
	if len(kids) == 0 {
		return b.String()
	}
	sort.SliceStable(kids, func(i, j int) bool {
		a, b := kids[i].Shares[c].Median, kids[j].Shares[c].Median
		if a != b {
			return a > b
		}
		return first(kids[i]) < first(kids[j])
	})
	b.WriteString(": ")
	for i, k := range kids {
		if i == summaryCallees {
			rest := 0.0
			for _, o := range kids[i:] {
				rest += o.Shares[c].Median
			}
			fmt.Fprintf(&b, ", others %.2f%%", rest)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.2f%%", short(first(k)), k.Shares[c].Median)
	}
	return b.String()
}

// computeComparisons compares the merged profile of the base with each
// other version: attribution of the change in CPU per op, and the functions
// whose self CPU per op changed most.
func computeComparisons(rep *Report, w *Workload, present []string, m *symbolmap.Map, runsOf map[string][]*loaded) error {
	var targets []*fold.Profile
	var labels = []string{rep.Base}
	for _, srv := range present {
		if srv != rep.Base {
			targets = append(targets, w.merged[srv])
			labels = append(labels, srv)
		}
	}
	if len(targets) == 0 {
		return nil
	}
	o := diff.Options{Labels: labels}
	if m.HasSubsystems() {
		o.Classify, o.SubsystemNames = m.Subsystem, m.Subsystems()
	}
	r, err := diff.Compute(w.merged[rep.Base], targets, o)
	if err != nil {
		return fmt.Errorf("benchmark report: %s: %w", w.Name, err)
	}
	// Each subsystem's µs/op in every profiled repeat, by server.
	perRepeat := map[string]map[string][]float64{}
	if m.HasSubsystems() && rep.Repeats > 1 {
		for _, srv := range present {
			perRepeat[srv] = map[string][]float64{}
			for _, l := range runsOf[srv] {
				for _, sh := range diff.Subsystems(l.p, m.Subsystem, m.Subsystems()) {
					perRepeat[srv][sh.Name] = append(perRepeat[srv][sh.Name], sh.MicrosPerOp)
				}
			}
		}
	}
	var parts family
	defer func() { parts.judge(rep.Alpha) }()
	for ti := range targets {
		c := &Comparison{
			Server:            labels[ti+1],
			Window:            fold.WindowProfiled,
			BaseMicrosPerOp:   r.Summaries[0].Profile.MicrosPerOp,
			TargetMicrosPerOp: r.Summaries[ti+1].Profile.MicrosPerOp,
			TopSelf:           []FunctionDelta{},
		}
		if ti < len(r.Attribution) {
			a := r.Attribution[ti]
			at := &Attribution{DeltaMicrosPerOp: a.Delta, Sentence: a.Sentence(), Parts: []Part{}}
			for _, p := range a.Parts {
				at.Parts = append(at.Parts, Part{Subsystem: p.Subsystem, DeltaMicrosPerOp: p.Delta})
			}
			for i := range at.Parts {
				p := &at.Parts[i]
				b, t := perRepeat[rep.Base][p.Subsystem], perRepeat[labels[ti+1]][p.Subsystem]
				if len(b) < 2 || len(t) < 2 {
					continue
				}
				p.Base, p.Target = figureOf(b), figureOf(t)
				if len(b) == len(t) {
					for k := range b {
						p.RoundDeltas = append(p.RoundDeltas, t[k]-b[k])
					}
				}
				parts.add(&p.Test, diff.Compare(b, t, rep.Alpha))
			}
			c.Attribution = at
		}
		var fs []FunctionDelta
		for _, f := range r.Functions {
			b, t := f.Profiles[0].SelfMicrosPerOp, f.Profiles[ti+1].SelfMicrosPerOp
			if math.Round((t-b)*100) == 0 {
				continue // no change at the precision reports print
			}
			fs = append(fs, FunctionDelta{Name: f.Name, BaseMicrosPerOp: b, TargetMicrosPerOp: t, DeltaMicrosPerOp: t - b})
		}
		sort.SliceStable(fs, func(i, j int) bool {
			a, b := math.Abs(fs[i].DeltaMicrosPerOp), math.Abs(fs[j].DeltaMicrosPerOp)
			if a != b {
				return a > b
			}
			return fs[i].Name < fs[j].Name
		})
		if len(fs) > topSelf {
			fs = fs[:topSelf]
		}
		c.TopSelf = append(c.TopSelf, fs...)
		w.Comparisons = append(w.Comparisons, c)
	}
	return nil
}
