package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap/suggest"
)

// mapSuggestOptions are the inputs of "flamediff map suggest".
type mapSuggestOptions struct {
	IO           *streams
	Base, Target string
	inputFlags
	Apply    string
	Force    bool
	Root     string
	MinShare float64
	MinScore float64
	Top      int
	Load     input.LoadFunc // nil: input.Loader on IO.In
}

// newMapSuggestCmd builds "flamediff map suggest"; runF replaces runMapSuggest in tests.
func newMapSuggestCmd(s *streams, runF func(*mapSuggestOptions) error) *cobra.Command {
	opts := &mapSuggestOptions{IO: s}
	cmd := &cobra.Command{
		Use:     "suggest [flags] BASE TARGET",
		Short:   "Propose symbol map rules for functions found in one profile only",
		Long:    help.Long("map suggest"),
		Example: help.Example("map suggest"),
		Args:    cli.ArgCount(2, 2, "map suggest takes BASE and TARGET profiles"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Base, opts.Target = args[0], args[1]
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runMapSuggest(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	opts.registerInput(cmd, "apply this symbol map `FILE` first; proposals are rules to add to it", "write the proposals to `FILE` instead of standard output")
	f.StringVar(&opts.Apply, "apply", "", "write the map with the proposals merged in to the new file `NEW`")
	f.BoolVar(&opts.Force, "force", false, "no effect: -o and --apply overwrite like every output (an output that is one of the inputs is refused)")
	_ = f.MarkDeprecated("force", "-o and --apply overwrite like every flamediff output; an output that is one of the inputs (--map included) is refused")
	f.StringVar(&opts.Root, "root", "", "consider only function `FN` and the functions below it")
	f.Float64Var(&opts.MinShare, "min-share", suggest.DefaultMinShare, "explain functions holding at least `PCT` percent of the samples in one profile only")
	f.Float64Var(&opts.MinScore, "min-score", suggest.DefaultMinScore, "propose rules scoring at least `S` (0 < S <= 1)")
	f.IntVar(&opts.Top, "top", 0, "stop after `N` proposals (0: all)")
	return cmd
}

func (o *mapSuggestOptions) validate() error {
	if !(o.MinShare > 0 && o.MinShare <= 100) {
		return cli.UsageError("--min-share %g: want a percentage above 0 and at most 100", o.MinShare)
	}
	if !(o.MinScore > 0 && o.MinScore <= 1) {
		return cli.UsageError("--min-score %g: want a score above 0 and at most 1", o.MinScore)
	}
	if o.Top < 0 {
		return cli.UsageError("--top %d: want 0 (all) or a positive number", o.Top)
	}
	if err := checkLabels(o.Labels, []string{o.Base, o.Target}); err != nil {
		return err
	}
	return distinctInputs(o.Base, o.Target)
}

// runMapSuggest loads the map and both profiles, prints the proposals and,
// with --apply, writes the merged map.
func runMapSuggest(ctx context.Context, opts *mapSuggestOptions) error {
	s := opts.IO
	inputs := []string{opts.MapFile, opts.Base, opts.Target}
	out, err := checkOutput("-o", opts.Output, inputs...)
	if err != nil {
		return err
	}
	apply, err := checkOutput("--apply", opts.Apply, inputs...)
	if err != nil {
		return err
	}
	if apply != nil && out != nil && (opts.Apply == opts.Output || apply.SameAs(opts.Output) != nil) {
		return cli.UsageError("--apply and -o name the same file %s; write the proposals and the new map to two files", opts.Apply)
	}
	m, src, err := readMap(s, opts.MapFile)
	if err != nil {
		return err
	}
	raw, err := input.Read(ctx, opts.loader(s, opts.Load), []string{opts.Base, opts.Target}, opts.parseOptions())
	if err != nil {
		return err
	}
	if err := input.Relabel(raw, opts.Labels); err != nil {
		return err
	}
	warnUnlabelled(s, m, []string{opts.Base, opts.Target}, raw)
	ps := []*fold.Profile{input.CleanNames(raw[0]), input.CleanNames(raw[1])}
	sug, err := suggest.Compute(m, ps[0], ps[1], suggest.Options{
		MinShare: opts.MinShare, MinScore: opts.MinScore, Root: opts.Root, Max: opts.Top,
	})
	if err != nil {
		return err
	}
	sug.BaseLabel, sug.TargetLabel = input.Label(ps[0], opts.Base), input.Label(ps[1], opts.Target)
	if err := cli.WriteOutput(s, out, sug.YAML(opts.MapFile == "")); err != nil {
		return err
	}
	if opts.Apply == "" {
		return nil
	}
	name := opts.MapFile
	if name == "" {
		name = opts.Apply
	}
	merged, err := sug.MergeYAML(src, name)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if err := cli.WriteOutput(s, apply, merged); err != nil {
		return fmt.Errorf("--apply %w", err)
	}
	from := ""
	if opts.MapFile != "" {
		from = " to the rules of " + opts.MapFile
	}
	fmt.Fprintf(s.ErrOut, "flamediff: wrote %s: %s added%s\n", opts.Apply, names.Plural(len(sug.Proposals), "proposed rule"), from)
	return nil
}

// suggestTop is how many proposals diff --suggest shows per target.
const suggestTop = 5
