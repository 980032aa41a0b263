package diff

import (
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// Options say what Summarize and Compute compute beyond function shares.
type Options struct {
	// IncludeThreads counts Frames[0] (the thread name) as a function.
	IncludeThreads bool
	// Classify and SubsystemNames give subsystem shares (see Subsystems);
	// nil Classify means no subsystem figures and no attribution.
	Classify       Classifier
	SubsystemNames []string
	// IsThreadRoot enables the stack completeness figure; nil means none.
	IsThreadRoot func(string) bool
	// Roots are functions to break down to Depth levels (see Subtree).
	Roots []string
	Depth int
	// KeepUnresolved, NoCollapse and CollapseThreshold shape the
	// breakdowns as in SubtreeOptions; the zero values give the defaults
	// (unresolved frames transparent, chains collapsed at 95%).
	KeepUnresolved    bool
	NoCollapse        bool
	CollapseThreshold float64
	// Labels name the profiles (base first); empty entries, or a nil
	// slice, fall back to the profile's Label(), then "base"/"target N".
	// Duplicates get " (2)", " (3)"... appended so labels stay unique.
	Labels []string
}

func (o Options) subtreeOptions() SubtreeOptions {
	return SubtreeOptions{
		Depth:             o.Depth,
		KeepUnresolved:    o.KeepUnresolved,
		NoCollapse:        o.NoCollapse,
		CollapseThreshold: o.CollapseThreshold,
	}
}

// RunFigures are a profile's totals and, with run metadata, its per-op figures.
type RunFigures struct {
	Label string
	Total int64
	Unit  string
	// CountUnit is what one count stands for: "ns", "period" or "samples"
	// (fold.Profile.CountUnit), as every table and tooltip names it.
	CountUnit string
	// Quantity and PerOpUnit are fold.Profile.Quantity and PerOpUnit:
	// "CPU" and "µs/op" for an on-CPU profile, "off-CPU time" and "µs/op"
	// or "context switches" and "cs/op" for an off-CPU one (OffCPU).
	Quantity  string
	PerOpUnit string
	OffCPU    bool
	// HasPerOp says whether the profile's per-op figure is known
	// (fold.Profile.PerOp: an on-CPU profile needs Meta.HasPerOp, an
	// off-CPU one operations); PerOp is it, in PerOpUnit, and Operations
	// the run's operations. Both are 0 without it.
	HasPerOp   bool
	PerOp      float64
	Operations int64
	// HasCPU says whether the run has CPU per operation (Meta.HasPerOp);
	// CPUSeconds and MicrosPerOp (CPU µs per operation, cpu/o) are 0
	// without it. For an on-CPU profile HasCPU is HasPerOp and
	// MicrosPerOp is PerOp.
	HasCPU        bool
	CPUSeconds    float64
	WindowSeconds float64
	MicrosPerOp   float64
	// Voluntary and Involuntary split Total by the kind of switch, in an
	// off-CPU profile (see WithoutSwitchKind); 0 otherwise.
	Voluntary, Involuntary int64
	// CtxSwitchesPerOp is context switches per operation (cs/o), valid
	// only when HasCtxSwitches (the run measured them).
	CtxSwitchesPerOp float64
	HasCtxSwitches   bool
	// QPS is operations per second (run.json's qps, else operations /
	// window seconds; 0 when unknown). RelativeQPS (rQPS) is QPS divided by
	// the base profile's QPS: 1 for the base, 0 when either is unknown.
	QPS         float64
	RelativeQPS float64
	// SampledPct is the CPU the samples stand for (run.json
	// sampled_cpu_seconds) in percent of the CPU the process was
	// accounted (cpu_seconds) less the off-CPU program's time charged to
	// it (fold.Meta.SampledPct), valid only when HasSampled: a sampler
	// that misses CPU shows below 100 (docs/fidelity.md).
	SampledPct float64
	HasSampled bool
	// Uncorrected says why the samples were not corrected at context
	// switches (fold.Meta.Uncorrected), "" when they were or it is not
	// known; SwitchCorrected is true when they were
	// (fold.Meta.SwitchCorrected); SwitchesPerCPUSecond is the process's
	// context switches per second of its CPU
	// (fold.Meta.SwitchesPerCPUSecond), 0 when unknown. Together they give
	// SwitchWarning.
	Uncorrected          string
	SwitchCorrected      bool
	SwitchesPerCPUSecond float64
	// Environment is the share of the kernel's scheduling, wake-up and
	// interrupt paths (EnvironmentOf); its Kernel is false, and the shares
	// unknown, when the profile has no kernel frames.
	Environment Environment
}

// Summary is everything a report says about one profile.
type Summary struct {
	Profile   RunFigures
	Functions []FunctionShare
	// Subsystems is nil when Options.Classify is nil.
	Subsystems []SubsystemShare
	// Subtrees has one entry per Options.Roots, in that order.
	Subtrees []*SubtreeResult
	// Completeness is nil when Options.IsThreadRoot is nil.
	Completeness *Completeness
	// Recorded is what the run recorded about its stacks (run.json
	// stack_completeness and unwind); nil when it recorded nothing.
	Recorded *Unwinding
	// PerOpMissing is the sentence to print when per-op figures cannot be
	// computed (the profile has no run metadata with CPU and operations);
	// "" when they can.
	PerOpMissing string
}

// Summarize computes the shares of one profile (see Functions, Subsystems,
// Subtree, StackCompleteness) and its run figures. An off-CPU profile's
// breakdowns leave out the switch-kind leaf (WithoutSwitchKind); it has
// no kernel environment and no recorded unwinding (those describe the
// run's on-CPU samples).
func Summarize(p *fold.Profile, opts Options) *Summary {
	label := p.Label()
	if len(opts.Labels) > 0 && opts.Labels[0] != "" {
		label = opts.Labels[0]
	}
	if label == "" {
		label = "profile"
	}
	s := &Summary{
		Profile:   runFigures(p, label),
		Functions: Functions(p, SharesOptions{IncludeThreads: opts.IncludeThreads}),
	}
	if s.Profile.QPS > 0 {
		s.Profile.RelativeQPS = 1
	}
	if opts.Classify != nil {
		s.Subsystems = Subsystems(p, opts.Classify, opts.SubsystemNames)
	}
	stripped := WithoutSwitchKind(p)
	for _, r := range opts.Roots {
		s.Subtrees = append(s.Subtrees, Subtree(stripped, r, opts.subtreeOptions()))
	}
	if opts.IsThreadRoot != nil {
		c := StackCompleteness(stripped, opts.IsThreadRoot)
		s.Completeness = &c
	}
	if !p.IsOffCPU() {
		s.Recorded = RecordedUnwinding(p.Meta)
	}
	if !s.Profile.HasPerOp {
		s.PerOpMissing = perOpMissing([]string{label}, 1, p.IsOffCPU())
	}
	return s
}

func runFigures(p *fold.Profile, label string) RunFigures {
	f := RunFigures{Label: label, Total: p.Total(), Unit: p.Unit, CountUnit: p.CountUnit(),
		Quantity: p.Quantity(), PerOpUnit: p.PerOpUnit(), OffCPU: p.IsOffCPU()}
	if f.Unit == "" {
		f.Unit = fold.UnitSamples
	}
	if f.OffCPU {
		for _, s := range p.Stacks {
			_, k := stackKind(true, s.Frames)
			kinds(k, s.Value, &f.Voluntary, &f.Involuntary)
		}
	} else {
		f.Environment = EnvironmentOf(p)
	}
	m := p.Meta
	if m == nil {
		return f
	}
	f.WindowSeconds = m.WindowSeconds
	f.QPS = m.QPS
	if f.QPS == 0 && m.WindowSeconds > 0 {
		f.QPS = float64(m.Operations) / m.WindowSeconds
	}
	if v, ok := p.PerOp(); ok {
		f.HasPerOp, f.PerOp, f.Operations = true, v, m.Operations
	}
	if f.OffCPU && m.Operations > 0 && m.VoluntaryCtxSwitches+m.InvoluntaryCtxSwitches > 0 {
		f.HasCtxSwitches = true
		f.CtxSwitchesPerOp = m.CtxSwitchesPerOp()
	}
	if !m.HasPerOp() {
		return f
	}
	f.HasCPU = true
	f.CPUSeconds = m.CPUSeconds()
	f.MicrosPerOp = m.CPUMicrosPerOp()
	if f.OffCPU {
		return f
	}
	if pct := m.SampledPct(); pct > 0 {
		f.HasSampled = true
		f.SampledPct = pct
	}
	if m.VoluntaryCtxSwitches+m.InvoluntaryCtxSwitches > 0 {
		f.HasCtxSwitches = true
		f.CtxSwitchesPerOp = m.CtxSwitchesPerOp()
	}
	f.Uncorrected, f.SwitchCorrected, f.SwitchesPerCPUSecond = m.Uncorrected(), m.SwitchCorrected(), m.SwitchesPerCPUSecond()
	return f
}

// perOpMissing is the sentence for profiles without per-op metadata.
func perOpMissing(missing []string, n int, offCPU bool) string {
	what := "per-op figures (CPU µs per operation) need run metadata: a run directory whose run.json gives cpu_seconds and operations"
	if offCPU {
		what = "per-op figures (off-CPU µs or switches per operation) need run metadata: a run directory whose run.json gives operations"
	}
	if n == 1 {
		return what
	}
	return fmt.Sprintf("%s, for every profile; missing for %s", what, strings.Join(missing, ", "))
}

// labels returns one unique label per profile.
func labels(ps []*fold.Profile, given []string) []string {
	out := make([]string, len(ps))
	used := make(map[string]int)
	for i, p := range ps {
		l := ""
		if i < len(given) {
			l = given[i]
		}
		if l == "" {
			l = p.Label()
		}
		if l == "" {
			if i == 0 {
				l = "base"
			} else {
				l = fmt.Sprintf("target %d", i)
			}
		}
		used[l]++
		if k := used[l]; k > 1 {
			l = fmt.Sprintf("%s (%d)", l, k)
		}
		out[i] = l
	}
	return out
}
