package benchreport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/flamediff/flamediff/internal/names"
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
// in CPU per operation, largest self-time changes and subtree breakdowns.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", mdText(r.title()))
	for _, p := range r.intro() {
		fmt.Fprintf(&b, "%s\n\n", mdText(p))
	}
	for _, s := range r.overview() {
		writeMarkdownSection(&b, "##", s)
	}
	for _, wl := range r.Workloads {
		fmt.Fprintf(&b, "## %s\n\n", mdText(names.Clean(wl.Name)))
		for _, s := range r.workloadSections(wl) {
			writeMarkdownSection(&b, "###", s)
		}
	}
	out := append(bytes.TrimRight(b.Bytes(), "\n"), '\n')
	_, err := w.Write(out)
	return err
}

func writeMarkdownSection(b *bytes.Buffer, level string, s section) {
	fmt.Fprintf(b, "%s %s\n\n", level, mdText(s.title))
	for _, p := range s.intro {
		fmt.Fprintf(b, "%s\n\n", mdText(p))
	}
	if len(s.rows) > 0 {
		// A | inside a cell, code span or not, is written \| (GitHub's
		// table syntax takes it out before the cell is rendered).
		line := func(cells []string) {
			for i, c := range cells {
				cells[i] = strings.ReplaceAll(c, "|", `\|`)
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		head := make([]string, len(s.cols))
		rule := make([]string, len(s.cols))
		for i, c := range s.cols {
			head[i], rule[i] = mdText(c.head), "---"
			if c.num {
				rule[i] = "---:"
			}
		}
		line(head)
		b.WriteString("|" + strings.Join(rule, "|") + "|\n")
		for _, row := range s.rows {
			cells := make([]string, len(row))
			for i, c := range row {
				cells[i] = mdText(c.text)
				if c.name {
					cells[i] = strings.Repeat("\u00a0\u00a0", c.level) + names.CodeSpan(c.text)
				}
			}
			line(cells)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("(none)\n\n")
	}
	for _, n := range s.notes {
		fmt.Fprintf(b, "%s\n\n", mdText(n))
	}
}

// mdText escapes the backticks of text so that none starts a code span:
// the text reads the same once rendered.
func mdText(s string) string {
	return strings.ReplaceAll(s, "`", "\\`")
}

// WriteSummary writes a short summary for the terminal: the rQPS table,
// the missing runs, and per workload and version the change in CPU per
// operation, its attribution and the functions whose self CPU per
// operation changed most.
func (r *Report) WriteSummary(w io.Writer) error {
	var b bytes.Buffer
	// printf writes a line of names and figures, cleaned.
	printf := func(format string, a ...any) { b.WriteString(names.Clean(fmt.Sprintf(format, a...))) }
	printf("%s\n\n", r.title())
	rq := cleanSection(r.rqpsSection())
	fmt.Fprintf(&b, "%s\n", rq.title)
	writeTextTable(&b, rq)
	for _, n := range rq.notes {
		fmt.Fprintf(&b, "%s\n", n)
	}
	for _, m := range r.Missing {
		rep := "all repeats"
		if m.Repeat > 0 {
			rep = fmt.Sprintf("repeat %d", m.Repeat)
		}
		printf("missing: %s on %s, %s: %s\n", m.Workload, m.Server, rep, m.Reason)
	}
	for _, wl := range r.Workloads {
		if len(wl.Comparisons) == 0 {
			continue
		}
		printf("\n%s: CPU per operation against %s\n", wl.Name, r.Base)
		for _, c := range wl.Comparisons {
			d := c.TargetMicrosPerOp - c.BaseMicrosPerOp
			pct := 0.0
			if c.BaseMicrosPerOp > 0 {
				pct = d / c.BaseMicrosPerOp * 100
			}
			mark := ""
			if v := wl.version(c.Server); v != nil && v.CPUPerOpTest != nil && !v.CPUPerOpTest.Significant {
				mark = " " + noise + " within noise"
			}
			printf("  %s: cpu/o %s → %s µs (%s, %s%%)%s\n", c.Server, f2(c.BaseMicrosPerOp), f2(c.TargetMicrosPerOp), sf2(d), sf2(pct), mark)
			if c.Attribution != nil {
				var parts []string
				for _, p := range c.Attribution.Parts {
					if math.Round(p.DeltaMicrosPerOp*100) != 0 {
						parts = append(parts, p.Subsystem+" "+sf2(p.DeltaMicrosPerOp))
					}
				}
				if len(parts) > 0 {
					printf("    by subsystem (µs/op): %s\n", strings.Join(parts, ", "))
				}
			}
			var top []string
			for i, f := range c.TopSelf {
				if i == 3 {
					break
				}
				top = append(top, names.Shorten(f.Name, nameWidth)+" "+sf2(f.DeltaMicrosPerOp))
			}
			if len(top) > 0 {
				printf("    largest self changes (µs/op): %s\n", strings.Join(top, ", "))
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeTextTable writes an aligned plain-text table: numbers right-aligned,
// a rule under the heading.
func writeTextTable(b *bytes.Buffer, s section) {
	width := make([]int, len(s.cols))
	for i, c := range s.cols {
		width[i] = textWidth(c.head)
	}
	for _, row := range s.rows {
		for i, c := range row {
			width[i] = max(width[i], textWidth(c.text)+2*c.level)
		}
	}
	line := func(texts []string) {
		var l strings.Builder
		for i, t := range texts {
			pad := strings.Repeat(" ", width[i]-textWidth(t))
			if i > 0 {
				l.WriteString("  ")
			}
			if s.cols[i].num {
				l.WriteString(pad + t)
			} else {
				l.WriteString(t + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	head := make([]string, len(s.cols))
	rule := make([]string, len(s.cols))
	for i, c := range s.cols {
		head[i], rule[i] = c.head, strings.Repeat("-", width[i])
	}
	line(head)
	line(rule)
	for _, row := range s.rows {
		texts := make([]string, len(row))
		for i, c := range row {
			texts[i] = strings.Repeat("  ", c.level) + c.text
		}
		line(texts)
	}
}
