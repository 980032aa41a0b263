package benchreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
)

// WriteJSON writes every figure of the report as indented JSON (schema in
// the package documentation). Names are whole, with invalid UTF-8 replaced
// as names.Clean does.
func (r *Report) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(r.cleaned(), "", "  ")
	if err != nil {
		return fmt.Errorf("report json: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// WriteMarkdown writes the report as GitHub markdown, for pasting into a
// post: the rQPS table first (one row per workload, one column per
// version), the missing runs, then per workload its cost per operation,
// relative figures, repeats (with two or more), attribution of the change
// in CPU per operation, largest self-time changes, the off-CPU sections
// (with off-CPU profiles) and subtree breakdowns.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", report.EscapeMarkdown(r.title()))
	for _, p := range r.intro() {
		fmt.Fprintf(&b, "%s\n\n", report.EscapeMarkdown(p))
	}
	for _, s := range r.overview() {
		report.WriteMarkdownSection(&b, &s, report.MarkdownOptions{Heading: "##", EscapeText: true})
	}
	for _, wl := range r.Workloads {
		fmt.Fprintf(&b, "## %s\n\n", report.EscapeMarkdown(names.Clean(wl.Name)))
		for _, s := range r.workloadSections(wl) {
			report.WriteMarkdownSection(&b, &s, report.MarkdownOptions{Heading: "###", EscapeText: true})
		}
	}
	out := append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
	_, err := w.Write(out)
	return err
}

// changeOf is "+1.07, +4.22%": b - a, and in percent of a.
func changeOf(a, b float64) string {
	pct := 0.0
	if a > 0 {
		pct = (b - a) / a * 100
	}
	return report.Signed(b-a) + ", " + report.Signed(pct) + "%"
}

// writeNoise writes, per workload, the cells' unprofiled o/s and cpu/o
// with their spread, the within-run noise and the sampler's effect.
func (r *Report) writeNoise(printf func(string, ...any)) {
	for _, wl := range r.Workloads {
		var cells []string
		for _, v := range wl.Versions {
			if v.Missing != "" {
				continue
			}
			c := fmt.Sprintf("%s%s o/s %s%s", v.Server, wl.flag(v.Server), report.F2(v.QPS.Median), spread(v.QPS, 1, report.F2))
			if v.Throughput != nil {
				c += fmt.Sprintf(" (%s %s)", wl.ThroughputUnit, report.F2(v.Throughput.Median))
			}
			c += fmt.Sprintf(", cpu/o %s µs%s", report.F2(v.CPUPerOp.Median), spread(v.CPUPerOp, 1, report.F2))
			if v.QPSCVPct != nil {
				c += ", QPS cv " + report.F2(v.QPSCVPct.Median) + "%"
			}
			if v.SamplerEffect != nil {
				c += ", sampler " + marked(report.F2(v.SamplerEffect.Median), v.SamplerEffectTest)
			}
			cells = append(cells, c)
		}
		if len(cells) > 0 {
			printf("%s, %s windows: %s\n", wl.Name, r.FiguresWindow, strings.Join(cells, "; "))
		}
	}
}

// WriteSummary writes a short summary for the terminal: the rQPS table,
// the missing runs, and per workload and version the change in CPU per
// operation, its attribution and the functions whose self CPU per
// operation changed most; with off-CPU profiles, the runs without one,
// the switch checks that failed, and per workload and version the change
// in switches and time off the CPU per operation and their attribution.
func (r *Report) WriteSummary(w io.Writer) error {
	var b bytes.Buffer
	// printf writes a line of names and figures, cleaned.
	printf := func(format string, a ...any) { b.WriteString(names.Clean(fmt.Sprintf(format, a...))) }
	printf("%s\n\n", r.title())
	rq := cleanSection(r.rqpsSection())
	fmt.Fprintf(&b, "%s\n", rq.Title)
	if err := report.WritePlainTable(&b, &rq); err != nil {
		return err
	}
	for _, n := range rq.Notes {
		fmt.Fprintf(&b, "%s\n", n)
	}
	if r.Placement != "" {
		printf("%s\n", r.Placement)
	}
	for _, m := range r.Missing {
		rep := "all repeats"
		if m.Repeat > 0 {
			rep = fmt.Sprintf("repeat %d", m.Repeat)
		}
		printf("missing: %s on %s, %s: %s\n", m.Workload, m.Server, rep, m.Reason)
	}
	for _, wl := range r.Workloads {
		for _, v := range wl.Versions {
			if v.Untrusted != "" {
				printf("%s cannot be trusted: %s on %s: %s\n", untrustedMark, wl.Name, v.Server, v.Untrusted)
			}
		}
	}
	for _, wl := range r.Workloads {
		for _, v := range wl.Versions {
			for _, w := range v.Warnings {
				printf("warning: %s on %s: %s\n", wl.Name, v.Server, w)
			}
		}
	}
	r.writeOffCPUWarnings(printf)
	r.writeNoise(printf)
	for _, wl := range r.Workloads {
		if line := wl.seriesSummary(); line != "" {
			printf("%s\n", line)
		}
	}
	for _, wl := range r.Workloads {
		if len(wl.Comparisons) == 0 {
			continue
		}
		printf("\n%s: CPU per operation against %s\n", wl.Name, r.Base)
		for _, c := range wl.Comparisons {
			v, bv := wl.version(c.Server), wl.version(r.Base)
			mark := ""
			if v != nil && v.CPUPerOpTest != nil && !v.CPUPerOpTest.Significant {
				mark = " " + noise + " within noise"
			}
			if r.FiguresWindow != fold.WindowProfiled && v != nil && bv != nil && v.CPUPerOp != nil && bv.CPUPerOp != nil {
				// The table's (unprofiled) cpu/o, then the profile's own.
				printf("  %s%s: cpu/o %s → %s µs (%s)%s\n", c.Server, wl.flag(c.Server), report.F2(bv.CPUPerOp.Median), report.F2(v.CPUPerOp.Median),
					changeOf(bv.CPUPerOp.Median, v.CPUPerOp.Median), mark)
				printf("    profiled windows: cpu/o %s → %s µs (%s)\n", report.F2(c.BaseMicrosPerOp), report.F2(c.TargetMicrosPerOp), changeOf(c.BaseMicrosPerOp, c.TargetMicrosPerOp))
			} else {
				printf("  %s%s: cpu/o %s → %s µs (%s)%s\n", c.Server, wl.flag(c.Server), report.F2(c.BaseMicrosPerOp), report.F2(c.TargetMicrosPerOp),
					changeOf(c.BaseMicrosPerOp, c.TargetMicrosPerOp), mark)
			}
			if c.Attribution != nil {
				var parts []string
				for _, p := range c.Attribution.Parts {
					if math.Round(p.DeltaMicrosPerOp*100) != 0 {
						parts = append(parts, p.Subsystem+" "+report.Signed(p.DeltaMicrosPerOp))
					}
				}
				if len(parts) > 0 {
					unit := "µs/op"
					if r.FiguresWindow != fold.WindowProfiled {
						unit += ", profiled windows"
					}
					printf("    by subsystem (%s): %s\n", unit, strings.Join(parts, ", "))
				}
			}
			var top []string
			for i, f := range c.TopSelf {
				if i == 3 {
					break
				}
				top = append(top, names.Shorten(f.Name, nameWidth)+" "+report.Signed(f.DeltaMicrosPerOp))
			}
			if len(top) > 0 {
				printf("    largest self changes (µs/op): %s\n", strings.Join(top, ", "))
			}
		}
	}
	r.writeOffCPUSummary(printf)
	_, err := w.Write(b.Bytes())
	return err
}
