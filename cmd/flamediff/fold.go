package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
)

// FoldOptions are the options of `flamediff fold`.
type FoldOptions struct {
	IO          *streams
	Files       []string
	Perf        fold.PerfOptions
	InputFormat string
	Format      string
	Output      string
	Strict      bool
}

func newFoldCmd(s *streams, runF func(*FoldOptions) error) *cobra.Command {
	opts := &FoldOptions{IO: s}
	cmd := &cobra.Command{
		Use:     "fold [flags] [FILE...]",
		Short:   "Fold stacks (perf script, folded, bcc, pprof) into folded stacks or pprof",
		Long:    help.Long("fold"),
		Example: help.Example("fold"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if err := distinctInputs(args...); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runFold(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Perf.PID, "pid", false, "append the PID to the process name (comm-PID)")
	f.BoolVar(&opts.Perf.TID, "tid", false, "append PID and TID to the process name (comm-PID/TID)")
	f.BoolVar(&opts.Perf.Kernel, "kernel", false, "annotate kernel functions with _[k]")
	f.BoolVar(&opts.Perf.JIT, "jit", false, "annotate JIT functions (/tmp/perf-PID.map) with _[j]")
	f.BoolVar(&opts.Perf.All, "all", false, "all annotations (--kernel --jit)")
	f.BoolVar(&opts.Perf.Addrs, "addrs", false, "include raw addresses where symbols can't be found")
	f.StringVar(&opts.Perf.EventFilter, "event-filter", "", "keep only samples of this event (default: the first event seen)")
	cli.EnumFlag(cmd, &opts.InputFormat, "input-format", fold.FormatAuto, "input format: auto, perf, folded or pprof", inputFormats...)
	cli.EnumFlag(cmd, &opts.Format, "format", "folded", "output format: folded or pprof (gzipped protobuf)", "folded", "pprof")
	f.StringVarP(&opts.Output, "output", "o", "", "write to `FILE` instead of stdout (written atomically)")
	f.BoolVar(&opts.Strict, "strict", false, "fail on any input line that cannot be parsed instead of skipping it")
	return cmd
}

func runFold(ctx context.Context, opts *FoldOptions) error {
	s := opts.IO
	po := fold.ParseOptions{Format: opts.InputFormat, Perf: opts.Perf, Strict: opts.Strict}
	files := opts.Files
	if len(files) == 0 {
		files = []string{"-"}
	}
	out, err := checkOutput("-o", opts.Output, files...)
	if err != nil {
		return err
	}
	p, err := input.Merge(ctx, loader(s, nil), files, po, func(path string, q *fold.Profile) {
		if q.FilteredEvents {
			fmt.Fprintf(s.ErrOut, "flamediff: %s: kept only samples of event %q (others filtered; choose with --event-filter)\n", path, q.Event)
		}
	})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("fold: %w", err)
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if opts.Format == "pprof" {
		err = fold.WritePprof(&buf, p)
	} else {
		err = fold.WriteFolded(&buf, p)
	}
	if err != nil {
		return err
	}
	return cli.WriteOutput(s, out, buf.Bytes())
}
