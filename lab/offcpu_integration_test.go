package lab

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/rundir"
)

// TestRunOffCPU runs one short cell (update-nonindex, 6 s) through the
// lab's matrix on the installed MariaDB 10.11 with capture.off_cpu on: the
// profiled window writes offcpu.folded and offcpu-switches.folded, the
// switches the off-CPU program counted agree with the server's
// voluntary_ctxt_switches and nonvoluntary_ctxt_switches in /proc over the
// window within 3% (run.json's off_cpu holds both), in all and for each
// kind; the switches file sums to the counted switches, each kind under
// its leaf frame; the unprofiled window has no off-CPU profile.
func TestRunOffCPU(t *testing.T) {
	requireLab(t)
	if err := bpf.CheckOffCPU(); err != nil {
		if errors.Is(err, errors.ErrUnsupported) || errors.Is(err, bpf.ErrPermission) {
			t.Skipf("the kernel does not allow off-CPU profiles: %v", err)
		}
		t.Fatalf("bpf.CheckOffCPU: %v", err)
	}
	cfg := parseTestConfig(t, `servers:
  - label: "10.11"
    path: /usr/sbin/mariadbd
workloads:
  - name: update-nonindex
    test: oltp_update_non_index
    table_size: 1000
    duration: 6s
    warmup: 1s
capture: {sampler: bpf, frequency: 99, off_cpu: on}
`)
	out := benchDir(t, "flamediff-offcpu-")
	res := runCells(t, cfg, RunOptions{Out: out, Cache: t.TempDir(), Record: recordRun}, 3*time.Minute, 1)
	m := res.Runs[0]
	if m.Missing != "" || m.MeasureMissing != "" {
		t.Fatalf("update-nonindex missing: %q, unprofiled %q", m.Missing, m.MeasureMissing)
	}
	if _, err := os.Stat(filepath.Join(m.MeasureDir, rundir.OffCPUFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unprofiled window: %s: %v; want none", rundir.OffCPUFile, err)
	}
	meta := readMeta(t, m.Dir)
	o := meta.OffCPU
	if o == nil {
		t.Fatalf("%s: run.json has no off_cpu block", m.Dir)
	}
	timeP, switchP, err := rundir.ReadOffCPU(m.Dir)
	if err != nil {
		t.Fatalf("ReadOffCPU(%s): %v", m.Dir, err)
	}
	counted, proc := o.Voluntary+o.Involuntary, o.ProcVoluntary+o.ProcInvoluntary
	t.Logf("%.2f s window, %.0f o/s: %d switches counted (%d voluntary, %d involuntary), /proc %d (%d, %d): %+.2f%%; %.1f cs/o; %.2f s off the CPU; %s %d stacks, %s %d stacks",
		meta.WindowSeconds, meta.QPS, counted, o.Voluntary, o.Involuntary, proc, o.ProcVoluntary, o.ProcInvoluntary,
		100*(float64(counted)/float64(proc)-1), float64(counted)/(meta.QPS*meta.WindowSeconds), o.Seconds,
		rundir.OffCPUFile, len(timeP.Stacks), rundir.OffCPUSwitchesFile, len(switchP.Stacks))
	// The off-CPU program runs at the switch-out, on the server's
	// cpu-clock event but before its run time is accounted: said, not
	// checked (bench-overhead measures it).
	t.Logf("on-CPU profile: sampled %.3f s of CPU, accounted %.3f s (%.3f)", meta.SampledCPUSeconds, meta.CPUSeconds(), meta.SampledCPUSeconds/meta.CPUSeconds())
	if proc < 1000 {
		t.Fatalf("/proc counted %d switches of the server over the window; want a busy server (over 1000)", proc)
	}
	for _, k := range []struct {
		kind      string
		got, want int64
	}{{"all", counted, proc}, {"voluntary", o.Voluntary, o.ProcVoluntary}, {"involuntary", o.Involuntary, o.ProcInvoluntary}} {
		// Involuntary switches are few on a saturated CPU: a few
		// switches of slack, as record's own check has.
		if d := math.Abs(float64(k.got - k.want)); d > 5 && d > 0.03*float64(k.want) {
			t.Errorf("%s switches: the off-CPU program counted %d, /proc %d over the window: more than 3%% apart", k.kind, k.got, k.want)
		}
	}
	var vol, invol int64
	for _, s := range switchP.Stacks {
		switch leaf := s.Frames[len(s.Frames)-1]; leaf {
		case fold.OffCPUVoluntary:
			vol += s.Value
		case fold.OffCPUInvoluntary:
			invol += s.Value
		default:
			t.Fatalf("%s: stack %q ends in %q, want [voluntary] or [involuntary]", rundir.OffCPUSwitchesFile, strings.Join(s.Frames, ";"), leaf)
		}
	}
	if vol != o.Voluntary || invol != o.Involuntary {
		t.Errorf("%s: %d voluntary, %d involuntary; run.json's off_cpu %d, %d", rundir.OffCPUSwitchesFile, vol, invol, o.Voluntary, o.Involuntary)
	}
	if timeP.Unit != fold.UnitOffCPUMicros || switchP.Unit != fold.UnitSwitches || len(timeP.Stacks) == 0 {
		t.Errorf("units %q and %q, %d time stacks; want %q and %q and stacks", timeP.Unit, switchP.Unit, len(timeP.Stacks), fold.UnitOffCPUMicros, fold.UnitSwitches)
	}
}
