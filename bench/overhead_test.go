// Package bench holds benchmarks that need a real server: the capture
// overhead benchmark. Run with `make bench-overhead` (root, mariadb-server,
// sysbench and linux-perf installed).
package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/workload"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkCaptureOverhead measures sysbench QPS against a real MariaDB
// without sampling and with perf sampling at 99 Hz and 999 Hz (per-thread
// events on the server, perf record -p, and per-CPU events, perf record -a)
// and with the BPF sampler, in
// interleaved rounds (the order rotates every round so that drift does not
// favour one configuration), and prints the median QPS ratio of each
// sampled configuration to the unsampled runs of the same rounds.
//
// FLAMEDIFF_BENCH_PAIRS (default 5) rounds, FLAMEDIFF_BENCH_SECONDS (default
// 8) seconds per run, FLAMEDIFF_BENCH_TEST (default oltp_point_select).
func BenchmarkCaptureOverhead(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root: starts mariadbd and samples it with perf")
	}
	if err := capture.CheckPerf(); err != nil {
		b.Skipf("perf cannot sample here: %v", err)
	}
	pairs := envInt("FLAMEDIFF_BENCH_PAIRS", 5)
	secs := envInt("FLAMEDIFF_BENCH_SECONDS", 8)
	test := os.Getenv("FLAMEDIFF_BENCH_TEST")
	if test == "" {
		test = "oltp_point_select"
	}
	srv := mariadbtest.Start(b, mariadbtest.Options{})
	srv.Prepare(b, test, 10000)
	configs := []struct {
		name string
		freq int // 0: no sampling
		all  bool
		bpf  bool
	}{{"none", 0, false, false}, {"perf-99Hz", 99, false, false}, {"perf-999Hz", 999, false, false},
		{"perf-a-99Hz", 99, true, false}, {"perf-a-999Hz", 999, true, false},
		{"bpf-99Hz", 99, true, true}, {"bpf-999Hz", 999, true, true}}
	qps := make(map[string][]float64)
	for i := 0; i < b.N; i++ {
		for round := 0; round < pairs; round++ {
			for k := range configs {
				c := configs[(k+round)%len(configs)]
				q, err := runOnce(b, srv, test, secs, c.freq, c.all, c.bpf)
				if err != nil {
					b.Fatalf("round %d, %s: %v", round+1, c.name, err)
				}
				qps[c.name] = append(qps[c.name], q)
				fmt.Printf("round %d %-12s %9.1f qps\n", round+1, c.name, q)
			}
		}
	}
	fmt.Printf("\n%s, %d rounds of %d s, interleaved:\n", test, pairs, secs)
	for _, c := range configs {
		var ratios []float64
		for j, q := range qps[c.name] {
			ratios = append(ratios, q/qps["none"][j])
		}
		m := median(ratios)
		fmt.Printf("  %-12s median %9.1f qps, median ratio to none %.4f (QPS loss %.2f%%)\n", c.name, median(qps[c.name]), m, 100*(1-m))
		if c.freq > 0 {
			b.ReportMetric(100*(1-m), "%loss-"+c.name)
		}
	}
}

// runOnce runs sysbench for secs seconds, sampling the server at freq Hz
// for the whole run when freq > 0, and returns sysbench's QPS.
func runOnce(tb testing.TB, srv *mariadbtest.Server, test string, secs, freq int, all, useBPF bool) (float64, error) {
	var sampler capture.Sampler
	if freq > 0 {
		sampler = capture.NewPerf()
		if useBPF {
			sampler = capture.NewBPF()
		}
		if err := sampler.Start(context.Background(), srv.PID, capture.Options{FrequencyHz: freq, SystemWide: all}); err != nil {
			return 0, err
		}
		defer func() { _, _ = sampler.Stop(context.Background()) }()
	}
	args := srv.Sysbench(tb, test, "--time="+strconv.Itoa(secs), "run")
	var out bytes.Buffer
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("sysbench: %w\n%s", err, out.String())
	}
	if freq > 0 {
		if _, err := sampler.Stop(context.Background()); err != nil {
			return 0, fmt.Errorf("perf stop after %s: %w", time.Since(start), err)
		}
	}
	rep, err := workload.ParseSysbench(&out)
	if err != nil {
		return 0, err
	}
	return rep.QPS, nil
}
