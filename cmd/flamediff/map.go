package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/internal/names"
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
	load := loader(opts.IO, nil)
	var applied strings.Builder
	for i, path := range opts.Profiles {
		if ctx != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		p, err := load(path, fold.ParseOptions{})
		if err != nil {
			return err
		}
		if opts.Labels != nil {
			ps := []*fold.Profile{p}
			if err := input.Relabel(ps, opts.Labels[i:i+1]); err != nil {
				return err
			}
			p = ps[0]
		}
		for _, d := range m.Check(p) {
			fmt.Fprintf(opts.IO.ErrOut, "%s [%s]\n", d, path)
			nwarn++
		}
		writeApplied(&applied, path, p, m.Applied(p))
	}
	summary := m.Stats().String()
	if nwarn > 0 {
		summary += ", " + names.Plural(nwarn, "warning")
	}
	fmt.Fprintf(opts.IO.Out, "%s: ok, %s\n", opts.File, summary)
	fmt.Fprint(opts.IO.Out, applied.String())
	return nil
}

// writeApplied lists the rules that changed a profile, with the share of
// the samples in the stacks they changed:
//
//	PROFILE (label "11.8"): 2 rules applied
//	  21.76%  rename -> "mysql_update" (m.yaml:104), callee glob "Sql_cmd_update::*" (depth 2)
func writeApplied(w io.Writer, path string, p *fold.Profile, uses []symbolmap.RuleUse) {
	label := "no label"
	if l := p.Label(); l != "" {
		label = fmt.Sprintf("label %q", l)
	}
	if len(uses) == 0 {
		fmt.Fprintf(w, "%s (%s): no rule applied\n", path, label)
		return
	}
	fmt.Fprintf(w, "%s (%s): %s applied\n", path, label, names.Plural(len(uses), "rule"))
	for _, u := range uses {
		line := u.Rule
		if u.Context != "" {
			line += ", " + u.Context
		}
		if u.Labels != "" {
			line += ", labels " + u.Labels
		}
		fmt.Fprintf(w, "  %6.2f%%  %s\n", 100*float64(u.Value)/float64(max(u.Total, 1)), line)
	}
}
