package benchreport

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
)

// Files of the rQPS matrix WriteFiles writes beside report.md.
const (
	RQPSTextFile = "rqps.txt"
	RQPSCSVFile  = "rqps.csv"
)

// rqpsPlainCell is a version's rQPS as rqps.txt shows it: the median with
// two decimals, the noise mark when within noise, " !" when the cell
// cannot be trusted, "-" without a figure.
func (r *Report) rqpsPlainCell(w *Workload, v *Version) string {
	if v.Missing != "" || v.RQPS == nil {
		return "-"
	}
	return marked(report.F2(*v.RQPS), v.QPSTest) + w.flag(v.Server)
}

// WriteRQPSText writes the rQPS matrix as plain text for pasting into a
// post: a line naming the base, then a table aligned in a fixed-width
// font (rows workloads, columns versions, numbers right-aligned with two
// decimals, no borders and no escape sequences), then what its marks
// mean.
func (r *Report) WriteRQPSText(w io.Writer) error {
	s := report.Section{Columns: []report.Column{report.TextColumn("workload")}}
	for _, srv := range r.Servers {
		s.Columns = append(s.Columns, report.NumColumn(srv))
	}
	for _, wl := range r.Workloads {
		row := []report.Cell{txt(wl.Name)}
		for _, v := range wl.Versions {
			row = append(row, txt(r.rqpsPlainCell(wl, v)))
		}
		s.Rows = append(s.Rows, row)
	}
	s = cleanSection(s)
	var b bytes.Buffer
	what := "one run per cell"
	if r.Repeats > 1 {
		what = fmt.Sprintf("medians of %d repeats", r.Repeats)
	}
	fmt.Fprintf(&b, "%s\n\n", names.Clean(fmt.Sprintf("rQPS: QPS / QPS of %s (base %s), %s", r.Base, r.Base, what)))
	if err := report.WritePlainTable(&b, &s); err != nil {
		return fmt.Errorf("rqps text: %w", err)
	}
	b.WriteString("\n")
	if r.Repeats > 1 {
		fmt.Fprintf(&b, "%s: within noise of %s (report.md says how it is judged).\n", noise, names.Clean(r.Base))
	} else {
		b.WriteString("One run per cell: no test of significance.\n")
	}
	if r.anyUntrusted() {
		fmt.Fprintf(&b, "%s: the cell cannot be trusted (a repeat off by more than the noise allows; see report.md).\n", untrustedMark)
	}
	b.WriteString("-: no usable run.\n")
	_, err := w.Write(b.Bytes())
	return err
}

// WriteRQPSCSV writes the rQPS matrix as CSV: a header "workload" and the
// versions, then per workload its rQPS per version, unrounded numbers
// only (no marks), empty where the version has no figure.
func (r *Report) WriteRQPSCSV(w io.Writer) error {
	header := append([]string{"workload"}, names.CleanAll(r.Servers)...)
	var rows [][]string
	for _, wl := range r.Workloads {
		row := []string{wl.Name}
		for _, v := range wl.Versions {
			c := ""
			if v.Missing == "" && v.RQPS != nil {
				c = strconv.FormatFloat(*v.RQPS, 'f', -1, 64)
			}
			row = append(row, c)
		}
		rows = append(rows, row)
	}
	if err := report.WriteCSV(w, header, rows); err != nil {
		return fmt.Errorf("rqps csv: %w", err)
	}
	return nil
}
