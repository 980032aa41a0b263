package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// The off-CPU files round-trip: written as folded text with their leaf
// frames, read back with the same stacks and counts, and run.json's
// off_cpu totals with them; a run without them says how to get them.
func TestOffCPURoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := Create(dir); err != nil {
		t.Fatal(err)
	}
	time, err := fold.ParseFolded(strings.NewReader("mariadbd;do_command;futex_wait;[voluntary] 1500\nmariadbd;do_command;[involuntary] 20\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	switches, err := fold.ParseFolded(strings.NewReader("mariadbd;do_command;futex_wait;[voluntary] 7\nmariadbd;do_command;[involuntary] 3\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadOffCPU(dir); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "--off-cpu") {
		t.Errorf("ReadOffCPU(no files) = %v, want fs.ErrNotExist and a word on --off-cpu", err)
	}
	if err := WriteOffCPU(dir, time, switches); err != nil {
		t.Fatal(err)
	}
	m := &fold.Meta{Format: 1, Label: "x", OffCPU: &fold.OffCPU{Seconds: 0.00152, Voluntary: 7, Involuntary: 3, ProcVoluntary: 7, ProcInvoluntary: 3,
		Threads: []fold.OffCPUThread{{Name: "mariadbd", Threads: 2, Seconds: 0.00152, Voluntary: 7, Involuntary: 3}}}}
	if err := WriteMeta(dir, m); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(dir, OffCPUFile))
	if err != nil || string(text) != "mariadbd;do_command;[involuntary] 20\nmariadbd;do_command;futex_wait;[voluntary] 1500\n" {
		t.Errorf("%s = %q, %v; want the two stacks sorted, leaf frames kept", OffCPUFile, text, err)
	}
	gt, gs, err := ReadOffCPU(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want *fold.Profile
		unit      string
	}{{"time", gt, time, fold.UnitOffCPUMicros}, {"switches", gs, switches, fold.UnitSwitches}} {
		if c.got.Unit != c.unit || !c.got.IsOffCPU() {
			t.Errorf("%s: Unit %q, want %q", c.name, c.got.Unit, c.unit)
		}
		if c.got.Total() != c.want.Total() || len(c.got.Stacks) != len(c.want.Stacks) {
			t.Errorf("%s: read %d stacks totalling %d, wrote %d totalling %d", c.name, len(c.got.Stacks), c.got.Total(), len(c.want.Stacks), c.want.Total())
		}
		for i := range c.want.Stacks {
			if i < len(c.got.Stacks) && c.got.Stacks[i].Key() != c.want.Stacks[i].Key() {
				t.Errorf("%s: stack %d = %q, want %q", c.name, i, c.got.Stacks[i].Key(), c.want.Stacks[i].Key())
			}
		}
		if c.got.Meta == nil || c.got.Meta.OffCPU == nil || c.got.Meta.OffCPU.Voluntary != 7 || len(c.got.Meta.OffCPU.Threads) != 1 {
			t.Errorf("%s: metadata %+v, want run.json's off_cpu with 7 voluntary switches and one thread name", c.name, c.got.Meta)
		}
	}
}
