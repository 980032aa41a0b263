package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/flamediff/flamediff/fold"
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
		warnSkipped(s, "stdin", p)
		return p, nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("profile %w", err)
	}
	if !st.IsDir() {
		p, err := parseFile(path, opts.Parse)
		if err != nil {
			return nil, err
		}
		warnSkipped(s, path, p)
		return p, nil
	}
	stacks := filepath.Join(path, fold.StacksFile)
	p, err := parseFile(stacks, fold.ParseOptions{Format: fold.FormatFolded, Strict: opts.Parse.Strict})
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
		return nil, err
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
		return nil, fmt.Errorf("profile %w", err)
	}
	defer f.Close()
	return parseReader(path, f, opts)
}

// parseReader parses r, naming it in errors as NAME:LINE: when the error has a line.
func parseReader(name string, r io.Reader, opts fold.ParseOptions) (*fold.Profile, error) {
	p, err := fold.Parse(r, opts)
	if err != nil {
		var pe *fold.ParseError
		if errors.As(err, &pe) && pe.Line > 0 {
			return nil, fmt.Errorf("%s:%d: %s", name, pe.Line, errorsTail(pe))
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return p, nil
}

func errorsTail(pe *fold.ParseError) string {
	if pe.Text == "" {
		return pe.Msg
	}
	return fmt.Sprintf("%s (line: %q)", pe.Msg, pe.Text)
}

func warnSkipped(s *streams, name string, p *fold.Profile) {
	if p.Skipped > 0 {
		fmt.Fprintf(s.ErrOut, "flamediff: warning: %s: skipped %d line(s) that could not be parsed (first: %s); --strict makes this an error\n", name, p.Skipped, p.SkippedFirst)
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
