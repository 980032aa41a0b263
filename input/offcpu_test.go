package input

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// A run directory, read with Loader.OffCPU, gives its off-CPU file with
// its unit and run.json; a file named offcpu*.folded is an off-CPU profile
// by its name; a run without the files, a name that contradicts OffCPU,
// and profiles of two quantities together are errors that say so.
func TestLoadOffCPU(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run-10.5")
	write(t, run, "stacks.folded", "t;f 10\nt;g 30\n")
	write(t, run, "run.json", `{"format": 1, "operations": 100, "cpu_seconds_total": 0.5}`)
	// Whole seconds: counts a folded file of cpu-clock periods would
	// have, which an off-CPU profile must not be taken for.
	write(t, run, "offcpu.folded", "t;f;[voluntary] 2000000\nt;g;[involuntary] 1000000\n")
	write(t, run, "offcpu-switches.folded", "t;f;[voluntary] 700\nt;g;[involuntary] 300\n")
	plain := filepath.Dir(write(t, dir, "plain/stacks.folded", "t;f 1\n"))
	file := write(t, dir, "offcpu-switches-10.5.folded", "t;f;[voluntary] 7\n")
	timeFile := write(t, dir, "offcpu.folded", "t;f;[voluntary] 2000000\nt;g;[voluntary] 1000000\n")

	for _, c := range []struct {
		name, kind, arg string
		unit            string
		total           int64
		label           string
	}{
		{"run, time", OffCPUTime, run, fold.UnitOffCPUMicros, 3000000, "run-10.5"},
		{"run, switches", OffCPUSwitches, run, fold.UnitSwitches, 1000, "run-10.5"},
		{"run, on-CPU", "", run, fold.UnitSamples, 40, "run-10.5"},
		{"file named offcpu-switches", "", file, fold.UnitSwitches, 7, ""},
		{"file named offcpu-switches, switches asked", OffCPUSwitches, file, fold.UnitSwitches, 7, ""},
		{"file named offcpu", "", timeFile, fold.UnitOffCPUMicros, 3000000, ""},
	} {
		l := &Loader{OffCPU: c.kind}
		p, err := l.Load(c.arg, fold.ParseOptions{})
		if err != nil {
			t.Errorf("%s: Load(%s): %v", c.name, c.arg, err)
			continue
		}
		unit := p.Unit
		if unit == "" {
			unit = fold.UnitSamples
		}
		if unit != c.unit || p.Total() != c.total || p.Label() != c.label {
			t.Errorf("%s: Load(%s) = unit %q, total %d, label %q; want %q, %d, %q", c.name, c.arg, unit, p.Total(), p.Label(), c.unit, c.total, c.label)
		}
		if c.kind != "" && c.arg == run {
			if v, ok := p.PerOp(); !ok || v != float64(c.total)/100 {
				t.Errorf("%s: PerOp() = %g, %v; want %g per op (run.json's 100 operations)", c.name, v, ok, float64(c.total)/100)
			}
		}
	}

	_, err := (&Loader{OffCPU: OffCPUTime}).Load(plain, fold.ParseOptions{})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), plain) || !strings.Contains(err.Error(), "--off-cpu") {
		t.Errorf("off-CPU of a run without it: %v; want fs.ErrNotExist naming %s and how to record it (--off-cpu)", err, plain)
	}
	_, err = (&Loader{OffCPU: OffCPUTime}).Load(file, fold.ParseOptions{})
	if err == nil || !strings.Contains(err.Error(), "context switches") {
		t.Errorf("time asked of offcpu-switches*.folded: %v; want an error saying the file holds context switches", err)
	}
	p, err := (&Loader{OffCPU: OffCPUSwitches, Stdin: strings.NewReader("t;f;[voluntary] 5\n")}).Load(Stdin, fold.ParseOptions{})
	if err != nil || p.Unit != fold.UnitSwitches {
		t.Errorf("stdin with OffCPU switches: %v, %v; want unit %q", p, err, fold.UnitSwitches)
	}

	if _, err := (&Loader{OffCPU: "waits"}).Load(run, fold.ParseOptions{}); err == nil || !strings.Contains(err.Error(), `"waits"`) {
		t.Errorf("OffCPU %q: %v; want an error naming it", "waits", err)
	}

	l := &Loader{}
	_, err = Read(context.Background(), l.Load, []string{run, timeFile}, fold.ParseOptions{})
	var me *MixedError
	if !errors.As(err, &me) || me.First != run || me.Second != timeFile || me.FirstQuantity != "CPU" || me.SecondQuantity != "off-CPU time" {
		t.Errorf("Read(on-CPU run, offcpu.folded) = %v; want a *MixedError naming both and their quantities", err)
	}
	_, err = Read(context.Background(), l.Load, []string{file, timeFile}, fold.ParseOptions{})
	if !errors.As(err, &me) {
		t.Errorf("Read(switches, time) = %v; want a *MixedError", err)
	}
}

func TestOffCPUFileUnit(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{"offcpu.folded", fold.UnitOffCPUMicros},
		{"runs/a/offcpu-10.5.folded", fold.UnitOffCPUMicros},
		{"offcpu-switches.folded", fold.UnitSwitches},
		{"offcpu-switches-a.folded", fold.UnitSwitches},
		{"stacks.folded", ""},
		{"offcpu.txt", ""},
		{"my-offcpu.folded", ""},
	} {
		if got := OffCPUFileUnit(c.path); got != c.want {
			t.Errorf("OffCPUFileUnit(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}
