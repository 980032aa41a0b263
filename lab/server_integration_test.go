package lab

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flamediff/flamediff/workload"
)

// TestInstalledLifecycle runs the installed 10.11 through the lab
// lifecycle: bootstrap, start, sysbench prepare and a 2 s point_select,
// stop.
func TestInstalledLifecycle(t *testing.T) {
	requireRoot(t)
	requireTool(t, "sysbench")
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		skipOrFail(t, "lab: no /usr/sbin/mariadbd (apt-get install mariadb-server)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b, err := Installed(ctx, "/usr/sbin/mariadbd")
	if err != nil {
		t.Fatalf("Installed: %v", err)
	}
	if !strings.HasPrefix(b.Version, "10.11.") {
		t.Errorf("Installed(/usr/sbin/mariadbd).Version = %q, want 10.11.*", b.Version)
	}
	t.Logf("installed %s, libc %s, debug %q", b.Version, b.Libc, b.LibcDebugDir)
	if b.Libc == "" {
		t.Errorf("Installed found no libc")
	}
	if b.LibcDebugDir != "" { // libc6-dbg installed at the libc's version
		if _, err := b.LibcDebugFile(); err != nil {
			t.Errorf("LibcDebugFile: %v", err)
		}
	}
	srv := startServer(t, ctx, b, "")
	w := Workload{Name: "ps", Test: "oltp_point_select", Tables: 1, TableSize: 1000, Threads: 1,
		Duration: 2 * time.Second, Warmup: time.Second, PreparedStatements: true}
	if err := srv.Prepare(ctx, w); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	var n int
	if err := srv.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM sbtest.sbtest1").Scan(&n); err != nil || n != 1000 {
		t.Fatalf("rows after Prepare = %d, %v; want 1000", n, err)
	}
	var tmpdir string
	if err := srv.DB().QueryRowContext(ctx, "SELECT @@tmpdir").Scan(&tmpdir); err != nil || tmpdir != filepath.Join(srv.Dir, "tmp") {
		t.Errorf("@@tmpdir = %q, %v; want %s (not /tmp, which others may clean)", tmpdir, err, filepath.Join(srv.Dir, "tmp"))
	}
	if err := srv.Prepare(ctx, w); err != nil { // same tables: nothing to do
		t.Fatalf("second Prepare: %v", err)
	}
	var out bytes.Buffer
	run, err := workload.Start(ctx, srv.SysbenchArgs(w, "run"), &out)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("sysbench run: %v", err)
	}
	rep, err := workload.ParseSysbench(&out)
	if err != nil {
		t.Fatalf("sysbench report: %v", err)
	}
	if rep.QPS <= 0 || rep.Queries <= 0 {
		t.Errorf("sysbench QPS = %v (queries %d), want > 0", rep.QPS, rep.Queries)
	}
	t.Logf("10.11 point_select: %.0f QPS", rep.QPS)
	pid := srv.PID()
	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := srv.Err(); err != nil {
		t.Errorf("Err after a clean Stop = %v, want nil", err)
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
		t.Errorf("server %d still exists after Stop", pid)
	}
}

// installed10_11 returns the installed server, or skips.
func installed10_11(t *testing.T, ctx context.Context) *Binary {
	t.Helper()
	requireRoot(t)
	if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
		skipOrFail(t, "lab: no /usr/sbin/mariadbd (apt-get install mariadb-server)")
	}
	b, err := Installed(ctx, "/usr/sbin/mariadbd")
	if err != nil {
		t.Fatalf("Installed: %v", err)
	}
	return b
}

// processesWith returns the pids whose command line contains s.
func processesWith(t *testing.T, s string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(string(cmdline), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestServerFaults checks that a server that cannot start, that dies, or
// whose context ends is reported and leaves no process behind.
func TestServerFaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b := installed10_11(t, ctx)
	newDir := func(t *testing.T) string {
		dir, err := os.MkdirTemp("/tmp", "flamediff-lab-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}

	t.Run("bad option", func(t *testing.T) {
		dir := newDir(t)
		srv, err := StartServer(ctx, b, ServerConfig{Dir: dir, Options: []string{"no_such_variable=1"}})
		if err == nil {
			srv.Stop()
			t.Fatal("StartServer with an unknown variable succeeded")
		}
		if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "no_such_variable") || !strings.Contains(err.Error(), "error log") {
			t.Errorf("StartServer error = %v; want ErrServer quoting the error log about no_such_variable", err)
		}
		t.Logf("StartServer error, as users see it:\n%v", err)
		if pids := processesWith(t, dir); len(pids) > 0 {
			t.Errorf("processes left in %s: %v", dir, pids)
		}
	})

	t.Run("socket path too long", func(t *testing.T) {
		dir := "/tmp/" + strings.Repeat("d", 110)
		_, err := StartServer(ctx, b, ServerConfig{Dir: dir})
		if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "shorter work directory") {
			t.Errorf("StartServer(long dir) = %v, want an error asking for a shorter directory", err)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("StartServer(long dir) created %s", dir)
			os.RemoveAll(dir)
		}
	})

	t.Run("no system tables", func(t *testing.T) {
		bad := *b
		bad.ShareDir = t.TempDir()
		_, err := StartServer(ctx, &bad, ServerConfig{Dir: newDir(t)})
		if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "system_tables.sql") {
			t.Errorf("StartServer without SQL = %v, want ErrServer naming system_tables.sql", err)
		}
	})

	// One datadir for the rest: bootstrapped once, reused.
	dir := newDir(t)

	t.Run("context cancelled", func(t *testing.T) {
		sctx, scancel := context.WithCancel(ctx)
		srv, err := StartServer(sctx, b, ServerConfig{Dir: dir})
		if err != nil {
			scancel()
			t.Fatal(err)
		}
		scancel()
		select {
		case <-srv.Done():
		case <-time.After(30 * time.Second):
			t.Fatal("server still running 30s after its context was cancelled")
		}
		if err := srv.Err(); !errors.Is(err, ErrServer) || !errors.Is(err, context.Canceled) {
			t.Errorf("Err after cancel = %v, want ErrServer and context.Canceled", err)
		}
		if pids := processesWith(t, dir); len(pids) > 0 {
			t.Errorf("processes left in %s: %v", dir, pids)
		}
	})

	t.Run("start fails after bootstrap", func(t *testing.T) {
		// init_file is read at start, not in bootstrap.
		srv, err := StartServer(ctx, b, ServerConfig{Dir: dir, Options: []string{"init_file=/nonexistent/init.sql"}})
		if err == nil {
			srv.Stop()
			t.Fatal("StartServer with a missing init_file succeeded")
		}
		if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "exited before answering") || !strings.Contains(err.Error(), "errors: ") {
			t.Errorf("StartServer error = %v; want ErrServer, exited before answering, with the log's errors", err)
		}
		t.Logf("StartServer error, as users see it:\n%v", err)
		if pids := processesWith(t, dir); len(pids) > 0 {
			t.Errorf("processes left in %s: %v", dir, pids)
		}
	})

	t.Run("server dies", func(t *testing.T) {
		marker := filepath.Join(dir, bootstrappedName)
		before, err := os.Stat(marker)
		if err != nil {
			t.Fatalf("no bootstrap marker after the first start: %v", err)
		}
		srv, err := StartServer(ctx, b, ServerConfig{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Err(); err != nil {
			t.Errorf("Err of a running server = %v, want nil", err)
		}
		if after, err := os.Stat(marker); err != nil || !after.ModTime().Equal(before.ModTime()) {
			t.Errorf("the datadir was bootstrapped again (marker %v, %v); want it reused", after, err)
		}
		if err := syscall.Kill(srv.PID(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-srv.Done()
		err = srv.Err()
		if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "signal: killed") || !strings.Contains(err.Error(), "error log") {
			t.Errorf("Err after SIGKILL = %v, want ErrServer saying it was killed, with the error log", err)
		}
		if stopErr := srv.Stop(); !errors.Is(stopErr, ErrServer) {
			t.Errorf("Stop of a dead server = %v, want its death", stopErr)
		}
		w := Workload{Name: "x", Test: "oltp_point_select", Tables: 1, TableSize: 10, Threads: 1, Duration: time.Second}
		if err := srv.Prepare(ctx, w); err == nil {
			t.Errorf("Prepare on a dead server succeeded")
		}
	})
}

// TestMyCnf checks the settings every version gets, and that options
// come last so they override.
func TestMyCnf(t *testing.T) {
	s := &Server{Binary: &Binary{Root: "/c/t", ShareDir: "/c/t/usr/share/mariadb"}, Dir: "/w", DataDir: "/w/data",
		Socket: "/w/s.sock", ErrorLog: "/w/error.log",
		cfg: ServerConfig{BufferPool: "1G", Options: []string{"innodb_buffer_pool_size=2G", "skip-name-resolve"}}}
	got := s.myCnf()
	want := []string{"[mysqld]\n", "datadir=/w/data\n", "socket=/w/s.sock\n", "tmpdir=/w/tmp\n", "skip-networking\n", "skip-log-bin\n",
		"innodb_buffer_pool_size=1G\n", "lc-messages-dir=/c/t/usr/share/mariadb\n", "basedir=/c/t/usr\n"}
	if os.Geteuid() == 0 {
		want = append(want, "user=root\n")
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("myCnf lacks %q:\n%s", w, got)
		}
	}
	if !strings.HasSuffix(got, "innodb_buffer_pool_size=2G\nskip-name-resolve\n") {
		t.Errorf("myCnf does not end with the options:\n%s", got)
	}
	installed := &Server{Binary: &Binary{Root: "/"}, cfg: ServerConfig{}}
	if c := installed.myCnf(); strings.Contains(c, "basedir") || !strings.Contains(c, "innodb_buffer_pool_size="+DefaultBufferPool) {
		t.Errorf("myCnf of an installed server:\n%s\nwant no basedir, the default buffer pool", c)
	}
}
