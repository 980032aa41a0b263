package input

import (
	"errors"
	"fmt"

	"github.com/flamediff/flamediff/flamegraph"
)

// NoPerOpError is the error of a per-op graph of a profile without run
// metadata that gives CPU seconds and operations.
type NoPerOpError struct{ Path string }

func (e *NoPerOpError) Error() string {
	return e.Path + " has no run metadata with cpu_seconds and operations; give run directories (stacks.folded and run.json)"
}

// Graph lays out the flame graph of a set of one profile, or with diff the
// differential graph of its base and target. o gets the set's labels and
// its map's subsystems; with diff, normalize is "auto" (per-op when both
// profiles have run metadata, else share) or a flamegraph.Normalize.
func (s *Set) Graph(o flamegraph.Options, diff bool, normalize string) (*flamegraph.Graph, error) {
	paths, ps := s.Args, s.Profiles
	if s.Map.HasSubsystems() {
		o.Subsystem = s.Map.Subsystem
		o.Subsystems = s.Map.Subsystems()
	}
	if !diff {
		o.TargetLabel = s.Labels[0]
		g, err := flamegraph.Layout(ps[0], o)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", paths[0], err)
		}
		return g, nil
	}
	o.BaseLabel, o.TargetLabel = s.Labels[0], s.Labels[1]
	o.Normalize = flamegraph.Normalize(normalize)
	switch o.Normalize {
	case "auto":
		o.Normalize = flamegraph.AutoNormalize(ps[0], ps[1])
	case flamegraph.NormalizePerOp:
		for i, p := range ps {
			if _, ok := p.PerOp(); !ok {
				return nil, &NoPerOpError{Path: paths[i]}
			}
		}
	}
	g, err := flamegraph.LayoutDiff(ps[0], ps[1], o)
	if errors.Is(err, flamegraph.ErrEmpty) {
		return nil, fmt.Errorf("%s vs %s: %w", paths[0], paths[1], err)
	}
	return g, err
}
