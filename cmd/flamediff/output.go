package main

// Output formats of `flamediff report` and `flamediff diff`: the report
// package builds and writes them (its schema.go documents the JSON).

import (
	"fmt"
	"io"

	"github.com/flamediff/flamediff/report"
)

// Output formats (--format values).
const (
	formatTable    = string(report.FormatTable)
	formatJSON     = string(report.FormatJSON)
	formatCSV      = string(report.FormatCSV)
	formatMarkdown = string(report.FormatMarkdown)
)

// formats are the --format values, in the order help texts list them.
var formats = report.FormatNames()

// collapseFlags name the flags that turn the breakdown defaults off, for
// the notes under a breakdown.
var collapseFlags = &report.CollapseFlags{KeepUnresolved: "--keep-unresolved", NoCollapse: "--no-collapse"}

// reportOptions are the report package's options for the flags.
func (c *commonFlags) reportOptions(warnings []string) report.Options {
	return report.Options{Format: report.Format(c.Format), Top: c.Top, Explain: c.Explain, Warnings: warnings, CollapseFlags: collapseFlags}
}

// writeDocument renders d as a terminal table or as GitHub markdown.
func writeDocument(w io.Writer, format string, d *report.Document) error {
	return report.Write(w, report.Format(format), d)
}

// printWarnings says each warning on stderr (CSV has no place for them).
func printWarnings(s *streams, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(s.ErrOut, "flamediff: warning: %s\n", w)
	}
}
