package benchreport

import (
	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
)

// Report is the computed report of a benchmark matrix. Its exported fields
// are what report.json holds (see the package documentation for the
// schema); the writers render it.
type Report struct {
	Base    string   `json:"base"`
	Servers []string `json:"servers"`
	Repeats int      `json:"repeats"`
	// FiguresWindow says where the throughput and per-op tables come
	// from: "unprofiled", "profiled" or "mixed" (over every cell).
	FiguresWindow string       `json:"figures_window"`
	Alpha         float64      `json:"alpha"`
	Roots         []string     `json:"roots"`
	Depth         int          `json:"depth"`
	Map           string       `json:"map"`
	Missing       []MissingRun `json:"missing"`
	Workloads     []*Workload  `json:"workloads"`
	// Placement says where the runs' servers and clients ran (run.json
	// placement); "" when no run recorded it.
	Placement string `json:"placement,omitempty"`
	// OffCPU says whether the profiled windows have off-CPU profiles:
	// OffCPUAll (every usable run), OffCPUSome, or OffCPUNone (the report
	// has no off-CPU figures); OffCPUMissing lists, with OffCPUSome, the
	// usable runs without one and why.
	OffCPU        string       `json:"off_cpu,omitempty"`
	OffCPUMissing []MissingRun `json:"off_cpu_missing,omitempty"`

	svg       bool
	subsystem func([]string) string
	subNames  []string
}

// MissingRun is a run that gave no figures, and why.
type MissingRun struct {
	Workload string `json:"workload"`
	Server   string `json:"server"`
	// Repeat is 0 when no run at all was given for the server and workload.
	Repeat int    `json:"repeat"`
	Dir    string `json:"dir,omitempty"`
	Reason string `json:"reason"`
}

// Workload is the part of the report about one workload.
type Workload struct {
	Name string `json:"name"`
	// Versions has one entry per Report.Servers, in that order.
	Versions    []*Version    `json:"versions"`
	Subtrees    []*Subtree    `json:"subtrees"`
	Comparisons []*Comparison `json:"comparisons"`
	Notes       []string      `json:"notes,omitempty"`
	// Host is each version's whole-machine figures (run.json host); nil
	// when no run recorded them.
	Host []*HostRow `json:"host,omitempty"`
	// Series is the workload's figures over its versions in server order
	// and where they stepped beyond the noise; nil with fewer than three
	// versions with figures.
	Series *Series `json:"series,omitempty"`
	// RowsPerOp, when not 0, is the rows each operation reads
	// (Options.RowsPerOp) and ThroughputUnit RowsUnit: the workload's
	// throughput is each cell's Throughput, rows per second.
	RowsPerOp      int    `json:"rows_per_op,omitempty"`
	ThroughputUnit string `json:"throughput_unit,omitempty"`

	// OffCPUComparisons compare the base's off-CPU profiles with each
	// other version's that has them; nil when the base has none.
	OffCPUComparisons []*OffCPUComparison `json:"off_cpu_comparisons,omitempty"`

	// offMerged holds each version's off-CPU profiles, repeats merged.
	offMerged map[string]*offPair
	// merged holds each usable version's repeats merged, with the median
	// per-op figures (see the package documentation), by server.
	merged map[string]*fold.Profile
}

// Version is one cell of the matrix: a server version under a workload.
type Version struct {
	Server string `json:"server"`
	// Missing says why the cell has no figures; "" when it has.
	Missing string   `json:"missing,omitempty"`
	Repeats int      `json:"repeats"`
	Dirs    []string `json:"dirs"`

	// FiguresWindow says which windows QPS and the per-op figures come
	// from: "unprofiled" (every repeat's unprofiled window), "profiled"
	// (no unprofiled window was given) or "mixed". MeasureDirs are the
	// unprofiled windows' run directories; Dirs the profiled ones'.
	FiguresWindow string   `json:"figures_window,omitempty"`
	MeasureDirs   []string `json:"measure_dirs,omitempty"`

	QPS *Figure `json:"qps,omitempty"`
	// Throughput is, for a workload with RowsPerOp, QPS times it repeat
	// by repeat, in the workload's ThroughputUnit (rows/s); nil otherwise.
	Throughput   *Figure `json:"throughput,omitempty"`
	CPUPerOp     *Figure `json:"cpu_us_per_op,omitempty"`
	CSPerOp      *Figure `json:"cs_per_op,omitempty"`
	ReadsPerOp   *Figure `json:"reads_per_op,omitempty"`
	ReadKBPerOp  *Figure `json:"read_kb_per_op,omitempty"`
	WriteKBPerOp *Figure `json:"write_kb_per_op,omitempty"`

	// RQPS is the median QPS over the base's; nil without a base.
	RQPS     *float64  `json:"rqps,omitempty"`
	Relative *Relative `json:"relative,omitempty"`
	// QPSTest and CPUPerOpTest compare the repeats with the base's; nil
	// for the base, or with fewer than two repeats on either side.
	QPSTest      *Test `json:"qps_test,omitempty"`
	CPUPerOpTest *Test `json:"cpu_us_per_op_test,omitempty"`

	// ProfiledQPS and ProfiledCPUPerOp are the profiled windows' own
	// figures, which scale the profile (the attribution and the top
	// functions).
	ProfiledQPS      *Figure `json:"profiled_qps,omitempty"`
	ProfiledCPUPerOp *Figure `json:"profiled_cpu_us_per_op,omitempty"`
	// SamplerEffect is, per repeat, the profiled window's QPS over the
	// unprofiled window's: the sampler's effect on throughput (below 1 it
	// costs, above 1 it helps, as per-CPU events can by keeping CPUs out
	// of idle); SamplerEffectTest compares the two windows' QPS over the
	// repeats. Nil without unprofiled windows (and the test with fewer
	// than two repeats).
	SamplerEffect     *Figure `json:"sampler_effect,omitempty"`
	SamplerEffectTest *Test   `json:"sampler_effect_test,omitempty"`
	// QPSCVPct is, over the repeats whose figures window recorded the
	// workload's per-second QPS, their coefficient of variation (standard
	// deviation over mean, in percent): the within-run noise.
	QPSCVPct *Figure `json:"qps_cv_pct,omitempty"`
	// Outliers are the repeats whose o/s or cpu/o differ from the cell's
	// median by more than the noise allows (see the package
	// documentation); Untrusted, when not empty, says why the cell's
	// figures cannot be trusted, and every table marks the cell.
	Outliers  []Outlier `json:"outliers,omitempty"`
	Untrusted string    `json:"untrusted,omitempty"`

	// repeatNums are the repeat numbers of the usable runs, in order.
	repeatNums []int

	// StackCompletePct is, over the repeats whose run.json recorded
	// stack_completeness, the share of samples whose stack reaches a
	// thread root (0 to 100); nil when no repeat recorded it. Unwind
	// names how their stacks were walked ("fp", "cfi+fp", "dwarf"; the
	// repeats' methods, ", "-joined, when they differ).
	StackCompletePct *Figure `json:"stack_complete_pct,omitempty"`
	Unwind           string  `json:"unwind,omitempty"`
	// SampledPct is, over the repeats whose run.json recorded
	// sampled_cpu_seconds, the CPU the samples stand for in percent of
	// the CPU the process was accounted (docs/fidelity.md); nil when no
	// repeat recorded it.
	SampledPct *Figure `json:"sampled_pct,omitempty"`
	// SchedWakePct is, over the repeats whose profiled window kept kernel
	// frames, the share of its samples (0 to 100) in the kernel's
	// scheduling, wake-up and IPI paths (diff.Environment): how much of
	// the server's CPU is the machine moving threads rather than the
	// database working; nil when no repeat kept kernel frames.
	SchedWakePct *Figure `json:"sched_wake_pct,omitempty"`
	// Warnings are the sentences about the cell's figures: the stack
	// completeness warning (diff.Unwinding.Warning) of the repeat whose
	// stacks reach a thread root least often, when it is below
	// diff.CompleteEnough.
	Warnings []string `json:"warnings,omitempty"`
	// OffCPU are the off-CPU figures of the profiled windows; nil when no
	// repeat has an off-CPU profile.
	OffCPU *OffCPUFigures `json:"off_cpu,omitempty"`
	// offMissing says why no repeat has an off-CPU profile, when OffCPU
	// is nil.
	offMissing string
}

// Outlier is one repeat of a cell whose figure stands out from the others.
type Outlier struct {
	// Figure is "o/s" or "cpu/o µs".
	Figure string  `json:"figure"`
	Repeat int     `json:"repeat"`
	Value  float64 `json:"value"`
	// Median is the cell's median over its repeats; DeviationPct the
	// repeat's difference from it in percent of it, LimitPct the most the
	// noise allows.
	Median       float64 `json:"median"`
	DeviationPct float64 `json:"deviation_pct"`
	LimitPct     float64 `json:"limit_pct"`
}

// Figure summarises one figure over the repeats of a cell.
type Figure struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	Values []float64 `json:"values"`
}

// Relative holds a version's medians divided by the base's; a field is nil
// when either side lacks the figure or the base's is 0.
type Relative struct {
	QPS          *float64 `json:"qps,omitempty"`
	CPUPerOp     *float64 `json:"cpu_us_per_op,omitempty"`
	CSPerOp      *float64 `json:"cs_per_op,omitempty"`
	ReadsPerOp   *float64 `json:"reads_per_op,omitempty"`
	ReadKBPerOp  *float64 `json:"read_kb_per_op,omitempty"`
	WriteKBPerOp *float64 `json:"write_kb_per_op,omitempty"`
}

// Test is the outcome of diff.Compare between the base's repeats and a
// version's: Significant is false when the difference is within noise.
// The tests a table shows are judged together (diff.Family): Family is how
// many, Level the level this one was judged at (the report's Alpha divided
// by up to Family).
type Test struct {
	WelchP          float64 `json:"welch_p"`
	PermutationP    float64 `json:"permutation_p"`
	MinPermutationP float64 `json:"min_permutation_p"`
	Significant     bool    `json:"significant"`
	Level           float64 `json:"level"`
	Family          int     `json:"family"`
}

// Subtree is the breakdown of one root function across the versions of a
// workload.
type Subtree struct {
	Root  string `json:"root"`
	Depth int    `json:"depth"`
	// Servers are the columns: the versions with figures, in report order.
	Servers           []string      `json:"servers"`
	Threshold         float64       `json:"threshold"`
	SkippedUnresolved bool          `json:"skipped_unresolved"`
	Summaries         []string      `json:"summaries"`
	Rows              []*SubtreeRow `json:"rows"`
}

// SubtreeRow is one row of a Subtree; its slices have one entry per column.
type SubtreeRow struct {
	Path       []string   `json:"path"`
	Level      int        `json:"level"`
	Label      string     `json:"label"`
	Chain      []string   `json:"chain,omitempty"`
	Unresolved bool       `json:"unresolved,omitempty"`
	Shares     []Figure   `json:"shares"`
	DeltaPP    []*float64 `json:"delta_pp"`
	Tests      []*Test    `json:"tests"`
	// ends are the chain end's median shares, when they differ from the row's.
	ends []float64
}

// Comparison is what changed in CPU per operation between the base and one
// version of a workload.
type Comparison struct {
	Server string `json:"server"`
	// Window is where the per-op figures of the comparison come from:
	// "profiled", the windows the profiles were sampled in.
	Window            string          `json:"window"`
	BaseMicrosPerOp   float64         `json:"base_us_per_op"`
	TargetMicrosPerOp float64         `json:"target_us_per_op"`
	Attribution       *Attribution    `json:"attribution,omitempty"`
	TopSelf           []FunctionDelta `json:"top_self"`
}

// Attribution splits a change in CPU per operation among subsystems (see
// diff.Attribution).
type Attribution struct {
	DeltaMicrosPerOp float64 `json:"delta_us_per_op"`
	Parts            []Part  `json:"parts"`
	Sentence         string  `json:"sentence"`
}

// Part is one subsystem's share of an Attribution. With repeats, Base and
// Target are the subsystem's µs/op in each profiled repeat of the two
// versions (its share of the repeat's profile times the repeat's own
// cpu/o), RoundDeltas the differences repeat by repeat (target − base, in
// repeat order, when both have as many), and Test compares Base with
// Target; the parts of every comparison of a workload are judged together.
type Part struct {
	Subsystem        string    `json:"subsystem"`
	DeltaMicrosPerOp float64   `json:"delta_us_per_op"`
	Base             *Figure   `json:"base_us_per_op,omitempty"`
	Target           *Figure   `json:"target_us_per_op,omitempty"`
	RoundDeltas      []float64 `json:"round_deltas,omitempty"`
	Test             *Test     `json:"test,omitempty"`
}

// FunctionDelta is the change of one function's self CPU per operation.
type FunctionDelta struct {
	Name              string  `json:"name"`
	BaseMicrosPerOp   float64 `json:"base_us_per_op"`
	TargetMicrosPerOp float64 `json:"target_us_per_op"`
	DeltaMicrosPerOp  float64 `json:"delta_us_per_op"`
}

func figureOf(xs []float64) *Figure {
	s := diff.SampleOf(xs)
	return &Figure{Median: s.Median, Min: s.Min, Max: s.Max, Values: append([]float64{}, xs...)}
}

func testOf(s diff.Significance) *Test {
	return &Test{WelchP: s.WelchP, PermutationP: s.PermutationP, MinPermutationP: s.MinPermutationP, Significant: s.Significant, Level: s.Level, Family: s.Family}
}

// family collects the tests one table shows, to be judged together
// (diff.Family) once all are in.
type family struct {
	sigs []*diff.Significance
	dsts []**Test
}

// add puts s in the family; judge sets *dst.
func (f *family) add(dst **Test, s diff.Significance) {
	f.sigs = append(f.sigs, &s)
	f.dsts = append(f.dsts, dst)
}

// judge judges the family at alpha and sets every test.
func (f *family) judge(alpha float64) {
	diff.Family(f.sigs, alpha)
	for i, s := range f.sigs {
		*f.dsts[i] = testOf(*s)
	}
}

// version returns the workload's cell of server, or nil.
func (w *Workload) version(server string) *Version {
	for _, v := range w.Versions {
		if v.Server == server {
			return v
		}
	}
	return nil
}
