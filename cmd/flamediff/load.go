package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/fserr"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/rundir"
)

// loadOptions say how to read a profile argument.
type loadOptions struct {
	Parse fold.ParseOptions
}

// loadProfile reads a profile from a file, a run directory (stacks.folded
// plus run.json) or, for "-", standard input. Skipped lines are reported on
// stderr (or are an error with --strict).
func loadProfile(s *streams, path string, opts loadOptions) (*fold.Profile, error) {
	if path == "-" {
		p, err := rundir.Parse("stdin", s.In, opts.Parse)
		if err != nil {
			return nil, err
		}
		p.InferClockPeriod()
		warnSkipped(s, "stdin", p)
		return p, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("profile %w", describePathError(path, err))
	}
	if !st.IsDir() {
		p, err := rundir.ParseFile(path, opts.Parse)
		if err != nil {
			return nil, err
		}
		p.InferClockPeriod()
		warnSkipped(s, path, p)
		return p, nil
	}
	p, err := rundir.Read(path, opts.Parse.Strict)
	if err != nil {
		return nil, err
	}
	warnSkipped(s, filepath.Join(path, rundir.StacksFile), p)
	return p, nil
}

// describePathError says in words what is wrong with a profile path the
// user gave (fserr.Describe), keeping err for errors.Is.
func describePathError(path string, err error) error {
	return fserr.Describe(path, err, "file or directory")
}

func warnSkipped(s *streams, name string, p *fold.Profile) {
	if p.Skipped > 0 {
		fmt.Fprintf(s.ErrOut, "flamediff: warning: %s: skipped %s that could not be parsed (first: %s); --strict makes this an error\n", name, names.Plural(p.Skipped, "line"), p.SkippedFirst)
	}
}

// profileLabel names a profile in tables: its metadata label, else the file name.
func profileLabel(p *fold.Profile, path string) string {
	if l := p.Label(); l != "" {
		return l
	}
	if path == "-" {
		return "stdin"
	}
	return filepath.Base(path)
}
