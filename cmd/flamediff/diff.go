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
	"github.com/flamediff/flamediff/symbolmap/suggest"
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
	in, err := input.ReadSet(ctx, opts.loader(s, opts.Load), m, paths, opts.Labels, opts.parseOptions())
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
	var extra []report.Section
	if opts.Suggest {
		sugs, err := suggest.ComputeEach(m, in.Raw[0], in.Raw[1:], in.Labels)
		if err != nil {
			return err
		}
		extra = report.SuggestionSections(sugs, suggestTop)
	}
	var buf bytes.Buffer
	if err := report.RenderDiff(&buf, side(s), r, in.Explanations, opts.reportOptions(r.HintedWarnings(warningHints)), extra); err != nil {
		return err
	}
	return cli.WriteOutput(s, out, buf.Bytes())
}
