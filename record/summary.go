package record

import (
	"fmt"
	"io"

	"github.com/flamediff/flamediff/diff"
)

// WriteSummary writes what the run directory holds, as `flamediff record`
// prints it when it ends: the window and samples, how many stacks reach a
// thread root (with a warning and hint(u)'s advice when too few do), and
// the per-operation figures.
func (r *Result) WriteSummary(w io.Writer, hint func(*diff.Unwinding) string) {
	m := r.Meta
	fmt.Fprintf(w, "flamediff: wrote %s (label %q)\n", r.Dir, m.Label)
	if m.Sampler == SamplerNone {
		fmt.Fprintf(w, "  window %.1f s without a sampler (unprofiled: no stacks), accounted CPU %.2f s\n", m.WindowSeconds, m.CPUSeconds())
	} else {
		r.writeSamples(w, hint)
	}
	r.writePerOp(w)
}

// writeSamples writes the window, its samples and their stacks' completeness.
func (r *Result) writeSamples(w io.Writer, hint func(*diff.Unwinding) string) {
	m := r.Meta
	fmt.Fprintf(w, "  window %.1f s, %d samples (%d lost), sampled CPU %.2f s vs accounted %.2f s\n",
		m.WindowSeconds, m.Samples, m.LostSamples, m.SampledCPUSeconds, m.CPUSeconds())
	if u := diff.RecordedUnwinding(m); u != nil {
		fmt.Fprintf(w, "  stacks reach a thread root in %.1f%% of samples (unwinding: %s)\n", 100*u.Complete, u.Method)
		if warn := u.Warning(hint(u)); warn != "" {
			fmt.Fprintf(w, "flamediff: warning: %s\n", warn)
		}
	}
}

// writePerOp writes the operations and the per-operation figures.
func (r *Result) writePerOp(w io.Writer) {
	m := r.Meta
	if m.Operations == 0 {
		fmt.Fprintf(w, "  no operation count: give --socket (or run sysbench as the workload) for per-op figures\n")
		return
	}
	fmt.Fprintf(w, "  %d operations (%s): %.1f o/s, cpu/o %.1f µs, cs/o %.2f\n",
		m.Operations, m.OpsCounter, m.QPS, m.CPUMicrosPerOp(), m.CtxSwitchesPerOp())
	if ops := float64(m.Operations); m.ReadOps+m.WriteOps > 0 || m.ReadKB+m.WriteKB > 0 {
		fmt.Fprintf(w, "  r/o %.3f, w/o %.3f (read/write calls), rKB/o %.3f, wKB/o %.3f (storage)\n",
			float64(m.ReadOps)/ops, float64(m.WriteOps)/ops, m.ReadKB/ops, m.WriteKB/ops)
	}
	if m.WorkloadWindowQPS > 0 {
		fmt.Fprintf(w, "  the workload's own report for the window: %.1f o/s\n", m.WorkloadWindowQPS)
	}
}
