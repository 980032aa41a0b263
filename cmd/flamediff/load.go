package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/fserr"
	"github.com/flamediff/flamediff/internal/names"
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
		p, err := parseReader("stdin", s.In, opts.Parse)
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
		p, err := parseFile(path, opts.Parse)
		if err != nil {
			return nil, err
		}
		p.InferClockPeriod()
		warnSkipped(s, path, p)
		return p, nil
	}
	stacks := filepath.Join(path, fold.StacksFile)
	p, err := parseFile(stacks, fold.ParseOptions{Format: fold.FormatFolded, Strict: opts.Parse.Strict})
	if errors.Is(err, errNoSamples) {
		return nil, fmt.Errorf("%w; the run recorded nothing: see %s and the run's workload.log", err, filepath.Join(path, fold.MetaFile))
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("run directory %s: no %s in it (a run directory holds %s and %s)", path, fold.StacksFile, fold.StacksFile, fold.MetaFile)
		}
		return nil, err
	}
	warnSkipped(s, stacks, p)
	metaPath := filepath.Join(path, fold.MetaFile)
	f, err := os.Open(metaPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// A run directory without run.json: no per-op figures.
	case err != nil:
		return nil, fmt.Errorf("run directory %w", describePathError(metaPath, err))
	default:
		defer f.Close()
		m, err := fold.ParseMeta(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", metaPath, err)
		}
		p.Meta = m
		if m.Unit != "" {
			p.Unit = m.Unit
		}
		if m.Event != "" {
			p.Event = m.Event
		}
		if m.Samples > 0 {
			p.Samples = m.Samples
		}
	}
	if p.Meta == nil {
		p.Meta = &fold.Meta{}
	}
	if p.Meta.Label == "" {
		p.Meta.Label = filepath.Base(filepath.Clean(path))
	}
	return p, nil
}

func parseFile(path string, opts fold.ParseOptions) (*fold.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("profile %w", describePathError(path, err))
	}
	defer f.Close()
	return parseReader(path, f, opts)
}

// errNoSamples is wrapped when an input holds no samples: an error for
// every command that reads profiles, so that an empty capture never turns
// into an empty report or replaces an earlier output.
var errNoSamples = errors.New("no samples")

// parseReader parses r, naming it in errors as NAME:LINE: when the error
// has a line. A profile without samples is an error (errNoSamples) that
// says what was read instead.
func parseReader(name string, r io.Reader, opts fold.ParseOptions) (*fold.Profile, error) {
	cr := &countingReader{r: r}
	p, err := fold.Parse(cr, opts)
	if err != nil {
		var pe *fold.ParseError
		if errors.As(err, &pe) && pe.Line > 0 {
			return nil, fmt.Errorf("%s:%d: %s", name, pe.Line, errorsTail(pe))
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if p.Total() == 0 {
		return nil, fmt.Errorf("%s: %w (%s)", name, errNoSamples, noSamplesReason(p, cr.n, opts))
	}
	return p, nil
}

// noSamplesReason says why a parsed profile holds no samples.
func noSamplesReason(p *fold.Profile, read int64, opts fold.ParseOptions) string {
	switch {
	case read == 0:
		return "the input is empty"
	case p.FilteredEvents || opts.Perf.EventFilter != "":
		ev := opts.Perf.EventFilter
		if ev == "" {
			ev = p.Event
		}
		return fmt.Sprintf("no sample of event %q; choose another with --event-filter", ev)
	case p.Skipped > 0:
		return fmt.Sprintf("%s could not be parsed, first: %s", names.Plural(p.Skipped, "line"), p.SkippedFirst)
	case len(p.Stacks) > 0:
		return fmt.Sprintf("%s, every count 0", names.Plural(len(p.Stacks), "stack"))
	}
	return fmt.Sprintf("blank lines and comments, no stack, in %d bytes", read)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// describePathError says in words what is wrong with a profile path the
// user gave (fserr.Describe), keeping err for errors.Is.
func describePathError(path string, err error) error {
	return fserr.Describe(path, err, "file or directory")
}

func errorsTail(pe *fold.ParseError) string {
	if pe.Text == "" {
		return pe.Msg
	}
	return fmt.Sprintf("%s (line: %q)", pe.Msg, pe.Text)
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
