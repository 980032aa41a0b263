package report

import (
	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/symbolmap"
)

// The JSON of `flamediff report` and `flamediff diff` (ProfileJSON,
// DiffJSON).
//
// # JSON schema
//
// The JSON field names are an interface: they stay stable, fields are only
// ever added. Numbers are not rounded. Percentages are of the profile's
// total value (samples, or sample periods for perf input) and run from 0 to
// 100; "pp" are percentage points; "us_per_op" are CPU microseconds per
// operation (share × cpu_seconds × 1e6 / operations), or, for an off-CPU
// profile (report and diff --off-cpu), per operation in its "per_op_unit":
// microseconds off the CPU ("µs/op") or context switches ("cs/op"), share
// × its total / operations. Fields marked
// "optional" are left out when the figure is unknown; a ratio that is
// undefined (the base has none of it) is null.
//
// Shared objects:
//
//	profile = {
//	  "label": string,            // run.json label, else the file name
//	  "unit": "samples"|"period"|"offcpu_us"|"switches", // what "total" and every value count
//	  "count_unit": "samples"|"ns"|"period"|"us"|"switches", // the same, as tables and flame graphs name it:
//	                              //   ns for period sums of cpu-clock (CPU nanoseconds),
//	                              //   us (off the CPU) and switches for off-CPU profiles
//	  "quantity": string,         // optional, off-CPU only: "off-CPU time" or "context switches"
//	  "per_op_unit": string,      // optional, off-CPU only: "µs/op" or "cs/op", the unit of
//	                              //   every *us_per_op field of the document
//	  "per_op": float,            // optional, off-CPU only: total / operations
//	  "voluntary": int,           // optional, off-CPU only: the part of total whose stacks end
//	  "involuntary": int,         //   in [voluntary] (blocked) or [involuntary] (preempted)
//	  "total": int,               // sum of all stack values
//	  "cpu_seconds": float,       // optional: process CPU over the window (of the run, for off-CPU too)
//	  "operations": int,          // optional: operations in the window
//	  "window_seconds": float,    // optional
//	  "cpu_us_per_op": float,     // optional: cpu/o
//	  "cs_per_op": float,         // optional: context switches per op (cs/o)
//	  "qps": float,               // optional: operations per second
//	  "rqps": float,              // optional: qps / base qps (1 for the base)
//	  "sampled_pct": float,       // optional: CPU the samples stand for, % of cpu_seconds
//	  "completeness": {           // optional: stacks not starting at a thread root
//	    "incomplete": int, "incomplete_pct": float
//	  },
//	  "stacks": {                 // optional: what the run recorded (run.json stack_completeness, unwind)
//	    "complete_pct": float,    // samples whose stack reaches a thread root (default roots), 0 to 100
//	    "method": string,         // optional: how stacks were walked: "fp", "cfi+fp", "dwarf"
//	    "object": string,         // optional: the object where most walks stopped
//	    "stopped": int,           // optional: walks that stopped in it
//	    "note": string            // optional: why frames were lost in it ("no .eh_frame")
//	  }
//	}
//	subsystem = {"name": string, "value": int, "pct": float, "us_per_op": float (optional),
//	             "voluntary": int, "involuntary": int (optional, off-CPU only: value split by kind)}
//	rewrite = {"original": string, "result": string ("" when elided), "rule": string, "value": int}
//
// `flamediff report --format json` prints one object:
//
//	{
//	  "profile": profile,
//	  "per_op_missing": string,   // optional: why per-op figures are absent
//	  "functions_total": int,     // functions in the profile (before --top)
//	  "functions": [{             // sorted by inclusive desc, then name; --top applies
//	    "name": string,
//	    "inclusive": int, "self": int,
//	    "inclusive_pct": float, "self_pct": float,
//	    "inclusive_us_per_op": float, "self_us_per_op": float, // optional
//	    "voluntary": int, "involuntary": int  // optional, off-CPU only: inclusive split by kind
//	  }],
//	  "subsystems": [subsystem],  // optional (--map with subsystems), map order, sums to 100%
//	  "subtrees": [{              // one per --root
//	    "root": string, "depth": int,
//	    "summary": string,        // "mysqld_stmt_execute 68.35% → mysql_execute_command 66.43%: trans_commit_stmt 40.68%, ..."
//	    "nodes": [{               // depth first, root first
//	      "path": [string],       // root ... node (each row's first function)
//	      "level": int,           // 0 for the root
//	      "value": int, "self": int,
//	      "pct": float,           // of the profile total
//	      "pct_of_root": float,
//	      "chain": [string],      // optional: a row merging pass-through calls, first ... last
//	      "end_value": int,       // optional (with chain): value of the chain's last function;
//	      "end_pct": float,       //   "self" and the children are that function's
//	      "unresolved": true      // optional: the "[unresolved]" row, stacks ending inside
//	    }]                        //   unresolved frames ([mariadbd], ...) under the parent
//	  }],
//
// Unless --keep-unresolved, unresolved frames are looked through; unless
// --no-collapse, a callee holding >= 95% of its caller shares its row.
//	  "rewrites": [rewrite],      // optional (--explain)
//	  "warnings": [string]        // optional: e.g. the stack completeness warning
//	}
//
// `flamediff diff --format json` prints one object; every per-profile array
// has the base first, then the targets in command-line order, and every
// per-target array ("delta_pp", "ratio", ...) has one entry per target:
//
//	{
//	  "profiles": [profile],
//	  "per_op_missing": string,   // optional
//	  "functions_total": int,
//	  "functions": [{             // sorted by largest |delta_pp|, then name; --top applies
//	    "name": string,
//	    "profiles": [{"inclusive": int, "self": int, "inclusive_pct": float, "self_pct": float,
//	                  "inclusive_us_per_op": float, "self_us_per_op": float, // per-op optional
//	                  "voluntary": int, "involuntary": int}], // optional, off-CPU only
//	    "delta_pp": [float],      // inclusive_pct(target) - inclusive_pct(base)
//	    "self_delta_pp": [float],
//	    "delta_us_per_op": [float], // optional
//	    "ratio": [float|null],    // inclusive_pct(target) / inclusive_pct(base)
//	    "only_in": string         // optional: label of the one profile it occurs in
//	  }],
//	  "subsystems": [{            // optional; sorted like functions
//	    "name": string,
//	    "profiles": [{"value": int, "pct": float, "us_per_op": float, // us_per_op optional
//	                  "voluntary": int, "involuntary": int}],        // optional, off-CPU only
//	    "delta_pp": [float], "delta_us_per_op": [float] (optional), "ratio": [float|null]
//	  }],
//	  "subtrees": [{
//	    "root": string, "depth": int,
//	    "summaries": [string],    // each profile's one-line summary, as in report
//	    "nodes": [{"path": [string], "level": int,
//	               "chain": [string], "unresolved": true,  // optional, as in report; a chain only
//	                                                       // where it passes through in every profile
//	               "profiles": [{"value": int, "pct": float, "pct_of_root": float,
//	                             "end_value": int, "end_pct": float}], // end_* optional (with chain)
//	               "delta_pp": [float]}]
//	  }],
//	  "attribution": [{           // optional: per target, with per-op figures and subsystems
//	    "base": string, "target": string,
//	    "quantity": string, "unit": string, // optional, off-CPU only: as the profiles' quantity and per_op_unit
//	    "base_us_per_op": float, "target_us_per_op": float,
//	    "delta_us_per_op": float, // rounded to 0.01
//	    "parts": [{"subsystem": string, "delta_us_per_op": float}], // add up exactly to delta_us_per_op (in 0.01 units)
//	    "sentence": string
//	  }],
//	  "rewrites": [{"profile": string, "rewrites": [rewrite]}], // optional (--explain)
//	  "warnings": [string]
//	}

// JSON types; see the schema above.

// JSONCompleteness is a profile's "completeness": its stacks that do not start at a thread root.
type JSONCompleteness struct {
	Incomplete    int64   `json:"incomplete"`
	IncompletePct float64 `json:"incomplete_pct"`
}

// JSONStacks is a profile's "stacks": what its run recorded about its
// stacks (run.json stack_completeness and unwind; see diff.Unwinding).
type JSONStacks struct {
	CompletePct float64 `json:"complete_pct"`
	Method      string  `json:"method,omitempty"`
	Object      string  `json:"object,omitempty"`
	Stopped     int64   `json:"stopped,omitempty"`
	Note        string  `json:"note,omitempty"`
}

// JSONProfile is the schema's "profile": a profile's totals and run figures.
type JSONProfile struct {
	Label            string            `json:"label"`
	Unit             string            `json:"unit"`
	CountUnit        string            `json:"count_unit"`
	Quantity         string            `json:"quantity,omitempty"`
	PerOpUnit        string            `json:"per_op_unit,omitempty"`
	PerOp            *float64          `json:"per_op,omitempty"`
	Voluntary        *int64            `json:"voluntary,omitempty"`
	Involuntary      *int64            `json:"involuntary,omitempty"`
	Total            int64             `json:"total"`
	CPUSeconds       *float64          `json:"cpu_seconds,omitempty"`
	Operations       *int64            `json:"operations,omitempty"`
	WindowSeconds    *float64          `json:"window_seconds,omitempty"`
	CPUMicrosPerOp   *float64          `json:"cpu_us_per_op,omitempty"`
	CtxSwitchesPerOp *float64          `json:"cs_per_op,omitempty"`
	QPS              *float64          `json:"qps,omitempty"`
	RQPS             *float64          `json:"rqps,omitempty"`
	SampledPct       *float64          `json:"sampled_pct,omitempty"`
	Completeness     *JSONCompleteness `json:"completeness,omitempty"`
	Stacks           *JSONStacks       `json:"stacks,omitempty"`
	Environment      *JSONEnvironment  `json:"environment,omitempty"`
}

// JSONEnvironment is the schema's "environment" of a profile recorded with
// kernel frames: the percentage of its samples in the kernel, and in the
// kernel's scheduling, wake-up and interrupt (IPI, idle exit) paths
// (diff.Environment).
type JSONEnvironment struct {
	KernelPct     float64 `json:"kernel_pct"`
	SchedulingPct float64 `json:"scheduling_pct"`
	WakeUpPct     float64 `json:"wake_up_pct"`
	InterruptsPct float64 `json:"interrupts_pct"`
}

// profileJSON is the JSON of a profile's run figures.
func profileJSON(s *diff.Summary) JSONProfile {
	f := s.Profile
	j := JSONProfile{Label: f.Label, Unit: f.Unit, CountUnit: f.CountUnit, Total: f.Total}
	if f.HasPerOp {
		ops := f.Operations
		j.Operations = &ops
	}
	if f.HasCPU {
		j.CPUSeconds = &f.CPUSeconds
		j.CPUMicrosPerOp = ptr(true, f.MicrosPerOp)
	}
	if f.OffCPU {
		j.Quantity, j.PerOpUnit = f.Quantity, f.PerOpUnit
		j.PerOp = ptr(f.HasPerOp, f.PerOp)
		j.Voluntary, j.Involuntary = int64Ptr(true, f.Voluntary), int64Ptr(true, f.Involuntary)
	}
	j.WindowSeconds = ptr(f.WindowSeconds > 0, f.WindowSeconds)
	j.CtxSwitchesPerOp = ptr(f.HasCtxSwitches, f.CtxSwitchesPerOp)
	j.QPS = ptr(f.QPS > 0, f.QPS)
	j.RQPS = ptr(f.RelativeQPS > 0, f.RelativeQPS)
	j.SampledPct = ptr(f.HasSampled, f.SampledPct)
	if c := s.Completeness; c != nil {
		j.Completeness = &JSONCompleteness{Incomplete: c.Incomplete, IncompletePct: c.IncompletePct}
	}
	if u := s.Recorded; u != nil {
		j.Stacks = &JSONStacks{CompletePct: 100 * u.Complete, Method: u.Method, Object: u.Object, Stopped: u.Stopped, Note: u.Note}
	}
	if e := f.Environment; e.Kernel {
		j.Environment = &JSONEnvironment{KernelPct: 100 * e.InKernel, SchedulingPct: 100 * e.Scheduling, WakeUpPct: 100 * e.WakeUp, InterruptsPct: 100 * e.Interrupts}
	}
	return j
}

// JSONFunction is a function's share in a report: its name, then the
// fields of JSONShare at the same level.
type JSONFunction struct {
	Name string `json:"name"`
	JSONShare
}

// JSONSubsystem is the schema's "subsystem" of a report.
type JSONSubsystem struct {
	Name        string   `json:"name"`
	Value       int64    `json:"value"`
	Pct         float64  `json:"pct"`
	MicrosPerOp *float64 `json:"us_per_op,omitempty"`
	Voluntary   *int64   `json:"voluntary,omitempty"`
	Involuntary *int64   `json:"involuntary,omitempty"`
}

// JSONNode is one row of a report's subtree breakdown.
type JSONNode struct {
	Path       []string `json:"path"`
	Level      int      `json:"level"`
	Value      int64    `json:"value"`
	Self       int64    `json:"self"`
	Pct        float64  `json:"pct"`
	PctOfRoot  float64  `json:"pct_of_root"`
	Chain      []string `json:"chain,omitempty"`
	EndValue   *int64   `json:"end_value,omitempty"`
	EndPct     *float64 `json:"end_pct,omitempty"`
	Unresolved bool     `json:"unresolved,omitempty"`
}

// JSONSubtree is the breakdown of one root function in a report.
type JSONSubtree struct {
	Root    string     `json:"root"`
	Depth   int        `json:"depth"`
	Summary string     `json:"summary"`
	Nodes   []JSONNode `json:"nodes"`
}

// JSONRewrite is the schema's "rewrite": one original symbol a map rule renamed or elided.
type JSONRewrite struct {
	Original string `json:"original"`
	Result   string `json:"result"`
	Rule     string `json:"rule"`
	Value    int64  `json:"value"`
}

// rewritesJSON lists the rewrites of an explanation ([] without one).
func rewritesJSON(e *symbolmap.Explanation) []JSONRewrite {
	out := []JSONRewrite{}
	if e == nil {
		return out
	}
	for _, r := range e.Rewrites {
		out = append(out, JSONRewrite{Original: r.Original, Result: r.Result, Rule: r.Rule, Value: r.Value})
	}
	return out
}

// JSONReport is what `flamediff report --format json` prints.
type JSONReport struct {
	Profile        JSONProfile     `json:"profile"`
	PerOpMissing   string          `json:"per_op_missing,omitempty"`
	FunctionsTotal int             `json:"functions_total"`
	Functions      []JSONFunction  `json:"functions"`
	Subsystems     []JSONSubsystem `json:"subsystems,omitempty"`
	Subtrees       []JSONSubtree   `json:"subtrees,omitempty"`
	Rewrites       []JSONRewrite   `json:"rewrites,omitempty"`
	Warnings       []string        `json:"warnings,omitempty"`
}

// JSONShare is a function's figures in one profile.
type JSONShare struct {
	Inclusive            int64    `json:"inclusive"`
	Self                 int64    `json:"self"`
	InclusivePct         float64  `json:"inclusive_pct"`
	SelfPct              float64  `json:"self_pct"`
	InclusiveMicrosPerOp *float64 `json:"inclusive_us_per_op,omitempty"`
	SelfMicrosPerOp      *float64 `json:"self_us_per_op,omitempty"`
	Voluntary            *int64   `json:"voluntary,omitempty"`
	Involuntary          *int64   `json:"involuntary,omitempty"`
}

// shareJSON is one function's figures; the per-op ones only with perOp.
func shareJSON(incl, self int64, inclPct, selfPct, inclOp, selfOp float64, perOp bool) JSONShare {
	return JSONShare{Inclusive: incl, Self: self, InclusivePct: inclPct, SelfPct: selfPct,
		InclusiveMicrosPerOp: ptr(perOp, inclOp), SelfMicrosPerOp: ptr(perOp, selfOp)}
}

// JSONFunctionDiff is one function of a diff: its figures per profile and changes per target.
type JSONFunctionDiff struct {
	Name             string      `json:"name"`
	Profiles         []JSONShare `json:"profiles"`
	DeltaPP          []float64   `json:"delta_pp"`
	SelfDeltaPP      []float64   `json:"self_delta_pp"`
	DeltaMicrosPerOp []float64   `json:"delta_us_per_op,omitempty"`
	Ratio            []*float64  `json:"ratio"`
	OnlyIn           string      `json:"only_in,omitempty"`
}

// JSONSubsystemValue is a subsystem's figures in one profile of a diff.
type JSONSubsystemValue struct {
	Value       int64    `json:"value"`
	Pct         float64  `json:"pct"`
	MicrosPerOp *float64 `json:"us_per_op,omitempty"`
	Voluntary   *int64   `json:"voluntary,omitempty"`
	Involuntary *int64   `json:"involuntary,omitempty"`
}

// JSONSubsystemDiff is one subsystem of a diff.
type JSONSubsystemDiff struct {
	Name             string               `json:"name"`
	Profiles         []JSONSubsystemValue `json:"profiles"`
	DeltaPP          []float64            `json:"delta_pp"`
	DeltaMicrosPerOp []float64            `json:"delta_us_per_op,omitempty"`
	Ratio            []*float64           `json:"ratio"`
}

// JSONNodeValue is a subtree row's figures in one profile of a diff.
type JSONNodeValue struct {
	Value     int64    `json:"value"`
	Pct       float64  `json:"pct"`
	PctOfRoot float64  `json:"pct_of_root"`
	EndValue  *int64   `json:"end_value,omitempty"`
	EndPct    *float64 `json:"end_pct,omitempty"`
}

// JSONNodeDiff is one row of a diff's subtree breakdown.
type JSONNodeDiff struct {
	Path       []string        `json:"path"`
	Level      int             `json:"level"`
	Chain      []string        `json:"chain,omitempty"`
	Unresolved bool            `json:"unresolved,omitempty"`
	Profiles   []JSONNodeValue `json:"profiles"`
	DeltaPP    []float64       `json:"delta_pp"`
}

// JSONSubtreeDiff is the breakdown of one root function in a diff.
type JSONSubtreeDiff struct {
	Root      string         `json:"root"`
	Depth     int            `json:"depth"`
	Summaries []string       `json:"summaries,omitempty"`
	Nodes     []JSONNodeDiff `json:"nodes"`
}

// JSONPart is one subsystem's part of an attribution.
type JSONPart struct {
	Subsystem        string  `json:"subsystem"`
	DeltaMicrosPerOp float64 `json:"delta_us_per_op"`
}

// JSONAttribution splits one target's change in CPU per operation among subsystems.
type JSONAttribution struct {
	Base              string     `json:"base"`
	Target            string     `json:"target"`
	Quantity          string     `json:"quantity,omitempty"`
	Unit              string     `json:"unit,omitempty"`
	BaseMicrosPerOp   float64    `json:"base_us_per_op"`
	TargetMicrosPerOp float64    `json:"target_us_per_op"`
	DeltaMicrosPerOp  float64    `json:"delta_us_per_op"`
	Parts             []JSONPart `json:"parts"`
	Sentence          string     `json:"sentence"`
}

// JSONProfileRewrites are the rewrites of one profile of a diff.
type JSONProfileRewrites struct {
	Profile  string        `json:"profile"`
	Rewrites []JSONRewrite `json:"rewrites"`
}

// JSONDiff is what `flamediff diff --format json` prints.
type JSONDiff struct {
	Profiles       []JSONProfile         `json:"profiles"`
	PerOpMissing   string                `json:"per_op_missing,omitempty"`
	FunctionsTotal int                   `json:"functions_total"`
	Functions      []JSONFunctionDiff    `json:"functions"`
	Subsystems     []JSONSubsystemDiff   `json:"subsystems,omitempty"`
	Subtrees       []JSONSubtreeDiff     `json:"subtrees,omitempty"`
	Attribution    []JSONAttribution     `json:"attribution,omitempty"`
	Rewrites       []JSONProfileRewrites `json:"rewrites,omitempty"`
	Warnings       []string              `json:"warnings,omitempty"`
}
