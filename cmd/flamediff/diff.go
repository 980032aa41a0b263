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

// DiffOptions are the inputs of `flamediff diff`.
type DiffOptions struct {
	IO *streams
	// Base and Targets are the profile arguments.
	Base    string
	Targets []string
	commonFlags
	// Load reads a profile; nil means input.Loader on IO.In.
	Load input.LoadFunc
	// Suggest prints proposed map rules under the tables (map_suggest.go).
	Suggest bool
}

func newDiffCmd(s *streams, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: s}
	cmd := &cobra.Command{
		Use:     "diff [flags] BASE TARGET [TARGET...]",
		Short:   "Compare function and subsystem shares and CPU per operation between versions",
		Long:    help.Long("diff"),
		Example: help.Example("diff"),
		Args:    cli.ArgCount(2, -1, "diff takes a BASE and at least one TARGET profile"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Base, opts.Targets = args[0], args[1:]
			if err := opts.validateTable(); err != nil {
				return err
			}
			if err := distinctInputs(args...); err != nil {
				return err
			}
			if err := checkLabels(opts.Labels, args); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runDiff(cmd.Context(), opts)
		},
	}
	opts.register(cmd)
	cmd.Flags().BoolVar(&opts.Suggest, "suggest", false, "when functions hold 0.5% or more in one profile only, print the top proposed map rules under the tables (map suggest prints them all, as YAML)")
	return cmd
}

func runDiff(ctx context.Context, opts *DiffOptions) error {
	s := opts.IO
	paths := append([]string{opts.Base}, opts.Targets...)
	out, err := checkOutput("-o", opts.Output, append([]string{opts.MapFile}, paths...)...)
	if err != nil {
		return err
	}
	m, err := loadMap(s, opts.MapFile)
	if err != nil {
		return err
	}
	in, err := input.ReadSet(ctx, loader(s, opts.Load), m, paths, opts.Labels, opts.parseOptions())
	if err != nil {
		return err
	}
	warnUnlabelled(s, m, in.Args, in.Raw)
	dopts, err := opts.diffOptions(in)
	if err != nil {
		return err
	}
	r, err := diff.Compute(in.Profiles[0], in.Profiles[1:], dopts)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	ro := opts.reportOptions(r.HintedWarnings(warningHints))
	var suggest []report.Section
	if opts.Suggest {
		if suggest, err = suggestSections(m, in); err != nil {
			return err
		}
		if opts.Format == formatJSON || opts.Format == formatCSV {
			if err := report.WriteText(s.ErrOut, &report.Document{Sections: suggest}); err != nil {
				return err
			}
		}
	}
	var buf bytes.Buffer
	switch opts.Format {
	case formatJSON:
		err = report.WriteJSON(&buf, report.DiffJSON(r, in.Explanations, ro))
	case formatCSV:
		err = report.DiffCSV(&buf, r, opts.Top)
		printWarnings(s, ro.Warnings)
		if opts.Explain {
			d := &report.Document{Sections: report.DiffRewrites(r, in.Explanations, report.FormatTable)}
			if err2 := report.WriteText(s.ErrOut, d); err == nil {
				err = err2
			}
		}
	default:
		d := report.Diff(r, in.Explanations, ro)
		d.Sections = append(d.Sections, suggest...)
		err = writeDocument(&buf, opts.Format, d)
	}
	if err != nil {
		return err
	}
	return cli.WriteOutput(s, out, buf.Bytes())
}
