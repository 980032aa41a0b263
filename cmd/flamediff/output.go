package main

// Output formats of `flamediff report` and `flamediff diff`: the report
// package builds and writes them (its schema.go documents the JSON).

import (
	"fmt"

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

// side is where reports put what their format has no place for: stderr.
func side(s *streams) report.Side {
	return report.Side{W: s.ErrOut, Warn: func(w string) { fmt.Fprintf(s.ErrOut, "flamediff: warning: %s\n", w) }}
}
