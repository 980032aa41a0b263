package input

import (
	"errors"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/flamegraph"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/symbolmap"
)

func TestSetGraph(t *testing.T) {
	parse := func(s string) *fold.Profile {
		p, err := fold.ParseFolded(strings.NewReader(s), true)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := parse("main;f 10\nmain;g 10\n"), parse("main;f 10\nmain;g 30\n")
	s := &Set{Map: symbolmap.Default(), Args: []string{"a.folded", "b.folded"}, Profiles: []*fold.Profile{a, b}, Labels: []string{"A", "B"}}
	o := flamegraph.Options{Width: 1200, FrameHeight: 16}

	_, err := s.Graph(o, true, string(flamegraph.NormalizePerOp))
	var np *NoPerOpError
	if !errors.As(err, &np) || np.Path != "a.folded" {
		t.Fatalf("per-op graph of plain files: error %v, want a NoPerOpError naming a.folded", err)
	}
	g, err := s.Graph(o, true, "auto")
	if err != nil {
		t.Fatalf("auto: %v", err)
	}
	var svg strings.Builder
	if err := g.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(svg.String(), "A (base) → B (target)") {
		t.Error("the differential graph does not say A (base) → B (target)")
	}
	if _, err := s.Graph(o, false, ""); err != nil {
		t.Fatalf("single graph: %v", err)
	}
}
