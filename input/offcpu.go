package input

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/rundir"
)

// The off-CPU profiles a Loader reads (Loader.OffCPU): the time off the
// CPU (offcpu.folded, microseconds) or the switches
// (offcpu-switches.folded).
const (
	OffCPUTime     = "time"
	OffCPUSwitches = "switches"
)

// OffCPUKinds are the values of Loader.OffCPU besides "" (on-CPU).
var OffCPUKinds = []string{OffCPUTime, OffCPUSwitches}

// offCPUUnit is the profile unit of an off-CPU kind.
func offCPUUnit(kind string) string {
	if kind == OffCPUSwitches {
		return fold.UnitSwitches
	}
	return fold.UnitOffCPUMicros
}

// OffCPUFileUnit recognises an off-CPU profile file by its name, as
// record writes them: "offcpu-switches*.folded" holds switches
// (fold.UnitSwitches), any other "offcpu*.folded" microseconds off the
// CPU (fold.UnitOffCPUMicros); "" for any other name.
func OffCPUFileUnit(path string) string {
	base := filepath.Base(path)
	if !strings.HasPrefix(base, "offcpu") || !strings.HasSuffix(base, ".folded") {
		return ""
	}
	if strings.HasPrefix(base, "offcpu-switches") {
		return fold.UnitSwitches
	}
	return fold.UnitOffCPUMicros
}

// offCPUFile gives a profile read from a file its off-CPU unit: the one
// its name says (OffCPUFileUnit), else the one l.OffCPU asks for; a file
// whose name says the other kind than l.OffCPU is an error. A file of
// another name read without l.OffCPU is left as it is.
func (l *Loader) offCPUFile(name, path string, p *fold.Profile) error {
	unit := OffCPUFileUnit(path)
	switch {
	case unit != "" && l.OffCPU != "" && unit != offCPUUnit(l.OffCPU):
		q := fold.Profile{Unit: unit}
		return fmt.Errorf("%s: its name says it holds %s, but off-CPU %s was asked for", name, q.Quantity(), l.OffCPU)
	case unit == "" && l.OffCPU != "":
		unit = offCPUUnit(l.OffCPU)
	}
	if unit != "" {
		p.Unit, p.Event = unit, ""
	}
	return nil
}

// loadOffCPU reads the off-CPU profile of run directory dir that
// l.OffCPU asks for, with the run's metadata (rundir.ReadOffCPU). The
// label defaults to the directory's name, as for stacks.folded.
func (l *Loader) loadOffCPU(dir string) (*fold.Profile, error) {
	t, s, err := rundir.ReadOffCPU(dir)
	if err != nil {
		return nil, err
	}
	p := t
	if l.OffCPU == OffCPUSwitches {
		p = s
	}
	if p.Meta == nil {
		p.Meta = &fold.Meta{}
	}
	if p.Meta.Label == "" {
		p.Meta.Label = filepath.Base(filepath.Clean(dir))
	}
	return p, nil
}

// MixedError says that profiles of two quantities (CPU, off-CPU time,
// context switches) were given to one command, which compares or
// merges profiles of one quantity only.
type MixedError struct {
	// First and Second are the two arguments; FirstQuantity and
	// SecondQuantity what their profiles measure (fold.Profile.Quantity).
	First, Second                 string
	FirstQuantity, SecondQuantity string
}

func (e *MixedError) Error() string {
	return fmt.Sprintf("%s is a profile of %s but %s is one of %s: give profiles of one kind", e.Second, e.SecondQuantity, e.First, e.FirstQuantity)
}

// SameQuantity fails with a *MixedError when the profiles (parallel to
// args) do not all measure the same quantity: an on-CPU profile beside an
// off-CPU one, or off-CPU time beside switches.
func SameQuantity(args []string, ps []*fold.Profile) error {
	for i := 1; i < len(ps); i++ {
		if q, q0 := ps[i].Quantity(), ps[0].Quantity(); q != q0 {
			return &MixedError{First: args[0], Second: args[i], FirstQuantity: q0, SecondQuantity: q}
		}
	}
	return nil
}
