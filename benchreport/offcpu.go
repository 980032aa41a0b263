package benchreport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/report"
	"github.com/flamediff/flamediff/rundir"
	"github.com/flamediff/flamediff/symbolmap"
)

// Off-CPU profiles in the bench report. A profiled window recorded with
// the off-CPU program (record --off-cpu, the lab's capture.off_cpu) has
// offcpu.folded (µs off the CPU) and offcpu-switches.folded (switches)
// beside stacks.folded, and an off_cpu block in run.json. They exist only
// in profiled windows: every off-CPU figure is the profiled window's, and
// the tables put /proc's switches of the same windows and the unprofiled
// windows' cs/o beside them.

// Report.OffCPU values: every usable run has an off-CPU profile, some,
// or none.
const (
	OffCPUAll  = "all"
	OffCPUSome = "some"
	OffCPUNone = "none"
)

// OffCPUFigures are a cell's off-CPU figures per operation, over the
// repeats whose profiled window has an off-CPU profile.
type OffCPUFigures struct {
	// Window is "profiled": the figures are the profiled windows'.
	Window string `json:"window"`
	// Repeats counts the repeats with an off-CPU profile, Dirs their
	// profiled windows.
	Repeats int      `json:"repeats"`
	Dirs    []string `json:"dirs"`
	// CSPerOp are the switches counted per operation, split into
	// voluntary (the thread blocked) and involuntary (preempted).
	CSPerOp            *Figure `json:"cs_per_op"`
	VoluntaryCSPerOp   *Figure `json:"voluntary_cs_per_op"`
	InvoluntaryCSPerOp *Figure `json:"involuntary_cs_per_op"`
	// MicrosPerOp is the time off the CPU per operation (µs, summed over
	// threads), split the same way.
	MicrosPerOp            *Figure `json:"us_per_op"`
	VoluntaryMicrosPerOp   *Figure `json:"voluntary_us_per_op"`
	InvoluntaryMicrosPerOp *Figure `json:"involuntary_us_per_op"`
	// ProcCSPerOp is /proc's context switches per operation over the same
	// profiled windows (run.json's voluntary and involuntary ctxt
	// switches); nil when they were not measured. Version.CSPerOp is the
	// figures window's (unprofiled when given).
	ProcCSPerOp *Figure `json:"proc_cs_per_op,omitempty"`
	// Relative holds the medians over the base's; nil for a cell when the
	// base has no off-CPU figures.
	Relative *OffCPURelative `json:"relative,omitempty"`
	// CSPerOpTest and MicrosPerOpTest compare the repeats' cs/op and
	// off-CPU µs/op with the base's (diff.Compare; the tests of a
	// workload's off-CPU table judged together); nil for the base, or with
	// fewer than two repeats with off-CPU profiles on either side.
	CSPerOpTest     *Test `json:"cs_per_op_test,omitempty"`
	MicrosPerOpTest *Test `json:"us_per_op_test,omitempty"`
	// Missing names the usable repeats without an off-CPU profile, and why.
	Missing []string `json:"missing,omitempty"`
	// Warnings are the repeats' switch checks against /proc
	// (fold.OffCPU.SwitchGap) and notes on what could not be checked;
	// Untrusted, when not empty, says why the off-CPU figures cannot be
	// trusted (a repeat's switches differ from /proc's by more than 3%),
	// and the off-CPU tables mark the cell.
	Warnings  []string `json:"warnings,omitempty"`
	Untrusted string   `json:"untrusted,omitempty"`
}

// OffCPURelative are off-CPU medians divided by the base's (each nil when
// the base's is 0).
type OffCPURelative struct {
	CSPerOp                *float64 `json:"cs_per_op,omitempty"`
	VoluntaryCSPerOp       *float64 `json:"voluntary_cs_per_op,omitempty"`
	InvoluntaryCSPerOp     *float64 `json:"involuntary_cs_per_op,omitempty"`
	MicrosPerOp            *float64 `json:"us_per_op,omitempty"`
	VoluntaryMicrosPerOp   *float64 `json:"voluntary_us_per_op,omitempty"`
	InvoluntaryMicrosPerOp *float64 `json:"involuntary_us_per_op,omitempty"`
}

// OffCPUComparison is what changed in switches and in time off the CPU
// per operation between the base and one version (their repeats with
// off-CPU profiles pooled: the stacks summed, divided by the operations
// summed).
type OffCPUComparison struct {
	Server string `json:"server"`
	// Window is "profiled".
	Window   string             `json:"window"`
	Switches *OffCPUAttribution `json:"switches"`
	Time     *OffCPUAttribution `json:"time"`
}

// OffCPUAttribution is the change per operation of one off-CPU quantity
// (diff.Attribution of the pooled profiles, as `flamediff diff --off-cpu`
// computes it), with the voluntary and involuntary parts apart.
type OffCPUAttribution struct {
	// Quantity is "context switches" or "off-CPU time", Unit "cs/op" or
	// "µs/op".
	Quantity    string  `json:"quantity"`
	Unit        string  `json:"unit"`
	BasePerOp   float64 `json:"base_per_op"`
	TargetPerOp float64 `json:"target_per_op"`
	// Delta is TargetPerOp − BasePerOp, each rounded to 0.01 first;
	// DeltaVoluntary and DeltaInvoluntary split the change by the kind of
	// switch (not rounded).
	Delta            float64 `json:"delta_per_op"`
	DeltaVoluntary   float64 `json:"delta_voluntary_per_op"`
	DeltaInvoluntary float64 `json:"delta_involuntary_per_op"`
	// Parts split Delta among the map's subsystems (empty without
	// subsystems); Sentence is diff.Attribution.Sentence.
	Parts    []OffCPUPart `json:"parts"`
	Sentence string       `json:"sentence,omitempty"`
}

// OffCPUPart is one subsystem's share of an OffCPUAttribution. With
// repeats, Base and Target are the subsystem's figure per operation in
// each repeat with an off-CPU profile of the two versions, RoundDeltas
// the differences repeat by repeat (when both have as many), and Test
// compares Base with Target; the parts of a workload's table are judged
// together (as Part's).
type OffCPUPart struct {
	Subsystem        string    `json:"subsystem"`
	Delta            float64   `json:"delta_per_op"`
	DeltaVoluntary   float64   `json:"delta_voluntary_per_op"`
	DeltaInvoluntary float64   `json:"delta_involuntary_per_op"`
	Base             *Figure   `json:"base_per_op,omitempty"`
	Target           *Figure   `json:"target_per_op,omitempty"`
	RoundDeltas      []float64 `json:"round_deltas,omitempty"`
	Test             *Test     `json:"test,omitempty"`
}

// offRun is the off-CPU profile of one usable run's profiled window.
type offRun struct {
	time, switches *fold.Profile // mapped, Label the server
	// vol and invol are the switches by kind; gap the switch check's
	// warning ("" when within 3% of /proc), note what could not be checked.
	vol, invol int64
	gap, note  string
}

// offPair is a version's off-CPU profiles, its repeats merged.
type offPair struct {
	time, switches *fold.Profile
}

// errNoOffCPU says a profiled window has no off-CPU files at all: it was
// recorded without the off-CPU program.
var errNoOffCPU = errors.New("recorded without off-CPU profiles")

// readOffCPU reads the off-CPU profile of a run directory and applies the
// map. A directory with neither off-CPU file gives errNoOffCPU; one with
// only one of them, or an unreadable one, another error.
func readOffCPU(dir, server string, m *symbolmap.Map) (*offRun, error) {
	present := false
	for _, name := range []string{rundir.OffCPUFile, rundir.OffCPUSwitchesFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			present = true
		}
	}
	if !present {
		return nil, errNoOffCPU
	}
	t, s, err := rundir.ReadOffCPU(dir)
	if err != nil {
		return nil, err
	}
	if t.Meta == nil || t.Meta.Operations <= 0 {
		return nil, fmt.Errorf("%s has no operations to divide the off-CPU profile by", filepath.Join(dir, rundir.MetaFile))
	}
	o := &offRun{}
	for i, p := range []*fold.Profile{t, s} {
		mm := *p.Meta
		mm.Label = server
		p.Meta = &mm
		mp, _ := m.Apply(p)
		if mp.Meta == nil {
			mp.Meta = p.Meta
		}
		if i == 0 {
			o.time = mp
		} else {
			o.switches = mp
		}
	}
	f := diff.Summarize(o.switches, diff.Options{}).Profile
	o.vol, o.invol = f.Voluntary, f.Involuntary
	meta := o.switches.Meta
	// record's own check: run.json's off_cpu block (with /proc's counts,
	// the minimum stretch and the switches of threads that exited, which
	// /proc cannot count), with the profile's counts.
	check := fold.OffCPU{ProcVoluntary: meta.VoluntaryCtxSwitches, ProcInvoluntary: meta.InvoluntaryCtxSwitches}
	if meta.OffCPU != nil {
		check = *meta.OffCPU
	}
	check.Voluntary, check.Involuntary = o.vol, o.invol
	switch {
	case meta.OffCPU != nil:
		if check.MinBlockMicros > 0 {
			o.note = fmt.Sprintf("switches not checked against /proc: stretches off the CPU shorter than %d µs were left out", check.MinBlockMicros)
		}
	case meta.VoluntaryCtxSwitches+meta.InvoluntaryCtxSwitches == 0:
		o.note = "switches not checked against /proc: run.json has neither an off_cpu block nor /proc's context switches"
	}
	if o.note == "" {
		o.gap = check.SwitchGap()
	}
	return o, nil
}

// offKinds are a switches or time profile's voluntary and involuntary
// counts, per operation.
func offKinds(p *fold.Profile) (vol, invol float64) {
	f := diff.Summarize(p, diff.Options{}).Profile
	ops := float64(p.Meta.Operations)
	return float64(f.Voluntary) / ops, float64(f.Involuntary) / ops
}

// offCPUFigures sets v.OffCPU from the cell's usable runs (nil when none
// has an off-CPU profile; those without one are in its Missing).
func offCPUFigures(v *Version, runs []*loaded) {
	var have []*loaded
	var absent []string
	for _, l := range runs {
		if l.off == nil {
			absent = append(absent, fmt.Sprintf("repeat %d: %s", l.run.Repeat, l.offErr))
			continue
		}
		have = append(have, l)
	}
	if len(have) == 0 {
		v.offMissing = strings.Join(absent, "; ")
		return
	}
	o := &OffCPUFigures{Window: fold.WindowProfiled, Repeats: len(have), Dirs: []string{}, Missing: absent}
	n := len(have)
	cs, vcs, ics := make([]float64, n), make([]float64, n), make([]float64, n)
	us, vus, ius := make([]float64, n), make([]float64, n), make([]float64, n)
	var proc []float64
	var gaps []string
	for i, l := range have {
		o.Dirs = append(o.Dirs, l.run.Dir)
		ops := float64(l.off.switches.Meta.Operations)
		cs[i] = float64(l.off.switches.Total()) / ops
		vcs[i], ics[i] = float64(l.off.vol)/ops, float64(l.off.invol)/ops
		us[i] = float64(l.off.time.Total()) / ops
		vus[i], ius[i] = offKinds(l.off.time)
		if m := l.p.Meta; m.VoluntaryCtxSwitches+m.InvoluntaryCtxSwitches > 0 {
			proc = append(proc, float64(m.VoluntaryCtxSwitches+m.InvoluntaryCtxSwitches)/float64(m.Operations))
		}
		prefix := ""
		if len(runs) > 1 {
			prefix = fmt.Sprintf("repeat %d: ", l.run.Repeat)
		}
		if l.off.gap != "" {
			o.Warnings = append(o.Warnings, prefix+l.off.gap)
			gaps = append(gaps, fmt.Sprintf("repeat %d", l.run.Repeat))
		}
		if l.off.note != "" {
			o.Warnings = append(o.Warnings, prefix+l.off.note)
		}
	}
	o.CSPerOp, o.VoluntaryCSPerOp, o.InvoluntaryCSPerOp = figureOf(cs), figureOf(vcs), figureOf(ics)
	o.MicrosPerOp, o.VoluntaryMicrosPerOp, o.InvoluntaryMicrosPerOp = figureOf(us), figureOf(vus), figureOf(ius)
	if len(proc) == n {
		o.ProcCSPerOp = figureOf(proc)
	}
	if len(gaps) > 0 {
		o.Untrusted = fmt.Sprintf("the off-CPU switches of %s differ from /proc's by more than %d%%", strings.Join(gaps, ", "), fold.OffCPUGapPct)
	}
	v.OffCPU = o
}

// offCPURelative fills every cell's off-CPU figures relative to the
// base's, and with repeats their tests against the base's at alpha.
func offCPURelative(w *Workload, base string, alpha float64) {
	bv := w.version(base)
	if bv == nil || bv.OffCPU == nil {
		return
	}
	b := bv.OffCPU
	var tests family
	defer func() { tests.judge(alpha) }()
	for _, v := range w.Versions {
		o := v.OffCPU
		if o == nil {
			continue
		}
		if v.Server != base && o.Repeats >= 2 && b.Repeats >= 2 {
			tests.add(&o.CSPerOpTest, diff.Compare(b.CSPerOp.Values, o.CSPerOp.Values, alpha))
			tests.add(&o.MicrosPerOpTest, diff.Compare(b.MicrosPerOp.Values, o.MicrosPerOp.Values, alpha))
		}
		o.Relative = &OffCPURelative{
			CSPerOp: rel(o.CSPerOp, b.CSPerOp), VoluntaryCSPerOp: rel(o.VoluntaryCSPerOp, b.VoluntaryCSPerOp),
			InvoluntaryCSPerOp: rel(o.InvoluntaryCSPerOp, b.InvoluntaryCSPerOp),
			MicrosPerOp:        rel(o.MicrosPerOp, b.MicrosPerOp), VoluntaryMicrosPerOp: rel(o.VoluntaryMicrosPerOp, b.VoluntaryMicrosPerOp),
			InvoluntaryMicrosPerOp: rel(o.InvoluntaryMicrosPerOp, b.InvoluntaryMicrosPerOp),
		}
	}
}

// mergeOffCPU merges the off-CPU profiles of a cell's repeats: stacks
// summed, and operations summed with them, so that the merged profile's
// per-op figures (fold.Profile.PerOp: total over operations) are the
// repeats pooled. Nil when no repeat has an off-CPU profile.
func mergeOffCPU(server string, runs []*loaded) (*offPair, error) {
	var ts, ss []*fold.Profile
	var ops int64
	var window float64
	for _, l := range runs {
		if l.off == nil {
			continue
		}
		ts, ss = append(ts, l.off.time), append(ss, l.off.switches)
		ops += l.off.time.Meta.Operations
		window += l.off.time.Meta.WindowSeconds
	}
	if len(ts) == 0 {
		return nil, nil
	}
	if len(ts) == 1 {
		return &offPair{time: ts[0], switches: ss[0]}, nil
	}
	out := &offPair{}
	for i, ps := range [][]*fold.Profile{ts, ss} {
		mp, err := ps[0].Merge(ps[1:]...)
		if err != nil {
			return nil, fmt.Errorf("off-CPU profiles: %w", err)
		}
		mp.Meta = &fold.Meta{Format: 1, Label: server, WindowSeconds: window, Operations: ops}
		if i == 0 {
			out.time = mp
		} else {
			out.switches = mp
		}
	}
	return out, nil
}

// computeOffCPU merges each version's off-CPU profiles and compares the
// base's with every other version's: the change per operation of
// switches and of time off the CPU, attributed to the map's subsystems
// by diff.Compute as `flamediff diff --off-cpu` does.
func computeOffCPU(rep *Report, w *Workload, present []string, runsOf map[string][]*loaded, m *symbolmap.Map) error {
	for _, srv := range present {
		p, err := mergeOffCPU(srv, runsOf[srv])
		if err != nil {
			return fmt.Errorf("benchmark report: %s on %s: %w", w.Name, srv, err)
		}
		if p != nil {
			w.offMerged[srv] = p
		}
	}
	base := w.offMerged[rep.Base]
	if base == nil {
		return nil
	}
	labels := []string{rep.Base}
	var ts, ss []*fold.Profile
	for _, srv := range present {
		if p := w.offMerged[srv]; p != nil && srv != rep.Base {
			labels = append(labels, srv)
			ts, ss = append(ts, p.time), append(ss, p.switches)
		}
	}
	if len(ts) == 0 {
		return nil
	}
	o := diff.Options{Labels: labels}
	if m.HasSubsystems() {
		o.Classify, o.SubsystemNames = m.Subsystem, m.Subsystems()
	}
	rs, err := diff.Compute(base.switches, ss, o)
	if err != nil {
		return fmt.Errorf("benchmark report: %s: off-CPU switches: %w", w.Name, err)
	}
	rt, err := diff.Compute(base.time, ts, o)
	if err != nil {
		return fmt.Errorf("benchmark report: %s: off-CPU time: %w", w.Name, err)
	}
	var sw, tm family
	for ti := range ts {
		c := &OffCPUComparison{
			Server: labels[ti+1], Window: fold.WindowProfiled,
			Switches: offAttribution(rs, ti), Time: offAttribution(rt, ti),
		}
		if m.HasSubsystems() {
			pick := func(o *offRun) *fold.Profile { return o.switches }
			offPartTests(c.Switches, runsOf[rep.Base], runsOf[c.Server], m, pick, rep.Alpha, &sw)
			pick = func(o *offRun) *fold.Profile { return o.time }
			offPartTests(c.Time, runsOf[rep.Base], runsOf[c.Server], m, pick, rep.Alpha, &tm)
		}
		w.OffCPUComparisons = append(w.OffCPUComparisons, c)
	}
	sw.judge(rep.Alpha)
	tm.judge(rep.Alpha)
	return nil
}

// offPartTests gives each part of a, with two repeats or more with
// off-CPU profiles on both sides, the subsystem's figure per operation in
// every repeat (its share of the repeat's profile, picked by pick, times
// the repeat's per-op total), the differences repeat by repeat, and a
// test of the base's repeats against the target's, added to f.
func offPartTests(a *OffCPUAttribution, base, target []*loaded, m *symbolmap.Map, pick func(*offRun) *fold.Profile, alpha float64, f *family) {
	perRepeat := func(runs []*loaded) map[string][]float64 {
		out := map[string][]float64{}
		for _, l := range runs {
			if l.off == nil {
				continue
			}
			for _, sh := range diff.Subsystems(pick(l.off), m.Subsystem, m.Subsystems()) {
				out[sh.Name] = append(out[sh.Name], sh.MicrosPerOp)
			}
		}
		return out
	}
	bs, ts := perRepeat(base), perRepeat(target)
	for i := range a.Parts {
		p := &a.Parts[i]
		b, t := bs[p.Subsystem], ts[p.Subsystem]
		if len(b) < 2 || len(t) < 2 {
			continue
		}
		p.Base, p.Target = figureOf(b), figureOf(t)
		if len(b) == len(t) {
			for k := range b {
				p.RoundDeltas = append(p.RoundDeltas, t[k]-b[k])
			}
		}
		f.add(&p.Test, diff.Compare(b, t, alpha))
	}
}

// offAttribution is target ti's change per operation in r, with the
// subsystems' parts when r has an attribution.
func offAttribution(r *diff.Result, ti int) *OffCPUAttribution {
	b, t := r.Summaries[0].Profile, r.Summaries[ti+1].Profile
	kind := func(f diff.RunFigures, v int64) float64 {
		if f.Operations == 0 {
			return 0
		}
		return float64(v) / float64(f.Operations)
	}
	a := &OffCPUAttribution{
		Quantity: b.Quantity, Unit: b.PerOpUnit, BasePerOp: b.PerOp, TargetPerOp: t.PerOp,
		Delta:            report.Round(t.PerOp, 2) - report.Round(b.PerOp, 2),
		DeltaVoluntary:   kind(t, t.Voluntary) - kind(b, b.Voluntary),
		DeltaInvoluntary: kind(t, t.Involuntary) - kind(b, b.Involuntary),
		Parts:            []OffCPUPart{},
	}
	if ti >= len(r.Attribution) {
		return a
	}
	at := r.Attribution[ti]
	a.BasePerOp, a.TargetPerOp, a.Delta, a.Sentence = at.BaseMicrosPerOp, at.TargetMicrosPerOp, at.Delta, at.Sentence()
	for _, p := range at.Parts {
		part := OffCPUPart{Subsystem: p.Subsystem, Delta: p.Delta}
		for _, sub := range r.Subsystems {
			if sub.Name == p.Subsystem {
				bv, tv := sub.Profiles[0], sub.Profiles[ti+1]
				part.DeltaVoluntary = kind(t, tv.Voluntary) - kind(b, bv.Voluntary)
				part.DeltaInvoluntary = kind(t, tv.Involuntary) - kind(b, bv.Involuntary)
			}
		}
		a.Parts = append(a.Parts, part)
	}
	return a
}

// offCPUState is Report.OffCPU: OffCPUNone when no usable run has an
// off-CPU profile, OffCPUAll when every one has, else OffCPUSome.
// A run whose off-CPU files are there but cannot be read counts as one
// with a profile for this: it is listed, not taken for a run recorded
// without them.
func offCPUState(all []*loaded) string {
	with, without := 0, 0
	for _, l := range all {
		switch {
		case l.off != nil:
			with++
		case !l.offAbsent:
			with++
			without++
		default:
			without++
		}
	}
	switch {
	case with == 0:
		return OffCPUNone
	case without == 0:
		return OffCPUAll
	}
	return OffCPUSome
}

// offCPUMissing lists the usable runs without an off-CPU profile, when
// some have one.
func offCPUMissing(all []*loaded) []MissingRun {
	var out []MissingRun
	for _, l := range all {
		if l.off == nil {
			out = append(out, MissingRun{Workload: l.run.Workload, Server: l.run.Server, Repeat: l.run.Repeat, Dir: l.run.Dir, Reason: l.offErr})
		}
	}
	return out
}

// loadOffCPU reads the run's off-CPU profile into l, or why it has none.
func (l *loaded) loadOffCPU(m *symbolmap.Map) {
	o, err := readOffCPU(l.run.Dir, l.run.Server, m)
	if err != nil {
		l.offErr, l.offAbsent = err.Error(), errors.Is(err, errNoOffCPU)
		return
	}
	l.off = o
}

// seriesOffCPU is the table (SeriesFamily.Table) of the off-CPU series.
const seriesOffCPU = "off_cpu"

// offCPUSeriesSpecs are the off-CPU figures a version series shows, and
// the kind of graph ("cs" or "us") of their steps.
var offCPUSeriesSpecs = []struct {
	name, key, kind string
	get             func(*OffCPUFigures) *Figure
}{
	{"off-CPU cs/op", "off_cpu.cs_per_op", "cs", func(o *OffCPUFigures) *Figure { return o.CSPerOp }},
	{"off-CPU vol cs/op", "off_cpu.voluntary_cs_per_op", "cs", func(o *OffCPUFigures) *Figure { return o.VoluntaryCSPerOp }},
	{"off-CPU invol cs/op", "off_cpu.involuntary_cs_per_op", "cs", func(o *OffCPUFigures) *Figure { return o.InvoluntaryCSPerOp }},
	{"off-CPU µs/op", "off_cpu.us_per_op", "us", func(o *OffCPUFigures) *Figure { return o.MicrosPerOp }},
}

// offCPUSeries are the series of the off-CPU figures over the versions
// vs; nil when none has off-CPU figures.
func offCPUSeries(vs []*Version) []*SeriesFigure {
	var out []*SeriesFigure
	for _, sp := range offCPUSeriesSpecs {
		values := make([][]float64, len(vs))
		for i, v := range vs {
			if v.OffCPU != nil {
				values[i] = sp.get(v.OffCPU).Values
			}
		}
		if f := newSeriesFigure(sp.name, sp.key, values, report.F2); f != nil {
			out = append(out, f)
		}
	}
	return out
}

// offCPUStepGraphs names the differential off-CPU graph of every step of
// the off-CPU series (OffCPUDiffGraphPath from the version before the
// step), when both versions have off-CPU profiles.
func offCPUStepGraphs(w *Workload, figs []*SeriesFigure) {
	for _, f := range figs {
		kind := "cs"
		for _, sp := range offCPUSeriesSpecs {
			if sp.key == f.Key {
				kind = sp.kind
			}
		}
		for _, st := range f.Steps {
			if w.offMerged[st.Previous] != nil && w.offMerged[st.Server] != nil {
				st.Graph = OffCPUDiffGraphPath(w.Name, st.Previous, st.Server, kind)
			}
		}
	}
}
