package main

import (
	"bytes"
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/report"
)

// HTMLOptions are the inputs of `flamediff html`.
type HTMLOptions struct {
	IO *streams
	// Profiles is PROFILE, or BASE and TARGET with --diff.
	Profiles []string
	graphFlags
	// tableFlags shape the tables as in report and diff (the page's notes
	// name them).
	tableFlags
	// Load reads a profile; nil means input.Loader on IO.In.
	Load input.LoadFunc
}

func newHTMLCmd(s *streams, runF func(*HTMLOptions) error) *cobra.Command {
	opts := &HTMLOptions{IO: s}
	cmd := &cobra.Command{
		Use:     "html [flags] PROFILE | html --diff [flags] BASE TARGET",
		Short:   "Write one self-contained HTML page: the report tables and the flame graph",
		Long:    help.Long("html"),
		Example: help.Example("html"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Profiles = args
			if err := opts.validate("html", args); err != nil {
				return err
			}
			if err := opts.validateTable(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runHTML(cmd.Context(), opts)
		},
	}
	opts.register(cmd)
	opts.registerTable(cmd, "add a table of which map rule turned which original symbol into which name")
	return cmd
}

func runHTML(ctx context.Context, opts *HTMLOptions) error {
	out, err := checkOutput("-o", opts.Output, append([]string{opts.MapFile}, opts.Profiles...)...)
	if err != nil {
		return err
	}
	in, err := readGraphInput(ctx, opts.IO, opts.Load, opts.Profiles, &opts.graphFlags)
	if err != nil {
		return err
	}
	g, err := opts.layout(in)
	if err != nil {
		return err
	}
	warnCut(opts.IO, g)
	dopts, err := opts.diffOptions(in)
	if err != nil {
		return err
	}
	ro := report.Options{Format: report.FormatHTML, Top: opts.Top, Explain: opts.Explain, CollapseFlags: collapseFlags}
	var doc *report.Document
	if opts.Diff {
		r, err := diff.Compute(in.Profiles[0], in.Profiles[1:], dopts)
		if err != nil {
			return fmt.Errorf("html: %w", err)
		}
		ro.Warnings = r.HintedWarnings(warningHints)
		doc = report.Diff(r, in.Explanations, ro)
	} else {
		sum := diff.Summarize(in.Profiles[0], dopts)
		ro.Warnings = diff.LabelledHintedWarnings([]*diff.Summary{sum}, warningHints)
		doc = report.Profile(sum, in.Explanations[0], ro)
	}
	var buf bytes.Buffer
	if err := report.WriteHTMLPage(&buf, doc, g); err != nil {
		return err
	}
	return cli.WriteOutput(opts.IO, out, buf.Bytes())
}
