// Package mariadbtest starts a private, throwaway MariaDB server for tests:
// a fresh datadir, a unix socket, no network, shut down and removed when
// the test ends. It needs root (the server runs as the mysql user) and
// mariadbd and mariadb-install-db on PATH; without them the test is
// skipped with the reason, unless MARIADBTEST_REQUIRE is set (as CI, which
// installs mariadb-server and sysbench, should), in which case it fails.
//
// Starting a server takes a few seconds; tests that need one should share
// it through subtests.
package mariadbtest

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// RequireEnv is the environment variable that turns skips into failures.
const RequireEnv = "MARIADBTEST_REQUIRE"

// DefaultTableSize is the sysbench --table-size of Sysbench before Prepare.
const DefaultTableSize = 10000

// Options configure the server.
type Options struct {
	// BufferPoolSize is --innodb-buffer-pool-size; "256M" when empty.
	BufferPoolSize string
	// Args are more mariadbd options, appended to the defaults.
	Args []string
	// StartTimeout bounds the wait for the server to answer; 60s when zero.
	StartTimeout time.Duration
}

// Server is a running private MariaDB server.
type Server struct {
	// Socket is the server's unix socket; root connects without a password.
	Socket string
	// PID is the process id of mariadbd.
	PID int
	// DataDir is the server's datadir (owned by the mysql user).
	DataDir string

	dir      string
	errorLog string
	mu       sync.Mutex
	size     int
}

// Start bootstraps a datadir with mariadb-install-db, starts mariadbd on it
// and waits until it answers. The server is shut down (SIGTERM, then
// SIGKILL after 20s) and its files removed when t's test ends; if the test
// failed, the tail of the error log is logged first.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if os.Geteuid() != 0 {
		skip(t, "mariadbtest: needs root (mariadbd runs as the mysql user)")
	}
	mariadbd, err := exec.LookPath("mariadbd")
	if err != nil {
		skip(t, "mariadbtest: mariadbd not on PATH (apt-get install mariadb-server)")
	}
	installDB, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		skip(t, "mariadbtest: mariadb-install-db not on PATH (apt-get install mariadb-server)")
	}
	u, err := user.Lookup("mysql")
	if err != nil {
		skip(t, fmt.Sprintf("mariadbtest: no mysql user: %v", err))
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)

	// Not t.TempDir(): its parents are not traversable by the mysql user,
	// and a unix socket path must stay under 108 bytes.
	dir, err := os.MkdirTemp("/tmp", "mariadbtest-")
	if err != nil {
		t.Fatalf("mariadbtest: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("mariadbtest: remove %s: %v", dir, err)
		}
	})
	s := &Server{
		Socket:  filepath.Join(dir, "mariadbd.sock"),
		DataDir: filepath.Join(dir, "data"),
		dir:     dir,
	}
	s.errorLog = filepath.Join(s.DataDir, "error.log")
	// The server's temporary files (internal temporary tables, filesort)
	// go to a directory of its own, not /tmp, where anything else on the
	// machine may remove them: every server deletes the #sql* files in its
	// tmpdir when it starts (mysql_rm_tmp_tables), and a clean-clone CI run failed
	// with "Error on delete of '/tmp/#sql-temptable-...MAI' (Errcode: 2)".
	tmp := filepath.Join(dir, "tmp")
	for _, p := range []string{s.DataDir, tmp} {
		if err := os.Mkdir(p, 0o750); err != nil {
			t.Fatalf("mariadbtest: %v", err)
		}
	}
	for _, p := range []string{dir, s.DataDir, tmp} {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatalf("mariadbtest: %v", err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("mariadbtest: %v", err)
	}

	install := exec.Command(installDB, "--no-defaults", "--user=mysql", "--datadir="+s.DataDir,
		"--auth-root-authentication-method=normal", "--skip-test-db")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadbtest: %s: %v\n%s", strings.Join(install.Args, " "), err, out)
	}

	pool := opts.BufferPoolSize
	if pool == "" {
		pool = "256M"
	}
	args := []string{"--no-defaults", "--user=mysql", "--datadir=" + s.DataDir, "--socket=" + s.Socket,
		"--pid-file=" + filepath.Join(dir, "mariadbd.pid"), "--skip-networking",
		"--innodb-buffer-pool-size=" + pool, "--skip-log-bin", "--log-error=" + s.errorLog, "--tmpdir=" + tmp}
	args = append(args, opts.Args...)
	cmd := exec.Command(mariadbd, args...)
	var console bytes.Buffer // what it prints before the error log is open
	cmd.Stdout, cmd.Stderr = &console, &console
	if err := cmd.Start(); err != nil {
		t.Fatalf("mariadbtest: start mariadbd: %v", err)
	}
	s.PID = cmd.Process.Pid
	exited := make(chan struct{})
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("mariadbtest: error log of the server (tail):\n%s", s.ErrorLog())
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			t.Logf("mariadbtest: mariadbd %d did not stop within 20s of SIGTERM; killing it", s.PID)
			_ = cmd.Process.Kill()
			<-exited
		}
	})

	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	db := s.open(t)
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-exited:
			t.Fatalf("mariadbtest: mariadbd exited before answering: %v\n%s\nerror log:\n%s", waitErr, console.String(), s.ErrorLog())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mariadbtest: mariadbd did not answer within %v: %v\nerror log:\n%s", timeout, err, s.ErrorLog())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return s
}

// skip skips the test, or fails it when RequireEnv is set.
func skip(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s (and %s is set)", reason, RequireEnv)
	}
	t.Skip(reason)
}

// DSN returns the go-sql-driver DSN of root on the server's socket.
func (s *Server) DSN() string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", s.Socket
	return cfg.FormatDSN()
}

// DB returns a connection pool to the server, closed when the test ends.
func (s *Server) DB(t testing.TB) *sql.DB {
	t.Helper()
	db := s.open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("mariadbtest: connect: %v", err)
	}
	return db
}

func (s *Server) open(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", s.DSN())
	if err != nil {
		t.Fatalf("mariadbtest: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// ErrorLog returns the last 16 KiB of the server's error log.
func (s *Server) ErrorLog() string {
	data, err := os.ReadFile(s.errorLog)
	if err != nil {
		return fmt.Sprintf("(error log: %v)", err)
	}
	if len(data) > 16<<10 {
		data = data[len(data)-16<<10:]
	}
	return string(data)
}

// Sysbench returns the command line of sysbench TEST against the server:
// database sbtest, one table of the size of the last Prepare
// (DefaultTableSize before), then args (such as "--time=2", "run"). It
// skips the test when sysbench is not on PATH (and RequireEnv is unset).
func (s *Server) Sysbench(t testing.TB, test string, args ...string) []string {
	t.Helper()
	path, err := exec.LookPath("sysbench")
	if err != nil {
		skip(t, "mariadbtest: sysbench not on PATH (apt-get install sysbench)")
	}
	s.mu.Lock()
	size := s.size
	s.mu.Unlock()
	if size <= 0 {
		size = DefaultTableSize
	}
	cmd := []string{path, test, "--db-driver=mysql", "--mysql-socket=" + s.Socket, "--mysql-user=root",
		"--mysql-db=sbtest", "--tables=1", "--table-size=" + strconv.Itoa(size)}
	return append(cmd, args...)
}

// Prepare creates database sbtest if needed and runs `sysbench TEST
// prepare` with a table of tableSize rows; later Sysbench command lines use
// that size.
func (s *Server) Prepare(t testing.TB, test string, tableSize int) {
	t.Helper()
	s.mu.Lock()
	s.size = tableSize
	s.mu.Unlock()
	args := s.Sysbench(t, test, "prepare")
	db := s.DB(t)
	if _, err := db.Exec("CREATE DATABASE IF NOT EXISTS sbtest"); err != nil {
		t.Fatalf("mariadbtest: create database sbtest: %v", err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("mariadbtest: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
