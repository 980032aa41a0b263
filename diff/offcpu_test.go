package diff

import (
	"errors"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// offCPUProfile is an off-CPU profile of unit over ops operations.
func offCPUProfile(unit string, ops int64, stacks ...any) *fold.Profile {
	p := prof(&fold.Meta{Operations: ops}, stacks...)
	p.Unit = unit
	return p
}

func classifyOffCPU(frames []string) string {
	for _, f := range frames {
		switch f {
		case "commit", "net_read", "update":
			return f
		}
	}
	return "other"
}

// Switches planted per operation: the base makes 5.50 cs/op (commit 3,
// net_read 2, update 0.5), the target 20.50 (15, 3, 2.5): +15.00 cs/op,
// of which commit +12.00, update +2.00, net_read +1.00. The switch-kind
// leaf is no function: futex_wait, where the thread blocked, holds the
// self value, and the kinds split every function and subsystem.
func TestOffCPUSwitches(t *testing.T) {
	base := offCPUProfile(fold.UnitSwitches, 100,
		"t;do_command;commit;futex_wait;[voluntary]", 300,
		"t;do_command;net_read;[voluntary]", 200,
		"t;do_command;update;[involuntary]", 50)
	target := offCPUProfile(fold.UnitSwitches, 100,
		"t;do_command;commit;futex_wait;[voluntary]", 1400,
		"t;do_command;commit;[involuntary]", 100,
		"t;do_command;net_read;[voluntary]", 300,
		"t;do_command;update;[involuntary]", 250)
	opts := Options{Classify: classifyOffCPU, SubsystemNames: []string{"commit", "net_read", "update"}, Roots: []string{"do_command"}, Depth: 2}

	s := Summarize(target, opts)
	f := s.Profile
	if !f.OffCPU || !f.HasPerOp || f.PerOp != 20.5 || f.PerOpUnit != "cs/op" || f.Quantity != "context switches" || f.Voluntary != 1700 || f.Involuntary != 350 {
		t.Errorf("run figures %+v; want off-CPU, 20.50 cs/op, 1700 voluntary and 350 involuntary", f)
	}
	byName := map[string]FunctionShare{}
	for _, fn := range s.Functions {
		byName[fn.Name] = fn
	}
	if _, ok := byName[fold.OffCPUVoluntary]; ok {
		t.Errorf("functions hold the leaf %s", fold.OffCPUVoluntary)
	}
	for _, c := range []struct {
		name       string
		incl, self int64
		vol, invol int64
		inclPerOp  float64
	}{
		{"do_command", 2050, 0, 1700, 350, 20.5},
		{"commit", 1500, 100, 1400, 100, 15},
		{"futex_wait", 1400, 1400, 1400, 0, 14},
		{"update", 250, 250, 0, 250, 2.5},
	} {
		fn := byName[c.name]
		if fn.Inclusive != c.incl || fn.Self != c.self || fn.Voluntary != c.vol || fn.Involuntary != c.invol || !near(fn.InclusiveMicrosPerOp, c.inclPerOp) {
			t.Errorf("%s: %+v; want inclusive %d, self %d, voluntary %d, involuntary %d, %g cs/op", c.name, fn, c.incl, c.self, c.vol, c.invol, c.inclPerOp)
		}
	}
	for _, sub := range s.Subsystems {
		if sub.Voluntary+sub.Involuntary != sub.Value {
			t.Errorf("subsystem %s: voluntary %d + involuntary %d != %d", sub.Name, sub.Voluntary, sub.Involuntary, sub.Value)
		}
	}
	if rows := s.Subtrees[0].Root.Children; len(rows) != 3 || rows[0].Name != "commit" {
		t.Errorf("do_command's callees %v; want commit, net_read, update (no [unresolved] row for the leaf)", rows)
	}
	for _, ch := range s.Subtrees[0].Root.Children[0].Children {
		if ch.Name == UnresolvedName {
			t.Errorf("commit has an %s row: the switch-kind leaf was taken for an unresolved frame", UnresolvedName)
		}
	}

	r, err := Compute(base, []*fold.Profile{target}, opts)
	if err != nil {
		t.Fatal(err)
	}
	a := r.Attribution[0]
	if a.Delta != 15 || a.Unit != "cs/op" || a.Quantity != "context switches" {
		t.Fatalf("attribution %+v; want +15.00 cs/op of context switches", a)
	}
	var sum float64
	parts := map[string]float64{}
	for _, p := range a.Parts {
		sum += p.Delta
		parts[p.Subsystem] = p.Delta
	}
	if !near(sum, 15) || parts["commit"] != 12 || parts["update"] != 2 || parts["net_read"] != 1 {
		t.Errorf("parts %v (sum %g); want commit +12, update +2, net_read +1, adding up to +15", parts, sum)
	}
	if want := "base → target 1: of +15.00 cs/op, commit +12.00, update +2.00, net_read +1.00"; a.Sentence() != want {
		t.Errorf("Sentence() = %q, want %q", a.Sentence(), want)
	}
}

// Off-CPU time per operation is the profile's microseconds over the
// operations, whatever the run's CPU; profiles of two quantities are not
// compared.
func TestOffCPUTimeAndMixed(t *testing.T) {
	base := offCPUProfile(fold.UnitOffCPUMicros, 10, "t;a;commit;[voluntary]", 700, "t;a;[involuntary]", 300)
	base.Meta.CPUSecondsTotal = 1
	target := offCPUProfile(fold.UnitOffCPUMicros, 10, "t;a;commit;[voluntary]", 1000, "t;a;[involuntary]", 500)
	r, err := Compute(base, []*fold.Profile{target}, Options{Classify: classifyOffCPU})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Summaries[0].Profile
	if b.PerOp != 100 || !b.HasCPU || b.MicrosPerOp != 100000 || b.PerOpUnit != "µs/op" {
		t.Errorf("base figures %+v; want 100 off-CPU µs/op beside the run's 100000 CPU µs/op", b)
	}
	if a := r.Attribution[0]; a.Delta != 50 || !strings.Contains(a.Sentence(), "of +50.00 µs/op, commit +30.00, other +20.00") {
		t.Errorf("attribution %q; want +50.00 µs/op, commit +30.00, other +20.00", a.Sentence())
	}
	onCPU := prof(&fold.Meta{Operations: 10, CPUSecondsTotal: 1}, "t;a;commit", 5)
	if _, err := Compute(onCPU, []*fold.Profile{target}, Options{}); !errors.Is(err, ErrMixed) {
		t.Errorf("Compute(on-CPU, off-CPU) = %v; want ErrMixed", err)
	}
}
