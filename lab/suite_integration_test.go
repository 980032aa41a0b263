package lab

import (
	"bytes"
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/record"
	"github.com/flamediff/flamediff/workload"
)

// suiteMatrix is the installed 10.11 under five named microbenchmarks:
// one of our Lua scripts with a range, insert, then scan (both Lua and
// rows/s), a stock test and update-one, on a 1000-row table, short
// windows.
const suiteMatrix = `servers:
  - label: "10.11"
    path: /usr/sbin/mariadbd
workload_defaults: {table_size: 1000, duration: 5s, warmup: 1s}
workloads:
  - {test: random-points, range: 100}
  - {test: insert}
  - {test: scan}
  - {test: point-query}
  - {test: update-one}
capture: {sampler: perf, frequency: 99}
`

// TestSuiteMatrix runs named microbenchmarks through the lab's matrix
// (lab.Run with record.Run) on the installed MariaDB 10.11: every cell's
// two windows are complete with QPS > 0 and sysbench's exit 0; our Lua
// scripts ran from the bench's scripts directory with LUA_PATH; update-one
// ran with --table-size=1 and changed row 1 of the 1000 prepared and no
// other; insert grew its tables and scan, after it, ran on 1000 rows
// made again; the report gives scan's throughput in rows/s, 1000 x its o/s.
func TestSuiteMatrix(t *testing.T) {
	requireLab(t)
	cfg := parseTestConfig(t, suiteMatrix)
	out := benchDir(t, "flamediff-suite-")

	// Around update-one's two windows, the table's rows: before the first
	// (unprofiled) and after the second (profiled).
	// The rows insert left after its second window, and scan found
	// before its first.
	var before, after map[int]string
	var inserted, scanned int
	rec := func(ctx context.Context, c record.Config) (*record.Result, error) {
		upd, ins, scan := runOf(c, "update-one"), runOf(c, "insert"), runOf(c, "scan")
		switch {
		case upd && c.Sampler == record.SamplerNone:
			before = tableRows(t, ctx, c.Socket)
		case scan && c.Sampler == record.SamplerNone:
			scanned = len(tableRows(t, ctx, c.Socket))
		}
		res, err := record.Run(ctx, c, nil)
		switch {
		case upd && c.Sampler != record.SamplerNone:
			after = tableRows(t, ctx, c.Socket)
		case ins && c.Sampler != record.SamplerNone:
			inserted = len(tableRows(t, ctx, c.Socket))
		}
		return res, err
	}
	res := runCells(t, cfg, RunOptions{Out: out, Cache: t.TempDir(), Record: rec}, 5*time.Minute, len(cfg.Workloads))
	scripts := filepath.Join(out, ScriptsDir)
	commands := map[string]string{} // the profiled window's, by workload
	measureQPS := map[string]float64{}
	for _, m := range res.Runs {
		if m.Missing != "" || m.MeasureMissing != "" {
			t.Errorf("%s: missing: %q, unprofiled %q", m.Workload, m.Missing, m.MeasureMissing)
			continue
		}
		for _, dir := range []string{m.MeasureDir, m.Dir} {
			meta := readMeta(t, dir)
			if meta.Complete == nil || !*meta.Complete || meta.QPS <= 0 || meta.WorkloadExitCode == nil || *meta.WorkloadExitCode != 0 {
				t.Errorf("%s: run.json complete %v (%s), QPS %v, exit %v; want complete, QPS > 0, exit 0", dir, meta.Complete, meta.Incomplete, meta.QPS, meta.WorkloadExitCode)
			}
			if dir == m.Dir {
				commands[m.Workload] = meta.Workload
				t.Logf("%s on 10.11: %.0f QPS profiled", m.Workload, meta.QPS)
			} else {
				measureQPS[m.Workload] = meta.QPS
				t.Logf("%s on 10.11: %.0f QPS unprofiled (sysbench %.0f over the window)", m.Workload, meta.QPS, meta.WorkloadWindowQPS)
			}
		}
	}
	for name, script := range map[string]string{"random-points-100": "random_points.lua", "scan": "scan.lua"} {
		want := "LUA_PATH=" + filepath.Join(scripts, "?.lua") + ";; sysbench " + filepath.Join(scripts, script) + " --rand-type=uniform"
		if cmd := commands[name]; !strings.HasPrefix(cmd, want) {
			t.Errorf("%s ran %q, want it to start %q", name, cmd, want)
		}
	}
	if cmd := commands["random-points-100"]; !strings.Contains(cmd, " --range-size=100 ") {
		t.Errorf("random-points-100 ran %q, want --range-size=100", cmd)
	}
	if cmd := commands["update-one"]; !strings.HasPrefix(cmd, "sysbench oltp_update_non_index ") || !strings.Contains(cmd, " --table-size=1 ") {
		t.Errorf("update-one ran %q, want oltp_update_non_index with --table-size=1", cmd)
	}
	if inserted <= 1000 || scanned != 1000 {
		t.Errorf("insert left %d rows, scan after it began on %d; want more than 1000, then the 1000 prepared again", inserted, scanned)
	}
	if len(before) != 1000 || len(after) != 1000 {
		t.Fatalf("update-one's table had %d rows before and %d after, want the 1000 prepared", len(before), len(after))
	}
	for id, c := range before {
		if changed := after[id] != c; changed != (id == 1) {
			t.Errorf("update-one: row %d changed %v, want only row 1 changed", id, changed)
		}
	}

	rep, err := WriteReport(filepath.Join(out, "report"), cfg, nil, res.Runs)
	if err != nil {
		t.Fatalf("WriteReport: %v", err)
	}
	for _, w := range rep.Workloads {
		v := w.Versions[0]
		if v.Missing != "" || v.QPS == nil {
			t.Errorf("report: %s has no figures: %s", w.Name, v.Missing)
			continue
		}
		if v.QPS.Median != measureQPS[w.Name] {
			t.Errorf("report: %s o/s %v, want the unprofiled window's run.json qps %v", w.Name, v.QPS.Median, measureQPS[w.Name])
		}
		switch {
		case w.Name == "scan":
			if w.ThroughputUnit != "rows/s" || v.Throughput == nil || v.Throughput.Median != 1000*measureQPS["scan"] {
				t.Errorf("report: scan throughput %+v %q, want 1000 x %v rows/s", v.Throughput, w.ThroughputUnit, measureQPS["scan"])
			} else {
				t.Logf("scan on 10.11: %.0f rows/s (1000 rows x %.1f o/s)", v.Throughput.Median, v.QPS.Median)
			}
		case w.ThroughputUnit != "" || v.Throughput != nil:
			t.Errorf("report: %s has throughput %+v %q, want o/s only", w.Name, v.Throughput, w.ThroughputUnit)
		}
	}
	var sum bytes.Buffer
	if err := rep.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), "scan: throughput in rows/s") {
		t.Errorf("summary does not say scan's throughput is rows/s:\n%s", sum.String())
	}
	noneLeft(t, out)
}

// runOf reports whether c records a window of workload name.
func runOf(c record.Config, name string) bool {
	sep := string(filepath.Separator)
	return strings.Contains(c.Out, sep+name+sep)
}

// tableRows returns sbtest1's c by id, through the server's socket.
func tableRows(t *testing.T, ctx context.Context, socket string) map[int]string {
	t.Helper()
	db, err := sql.Open("mysql", workload.SocketDSN(socket, "root", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT id, c FROM sbtest.sbtest1")
	if err != nil {
		t.Errorf("read sbtest1: %v", err)
		return nil
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var id int
		var c string
		if err := rows.Scan(&id, &c); err != nil {
			t.Errorf("read sbtest1: %v", err)
			return nil
		}
		out[id] = c
	}
	if err := rows.Err(); err != nil {
		t.Errorf("read sbtest1: %v", err)
	}
	return out
}
