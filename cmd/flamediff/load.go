package main

import (
	"errors"
	"fmt"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/atomicfile"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/rundir"
	"github.com/flamediff/flamediff/symbolmap"
)

// Commands read their inputs through package input; this file adds what
// the command line says: warnings on stderr and the flags in messages.

// loader is how a command reads its profile arguments: load when a test
// gives one, else input.Loader on the command's stdin, which warns of
// skipped lines on stderr.
func loader(s *streams, load input.LoadFunc) input.LoadFunc {
	return loaderOf(s, load, "")
}

// loaderOf is loader reading off-CPU profiles of kind offCPU ("": on-CPU;
// input.Loader.OffCPU).
func loaderOf(s *streams, load input.LoadFunc, offCPU string) input.LoadFunc {
	if load != nil {
		return load
	}
	l := &input.Loader{Stdin: s.In, OffCPU: offCPU, Warn: func(w input.Skipped) {
		fmt.Fprintf(s.ErrOut, "flamediff: warning: %s; --strict makes this an error\n", w)
	}}
	return func(arg string, opts fold.ParseOptions) (*fold.Profile, error) {
		p, err := l.Load(arg, opts)
		var ne *rundir.NoSamplesError
		if errors.As(err, &ne) && ne.Event != "" {
			hint := *ne // a profile file's error, as rundir returns it
			hint.Reason += "; choose another with --event-filter"
			return nil, &hint
		}
		return p, err
	}
}

// loadMap reads the --map file, printing its diagnostics on stderr; without
// a file it returns the default map (normalisation and thread roots only).
func loadMap(s *streams, path string) (*symbolmap.Map, error) {
	m, _, err := readMap(s, path)
	return m, err
}

// readMap is loadMap that also returns the text of the map file (nil
// without a file), for map suggest --apply.
func readMap(s *streams, path string) (*symbolmap.Map, []byte, error) {
	m, src, diags, err := input.ReadMap(path)
	for _, d := range diags {
		fmt.Fprintf(s.ErrOut, "flamediff: %s\n", d)
	}
	return m, src, err
}

// diffOptions turns the table flags and the set's map and labels into
// diff.Options, with the --root functions resolved in the set's profiles.
func (t *tableFlags) diffOptions(in *input.Set) (diff.Options, error) {
	roots, err := resolveRoots(in, t.Roots)
	if err != nil {
		return diff.Options{}, err
	}
	return in.DiffOptions(diff.Options{
		IncludeThreads:    t.Threads,
		Roots:             roots,
		Depth:             t.Depth,
		KeepUnresolved:    t.KeepUnresolved,
		NoCollapse:        t.NoCollapse,
		CollapseThreshold: t.CollapseThreshold,
	}), nil
}

// resolveRoots is input.Set.ResolveRoots with --root in its message, a
// usage error.
func resolveRoots(in *input.Set, roots []string) ([]string, error) {
	out, err := in.ResolveRoots(roots)
	var re *input.RootError
	if errors.As(err, &re) {
		return nil, cli.UsageError("--root %q: %s", re.Root, re.Reason())
	}
	return out, err
}

// distinctInputs is input.Distinct as a usage error.
func distinctInputs(args ...string) error {
	if err := input.Distinct(args...); err != nil {
		return fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	return nil
}

// checkOutput is input.CheckOutput with the flag (-o, --apply) naming the
// path in its errors.
func checkOutput(flag, path string, inputs ...string) (*atomicfile.Output, error) {
	o, err := input.CheckOutput(path, inputs...)
	if err != nil {
		return nil, fmt.Errorf("%s %w", flag, err)
	}
	return o, nil
}
