package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/fserr"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap"
)

// This file loads what commands read, in two separate steps: the profile
// arguments as read (loadRaw), then the map applied to them (applyMap,
// mapOptions). A command that needs the raw profiles too (diff --suggest,
// map suggest) keeps them.

// loadMap reads the --map file, printing its diagnostics on stderr; without
// a file it returns the default map (normalisation and thread roots only).
func loadMap(s *streams, path string) (*symbolmap.Map, error) {
	m, _, err := readMap(s, path)
	return m, err
}

// readMap is loadMap that also returns the text of the map file (nil
// without a file), for a command that rewrites the map (map suggest
// --apply): the file is read once.
func readMap(s *streams, path string) (*symbolmap.Map, []byte, error) {
	if path == "" {
		return symbolmap.Default(), nil, nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("symbol map %w", fserr.Describe(path, err, "map file"))
	}
	m, diags, err := symbolmap.Parse(bytes.NewReader(src), path)
	for _, d := range diags {
		fmt.Fprintf(s.ErrOut, "flamediff: %s\n", d)
	}
	if err != nil {
		return nil, nil, err
	}
	return m, src, nil
}

// loadRaw loads the profile arguments in order, each once, as read: no
// map applied, names as in the input. ctx is checked before each. A nil
// load means loadProfile.
func loadRaw(ctx context.Context, s *streams, load profileLoader, paths []string, po fold.ParseOptions) ([]*fold.Profile, error) {
	if load == nil {
		load = loadProfile
	}
	ps := make([]*fold.Profile, len(paths))
	for i, path := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := load(s, path, loadOptions{Parse: po})
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	return ps, nil
}

// applyMap applies the map to a raw profile (which is left as it is): the
// mapped profile, its names cleaned (cleanNames), and which rule rewrote
// what.
func applyMap(m *symbolmap.Map, p *fold.Profile) (*fold.Profile, *symbolmap.Explanation) {
	mp, expl := m.Apply(p)
	if mp.Meta == nil && p.Meta != nil {
		mp.Meta = p.Meta
	}
	return cleanNames(mp), expl
}

// loadMapped loads one profile argument and applies the map to it, for
// commands that do not need the raw profile.
func loadMapped(ctx context.Context, s *streams, load profileLoader, path string, po fold.ParseOptions, m *symbolmap.Map) (*fold.Profile, *symbolmap.Explanation, error) {
	raw, err := loadRaw(ctx, s, load, []string{path}, po)
	if err != nil {
		return nil, nil, err
	}
	p, expl := applyMap(m, raw[0])
	return p, expl, nil
}

// cleanNames replaces invalid UTF-8 in frame names by U+FFFD (names.Clean),
// once, so that every output made from the profile (tables, markdown, CSV,
// JSON, SVG, HTML) shows the same name. Folded and pprof output (fold)
// keep the input's bytes.
func cleanNames(p *fold.Profile) *fold.Profile {
	dirty := false
	for _, s := range p.Stacks {
		for _, f := range s.Frames {
			if !utf8.ValidString(f) {
				dirty = true
				break
			}
		}
	}
	if !dirty {
		return p
	}
	return p.MapFrames(func(_ int, name string) (string, bool) { return names.Clean(name), true })
}

// diffOptions turns the map and flags into diff.Options.
func diffOptions(m *symbolmap.Map, c *commonFlags, roots []string) diff.Options {
	return mapOptions(m, diff.Options{
		IncludeThreads:    c.Threads,
		Roots:             roots,
		Depth:             c.Depth,
		KeepUnresolved:    c.KeepUnresolved,
		NoCollapse:        c.NoCollapse,
		CollapseThreshold: c.CollapseThreshold,
	})
}

// mapOptions returns o with what the map decides: the thread roots and,
// when the map has subsystems, the subsystem of each stack.
func mapOptions(m *symbolmap.Map, o diff.Options) diff.Options {
	o.IsThreadRoot = m.IsThreadRoot
	if m.HasSubsystems() {
		o.Classify = m.Subsystem
		o.SubsystemNames = m.Subsystems()
	}
	return o
}
