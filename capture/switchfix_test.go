//go:build linux

package capture

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/cputruth"
)

// With Options.SwitchFix, the BPF sampler's per-thread samples stand for
// the CPU the scheduler accounted (schedstat), within 3%, on programs whose
// true CPU per function is known (internal/cputruth): a thread that works
// right after waking and right before sleeping, and two threads that wake
// each other. Without the fix they lose 10-20% of their CPU from the
// samples (docs/fidelity.md). The functions' shares are logged, not
// asserted: on a quiet machine the two threads' come within 0.7 points of
// the truth, but with two CPU hogs beside them one was 2.3 points low, and
// the bursty thread's are 1-4.6 points high; that is the open part of the
// work (docs/fidelity.md, "Corrections").
func TestSwitchFixTruth(t *testing.T) {
	requireBPF(t)
	bin, dir := cputruth.BuildT(t)
	for _, sc := range cputruth.Scenarios {
		if sc.Name != "bursty-50us-100us" && sc.Name != "pingpong-30us-60us" {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			p := cputruth.StartT(t, bin, dir, sc)
			time.Sleep(300 * time.Millisecond)
			s := NewBPF()
			ctx := context.Background()
			if err := s.Start(ctx, p.PID(), Options{FrequencyHz: 999, SwitchFix: true, StackCopy: "never"}); err != nil {
				t.Fatal(err)
			}
			before, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(6 * time.Second)
			after, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Stop(ctx)
			if err != nil {
				t.Fatal(err)
			}
			truth := after.Sub(before)
			total := res.Profile.Total()
			sampled, accounted := float64(total)/999, float64(truth.TotalNs())/1e9
			t.Logf("sampled %.3f s (%d samples), accounted %.3f s; health %v", sampled, total, accounted, res.Health)
			if r := sampled / accounted; r < 0.97 || r > 1.03 {
				t.Errorf("sampled/accounted CPU %.3f (%.3f/%.3f s), want within 3%%", r, sampled, accounted)
			}
			if res.Health["switch_deferred"] == 0 || res.Health["switch_owed"] == 0 {
				t.Errorf("health %v: want deferred and owed samples taken at switch-outs (the fix did nothing?)", res.Health)
			}
			for _, fn := range sc.Funcs {
				var n int64
				for _, st := range res.Profile.Stacks {
					if slices.Contains(st.Frames[1:], fn) {
						n += st.Value
					}
				}
				got, want := 100*float64(n)/float64(total), truth.Share(fn)
				t.Logf("%s: sampled %.2f%%, true %.2f%%", fn, got, want)
			}
		})
	}
}
