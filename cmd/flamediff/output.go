package main

// Output formats of `flamediff report` and `flamediff diff`: the report
// package builds and writes them (its schema.go documents the JSON).

import (
	"fmt"
	"io"

	"github.com/flamediff/flamediff/diff"
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

// warningHints add the command's advice to the warnings a report prints:
// how to record stacks that reach their thread roots.
var warningHints = diff.Hints{Unwinding: unwindHint}

// unwindHint is what to record with when a run's frame-pointer walks too
// often stop before a thread root: the BPF sampler's stack copies, or
// perf's DWARF call graph. It gives none for runs already unwound with
// CFI or DWARF.
func unwindHint(u *diff.Unwinding) string {
	if u.UnnamedObject != "" {
		return "record with --debug-dir DIR holding its .build-id/xx/yyyy.debug"
	}
	if u.Method != "fp" {
		return ""
	}
	switch u.Sampler {
	case "bpf":
		return "record with --stack-copy always"
	case "perf":
		return "record with --call-graph dwarf"
	}
	return ""
}

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
