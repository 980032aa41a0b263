// Package benchreport turns the run directories of a benchmark matrix
// (server versions × sysbench workloads × repeats, each written by
// `flamediff record`: stacks.folded and run.json) into the report a
// performance engineer publishes:
//
//   - rQPS: per workload and version, QPS relative to the base version
//     (medians over repeats), one row per workload, one column per version,
//     as published regression reports lay it out;
//   - per workload, the absolute and relative (to the base) cost per
//     operation: cpu/o (CPU µs), cs/o (context switches), r/o (read
//     operations), rKB/o, wKB/o, and o/s (operations per second);
//   - per workload and root function, the subtree breakdown per version
//     with the symbol map applied (diff.Compute, as `flamediff diff --root`);
//   - the attribution of the change in CPU per operation between the base
//     and each version to the map's subsystems;
//   - with two or more repeats, for every rQPS and cpu/o figure and every
//     subtree share, the median, the spread (min–max) and whether the
//     difference from the base is more than noise (diff.Compare: Welch's
//     t-test and a permutation test), with both p-values;
//   - with three or more versions, every figure as a series over the
//     versions in server order (taken as release order), the version where
//     it stepped beyond the noise and stayed marked (the rule is in
//     series.go and docs/lab.md), with the differential flame graph of the
//     step;
//   - the rQPS matrix also as aligned plain text and as CSV (rqps.txt,
//     rqps.csv);
//   - plain and differential (per-op normalised) flame graphs;
//   - when the profiled windows carry off-CPU profiles (record --off-cpu,
//     the lab's capture.off_cpu), per workload and version the switches
//     and the time off the CPU per operation, voluntary and involuntary
//     apart, beside /proc's switches of the same windows and the
//     unprofiled windows' cs/o; the change of each against the base
//     attributed to the map's subsystems (diff.Compute, as `flamediff diff
//     --off-cpu`); off-CPU and differential off-CPU flame graphs. A
//     repeat whose counted switches differ from /proc's by more than 3%
//     (fold.OffCPU.SwitchGap) is warned about and its cell marked, and a
//     run without off-CPU files beside runs with them is listed (offcpu.go).
//
// A repeat may be two windows (Run.MeasureDir and Run.Dir): one measured
// without a sampler (run.json "window": "unprofiled"), from which the
// throughput and every per-op figure come, and one profiled, from which
// the stacks come, scaled by that window's own CPU and operations (the
// attribution and the top functions); the profiled window's QPS over the
// unprofiled one's is the sampler's effect. Every rQPS, o/s and cpu/o
// cell shows its spread (lowest and highest repeat) and its number of
// repeats. The within-run noise of a cell is the coefficient of variation
// of the workload's per-second QPS (run.json workload_interval_qps); a
// repeat whose o/s or cpu/o differs from the cell's median by more than 3
// times that noise (at least 5%; 10% without per-second figures) is an
// outlier, with three repeats or more, and its cell cannot be trusted: it
// is marked "!" in every table and named in the summary.
//
// Build loads and computes; it is the only function that reads files (the
// run directories). The writers render the Report as JSON, markdown, a
// terminal summary, or a directory of files (report.json, report.md,
// index.html, svg/). Output is deterministic: the same runs and options
// give the same bytes.
//
// A run that is missing, incomplete (run.json "complete": false), unreadable
// or without the figures per-op costs need is never dropped silently: the
// report lists it with its reason, a version without any usable repeat shows
// as a missing cell, and the rest of the report still renders.
//
// # JSON schema (report.json)
//
// Field names are an interface: they stay stable, fields are only added.
// Numbers are not rounded. Percentages run from 0 to 100 and are of each
// profile's total; "pp" are percentage points; "us" are CPU microseconds.
// A figure is {"median": float, "min": float, "max": float, "values":
// [float]} where values holds one entry per usable repeat, in repeat order.
// A test is {"welch_p": float, "permutation_p": float,
// "min_permutation_p": float, "significant": bool, "level": float,
// "family": int} (see diff.Significance): the tests one table shows are
// judged together (diff.Family, Benjamini-Hochberg at "alpha"), family is
// how many and level the cutoff they were judged at. A test is present
// only when both sides have at least two repeats.
//
//	{
//	  "base": string,              // the base version label
//	  "servers": [string],         // column order
//	  "repeats": int,              // N: the largest repeat number given
//	  "figures_window": string,    // where the throughput and per-op figures come from: "unprofiled", "profiled" or "mixed"
//	  "alpha": float,              // significance level
//	  "roots": [string],           // functions broken down (after the map)
//	  "depth": int,                // levels under each root
//	  "map": string,               // the symbol map's file name ("<default>" without one)
//	  "missing": [{                // every run that gave no figures, sorted
//	    "workload": string, "server": string,
//	    "repeat": int,             // 0: no run at all for this server and workload
//	    "dir": string,             // optional
//	    "reason": string
//	  }],
//	  "off_cpu": string,           // "all" (every usable run's profiled window has an off-CPU profile), "some" or "none"
//	  "off_cpu_missing": [{        // optional, with "some": the usable runs without an off-CPU profile
//	    "workload": string, "server": string, "repeat": int, "dir": string, "reason": string
//	  }],
//	  "workloads": [{              // in Options.Workloads order
//	    "name": string,
//	    "rows_per_op": int,        // optional (Options.RowsPerOp): rows each operation reads, e.g. a full scan's table size
//	    "throughput_unit": string, // optional, with rows_per_op: "rows/s", the unit of each version's "throughput"
//	    "versions": [{             // one per server, in "servers" order
//	      "server": string,
//	      "missing": string,       // optional: why this cell has no figures
//	      "repeats": int,          // usable repeats
//	      "dirs": [string],        // their run directories (the profiled windows)
//	      "figures_window": string, // "unprofiled" (every repeat's unprofiled window), "profiled" (none given) or "mixed"
//	      "measure_dirs": [string], // optional: the unprofiled windows' run directories
//	      "qps": figure, "cpu_us_per_op": figure,       // optional (absent when missing)
//	      "throughput": figure,    // optional, with rows_per_op: qps x rows_per_op per repeat, in throughput_unit
//	      "cs_per_op": figure, "reads_per_op": figure,  // optional: absent when not measured
//	      "read_kb_per_op": figure, "write_kb_per_op": figure,
//	      "rqps": float,           // optional: median qps / base median qps
//	      "relative": {            // optional: each median / the base's median
//	        "qps": float, "cpu_us_per_op": float, "cs_per_op": float,
//	        "reads_per_op": float, "read_kb_per_op": float, "write_kb_per_op": float
//	      },                       //   (each optional)
//	      "qps_test": test, "cpu_us_per_op_test": test, // optional, not for the base
//	      "profiled_qps": figure, "profiled_cpu_us_per_op": figure, // the profiled windows' own, which scale the profile
//	      "sampler_effect": figure, // optional: per repeat, profiled QPS / unprofiled QPS
//	      "sampler_effect_test": test, // optional: unprofiled against profiled QPS over the repeats
//	      "qps_cv_pct": figure,    // optional: coefficient of variation (%) of the per-second QPS, per repeat
//	      "outliers": [{           // optional: repeats beyond the noise
//	        "figure": string,      // "o/s" or "cpu/o µs"
//	        "repeat": int, "value": float, "median": float, // the repeat's value, the cell's median
//	        "deviation_pct": float, "limit_pct": float
//	      }],
//	      "untrusted": string,     // optional: why the cell cannot be trusted (its outliers in words)
//	      "stack_complete_pct": figure, // optional: samples whose stack reaches a thread root (0 to 100),
//	                               //   over the repeats whose run.json records stack_completeness
//	      "unwind": string,        // optional: how their stacks were walked ("fp", "cfi+fp", "dwarf"; ", "-joined when repeats differ)
//	      "sampled_pct": figure,   // optional: CPU the samples stand for, % of the accounted CPU,
//	                               //   over the repeats whose run.json records sampled_cpu_seconds
//	      "sched_wake_pct": figure, // optional: samples in the kernel's scheduling, wake-up and IPI paths, %,
//	                               //   over the repeats whose profiled window kept kernel frames (the lab's do)
//	      "off_cpu": {             // optional: off-CPU figures, all from the profiled windows (absent: no repeat has an off-CPU profile)
//	        "window": string,      // "profiled"
//	        "repeats": int, "dirs": [string], // the repeats with an off-CPU profile, their profiled windows
//	        "cs_per_op": figure, "voluntary_cs_per_op": figure, "involuntary_cs_per_op": figure, // switches counted per operation
//	        "us_per_op": figure, "voluntary_us_per_op": figure, "involuntary_us_per_op": figure, // µs off the CPU per operation, summed over threads
//	        "proc_cs_per_op": figure, // optional: /proc's switches per operation over the same profiled windows
//	                               //   (the version's cs_per_op is its figures window's: unprofiled when given)
//	        "relative": {          // optional: each median / the base's (each optional)
//	          "cs_per_op": float, "voluntary_cs_per_op": float, "involuntary_cs_per_op": float,
//	          "us_per_op": float, "voluntary_us_per_op": float, "involuntary_us_per_op": float
//	        },
//	        "cs_per_op_test": test, "us_per_op_test": test, // optional: the repeats against the base's (not for the base)
//	        "missing": [string],   // optional: the usable repeats without an off-CPU profile, and why
//	        "warnings": [string],  // optional: a repeat's switch check against /proc (fold.OffCPU.SwitchGap), or why it was not checked
//	        "untrusted": string    // optional: a repeat's switches differ from /proc's by more than 3%; the off-CPU tables mark the cell "!"
//	      },
//	      "warnings": [string]     // optional: the stack completeness warning of the least complete repeat, below 99%
//	    }],
//	    "subtrees": [{             // one per root
//	      "root": string, "depth": int,
//	      "servers": [string],     // the columns: versions with figures
//	      "threshold": float,      // chain collapse threshold (above 1: none)
//	      "skipped_unresolved": bool,
//	      "summaries": [string],   // per column: one line quoting the rows' shares (root, chain end, largest callees)
//	      "rows": [{               // depth first, root first (diff.SubtreeDiff over every repeat)
//	        "path": [string], "level": int, "label": string,
//	        "chain": [string],     // optional: pass-through functions merged into the row
//	        "unresolved": bool,    // optional
//	        "shares": [figure],    // per column: % of the profile's total, over repeats
//	        "delta_pp": [float|null], // per column: median - base median (null: base or no base)
//	        "tests": [test|null]   // per column, with repeats; null for the base
//	      }]
//	    }],
//	    "comparisons": [{          // one per version with figures other than the base
//	      "server": string,
//	      "window": string,        // "profiled": the per-op figures below are the profiled windows'
//	      "base_us_per_op": float, "target_us_per_op": float,  // medians
//	      "attribution": {         // optional: needs a map with subsystems
//	        "delta_us_per_op": float, // rounded to 0.01
//	        "parts": [{"subsystem": string, "delta_us_per_op": float}],
//	        "sentence": string
//	      },
//	      "top_self": [{           // the functions whose self CPU per op changed most
//	        "name": string, "base_us_per_op": float, "target_us_per_op": float,
//	        "delta_us_per_op": float
//	      }]
//	    }],
//	    "off_cpu_comparisons": [{  // optional: one per version with off-CPU profiles other than the base (which needs them)
//	      "server": string,
//	      "window": string,        // "profiled"
//	      "switches": off_cpu_attribution, "time": off_cpu_attribution
//	    }],
//	    // off_cpu_attribution: {"quantity": "context switches"|"off-CPU time", "unit": "cs/op"|"µs/op",
//	    //   "base_per_op": float, "target_per_op": float (each version's repeats with off-CPU profiles pooled:
//	    //   stacks and operations summed), "delta_per_op": float (rounded to 0.01),
//	    //   "delta_voluntary_per_op": float, "delta_involuntary_per_op": float,
//	    //   "parts": [{"subsystem": string, "delta_per_op": float, "delta_voluntary_per_op": float,
//	    //   "delta_involuntary_per_op": float, "base_per_op": figure, "target_per_op": figure,
//	    //   "round_deltas": [float], "test": test (these four optional: with two repeats or more a side)}]
//	    //   (diff.Attribution, as diff --off-cpu; empty without subsystems), "sentence": string (optional)}
//	    "series": {               // optional: with three or more versions with figures (docs/lab.md)
//	      "servers": [string],     // the versions of the series, in "servers" order
//	      "tested": bool,          // false: a version has fewer than two repeats, nothing marked
//	      "notes": [string],       // optional: versions left out, why untested, server kinds
//	      "figures": [series_figure],    // o/s, cpu/o, cs/o, r/o, rKB/o, wKB/o (those measured)
//	      "subsystems": [series_figure], // optional: each subsystem's µs/op, profiled windows
//	      "off_cpu": [series_figure], // optional: the off-CPU figures per op of the profiled windows (key "off_cpu.cs_per_op",
//	                               //   "off_cpu.voluntary_cs_per_op", "off_cpu.involuntary_cs_per_op", "off_cpu.us_per_op"),
//	                               //   a step's graph the differential off-CPU one (OffCPUDiffGraphPath)
//	      "families": [{"table": string, "stage": int, "tests": int, "level": float}]
//	                               // optional: the splits judged together, per table ("figures", "subsystems", "off_cpu") and stage
//	    },
//	    // series_figure: {"name": string, "key": string (the version's field, or
//	    //   "subsystem_us_per_op"), "medians": [float|null] (per series server),
//	    //   "change_point": step (optional: the first step), "steps": [step]}
//	    // step: {"server": string, "previous": string, "from": string,
//	    //   "direction": "up"|"down", "before": float, "after": float (medians of
//	    //   the pooled repeats), "ratio": float (optional: after/before), "test": test,
//	    //   "stage": int, "graph": string (optional: the step's differential flame graph)}
//	    "notes": [string]
//	  }]
//	}
//
// Profiles of the repeats of one version are merged (stacks summed) for the
// flame graphs, the attribution and the top functions; their CPU per operation is set to the median over the
// repeats' profiled windows, so that the attribution splits exactly the change between the profiled
// windows (without unprofiled windows: the change the per-op table shows).
package benchreport
