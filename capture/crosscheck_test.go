//go:build linux

package capture_test

import (
	"context"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/workload/procstat"
)

// TestPerfVersusBPF samples the same MariaDB under the same sysbench
// oltp_update_non_index load with perf and with the BPF sampler (both on
// per-thread cpu-clock events at 999 Hz) over one 8 s window, and checks that
// they see the same thing: the same number of samples within 2%, inclusive
// shares of the functions a regression report quotes within 2 percentage
// points, and the same frame names. The BPF sampler runs without the switch
// fix (which record applies by default): the test compares the two
// samplers' events, and perf's cannot be corrected; with the fix, BPF's
// shares moved 1.5 points from perf's on a quiet machine and 3-4 points
// beside two CPU hogs (docs/recording.md).
// Per-thread events, as record uses by default: per-CPU events lose samples
// on kernels where CPUs idle between queries (docs/recording.md, "Per-thread events").
// Both walk frame pointers (the BPF sampler without stack copies), so that
// the samplers are compared and not the unwinders: stack copies reach
// glibc's thread roots (clone3) that perf's frame-pointer walk misses.
//
// Uncorrected per-thread events do not see all of the CPU the process is
// accounted (the context switches themselves, docs/fidelity.md): 0.91-0.93
// here, less the more the server is preempted, so sampled against accounted
// CPU is only a gross check (at least 60%); that the corrected sampler
// comes within 3% is TestRecordMariaDB's and TestSwitchFixTruth's.
//
// The two samplers run at the same time, each with its own events: two
// windows one after the other see different work (this server's share of
// mysqld_stmt_execute moves by up to 8 points from one 5 s window to the
// next under the same load), so only one window compares the samplers and
// not the load.
func TestPerfVersusBPF(t *testing.T) {
	requireSamplers(t)
	// No fsync per commit: the load is CPU-bound and steady.
	srv := loaded(t, mariadbtest.Options{Args: []string{"--innodb-flush-log-at-trx-commit=0"}},
		"oltp_update_non_index", "--threads=2", "--time=16")
	time.Sleep(3 * time.Second)

	const freq = 999
	read := func() *procstat.Snapshot {
		t.Helper()
		st, err := procstat.Read("/proc", srv.PID)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	// Each sampler's window lies between t0 and t3 and covers t1 to t2.
	snaps := map[string]*procstat.Snapshot{}
	opts := capture.Options{FrequencyHz: freq}
	bopts := opts
	bopts.StackCopy = capture.StackCopyNever
	res := sameWindow(t, srv.PID, 8*time.Second, func(at string) { snaps[at] = read() },
		armed{capture.NewPerf(), opts}, armed{capture.NewBPF(), bopts})
	pres, bres := res[0], res[1]
	t0, t1, t2, t3 := snaps["before start"], snaps["started"], snaps["before stop"], snaps["stopped"]
	for _, r := range []*capture.Result{pres, bres} {
		for _, w := range r.Warnings {
			t.Logf("%s warning: %s", r.Sampler, w)
		}
	}
	inner, outer := procstat.Diff(t1, t2).CPU(), procstat.Diff(t0, t3).CPU()
	t.Logf("accounted %.2f to %.2f CPU-s; bpf sampled %.2f s (%d samples, %d lost); perf sampled %.2f s (%d samples, %d lost)",
		inner, outer, float64(bres.Samples)/freq, bres.Samples, bres.Lost, float64(pres.Samples)/freq, pres.Samples, pres.Lost)
	if d := float64(bres.Samples)/float64(pres.Samples) - 1; pres.Samples == 0 || math.Abs(d) > 0.02 {
		t.Errorf("bpf took %d samples, perf %d on the same events and window: want within 2%%", bres.Samples, pres.Samples)
	}
	for _, r := range []*capture.Result{pres, bres} {
		if sampled := float64(r.Samples) / freq; sampled < 0.6*inner || sampled > 1.1*outer {
			t.Errorf("%s sampled CPU %.2f s vs accounted %.2f s (window inside) to %.2f s (window around): want at least 60%% of the one and at most 110%% of the other", r.Sampler, sampled, inner, outer)
		}
	}

	pshare, bshare := shares(pres.Profile), shares(bres.Profile)
	for _, fn := range []string{"mysqld_stmt_execute", "mysql_update", "trans_commit_stmt"} {
		p, b := pshare[fn], bshare[fn]
		t.Logf("%-22s perf %6.2f%%  bpf %6.2f%%", fn, p, b)
		if p == 0 || math.Abs(p-b) > 2 {
			t.Errorf("%s: perf %.2f%%, bpf %.2f%%: want both present and within 2 percentage points", fn, p, b)
		}
	}
	// The same frame names: every function with 1% or more in one is in the other.
	var missing []string
	for _, pair := range []struct {
		name     string
		from, to map[string]float64
	}{{"bpf", pshare, bshare}, {"perf", bshare, pshare}} {
		for fn, v := range pair.from {
			if v >= 1 && pair.to[fn] == 0 {
				missing = append(missing, fn+" (missing in "+pair.name+")")
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("frame names differ between perf and bpf: %s", strings.Join(missing, ", "))
	}
}

// armed is a sampler with the options it samples with.
type armed struct {
	s    capture.Sampler
	opts capture.Options
}

// sameWindow samples pid with every sampler over one window of d, so that
// their figures can be compared sample for sample: each sampler's slow
// setup (capture.Preparer: the BPF sampler loads its program and reads the
// target's symbols, 2-2.5 s under -race) is done before any window opens,
// the samplers are started one after the other, each only enabling its
// events, and all are stopped at once. When the BPF sampler was started
// after perf, without Prepare, perf's window held the BPF sampler's setup
// as well: 27% more samples than the BPF sampler, taken while the test
// process used a CPU the server needed, where the server's shares differ
// (1.5-2.5 points more in do_command's blocking read and fewer in
// dispatch_command, in every run). around, when not nil, is called with
// "before start", "started", "before stop" and "stopped" at those moments.
func sameWindow(t *testing.T, pid int, d time.Duration, around func(string), samplers ...armed) []*capture.Result {
	t.Helper()
	ctx := context.Background()
	if around == nil {
		around = func(string) {}
	}
	stopAll := func(n int) []*capture.Result {
		res := make([]*capture.Result, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i], errs[i] = samplers[i].s.Stop(ctx)
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: stop: %v", samplers[i].s.Name(), err)
			}
		}
		return res
	}
	for _, a := range samplers {
		if p, ok := a.s.(capture.Preparer); ok {
			if err := p.Prepare(ctx, pid, a.opts); err != nil {
				t.Fatalf("%s: prepare: %v", a.s.Name(), err)
			}
		}
	}
	around("before start")
	for i, a := range samplers {
		if err := a.s.Start(ctx, pid, a.opts); err != nil {
			stopAll(i)
			t.Fatalf("%s: start: %v", a.s.Name(), err)
		}
	}
	around("started")
	time.Sleep(d)
	around("before stop")
	res := stopAll(len(samplers))
	around("stopped")
	return res
}

func shares(p *fold.Profile) map[string]float64 {
	m := make(map[string]float64)
	for _, f := range diff.Functions(p, diff.SharesOptions{}) {
		m[f.Name] = f.InclusivePct
	}
	return m
}

// requireSamplers skips the test unless it may start a MariaDB server and
// sample it with both perf and the BPF sampler.
func requireSamplers(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a MariaDB server and runs sysbench")
	}
	if os.Geteuid() != 0 {
		t.Skip("sampling tests need root")
	}
	if err := capture.CheckPerf(); err != nil {
		t.Skipf("perf not usable: %v", err)
	}
	if err := capture.CheckBPF(); err != nil {
		t.Skipf("bpf sampler not usable: %v", err)
	}
}

// loaded starts a private MariaDB with opts, prepares sysbench's tables
// for test (10,000 rows) and runs sysbench test with args against it in
// the background until the test ends.
func loaded(t *testing.T, opts mariadbtest.Options, test string, args ...string) *mariadbtest.Server {
	t.Helper()
	srv := mariadbtest.Start(t, opts)
	srv.Prepare(t, test, 10000)
	argv := srv.Sysbench(t, test, append(args, "run")...)
	bench := exec.Command(argv[0], argv[1:]...)
	var out strings.Builder
	bench.Stdout, bench.Stderr = &out, &out
	if err := bench.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = bench.Process.Kill()
		_ = bench.Wait()
	})
	return srv
}
