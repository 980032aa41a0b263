package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/benchreport"
	"github.com/flamediff/flamediff/internal/atomicfile"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/lab"
	"github.com/flamediff/flamediff/record"
	"github.com/flamediff/flamediff/rundir"
)

// BenchOptions are the inputs of `flamediff bench`.
type BenchOptions struct {
	IO     *streams
	Config string
	Out    string
	Cache  string
	Repeat int
	Quiet  bool
	// Placement, when set, replaces the config's placement.
	Placement string
}

func newBenchCmd(s *streams, runF func(*BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{IO: s}
	cmd := &cobra.Command{
		Use:     "bench -c CONFIG [--out DIR] [--repeat N]",
		Short:   "Run sysbench against several server versions, capture each, and write the comparison report",
		Long:    help.Long("bench"),
		Example: help.Example("bench"),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runBench(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Config, "config", "c", "", "bench config `FILE` (YAML: servers, workloads, capture, map, roots; see examples/lab/)")
	f.StringVarP(&opts.Out, "out", "o", "", "report `DIR` (created; must be empty or absent; default out/NAME of the config)")
	f.StringVar(&opts.Cache, "cache", "", "cache `DIR` for fetched servers (default ~/.cache/flamediff)")
	f.IntVar(&opts.Repeat, "repeat", 3, "measure each workload and version `N` times, the versions interleaved in rounds; every figure shows its spread over them, and 2 or more add significance tests (--repeat 1: one bare run per cell)")
	f.StringVar(&opts.Placement, "placement", "", "where every server's threads and sysbench run, replacing the config's placement: same (both on the last CPU; the default), separate (server on the last CPU, sysbench on the first), none (left to the scheduler), or server=CPUS,client=CPUS; see docs/lab.md")
	_ = cmd.RegisterFlagCompletionFunc("placement", cli.FixedCompletion(record.PlacementSame, record.PlacementSeparate, record.PlacementNone))
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

func (o *BenchOptions) validate() error {
	switch {
	case o.Config == "":
		return cli.UsageError("-c CONFIG is required (examples/lab/demo.yaml is one)")
	case o.Repeat < 1 || o.Repeat > 100:
		return cli.UsageError("--repeat %d: want 1 to 100", o.Repeat)
	}
	if o.Placement != "" {
		if _, err := record.ParsePlacement(o.Placement); err != nil {
			return cli.UsageError("--placement %v", err)
		}
	}
	if o.Out == "" {
		o.Out = filepath.Join("out", strings.TrimSuffix(filepath.Base(o.Config), filepath.Ext(o.Config)))
	}
	return cli.CheckNewDir("--out", o.Out, "report")
}

func runBench(ctx context.Context, opts *BenchOptions) error {
	s := opts.IO
	logw := s.ErrOut
	if opts.Quiet {
		logw = io.Discard
	}
	cfg, data, err := lab.ReadConfigFile(opts.Config)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if opts.Placement != "" {
		cfg.Placement = opts.Placement
	}
	if cfg.Placement == record.PlacementNone {
		fmt.Fprintf(logw, "bench: placement none: the servers and sysbench are left to the scheduler\n")
	} else {
		fmt.Fprintf(logw, "bench: placement %s: every server's threads and sysbench are pinned so in every run (run.json placement)\n", cfg.Placement)
	}
	m, err := loadMap(s, cfg.MapPath(filepath.Dir(opts.Config)))
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := atomicfile.MakeDir(out); err != nil {
		return fmt.Errorf("bench: --out %w", err)
	}
	if err := rundir.WriteFile(filepath.Join(out, "config.yaml"), data); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	// The servers stop once the report is written (their log lines last).
	sess, err := lab.Start(ctx, cfg, lab.RunOptions{Out: out, Cache: opts.Cache, Repeat: opts.Repeat, Log: logw, Record: benchRecord})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer sess.Close()
	runs := sess.Measure(ctx)

	// The report, from whatever was measured.
	fmt.Fprintf(logw, "bench: writing the report to %s\n", out)
	rep, err := lab.WriteReport(out, cfg, m, runs)
	if err != nil {
		return fmt.Errorf("bench: report: %w", err)
	}
	if err := rep.WriteSummary(s.Out); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "\nreport: %s\n", filepath.Join(out, benchreport.HTMLFile))
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bench: interrupted; the report holds the runs that finished: %w", err)
	}
	if err := lab.FailedError(sess.Failed(), len(cfg.Servers)); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}

// benchRecord is one measurement of the bench: record.Run with the errors
// worded as `flamediff record` words them (the bench's log and the report
// show them).
func benchRecord(ctx context.Context, c record.Config) (*record.Result, error) {
	res, err := record.Run(ctx, c, nil)
	return res, recordError(err, c.Warmup)
}
