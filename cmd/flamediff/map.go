package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
	"github.com/flamediff/flamediff/symbolmap"
)

// newMapCmd is "flamediff map", the parent of the symbol map commands.
func newMapCmd(s *streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "map",
		Short:   "Work with symbol maps (rename, elide, subsystems)",
		Long:    help.Long("map"),
		Example: help.Example("map"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cli.UsageError("map needs a subcommand: check, suggest")
		},
	}
	cmd.AddCommand(newMapCheckCmd(s, nil), newMapSuggestCmd(s, nil))
	return cmd
}

// mapCheckOptions are the inputs of "flamediff map check".
type mapCheckOptions struct {
	IO       *streams
	File     string
	Profiles []string
	// Labels are --label's, one per --profile (or none).
	Labels []string
}

// newMapCheckCmd builds "flamediff map check"; runF replaces runMapCheck in tests.
func newMapCheckCmd(s *streams, runF func(*mapCheckOptions) error) *cobra.Command {
	opts := &mapCheckOptions{IO: s}
	cmd := &cobra.Command{
		Use:     "check FILE",
		Short:   "Validate a symbol map, and see which rules a profile never uses",
		Long:    help.Long("map check"),
		Example: help.Example("map check"),
		Args:    cli.ArgCount(1, 1, "map check takes one FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = args[0]
			if err := checkLabels(opts.Labels, opts.Profiles); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runMapCheck(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVarP(&opts.Profiles, "profile", "p", nil, "report rules that never match this profile, and list those that apply to it (file or run directory; repeatable)")
	cmd.Flags().StringArrayVar(&opts.Labels, "label", nil, "label the --profile profiles, one --label per --profile in their order; an empty `LABEL` ('') keeps a profile's own")
	return cmd
}

// runMapCheck validates the map and, for each profile, reports unused rules.
func runMapCheck(ctx context.Context, opts *mapCheckOptions) error {
	m, diags, err := symbolmap.Load(opts.File)
	if err != nil && !errors.Is(err, symbolmap.ErrInvalid) {
		return err
	}
	nerr, nwarn := symbolmap.CountDiagnostics(diags)
	for _, d := range diags {
		fmt.Fprintln(opts.IO.ErrOut, d)
	}
	if m == nil {
		fmt.Fprintf(opts.IO.Out, "%s: %s, %s\n", opts.File, names.Plural(nerr, "error"), names.Plural(nwarn, "warning"))
		return err
	}
	ps, err := input.Read(ctx, loader(opts.IO, nil), opts.Profiles, fold.ParseOptions{})
	if err != nil {
		return err
	}
	if err := input.Relabel(ps, opts.Labels); err != nil {
		return err
	}
	var applied strings.Builder
	for i, p := range ps {
		for _, d := range m.Check(p) {
			fmt.Fprintf(opts.IO.ErrOut, "%s [%s]\n", d, opts.Profiles[i])
			nwarn++
		}
		report.WriteApplied(&applied, opts.Profiles[i], p.Label(), m.Applied(p))
	}
	summary := m.Stats().String()
	if nwarn > 0 {
		summary += ", " + names.Plural(nwarn, "warning")
	}
	fmt.Fprintf(opts.IO.Out, "%s: ok, %s\n", opts.File, summary)
	fmt.Fprint(opts.IO.Out, applied.String())
	return nil
}
