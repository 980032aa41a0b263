//go:build linux

package capture_test

import (
	"math"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/symbolmap"
)

// TestUnwindReference samples one MariaDB 10.11 under sysbench with the
// default sampler (BPF, default options) and, over the same window, with
// perf --call-graph dwarf (32 KiB of stack per sample), the reference: a
// walk with the CFI of every object, done by perf. Both must give stacks
// that reach a thread root for at least 99% of the samples, and the
// inclusive shares of the functions a regression report quotes must agree
// within 2 percentage points.
//
// Both samplers run at once, over the same window (sameWindow): two
// windows one after the other see different work.
func TestUnwindReference(t *testing.T) {
	requireSamplers(t)
	const freq = 499
	for _, tt := range []struct {
		test string
		// funcs are the functions compared; each must hold at least 1%
		// in the reference.
		funcs []string
	}{
		{"oltp_point_select", []string{"do_command", "dispatch_command", "mysqld_stmt_execute", "net_real_write"}},
		{"oltp_update_non_index", []string{"do_command", "dispatch_command", "mysqld_stmt_execute", "trans_commit_stmt", "mysql_update"}},
	} {
		t.Run(tt.test, func(t *testing.T) {
			// No fsync per commit and two clients: the server is busy,
			// so that a 12 s window holds thousands of samples and the
			// sampling noise of a share (about 0.7 points between the
			// two samplers at 50%) stays well inside the 2 points.
			srv := loaded(t, mariadbtest.Options{Args: []string{"--innodb-flush-log-at-trx-commit=0"}}, tt.test, "--threads=2", "--time=18")
			time.Sleep(2 * time.Second)

			res := sameWindow(t, srv.PID, 12*time.Second, nil,
				armed{capture.NewPerf(), capture.Options{FrequencyHz: freq, CallGraph: "dwarf"}},
				armed{capture.NewBPF(), capture.Options{FrequencyHz: freq}})
			rres, dres := res[0], res[1]
			roots := symbolmap.Default().IsThreadRoot
			for _, r := range []*capture.Result{rres, dres} {
				c := diff.StackCompleteness(r.Profile, roots)
				t.Logf("%s: %d samples, %.2f%% reach a thread root; warnings %q", r.Sampler, r.Samples, 100-c.IncompletePct, r.Warnings)
				if c.IncompletePct > 1 {
					t.Errorf("%s: %.2f%% of samples reach a thread root, want at least 99%%", r.Sampler, 100-c.IncompletePct)
				}
			}
			rshare, dshare := shares(rres.Profile), shares(dres.Profile)
			for _, fn := range tt.funcs {
				r, d := rshare[fn], dshare[fn]
				t.Logf("%-22s perf dwarf %6.2f%%  bpf %6.2f%%", fn, r, d)
				if r < 1 || math.Abs(r-d) > 2 {
					t.Errorf("%s: perf dwarf %.2f%%, bpf %.2f%%: want at least 1%% in the reference and within 2 percentage points", fn, r, d)
				}
			}
		})
	}
}
