package flamegraph

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// FuzzRender draws single and differential graphs of stacks whose frame
// names are fuzzed: the SVG must be well-formed XML with one script, and
// every name must come back, cleaned, as the first line of a frame title.
// v%3 picks the profiles' unit: on-CPU samples, off-CPU time or switches.
func FuzzRender(f *testing.F) {
	for _, m := range markup {
		f.Add(m, "b", uint8(3))
	}
	f.Add("a\x00\x01\x1f", "\xed\xa0\x80", uint8(1))
	f.Add("&amp;&#0;", "]]>", uint8(200))
	f.Add("", "\uFFFE\uFFFF", uint8(0))
	f.Add(fold.OffCPUVoluntary, fold.OffCPUInvoluntary, uint8(4))
	f.Fuzz(func(t *testing.T, a, b string, v uint8) {
		p := &fold.Profile{Stacks: []fold.Stack{
			{Frames: []string{"t", a, b}, Value: int64(v) + 1},
			{Frames: []string{"t", b}, Value: 2},
			{Frames: []string{a}, Value: 1},
		}}
		p.Normalize()
		q := &fold.Profile{Stacks: []fold.Stack{{Frames: []string{"t", a}, Value: 3}, {Frames: []string{b, a}, Value: int64(v)}}}
		q.Normalize()
		p.Unit = []string{"", fold.UnitOffCPUMicros, fold.UnitSwitches}[v%3]
		q.Unit = p.Unit
		var out bytes.Buffer
		if err := Render(&out, p, Options{Title: a, Subtitle: b, CountName: a, MinWidth: -1}); err != nil {
			t.Fatalf("Render: %v", err)
		}
		titles := checkXML(t, out.Bytes())
		checkScript(t, out.Bytes())
		for _, name := range []string{a, b} {
			want := Clean(name) + "\n"
			found := false
			for _, ti := range titles {
				found = found || strings.HasPrefix(ti, want)
			}
			if !found {
				t.Errorf("no frame title starts with %q", want)
			}
		}
		out.Reset()
		if err := RenderDiff(&out, p, q, Options{BaseLabel: a, TargetLabel: b, MinWidth: -1}); err != nil {
			t.Fatalf("RenderDiff: %v", err)
		}
		checkXML(t, out.Bytes())
		checkScript(t, out.Bytes())
	})
}
