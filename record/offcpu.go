package record

import (
	"math"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/workload/procstat"
)

// offCPUFigures completes the off-CPU totals of the sampler with /proc's
// switches over the window (m) and around the sampler's (outer), the
// switches of the threads that had exited by its end (not alive, when
// /proc said which were), and, per thread name, the threads' wall-clock
// time less their run time (accounted, schedstat).
func offCPUFigures(off *capture.OffCPU, m *fold.Meta, outer procstat.Window, accounted []procstat.ThreadCPU, alive map[int]bool, min time.Duration) *fold.OffCPU {
	t := off.Totals
	t.ProcVoluntary, t.ProcInvoluntary = m.VoluntaryCtxSwitches, m.InvoluntaryCtxSwitches
	t.ProcOuterVoluntary, t.ProcOuterInvoluntary = outer.Voluntary, outer.Involuntary
	if alive != nil {
		for tid, s := range off.ByTID {
			if !alive[tid] {
				t.ExitedThreads++
				t.ExitedVoluntary += s.Voluntary
				t.ExitedInvoluntary += s.Involuntary
			}
		}
	}
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
