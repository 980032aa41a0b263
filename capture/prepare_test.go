//go:build linux

package capture

import (
	"context"
	"os"
	"testing"
	"time"
)

// openFDs counts this process's open descriptors (a prepared program holds
// several: maps, programs, the ring buffer).
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// The BPF sampler prepared before Start samples with the prepared program;
// one prepared and never started releases it at Stop; Start with other
// options than prepared prepares again.
func TestBPFPrepare(t *testing.T) {
	requireBPF(t)
	target := burner(t)
	pid := target.Process.Pid
	ctx := context.Background()
	opts := Options{FrequencyHz: 499, SwitchFix: true, StackCopy: "auto"}

	b := NewBPF().(*BPF)
	if err := b.Prepare(ctx, pid, opts); err != nil {
		t.Fatal(err)
	}
	prepared := b.prepared
	if prepared == nil || !prepared.rangesSet {
		t.Fatalf("Prepare left prepared %v (ranges set: %v), want a run with auto's ranges set", prepared, prepared != nil && prepared.rangesSet)
	}
	if err := b.Prepare(ctx, pid, opts); err == nil {
		t.Error("a second Prepare succeeded")
	}
	if err := b.Start(ctx, pid, opts); err != nil {
		t.Fatal(err)
	}
	if b.run != prepared || b.prepared != nil || prepared.rangesDone != nil {
		t.Errorf("Start did not sample with the prepared program and its ranges")
	}
	time.Sleep(time.Second)
	res, err := b.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Samples < 100 {
		t.Errorf("prepared sampler took %d samples of a CPU burner in 1 s at 499 Hz, want hundreds", res.Samples)
	}

	// Prepared, never started: Stop releases every descriptor.
	fds := openFDs(t)
	b = NewBPF().(*BPF)
	if err := b.Prepare(ctx, pid, opts); err != nil {
		t.Fatal(err)
	}
	if openFDs(t) <= fds {
		t.Fatalf("a prepared sampler holds no descriptor: the check below would prove nothing")
	}
	if _, err := b.Stop(ctx); err == nil {
		t.Error("Stop of a sampler never started returned no error")
	}
	if got := openFDs(t); got != fds {
		t.Errorf("after Stop of a prepared sampler %d descriptors are open, %d before Prepare", got, fds)
	}

	// Other options at Start: prepared again, as asked.
	b = NewBPF().(*BPF)
	if err := b.Prepare(ctx, pid, opts); err != nil {
		t.Fatal(err)
	}
	prepared = b.prepared
	other := opts
	other.FrequencyHz = 99
	if err := b.Start(ctx, pid, other); err != nil {
		t.Fatal(err)
	}
	if b.run == prepared || b.run.opts.FrequencyHz != 99 {
		t.Errorf("Start with other options used the prepared program")
	}
	if _, err := b.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkBPFStart times Start of the BPF sampler (switch fix, stack
// copies auto) on a CPU burner: cold (Start loads the program) and after
// Prepare (Start only opens and enables the events). The latter is what a
// recording's window waits for.
func BenchmarkBPFStart(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	target := burner(b)
	pid := target.Process.Pid
	ctx := context.Background()
	opts := Options{FrequencyHz: 99, SwitchFix: true, StackCopy: "auto"}
	for _, prepared := range []bool{false, true} {
		name := "cold"
		if prepared {
			name = "prepared"
		}
		b.Run(name, func(b *testing.B) {
			var wait time.Duration
			for i := 0; i < b.N; i++ {
				s := NewBPF().(*BPF)
				if prepared {
					if err := s.Prepare(ctx, pid, opts); err != nil {
						b.Fatal(err)
					}
				}
				t0 := time.Now()
				if err := s.Start(ctx, pid, opts); err != nil {
					b.Fatal(err)
				}
				wait += time.Since(t0)
				if _, err := s.Stop(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(wait.Milliseconds())/float64(b.N), "ms-start/op")
		})
	}
}
