//go:build linux

package record

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/workload"
	"github.com/flamediff/flamediff/workload/procstat"
)

// BenchmarkPlacement measures what the placement of the server and the
// client does to the figures the lab quotes, without any sampler: for
// point-select, read-only and update-nonindex (one sysbench thread, a
// table of 100,000 rows, as examples/lab/demo.yaml), under each placement
// (same, separate, none), in interleaved rounds (the order rotates every
// round), it prints the QPS, the server's CPU per operation (/proc), its
// context switches per operation and the host's CPU per operation
// (/proc/stat, client included), each run and then the median and range
// per cell. It checks that the placement held (every server and sysbench
// thread on its CPUs at the end of the window). docs/lab.md quotes it; it
// chose the lab's default placement.
//
// FLAMEDIFF_BENCH_ROUNDS (default 3) rounds of FLAMEDIFF_BENCH_SECONDS
// (default 10) seconds of window, after a 3 s warmup;
// FLAMEDIFF_BENCH_TESTS (default oltp_point_select,oltp_read_only,
// oltp_update_non_index) and FLAMEDIFF_BENCH_PLACEMENTS (default
// same,separate,none) choose the cells. Needs root, mariadbd and sysbench.
func BenchmarkPlacement(b *testing.B) {
	rounds := envInt("FLAMEDIFF_BENCH_ROUNDS", 3)
	secs := envInt("FLAMEDIFF_BENCH_SECONDS", 10)
	tests := envList("FLAMEDIFF_BENCH_TESTS", "oltp_point_select,oltp_read_only,oltp_update_non_index")
	placements := envList("FLAMEDIFF_BENCH_PLACEMENTS", "same,separate,none")
	allowed, err := allowedCPUs()
	if err != nil {
		b.Fatal(err)
	}
	srv := mariadbtest.Start(b, mariadbtest.Options{})
	srv.Prepare(b, "oltp_point_select", 100000)
	ctx := context.Background()
	db, err := workload.OpenServer(ctx, srv.DSN())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	type cell struct{ test, placement string }
	results := map[cell][]placementRun{}
	for range b.N {
		for r := range rounds {
			for _, test := range tests {
				for k := range placements {
					pl := placements[(k+r)%len(placements)]
					run, err := placementOnce(ctx, b, srv, db, test, pl, allowed, secs)
					if err != nil {
						b.Fatalf("round %d, %s, %s: %v", r+1, test, pl, err)
					}
					c := cell{test, pl}
					results[c] = append(results[c], run)
					fmt.Printf("round %d %-22s %-8s %9.1f qps  server %7.2f µs/o %5.2f cs/o  host %7.2f µs/o %5.2f cs/o  steal %.2f%%  load %s\n",
						r+1, test, pl, run.qps, run.cpuPerOp, run.csPerOp, run.hostCPUPerOp, run.hostCsPerOp, 100*run.steal, run.load)
				}
			}
		}
	}
	fmt.Printf("\nplacement, %d interleaved rounds of %d s windows (after 3 s warmup), no sampler; median (min-max):\n", rounds, secs)
	for _, test := range tests {
		for _, pl := range placements {
			runs := results[cell{test, pl}]
			f := func(get func(placementRun) float64) string {
				var xs []float64
				for _, r := range runs {
					xs = append(xs, get(r))
				}
				return fmt.Sprintf("%.1f (%.1f-%.1f)", median(xs), slices.Min(xs), slices.Max(xs))
			}
			fmt.Printf("  %-22s %-8s qps %s, server µs/o %s, server cs/o %s, host µs/o %s, host cs/o %s\n", test, pl,
				f(func(r placementRun) float64 { return r.qps }), f(func(r placementRun) float64 { return r.cpuPerOp }),
				f(func(r placementRun) float64 { return r.csPerOp }), f(func(r placementRun) float64 { return r.hostCPUPerOp }),
				f(func(r placementRun) float64 { return r.hostCsPerOp }))
		}
	}
}

// placementRun is one run of BenchmarkPlacement.
type placementRun struct {
	qps, cpuPerOp, csPerOp, hostCPUPerOp, hostCsPerOp, steal float64
	load                                                     string
}

// placementOnce pins the server's threads as placement says (for none:
// to every CPU allowed, undoing the previous run's), runs sysbench test
// started on the client's CPUs for 3 s of warmup, secs of window and 1 s
// more, and measures the window.
func placementOnce(ctx context.Context, b *testing.B, srv *mariadbtest.Server, db *workload.Server, test, placement string, allowed []int, secs int) (placementRun, error) {
	var run placementRun
	p, err := ParsePlacement(placement)
	if err != nil {
		return run, err
	}
	serverCPUs, clientCPUs, err := p.Resolve(allowed)
	if err != nil {
		return run, err
	}
	pin := serverCPUs
	if pin == nil {
		pin = allowed
	}
	if _, err := pinThreads("/proc", srv.PID, pin); err != nil {
		return run, err
	}
	const warmup = 3
	args := srv.Sysbench(b, test, "--threads=1", "--time="+strconv.Itoa(warmup+secs+1), "run")
	var cmd *exec.Cmd
	var out strings.Builder
	start := func() error {
		cmd = exec.Command(args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = &out, &out
		return cmd.Start()
	}
	if clientCPUs != nil {
		err = startOn(clientCPUs, start)
	} else {
		err = start()
	}
	if err != nil {
		return run, err
	}
	defer func() { _ = cmd.Wait() }()
	time.Sleep(warmup * time.Second)
	s0, err := procstat.Read("/proc", srv.PID)
	if err != nil {
		return run, err
	}
	h0, err := readHost("/proc", "/sys")
	if err != nil {
		return run, err
	}
	c0, err := db.Counters(ctx, "Questions")
	if err != nil {
		return run, err
	}
	time.Sleep(time.Duration(secs) * time.Second)
	s1, err := procstat.Read("/proc", srv.PID)
	if err != nil {
		return run, err
	}
	h1, err := readHost("/proc", "/sys")
	if err != nil {
		return run, err
	}
	c1, err := db.Counters(ctx, "Questions")
	if err != nil {
		return run, err
	}
	for side, check := range map[int][]int{srv.PID: serverCPUs, cmd.Process.Pid: clientCPUs} {
		threads, err := readAffinities("/proc", side)
		if err != nil {
			return run, err
		}
		if _, bad := affinityFigures(strconv.Itoa(side), threads, check); bad != nil {
			return run, fmt.Errorf("placement %s did not hold: %q", placement, bad)
		}
	}
	if err := cmd.Wait(); err != nil {
		return run, fmt.Errorf("sysbench: %w\n%s", err, out.String())
	}
	ops := c1["Questions"] - c0["Questions"] - 1 // the first counter query
	if ops <= 0 {
		return run, fmt.Errorf("no operations in the window")
	}
	w := procstat.Diff(s0, s1)
	h := hostWindow(h0, h1, ops)
	load, _ := os.ReadFile("/proc/loadavg")
	run = placementRun{
		qps:          float64(ops) / w.Seconds,
		cpuPerOp:     w.CPU() * 1e6 / float64(ops),
		csPerOp:      float64(w.Voluntary+w.Involuntary) / float64(ops),
		hostCPUPerOp: h.CPUMicrosPerOp,
		hostCsPerOp:  h.CtxSwitchesPerOp,
		steal:        h.StealShare,
		load:         strings.Join(strings.Fields(string(load))[:3], " "),
	}
	return run, nil
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envList(name, def string) []string {
	if v := os.Getenv(name); v != "" {
		return strings.Split(v, ",")
	}
	return strings.Split(def, ",")
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
