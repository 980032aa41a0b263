package main

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
	"github.com/flamediff/flamediff/symbolmap"
)

// DiffOptions are the inputs of `flamediff diff`.
type DiffOptions struct {
	IO *streams
	// Base and Targets are the profile arguments.
	Base    string
	Targets []string
	commonFlags
	// Load reads a profile; nil means loadProfile.
	Load profileLoader
	// Suggest prints proposed map rules under the tables (map_suggest.go).
	Suggest bool
}

func newDiffCmd(s *streams, runF func(*DiffOptions) error) *cobra.Command {
	opts := &DiffOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "diff [flags] BASE TARGET [TARGET...]",
		Short: "Compare function and subsystem shares and CPU per operation between versions",
		Long: `Compare a base profile with one or more targets, after mapping renamed
functions onto one canonical name (--map): per function and per subsystem
the share in each profile, the difference in percentage points (pp) against
the base and the ratio; functions found in one profile only (often a rename
the map lacks); and, when every profile is a run directory whose run.json
has cpu_seconds and operations, CPU microseconds per operation (cpu/o),
QPS relative to the base (rQPS) and the change in cpu/o split among
subsystems.

Functions are sorted by their largest change in inclusive share.`,
		Example: `  flamediff diff testdata/runs/mariadb-10.11-update-index testdata/runs/mariadb-11.8-update-index
  flamediff diff --map examples/symbolmaps/mariadb.yaml --root mysqld_stmt_execute --depth 2 \
      testdata/runs/mariadb-10.11-update-index testdata/runs/mariadb-11.8-update-index
  flamediff diff --map examples/symbolmaps/mariadb.yaml --format markdown --top 20 \
      testdata/runs/mariadb-10.5-update-index testdata/runs/mariadb-10.11-update-index testdata/runs/mariadb-11.8-update-index
  flamediff diff --format json -o diff.json 10.11.folded 11.8.folded`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError("diff takes a BASE and at least one TARGET profile, got %s", names.Plural(len(args), "argument"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Base, opts.Targets = args[0], args[1:]
			if err := opts.validate(); err != nil {
				return err
			}
			if err := distinctInputs(args...); err != nil {
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
	raw, err := loadRaw(ctx, s, opts.Load, paths, opts.parseOptions())
	if err != nil {
		return err
	}
	ps := make([]*fold.Profile, len(paths))
	expls := make([]*symbolmap.Explanation, len(paths))
	labels := make([]string, len(paths))
	for i, p := range raw {
		ps[i], expls[i] = applyMap(m, p)
		labels[i] = profileLabel(ps[i], paths[i])
	}
	roots, err := resolveRoots(opts.Roots, ps, expls)
	if err != nil {
		return err
	}
	dopts := diffOptions(m, &opts.commonFlags, roots)
	dopts.Labels = labels
	r, err := diff.Compute(ps[0], ps[1:], dopts)
	if err != nil {
		return fmt.Errorf("diff: %w", err)
	}
	ro := opts.reportOptions(r.Warnings())
	var suggest []report.Section
	if opts.Suggest {
		if suggest, err = suggestSections(m, raw, labels); err != nil {
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
		err = report.WriteJSON(&buf, report.DiffJSON(r, expls, ro))
	case formatCSV:
		err = report.DiffCSV(&buf, r, opts.Top)
		printWarnings(s, ro.Warnings)
		if opts.Explain {
			d := &report.Document{}
			for i, e := range expls {
				d.Sections = append(d.Sections, report.Rewrites("Rewrites in "+r.Summaries[i].Profile.Label, e, report.FormatTable))
			}
			if err2 := report.WriteText(s.ErrOut, d); err == nil {
				err = err2
			}
		}
	default:
		d := report.Diff(r, expls, ro)
		d.Sections = append(d.Sections, suggest...)
		err = writeDocument(&buf, opts.Format, d)
	}
	if err != nil {
		return err
	}
	return writeOutput(s, out, buf.Bytes())
}

// distinctInputs fails when two profile arguments are the same input:
// "-" twice (standard input can be read once) or the same file or run
// directory under one name or two. Every command that reads several
// profiles follows this one rule: an input is given once (fold merges
// different files; diff compares different runs).
func distinctInputs(args ...string) error {
	type seen struct {
		arg string
		fi  os.FileInfo
	}
	var prev []seen
	for _, a := range args {
		var fi os.FileInfo
		if a != "-" {
			fi, _ = os.Stat(a) // a missing file is reported when it is read
		}
		for _, p := range prev {
			same := a == p.arg || (fi != nil && p.fi != nil && os.SameFile(fi, p.fi))
			if !same {
				continue
			}
			if a == "-" {
				return usageError("standard input (-) is given twice; it can be read once")
			}
			if a == p.arg {
				return usageError("%s is given twice; give each input once", a)
			}
			return usageError("%s and %s are the same file; give each input once", p.arg, a)
		}
		prev = append(prev, seen{a, fi})
	}
	return nil
}
