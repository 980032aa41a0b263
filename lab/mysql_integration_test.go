package lab

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/internal/recordtest"
	"github.com/flamediff/flamediff/rundir"
	"github.com/flamediff/flamediff/workload"
)

// mysqlBesideMariaDB is the config of TestMySQLBesideMariaDB: the
// installed MariaDB 10.11 and MySQL 9.7 fetched from sid, one short
// update workload, the lab's default capture.
const mysqlBesideMariaDB = `servers:
  - label: "10.11"
    path: /usr/sbin/mariadbd
    base: true
  - label: "9.7"
    suite: sid
    kind: mysql
workloads:
  - name: update-nonindex
    test: oltp_update_non_index
    table_size: 10000
    duration: 6s
    warmup: 2s
`

// TestMySQLBesideMariaDB fetches MySQL 9.7 from Debian sid (about 70 MB
// into the cache, once) and runs it beside the installed MariaDB 10.11
// through the lab's matrix (lab.Run, record.Run), one short
// update-nonindex cell each. It runs in CI (MARIADBTEST_REQUIRE) and with
// FLAMEDIFF_LAB_FETCH=1; else it skips, as it downloads.
func TestMySQLBesideMariaDB(t *testing.T) {
	requireMySQLFetch(t)
	if capture.CheckBPF() != nil { // the config's sampler, auto, falls back to perf
		recordtest.RequireSampler(t, "perf")
	}
	cfg := parseTestConfig(t, mysqlBesideMariaDB)
	out := benchDir(t, "flamediff-my-")
	// The fetch is included in the 20 minutes.
	res := runCells(t, cfg, RunOptions{Out: out, Cache: testCacheDir(t)}, 20*time.Minute, 2)

	// Each server got the options of its kind, and only those.
	for label, want := range map[string]struct{ has, lacks []string }{
		"10.11": {has: []string{"skip-log-bin\n", "mariadbd.sock\n"}, lacks: []string{"mysqlx", "disable-log-bin", "secure-file-priv"}},
		"9.7":   {has: []string{"disable-log-bin\n", "mysqlx=OFF\n", "secure-file-priv=\n", "mysqld.sock\n", "lc-messages-dir="}, lacks: []string{"skip-log-bin"}},
	} {
		data, err := os.ReadFile(filepath.Join(out, "servers", label, "my.cnf"))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range want.has {
			if !strings.Contains(string(data), s) {
				t.Errorf("%s's my.cnf lacks %q:\n%s", label, s, data)
			}
		}
		for _, s := range want.lacks {
			if strings.Contains(string(data), s) {
				t.Errorf("%s's my.cnf has %q, an option of the other kind:\n%s", label, s, data)
			}
		}
	}

	for _, r := range res.Runs {
		if r.Missing != "" || r.MeasureMissing != "" {
			t.Fatalf("%s on %s is missing: profiled %q, unprofiled %q", r.Workload, r.Server, r.Missing, r.MeasureMissing)
		}
		wantVersion := map[string]string{"10.11": "10.11.", "9.7": "9.7."}[r.Server]
		for _, dir := range []string{r.MeasureDir, r.Dir} {
			m, err := rundir.ReadMeta(dir)
			if err != nil {
				t.Fatal(err)
			}
			qps, err := rundir.Check(m)
			if err != nil {
				t.Errorf("%s: %v", dir, err)
			}
			if qps <= 0 || m.WorkloadQPS <= 0 || m.WorkloadExitCode == nil || *m.WorkloadExitCode != 0 {
				t.Errorf("%s: qps %v, sysbench's %v (exit %v); want both > 0 and exit 0", dir, qps, m.WorkloadQPS, m.WorkloadExitCode)
			}
			if !strings.HasPrefix(m.ServerVersion, wantVersion) {
				t.Errorf("%s: server_version %q, want %s*", dir, m.ServerVersion, wantVersion)
			}
			t.Logf("%s %s window: %.0f QPS (sysbench %.0f), %s", r.Server, m.Window, qps, m.WorkloadQPS, m.ServerVersion)
		}
		p, err := rundir.Read(r.Dir, true)
		if err != nil {
			t.Fatal(err)
		}
		total := p.Total()
		stmt := under(p, func(f string) bool { return f == "mysqld_stmt_execute" })
		t.Logf("%s profiled: %d samples, mysqld_stmt_execute %.1f%%", r.Server, p.Samples, 100*float64(stmt)/float64(total))
		if total <= 0 || stmt <= 0 {
			t.Errorf("%s: profile of %v, %v of it under mysqld_stmt_execute; want samples there (prepared statements)", r.Server, total, stmt)
		}
		if r.Server != "9.7" {
			continue
		}
		// MySQL's own names for the update: Sql_cmd_dml::execute over
		// Sql_cmd_update::update_single_table (MariaDB 10.x has
		// mysql_update).
		update := under(p, func(f string) bool {
			return strings.HasPrefix(f, "Sql_cmd_dml::execute") || strings.HasPrefix(f, "Sql_cmd_update::")
		})
		t.Logf("9.7 profiled: Sql_cmd_dml::execute or Sql_cmd_update:: %.1f%%", 100*float64(update)/float64(total))
		if update <= 0 {
			t.Errorf("9.7's profile has neither Sql_cmd_dml::execute nor Sql_cmd_update::*, MySQL's update")
		}
		if n := under(p, func(f string) bool { return f == "mysql_update" }); n > 0 {
			t.Errorf("9.7's profile has %d under mysql_update, MariaDB 10.x's name", n)
		}
	}
}

// under returns the samples of p whose stack has a frame for which match
// is true.
func under(p *fold.Profile, match func(frame string) bool) int64 {
	var n int64
	for _, s := range p.Stacks {
		if slices.ContainsFunc(s.Frames, match) {
			n += s.Value
		}
	}
	return n
}

// TestSysbenchTestsBothKinds runs every test a config can name
// (SysbenchTests) with prepared statements on, twice in a row as a
// measurement's two windows do, on the installed MariaDB 10.11 and on
// MySQL 9.7 from sid: prepared as the matrix prepares (Prepare before the
// first run, and before the second for a test with FreshTables), each run
// must end without error and with queries. Gated as
// TestMySQLBesideMariaDB.
func TestSysbenchTestsBothKinds(t *testing.T) {
	requireMySQLFetch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	f, err := NewFetcher(testCacheDir(t), &logWriter{t: t})
	if err != nil {
		t.Fatalf("NewFetcher: %v", err)
	}
	for _, spec := range []ServerSpec{
		{Label: "10.11", Path: "/usr/sbin/mariadbd"},
		{Label: "9.7", Suite: "sid", Kind: MySQL},
	} {
		t.Run(spec.Label, func(t *testing.T) {
			b, err := Resolve(ctx, f, spec)
			if err != nil {
				t.Fatalf("Resolve(%s): %v", spec.Label, err)
			}
			srv := startServer(t, ctx, b, "")
			for _, test := range SysbenchTests {
				w := Workload{Name: test, Test: test, Tables: 1, TableSize: 1000, Threads: 1,
					Duration: time.Second, PreparedStatements: true}
				if err := srv.Prepare(ctx, w); err != nil {
					t.Errorf("%s: Prepare: %v", test, err)
					continue
				}
				for run := 1; run <= 2; run++ {
					if run == 2 && w.FreshTables() {
						if err := srv.Prepare(ctx, w); err != nil {
							t.Errorf("%s: Prepare before run 2: %v", test, err)
							break
						}
					}
					var out bytes.Buffer
					r, err := workload.Start(ctx, srv.SysbenchArgs(w, "run"), &out)
					if err != nil {
						t.Fatal(err)
					}
					err = r.Wait()
					rep, perr := workload.ParseSysbench(bytes.NewReader(out.Bytes()))
					if err != nil || perr != nil || rep.Queries <= 0 {
						t.Errorf("%s on %s, run %d: %v; report %+v, %v\n%s", test, b.Version, run, err, rep, perr, out.String())
						break
					}
					if run == 1 {
						t.Logf("%s on %s: %.0f QPS", test, b.Version, rep.QPS)
					}
				}
			}
		})
	}
}

// requireMySQLFetch skips a test that fetches MySQL 9.7 from sid unless
// FLAMEDIFF_LAB_FETCH=1 or MARIADBTEST_REQUIRE (CI) is set, and skips it
// (fails it in CI) without root, apt, dpkg, sysbench or the installed
// MariaDB.
func requireMySQLFetch(t *testing.T) {
	t.Helper()
	if os.Getenv(FetchEnv) != "1" && os.Getenv(mariadbtest.RequireEnv) == "" {
		t.Skipf("downloads MySQL 9.7 from Debian sid (~70 MB); set %s=1 to run (CI runs it: %s)", FetchEnv, mariadbtest.RequireEnv)
	}
	requireRoot(t)
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg", "sysbench"} {
		requireTool(t, tool)
	}
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		skipOrFail(t, "lab: no /usr/sbin/mariadbd (apt-get install mariadb-server)")
	}
}

// TestMySQLStartFails starts MySQL 9.7 with an option it does not know:
// --initialize-insecure fails, and the error wraps ErrServer and quotes
// the error log's [ERROR] line with MySQL's code.
func TestMySQLStartFails(t *testing.T) {
	requireMySQLFetch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	f, err := NewFetcher(testCacheDir(t), &logWriter{t: t})
	if err != nil {
		t.Fatalf("NewFetcher: %v", err)
	}
	b, err := Resolve(ctx, f, ServerSpec{Label: "9.7", Suite: "sid", Kind: MySQL})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if _, err := Resolve(ctx, f, ServerSpec{Label: "9.7", Path: "/usr/sbin/mariadbd", Kind: MySQL}); !errors.Is(err, ErrKind) {
		t.Errorf("Resolve(/usr/sbin/mariadbd, kind mysql) = %v, want an error wrapping ErrKind", err)
	}
	dir := t.TempDir()
	srv, err := StartServer(ctx, b, ServerConfig{Dir: dir, Options: []string{"no_such_option=1"}, Log: &logWriter{t: t}})
	if err == nil {
		_ = srv.Stop()
		t.Fatalf("StartServer with no_such_option=1 succeeded")
	}
	t.Logf("StartServer: %v", err)
	for _, want := range []string{"errors: [MY-000067] unknown variable 'no_such_option=1'", "error log " + filepath.Join(dir, "error.log")} {
		if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), want) {
			t.Errorf("StartServer error does not wrap ErrServer or lacks %q:\n%v", want, err)
		}
	}
}

// TestMySQLPathPrefix runs MySQL through path: as a self-built one is
// run: a mysqld under an install prefix of its own (bin/mysqld,
// share/english/errmsg.sys, lib/plugin), no kind in the spec. The mysqld
// is a stand-in: a script that runs sid's mysqld through sid's loader,
// with the prefix's share and lib/plugin linked to sid's. Resolve must
// find it MySQL by its --version, take the prefix's share directory, and
// my.cnf must name the prefix's paths.
func TestMySQLPathPrefix(t *testing.T) {
	requireMySQLFetch(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	f, err := NewFetcher(testCacheDir(t), &logWriter{t: t})
	if err != nil {
		t.Fatalf("NewFetcher: %v", err)
	}
	sid, err := Resolve(ctx, f, ServerSpec{Label: "9.7", Suite: "sid", Kind: MySQL})
	if err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	prefix := t.TempDir()
	for _, d := range []string{"bin", "lib"} {
		if err := os.Mkdir(filepath.Join(prefix, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := "#!/bin/sh\nexec " + strings.Join(sid.Command(), " ") + ` "$@"` + "\n"
	mysqld := filepath.Join(prefix, "bin", "mysqld")
	if err := os.WriteFile(mysqld, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"share":      sid.ShareDir,
		"lib/plugin": filepath.Join(sid.Root, "usr/lib/mysql/plugin"),
	} {
		if err := os.Symlink(target, filepath.Join(prefix, link)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := Resolve(ctx, nil, ServerSpec{Label: "own", Path: mysqld})
	if err != nil {
		t.Fatalf("Resolve(path %s): %v", mysqld, err)
	}
	if b.Kind != MySQL || b.Version != sid.Version || b.ShareDir != filepath.Join(prefix, "share") {
		t.Errorf("Resolve(path %s) = kind %s, version %q, share %s; want MySQL %s, %s/share", mysqld, b.Kind, b.Version, b.ShareDir, sid.Version, prefix)
	}
	srv := startServer(t, ctx, b, "")
	cnf, err := os.ReadFile(srv.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"basedir=" + prefix + "\n", "lc-messages-dir=" + prefix + "/share\n", "plugin-dir=" + prefix + "/lib/plugin\n"} {
		if !strings.Contains(string(cnf), want) {
			t.Errorf("my.cnf lacks %q:\n%s", want, cnf)
		}
	}
	if v, err := srv.Version(ctx); err != nil || !strings.HasPrefix(v, "9.7.") {
		t.Errorf("SELECT VERSION() = %q, %v; want 9.7.*", v, err)
	}
}
