package flamegraph

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/fold"
)

// bigProfile returns a deterministic synthetic profile of n distinct stacks
// shaped like a database server's: a few thread names, call chains 8 to 45
// frames deep whose callees are picked with a skew (a few hot paths, a long
// tail), C++-length names, and sample counts with a long tail.
func bigProfile(n int) *fold.Profile {
	r := rand.New(rand.NewPCG(5, 9))
	pool := make([]string, 6000)
	for i := range pool {
		pool[i] = fmt.Sprintf("ns%d::Class%d::method_%d(%s)", i%17, i%97, i, strings.Repeat("int, ", i%5))
	}
	threads := []string{"mariadbd", "one_connection", "ib_tpool_worker", "page_cleaner", "io_uring_wait", "ib_log_flush", "ib_purge", "timer"}
	seen := make(map[string]bool, n)
	p := &fold.Profile{}
	for len(p.Stacks) < n {
		t := int(r.ExpFloat64()) % len(threads)
		frames := []string{threads[t]}
		h := uint64(t + 1)
		depth := 8 + r.IntN(38)
		for d := 0; d < depth; d++ {
			k := uint64(r.ExpFloat64() * 1.6)
			h = h*1099511628211 + k + 1
			frames = append(frames, pool[h%uint64(len(pool))])
		}
		key := strings.Join(frames, ";")
		if seen[key] {
			continue
		}
		seen[key] = true
		p.Stacks = append(p.Stacks, fold.Stack{Frames: frames, Value: 1 + int64(r.ExpFloat64()*30)})
	}
	p.Normalize()
	return p
}

// BenchmarkRender100k lays out and draws a 100,000-stack profile with the
// default options (--minwidth 0.1 pixels) and reports the SVG size. Target:
// under one second and under 5 MB (make bench-svg).
func BenchmarkRender100k(b *testing.B) {
	p := bigProfile(100000)
	var size int
	var frames, merged int
	b.ResetTimer()
	for b.Loop() {
		var out countWriter
		g, err := Layout(p, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := g.WriteSVG(&out); err != nil {
			b.Fatal(err)
		}
		size, frames, merged = out.n, len(g.Frames), g.Merged
	}
	b.ReportMetric(float64(size)/1e6, "MB-svg")
	b.ReportMetric(float64(frames), "frames")
	b.Logf("100k stacks: %d frames drawn, %d merged into parents, SVG %.2f MB", frames, merged, float64(size)/1e6)
}

type countWriter struct{ n int }

func (w *countWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

// TestRender100kBudget checks the size half of the benchmark's target on
// every test run (the size does not depend on the machine), and the time
// half loosely (ten times the target, for slow and -race runs).
func TestRender100kBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("renders a 100,000-stack profile; skipped with -short")
	}
	p := bigProfile(100000)
	if len(p.Stacks) != 100000 {
		t.Fatalf("%d distinct stacks, want 100000", len(p.Stacks))
	}
	start := time.Now()
	var out bytes.Buffer
	if err := Render(&out, p, Options{}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("100k stacks: %v, %.2f MB", took, float64(out.Len())/1e6)
	if out.Len() >= 5e6 {
		t.Errorf("SVG of 100k stacks is %.2f MB, want under 5 MB", float64(out.Len())/1e6)
	}
	if took > 10*time.Second {
		t.Errorf("rendering 100k stacks took %v, want well under 10 s (target 1 s without -race)", took)
	}
}
