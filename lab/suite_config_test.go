package lab

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/workload/suite"
)

// A workload's test: takes the suite's names, with range: where the name
// takes one; the name defaults to the test with its range, and the
// sysbench command lines are the Bench's.
func TestParseConfigBenches(t *testing.T) {
	c := parseTestConfig(t, `servers: [{label: a, path: /usr/sbin/mariadbd}]
workloads:
  - test: random-points
    range: 1000
  - {test: random-points}
  - {test: update-one, table_size: 5000}
  - {test: scan, table_size: 2000, prepared_statements: false}
  - {name: pq, test: point-query}
  - test: oltp_point_select
`)
	wantNames := []string{"random-points-1000", "random-points-10", "update-one", "scan", "pq", "oltp_point_select"}
	if got := c.WorkloadNames(); !slices.Equal(got, wantNames) {
		t.Errorf("WorkloadNames() = %q, want %q", got, wantNames)
	}
	for i, w := range c.Workloads {
		if (w.Bench == nil) != (w.Test == "oltp_point_select") {
			t.Errorf("workload %s: Bench = %+v for test %s", w.Name, w.Bench, w.Test)
		}
		if i < 5 && w.Bench.Name != w.Test {
			t.Errorf("workload %s: Bench.Name = %q, want the test %q", w.Name, w.Bench.Name, w.Test)
		}
	}
	rp := c.Workloads[0]
	rp.Scripts = "/out/scripts"
	wantArgs := []string{"/out/scripts/random_points.lua", "--rand-type=uniform", "--range-size=1000",
		"--tables=1", "--table-size=100000", "--threads=1", "--time=30", "--db-ps-mode=auto"}
	if got := rp.SysbenchArgs(); !reflect.DeepEqual(got, wantArgs) {
		t.Errorf("random-points-1000 SysbenchArgs = %q, want %q", got, wantArgs)
	}
	if got, want := rp.SysbenchEnv(), []string{"LUA_PATH=/out/scripts/?.lua;;"}; !reflect.DeepEqual(got, want) {
		t.Errorf("random-points SysbenchEnv = %q, want %q", got, want)
	}
	wantPrep := []string{"oltp_point_select", "--rand-type=uniform", "--tables=1", "--table-size=100000", "--db-ps-mode=auto"}
	if got := rp.PrepareArgs(); !reflect.DeepEqual(got, wantPrep) {
		t.Errorf("random-points PrepareArgs = %q, want %q", got, wantPrep)
	}
	if got := c.Workloads[1].Bench.Range; got != 10 {
		t.Errorf("random-points without range: Range = %d, want the default 10", got)
	}
	one := c.Workloads[2]
	if got := one.SysbenchArgs(); got[0] != "oltp_update_non_index" || !slices.Contains(got, "--table-size=1") || slices.Contains(got, "--table-size=5000") {
		t.Errorf("update-one SysbenchArgs = %q, want oltp_update_non_index with --table-size=1 only", got)
	}
	if got := one.PrepareArgs(); !slices.Contains(got, "--table-size=5000") {
		t.Errorf("update-one PrepareArgs = %q, want the table's 5000 rows prepared", got)
	}
	if one.SysbenchEnv() != nil || one.RowsPerQuery() != 0 {
		t.Errorf("update-one: SysbenchEnv %q, RowsPerQuery %d; want none (a stock test, o/s)", one.SysbenchEnv(), one.RowsPerQuery())
	}
	scan := c.Workloads[3]
	if scan.RowsPerQuery() != 2000 {
		t.Errorf("scan RowsPerQuery() = %d, want its table size 2000", scan.RowsPerQuery())
	}
	if got := scan.SysbenchArgs(); got[len(got)-1] != "--db-ps-mode=disable" || got[0] != "scan.lua" {
		t.Errorf("scan SysbenchArgs (no Scripts) = %q, want scan.lua ... --db-ps-mode=disable", got)
	}
	pq := c.Workloads[4]
	if got := pq.SysbenchArgs(); got[0] != "oltp_point_select" || got[1] != "--skip-trx=on" || !strings.HasPrefix(got[2], "--tables=") {
		t.Errorf("point-query SysbenchArgs = %q, want the Bench's options before the workload's", got)
	}
	stock := c.Workloads[5]
	if stock.SysbenchEnv() != nil || !reflect.DeepEqual(stock.PrepareArgs(), stock.SysbenchArgs()) {
		t.Errorf("oltp_point_select: SysbenchEnv %q, PrepareArgs %q; want none and its own options", stock.SysbenchEnv(), stock.PrepareArgs())
	}
}

// suite: small expands to the preset, each workload from
// workload_defaults; listed workloads come after, from the same defaults.
func TestParseConfigSuite(t *testing.T) {
	c := parseTestConfig(t, `servers: [{label: a, path: /usr/sbin/mariadbd}]
suite: small
workload_defaults: {duration: 6s, warmup: 2s, table_size: 10000, threads: 2}
workloads:
  - {test: update-one, warmup: 1s}
  - {test: oltp_insert, table_size: 500}
`)
	preset, err := suite.Preset("small")
	if err != nil {
		t.Fatal(err)
	}
	if c.Suite != "small" {
		t.Errorf("Suite = %q, want small", c.Suite)
	}
	if len(c.Workloads) != len(preset)+2 {
		t.Fatalf("%d workloads, want the %d of small and 2 listed: %q", len(c.Workloads), len(preset), c.WorkloadNames())
	}
	for i, b := range preset {
		w := c.Workloads[i]
		if w.Bench == nil || !reflect.DeepEqual(*w.Bench, b) || w.Test != b.Name {
			t.Errorf("workload %d = %+v, want Bench %+v", i, w, b)
			continue
		}
		want := b.Name
		if b.Range > 0 {
			want += "-" + strconv.Itoa(b.Range)
		}
		if w.Name != want {
			t.Errorf("workload %d name %q, want %q", i, w.Name, want)
		}
		if w.Duration != 6*time.Second || w.Warmup != 2*time.Second || w.TableSize != 10000 || w.Threads != 2 ||
			w.Tables != DefaultTables || !w.PreparedStatements || w.Line != 2 {
			t.Errorf("workload %s = %+v, want workload_defaults' settings, the rest the defaults, line 2", w.Name, w)
		}
	}
	if !slices.Contains(c.WorkloadNames(), "random-points-100") || !slices.Contains(c.WorkloadNames(), "scan") {
		t.Errorf("small's names %q lack random-points-100 or scan", c.WorkloadNames())
	}
	one, ins := c.Workloads[len(preset)], c.Workloads[len(preset)+1]
	if one.Name != "update-one" || one.Warmup != time.Second || one.Duration != 6*time.Second || one.TableSize != 10000 || one.Line != 5 {
		t.Errorf("listed update-one = %+v, want its warmup 1s over the defaults", one)
	}
	if ins.Bench != nil || ins.TableSize != 500 || ins.Threads != 2 {
		t.Errorf("listed oltp_insert = %+v, want table_size 500 and the defaults' 2 threads", ins)
	}

	// Without workload_defaults the settings are the package's defaults.
	c = parseTestConfig(t, "servers: [{label: a, path: /usr/sbin/mariadbd}]\nsuite: full\n")
	full, _ := suite.Preset("full")
	if len(c.Workloads) != len(full) {
		t.Fatalf("suite: full gave %d workloads, want %d", len(c.Workloads), len(full))
	}
	for _, w := range c.Workloads {
		if w.Duration != DefaultDuration || w.Warmup != DefaultWarmup || w.TableSize != DefaultTableSize {
			t.Errorf("suite: full workload %s = %+v, want the defaults", w.Name, w)
		}
	}
}

// AddsRows: the insert tests, stock or named, add rows; the tests that
// delete and insert the same ids, and the updates, do not.
func TestWorkloadAddsRows(t *testing.T) {
	c := parseTestConfig(t, `servers: [{label: a, path: /usr/sbin/mariadbd}]
workloads:
  - {test: insert}
  - {test: oltp_insert}
  - {test: delete}
  - {test: oltp_read_write}
  - {test: update-zipf}
  - {test: scan}
  - {test: bulk_insert}
`)
	want := map[string]bool{"insert": true, "oltp_insert": true}
	for _, w := range c.Workloads {
		if got := w.AddsRows(); got != want[w.Name] {
			t.Errorf("%s AddsRows() = %v, want %v", w.Name, got, want[w.Name])
		}
	}
}

// A session whose config runs a Lua script writes the scripts under Out
// and records its windows with the script's path and LUA_PATH; one
// without writes none.
func TestSessionScripts(t *testing.T) {
	cfg := parseTestConfig(t, `servers: [{label: "10.11", path: /usr/sbin/mariadbd}]
workloads:
  - {test: hot-points, duration: 10s, warmup: 2s}
  - {test: update-one}
`)
	out := t.TempDir()
	s := &Session{cfg: cfg, opts: RunOptions{Out: out}}
	if err := s.writeScripts(); err != nil {
		t.Fatalf("writeScripts: %v", err)
	}
	dir := filepath.Join(out, ScriptsDir)
	if s.scripts != dir {
		t.Errorf("scripts directory %q, want %q", s.scripts, dir)
	}
	for _, f := range []string{"hot_points.lua", "flamediff_suite.lua"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("script %s not written: %v", f, err)
		}
	}
	b := &labServer{spec: cfg.Servers[0], bin: &Binary{},
		srv: &Server{Socket: "/tmp/s.sock", cmd: &exec.Cmd{Process: &os.Process{Pid: 4242}}}}
	w := cfg.Workloads[0]
	w.Scripts = s.scripts
	c := s.recordConfig(w, b, "/out/runs/hot-points/10.11/1")
	wantCmd := []string{"sysbench", filepath.Join(dir, "hot_points.lua"), "--rand-type=uniform", "--tables=1", "--table-size=100000"}
	if !reflect.DeepEqual(c.Workload[:len(wantCmd)], wantCmd) {
		t.Errorf("hot-points command %q, want it to start %q", c.Workload, wantCmd)
	}
	if want := []string{"LUA_PATH=" + filepath.Join(dir, "?.lua") + ";;"}; !reflect.DeepEqual(c.WorkloadEnv, want) {
		t.Errorf("hot-points WorkloadEnv %q, want %q", c.WorkloadEnv, want)
	}
	if u := unprofiled(c); !reflect.DeepEqual(u.WorkloadEnv, c.WorkloadEnv) {
		t.Errorf("unprofiled window's WorkloadEnv %q, want the profiled one's %q", u.WorkloadEnv, c.WorkloadEnv)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate() = %v", err)
	}
	if c := s.recordConfig(cfg.Workloads[1], b, "/out/runs/update-one/10.11/1"); c.WorkloadEnv != nil {
		t.Errorf("update-one (a stock test) WorkloadEnv %q, want none", c.WorkloadEnv)
	}

	none := &Session{cfg: parseTestConfig(t, "servers: [{label: a, path: /usr/sbin/mariadbd}]\nworkloads: [{test: update-one}]\n"), opts: RunOptions{Out: t.TempDir()}}
	if err := none.writeScripts(); err != nil || none.scripts != "" {
		t.Errorf("writeScripts without a script workload = %v, directory %q; want nothing written", err, none.scripts)
	}
	if _, err := os.Stat(filepath.Join(none.opts.Out, ScriptsDir)); err == nil {
		t.Errorf("writeScripts without a script workload made %s", ScriptsDir)
	}
}
