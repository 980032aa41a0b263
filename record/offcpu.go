package record

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/workload/procstat"
)

// offCPUFigures completes the off-CPU totals of the sampler with /proc's
// switches over the window (m) and, per thread name, the threads'
// wall-clock time less their run time (accounted, schedstat).
func offCPUFigures(t fold.OffCPU, m *fold.Meta, accounted []procstat.ThreadCPU, min time.Duration) *fold.OffCPU {
	t.ProcVoluntary, t.ProcInvoluntary = m.VoluntaryCtxSwitches, m.InvoluntaryCtxSwitches
	t.MinBlockMicros = min.Microseconds()
	t.Threads = append([]fold.OffCPUThread(nil), t.Threads...)
	for i, th := range t.Threads {
		for _, a := range accounted {
			if a.Name == th.Name && m.WindowSeconds > 0 {
				t.Threads[i].WallMinusCPUSeconds = math.Max(0, float64(a.Threads)*m.WindowSeconds-a.Seconds)
			}
		}
	}
	return &t
}

// offCPUSlack is the difference in switches offCPUGap lets pass whatever
// the counts: the program counts from the sampler's start to its stop,
// /proc's figures are read just inside that, and a few threads may switch
// in between.
const offCPUSlack = 5

// offCPUGap warns when the switches the off-CPU program counted differ
// from /proc's by more than 3% and more than offCPUSlack switches,
// voluntary or involuntary ("" when they do not, or with a minimum stretch,
// which leaves switches out on purpose).
func offCPUGap(t *fold.OffCPU) string {
	if t.MinBlockMicros > 0 {
		return ""
	}
	var off []string
	for _, k := range []struct {
		kind      string
		got, want int64
	}{{"voluntary", t.Voluntary, t.ProcVoluntary}, {"involuntary", t.Involuntary, t.ProcInvoluntary}} {
		if d := math.Abs(float64(k.got - k.want)); d > offCPUSlack && d > 0.03*float64(k.want) {
			off = append(off, fmt.Sprintf("%s %d against /proc's %d", k.kind, k.got, k.want))
		}
	}
	if len(off) == 0 {
		return ""
	}
	return "OFF-CPU SWITCHES DIFFER: the off-CPU profile counted " + strings.Join(off, ", ") +
		" (more than 3%): threads blocked since before the window are not in it, and a thread that exited in the window is not in /proc's sum"
}
