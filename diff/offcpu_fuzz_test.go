package diff

import (
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// FuzzOffCPUSummarize reads folded text as an off-CPU profile of 7
// operations and checks what Summarize guarantees of it: no panic; the
// voluntary and involuntary parts add up to at most the total (stacks
// without the leaf are of neither kind), and a function's to at most its
// inclusive value; no function is named by the leaf; self values add up
// to at most the total; one subsystem holds the whole profile and its
// kinds.
func FuzzOffCPUSummarize(f *testing.F) {
	f.Add("t;do_command;commit;pthread_cond_wait;[voluntary] 300\nt;do_command;[involuntary] 20\n")
	f.Add("t;[voluntary] 5\nt;a;a;[involuntary] 3\nt;a;[voluntary];b 2\n")
	f.Add("[voluntary] 1\n")
	f.Fuzz(func(t *testing.T, text string) {
		p, err := fold.ParseFolded(strings.NewReader(text), false)
		if err != nil || len(p.Stacks) == 0 {
			return
		}
		p.Unit = fold.UnitSwitches
		p.Meta = &fold.Meta{Operations: 7}
		total, err := p.CheckedTotal()
		if err != nil {
			return
		}
		s := Summarize(p, Options{Classify: func([]string) string { return "x" }, Roots: []string{p.Stacks[0].Frames[len(p.Stacks[0].Frames)-1]}, Depth: 3})
		rf := s.Profile
		if rf.Voluntary < 0 || rf.Involuntary < 0 || rf.Voluntary+rf.Involuntary > total {
			t.Fatalf("voluntary %d + involuntary %d of a total %d", rf.Voluntary, rf.Involuntary, total)
		}
		var self int64
		for _, fn := range s.Functions {
			if fn.Name == fold.OffCPUVoluntary && fn.Voluntary+fn.Involuntary > 0 {
				t.Fatalf("function %+v: a switch-kind leaf counted as a function", fn)
			}
			if fn.Voluntary+fn.Involuntary > fn.Inclusive {
				t.Fatalf("function %+v: kinds exceed its inclusive value", fn)
			}
			self += fn.Self
		}
		if self > total {
			t.Fatalf("self values add up to %d, above the total %d", self, total)
		}
		if len(s.Subsystems) != 1 || s.Subsystems[0].Value != total || s.Subsystems[0].Voluntary != rf.Voluntary || s.Subsystems[0].Involuntary != rf.Involuntary {
			t.Fatalf("one subsystem %+v; want the whole profile, %d, its kinds %d and %d", s.Subsystems, total, rf.Voluntary, rf.Involuntary)
		}
	})
}
