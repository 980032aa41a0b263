package mariadbtest

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

func TestStart(t *testing.T) {
	var s *Server
	var dir string
	t.Run("server", func(t *testing.T) {
		s = Start(t, Options{})
		dir = s.dir
		db := s.DB(t)
		var version string
		if err := db.QueryRow("SELECT VERSION()").Scan(&version); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(version, "MariaDB") {
			t.Errorf("VERSION() = %q, want MariaDB", version)
		}
		var pool int64
		if err := db.QueryRow("SELECT @@innodb_buffer_pool_size").Scan(&pool); err != nil || pool != 256<<20 {
			t.Errorf("innodb_buffer_pool_size = %d, %v, want 256M", pool, err)
		}
		if fi, err := os.Stat(s.Socket); err != nil || fi.Mode()&os.ModeSocket == 0 {
			t.Errorf("socket %s: %v", s.Socket, err)
		}
		if syscall.Kill(s.PID, 0) != nil {
			t.Errorf("PID %d is not running", s.PID)
		}
		if !strings.Contains(s.ErrorLog(), "ready for connections") {
			t.Errorf("ErrorLog() = %q, want the server's start message", s.ErrorLog())
		}

		s.Prepare(t, "oltp_point_select", 500)
		var rows int
		if err := db.QueryRow("SELECT COUNT(*) FROM sbtest.sbtest1").Scan(&rows); err != nil || rows != 500 {
			t.Errorf("sbtest1 has %d rows (%v), want 500", rows, err)
		}
		args := s.Sysbench(t, "oltp_point_select", "--time=1", "run")
		if !strings.Contains(strings.Join(args, " "), "--table-size=500") {
			t.Errorf("Sysbench() = %q, want the prepared table size", args)
		}
		out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "transactions:") {
			t.Errorf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if s == nil {
		return // skipped
	}
	// The subtest's cleanups have run: the server is down and its files gone.
	if err := syscall.Kill(s.PID, 0); err == nil {
		t.Errorf("mariadbd %d still runs after the test", s.PID)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after the test (%v)", dir, err)
	}
}
