package record

import (
	"fmt"
	"io"
	"strings"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
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
		fmt.Fprintf(w, "  window %.1f s, %d samples (%d lost), sampled CPU %.2f s vs accounted %.2f s\n",
			m.WindowSeconds, m.Samples, m.LostSamples, m.SampledCPUSeconds, m.CPUSeconds())
	}
	if line := placementLine(m.Placement); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
	if m.Sampler != SamplerNone {
		r.writeStacks(w, hint)
	}
	if o := m.OffCPU; o != nil {
		fmt.Fprintf(w, "  off the CPU %.2f s: %d voluntary switches (/proc %d), %d involuntary (/proc %d)\n",
			o.Seconds, o.Voluntary, o.ProcVoluntary, o.Involuntary, o.ProcInvoluntary)
	}
	r.writePerOp(w)
	// The host's figures last, after the per-op ones or their absence.
	if line := hostLine(m.Host); line != "" {
		fmt.Fprintf(w, "  %s\n", line)
	}
}

// writeStacks writes how completely the samples' stacks were walked.
func (r *Result) writeStacks(w io.Writer, hint func(*diff.Unwinding) string) {
	if u := diff.RecordedUnwinding(r.Meta); u != nil {
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
		fmt.Fprintf(w, "  no operation count: give --socket (or run sysbench or super-smack as the workload) for per-op figures\n")
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

// placementLine says where the server's threads and the client ran, as
// asked and as found at the end of the window; "" when not recorded.
func placementLine(p *fold.Placement) string {
	if p == nil {
		return ""
	}
	found := func(a []fold.Affinity) string {
		var parts []string
		for _, x := range a {
			cpu := "CPU"
			if strings.ContainsAny(x.CPUs, ",-") {
				cpu = "CPUs"
			}
			parts = append(parts, fmt.Sprintf("%d on %s %s", x.Threads, cpu, x.CPUs))
		}
		return strings.Join(parts, ", ")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "placement %s", p.Asked)
	if p.Asked == PlacementNone {
		b.WriteString(" (left to the scheduler)")
	}
	if len(p.Server) > 0 {
		fmt.Fprintf(&b, ": server threads %s", found(p.Server))
	}
	if len(p.Client) > 0 {
		fmt.Fprintf(&b, "; client threads %s", found(p.Client))
	}
	switch {
	case len(p.Mismatched) > 0:
		fmt.Fprintf(&b, " (did not hold for %d threads)", len(p.Mismatched))
	case p.Asked != PlacementNone:
		b.WriteString(" (held at the window's end)")
	}
	return b.String()
}

// hostLine gives the whole machine's figures over the window; "" when not
// measured.
func hostLine(h *fold.Host) string {
	if h == nil {
		return ""
	}
	var b strings.Builder
	b.WriteString("host (whole machine, client included): ")
	if h.CPUMicrosPerOp > 0 || h.CtxSwitchesPerOp > 0 {
		fmt.Fprintf(&b, "cpu/o %.1f µs, cs/o %.2f, ", h.CPUMicrosPerOp, h.CtxSwitchesPerOp)
	} else {
		fmt.Fprintf(&b, "busy %.2f s of %d CPUs x %.1f s, ", h.CPUSeconds, h.CPUs, h.Seconds)
	}
	fmt.Fprintf(&b, "steal %.1f%%", 100*h.StealShare)
	switch f := h.CPUFreq; {
	case f == nil:
	case !f.Exposed:
		b.WriteString(", CPU frequency not exposed")
	case f.Changed:
		b.WriteString(", CPU frequency CHANGED during the window")
	default:
		b.WriteString(", CPU frequency unchanged")
	}
	return b.String()
}
