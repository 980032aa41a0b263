package lab

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// smackScript stands in for super-smack, which Debian does not package:
// point selects by id through one mariadb client for $2 seconds against
// the socket $1, then its own count and rate in super-smack's report
// layout (Query_report::print). It also prints the MYSQL_UNIX_PORT it was
// given.
const smackScript = `#!/bin/sh
sock=$1; secs=$2
echo "MYSQL_UNIX_PORT=$MYSQL_UNIX_PORT"
start=$(date +%s.%N)
end=$(( $(date +%s) + secs ))
prog=$(mktemp)
(while [ "$(date +%s)" -lt "$end" ]; do i=1; while [ $i -le 500 ]; do echo "SELECT c FROM sbtest1 WHERE id=$i;"; i=$((i+1)); done; done) |
	mariadb --unbuffered --batch --skip-column-names -S "$sock" -u root sbtest |
	awk '{n++} n%200==0 {c="date +%s.%N"; c | getline t; close(c); print "progress", n, t} END {print "total", n}' >"$prog"
stop=$(date +%s.%N)
n=$(awk '$1=="total"{print $2}' "$prog")
grep '^progress' "$prog"
rm -f "$prog"
qps=$(echo "$n $start $stop" | awk '{printf "%.2f", $1/($3-$2)}')
printf 'Query Barrel Report for client smacker1\n'
printf 'connect: max=0ms  min=0ms avg= 0ms from 1 clients \n'
printf 'Query_type\tnum_queries\tmax_time\tmin_time\tq_per_s\n'
printf 'select_index\t%d\t0\t0\t%s\n' "$n" "$qps"
`

// TestCommandWorkload runs a workload that is any command (not sysbench)
// through the lab's matrix on the installed MariaDB 10.11: the command
// gets the server's socket in its arguments ({socket}) and in
// MYSQL_UNIX_PORT, both windows are complete, the operations come from the
// server's Questions counter, the command's own super-smack report is read
// (run.json workload_report and workload_qps), and the two throughputs
// agree within 15% (the server counts each SELECT the client sends, over
// the window; the report, over the command's whole run).
func TestCommandWorkload(t *testing.T) {
	requireLab(t)
	requireTool(t, "mariadb")
	script := filepath.Join(t.TempDir(), "smack.sh")
	if err := os.WriteFile(script, []byte(smackScript), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := parseTestConfig(t, `servers:
  - label: "10.11"
    path: /usr/sbin/mariadbd
workloads:
  - name: select-key
    command: [sh, `+script+`, "{socket}", "6"]
    table_size: 1000
    duration: 6s
    warmup: 1s
capture: {sampler: perf, frequency: 99}
`)
	out := t.TempDir()
	res := runCells(t, cfg, RunOptions{Out: out, Cache: t.TempDir(), Record: recordRun}, 3*time.Minute, 1)
	m := res.Runs[0]
	if m.Missing != "" || m.MeasureMissing != "" {
		t.Fatalf("select-key missing: %q, unprofiled %q", m.Missing, m.MeasureMissing)
	}
	for _, dir := range []string{m.MeasureDir, m.Dir} {
		meta := readMeta(t, dir)
		if meta.Complete == nil || !*meta.Complete || meta.WorkloadExitCode == nil || *meta.WorkloadExitCode != 0 {
			t.Errorf("%s: complete %v (%s), exit %v; want complete, exit 0", dir, meta.Complete, meta.Incomplete, meta.WorkloadExitCode)
		}
		if meta.WorkloadReport != "super-smack" || meta.WorkloadQPS <= 0 || meta.OpsCounter != "Questions" {
			t.Errorf("%s: workload_report %q, workload_qps %v, ops counted by %q; want super-smack's report read and Questions counted", dir, meta.WorkloadReport, meta.WorkloadQPS, meta.OpsCounter)
		}
		sock := cfgSocket(t, meta.Workload)
		log, _ := os.ReadFile(filepath.Join(dir, "workload.log"))
		if !strings.Contains(string(log), "MYSQL_UNIX_PORT="+sock+"\n") || !strings.HasSuffix(sock, ".sock") {
			t.Errorf("%s: the command ran as %q; its log %q lacks MYSQL_UNIX_PORT=%s", dir, meta.Workload, log, sock)
		}
		// The truth is the command's own count over the same window: it
		// logs its cumulative answers with the time every 200 (its report
		// covers its whole run, whose rate differs from the window's when
		// the machine's load changes).
		inWindow := windowRate(t, string(log), meta.StartTime, meta.EndTime)
		if d := math.Abs(meta.QPS/inWindow - 1); d > 0.15 {
			t.Errorf("%s: server %.0f o/s over the window, the command's own count %.0f q/s over it: %.0f%% apart", dir, meta.QPS, inWindow, 100*d)
		}
		t.Logf("%s: %.0f o/s (Questions over %.2f s), the command's own count %.0f q/s over the window, its report %.0f q/s over its run", filepath.Base(filepath.Dir(filepath.Dir(dir))), meta.QPS, meta.WindowSeconds, inWindow, meta.WorkloadQPS)
	}
	rep, err := WriteReport(filepath.Join(out, "report"), cfg, nil, res.Runs)
	if err != nil {
		t.Fatalf("WriteReport: %v", err)
	}
	if v := rep.Workloads[0].Versions[0]; rep.Workloads[0].Name != "select-key" || v.QPS == nil || v.QPS.Median <= 0 {
		t.Errorf("report: %s %+v, want select-key with o/s", rep.Workloads[0].Name, v)
	}
}

// cfgSocket returns the socket the command was given: its third argument
// in run.json's workload ("MYSQL_UNIX_PORT=S sh SCRIPT S 6").
func cfgSocket(t *testing.T, workload string) string {
	t.Helper()
	f := strings.Fields(workload)
	if len(f) != 5 || !strings.HasPrefix(f[0], "MYSQL_UNIX_PORT=") || f[3] != strings.TrimPrefix(f[0], "MYSQL_UNIX_PORT=") {
		t.Fatalf("run.json workload %q: want MYSQL_UNIX_PORT=SOCKET sh SCRIPT SOCKET 6, the socket filled in", workload)
	}
	return f[3]
}

// windowRate returns the queries per second the stand-in's progress lines
// ("progress N UNIXTIME") give between start and end (RFC 3339),
// interpolating the cumulative count at both ends.
func windowRate(t *testing.T, log, start, end string) float64 {
	t.Helper()
	var ns, ts []float64
	for _, line := range strings.Split(log, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "progress" {
			continue
		}
		n, err1 := strconv.ParseFloat(f[1], 64)
		at, err2 := strconv.ParseFloat(f[2], 64)
		if err1 == nil && err2 == nil {
			ns, ts = append(ns, n), append(ts, at)
		}
	}
	at := func(s string) float64 {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatalf("window bound %q: %v", s, err)
		}
		x := float64(tm.UnixNano()) / 1e9
		for i := 1; i < len(ts); i++ {
			if ts[i] >= x && ts[i-1] <= x {
				return ns[i-1] + (ns[i]-ns[i-1])*(x-ts[i-1])/(ts[i]-ts[i-1])
			}
		}
		t.Fatalf("window bound %s outside the command's progress lines (%d of them)", s, len(ts))
		return 0
	}
	s, e := at(start), at(end)
	d := func() float64 {
		a, _ := time.Parse(time.RFC3339Nano, start)
		b, _ := time.Parse(time.RFC3339Nano, end)
		return b.Sub(a).Seconds()
	}()
	return (e - s) / d
}
