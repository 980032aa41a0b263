//go:build linux

package capture

import (
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/workload/procstat"
)

func requireBPF(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the BPF sampler needs root (CAP_BPF and CAP_PERFMON)")
	}
	if err := CheckBPF(); err != nil {
		t.Skipf("BPF sampler not usable here: %v", err)
	}
}

// TestBPFSampler samples a busy shell with the BPF sampler: the sample
// count matches the CPU it used, stacks fold like perf's (thread name
// first), and Stop is idempotent.
func TestBPFSampler(t *testing.T) {
	requireBPF(t)
	target := burner(t)
	pid := target.Process.Pid
	s := NewBPF()
	if s.Name() != "bpf" {
		t.Errorf("Name() = %q", s.Name())
	}
	ctx := context.Background()
	if err := s.Start(ctx, pid, Options{FrequencyHz: 499}); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, pid, Options{FrequencyHz: 499}); err == nil {
		t.Errorf("a second Start succeeded")
	}
	before, err := procstat.Read("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	soFar := s.SamplesSoFar()
	after, err := procstat.Read("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	// What the shell ran so far (a loaded machine gives it less than a CPU).
	if want := 499 * procstat.Diff(before, after).CPU(); float64(soFar) < 0.8*want-10 || soFar == 0 {
		t.Errorf("SamplesSoFar() = %d after %.2f CPU-s at 499 Hz, want about %.0f", soFar, want/499, want)
	}
	res, err := s.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The sampled CPU matches what the process was accounted (on a loaded
	// machine the shell gets less than a whole CPU).
	cpu := procstat.Diff(before, after).CPU()
	if sampled := float64(res.Samples) / 499; math.Abs(sampled-cpu) > 0.1*cpu+0.03 {
		t.Errorf("sampled %.2f s (%d samples) vs accounted %.2f s: want within 10%%", sampled, res.Samples, cpu)
	}
	if res.Profile.Total() != res.Samples || res.Profile.Unit != "samples" || res.Sampler != "bpf" {
		t.Errorf("profile total %d, unit %q, sampler %q; want total = samples %d, unit samples, sampler bpf",
			res.Profile.Total(), res.Profile.Unit, res.Sampler, res.Samples)
	}
	for _, st := range res.Profile.Stacks {
		if st.Frames[0] != "sh" || len(st.Frames) < 2 {
			t.Fatalf("stack %q: want the thread name sh first and at least one frame", st.Key())
		}
	}
	again, err := s.Stop(ctx)
	if err != nil || again != res {
		t.Errorf("second Stop = %p, %v; want the same result", again, err)
	}
}

func TestBPFSamplerGone(t *testing.T) {
	requireBPF(t)
	if err := NewBPF().Start(context.Background(), 1<<22-3, Options{}); err == nil || !strings.Contains(err.Error(), "gone") {
		t.Errorf("Start on a missing pid: %v, want an error saying the process is gone", err)
	}
}

func TestHealthWarnings(t *testing.T) {
	w := healthWarnings(bpf.Health{Samples: 1000, MapFull: 10, Collisions: 2, Truncated: 1, UserStackErrors: map[int64]uint64{14: 3}})
	all := strings.Join(w, "\n")
	for _, want := range []string{"LOST SAMPLES", "10 of 1000", "colliding", "no user stack", "maximum depth"} {
		if !strings.Contains(all, want) {
			t.Errorf("healthWarnings: %q lacks %q", all, want)
		}
	}
	if w := healthWarnings(bpf.Health{Samples: 1000, MapFull: 2}); len(w) != 1 || strings.Contains(w[0], "LOST") {
		t.Errorf("0.2%% lost: %q, want a quiet warning", w)
	}
	if w := healthWarnings(bpf.Health{Samples: 1000}); len(w) != 0 {
		t.Errorf("healthy: %q, want none", w)
	}
}
