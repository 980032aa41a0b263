package lab

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/workload"
	"github.com/flamediff/flamediff/workload/suite"
)

// ErrServer is wrapped by the errors of a server that could not be
// bootstrapped or started, or that died; they quote its error log's tail.
var ErrServer = errors.New("server failed")

// Defaults of ServerConfig.
const (
	DefaultBufferPool   = "512M"
	DefaultStartTimeout = 120 * time.Second
	DefaultStopTimeout  = 60 * time.Second
	// maxSocketPath is the longest unix socket path (sun_path less the NUL).
	maxSocketPath = 107
)

// ServerConfig says where and how a server runs.
type ServerConfig struct {
	// Dir is the work directory: my.cnf, data/, the socket, the error log.
	// It is created if missing; its path must be short enough for a unix
	// socket (about 90 bytes).
	Dir string
	// BufferPool is innodb_buffer_pool_size (DefaultBufferPool; see
	// BufferPoolFor).
	BufferPool string
	// Options are more my.cnf settings, "name=value" or "name", after the
	// defaults (so they override them).
	Options []string
	// StartTimeout bounds bootstrap and the wait for the server to answer
	// (DefaultStartTimeout); StopTimeout is how long Stop waits after
	// SIGTERM before SIGKILL (DefaultStopTimeout).
	StartTimeout, StopTimeout time.Duration
	// Log receives progress lines and sysbench's prepare output (may be nil).
	Log io.Writer
}

// BufferPoolFor returns an innodb_buffer_pool_size that holds the tables
// of every workload (about 400 bytes a row of sysbench's table, doubled),
// in MiB, at least DefaultBufferPool.
func BufferPoolFor(ws []Workload) string {
	need := int64(512)
	for _, w := range ws {
		mb := int64(w.Tables)*int64(w.TableSize)*400*2/(1<<20) + 64
		need = max(need, (mb+127)/128*128)
	}
	return strconv.FormatInt(need, 10) + "M"
}

// Server is a running private server (see StartServer). Its methods are
// safe for concurrent use.
type Server struct {
	// Binary is what runs.
	Binary *Binary
	// Dir, DataDir, Socket, ErrorLog and Config are the paths of the work
	// directory, the datadir, the unix socket, the error log and my.cnf.
	Dir, DataDir, Socket, ErrorLog, Config string

	cmd     *exec.Cmd
	console *syncBuffer
	exited  chan struct{} // closed when cmd.Wait returned (ProcessState is set)
	db      *sql.DB
	cfg     ServerConfig

	stopOnce sync.Once
	stopErr  error
	stopping chan struct{} // closed when Stop starts
	stopDone chan struct{} // closed when Stop has set stopErr

	mu         sync.Mutex
	prepared   string // tables/size of the last Prepare
	killReason error  // why kill was called, for Err
}

// bootstrappedName is the file in a work directory that says its datadir
// is complete, and which server made it.
const bootstrappedName = "bootstrapped"

// StartServer writes my.cnf in cfg.Dir, bootstraps a datadir (MariaDB from
// its own system-table SQL, MySQL with --initialize-insecure) unless
// cfg.Dir has one made by the same server and version (an incomplete one
// is made again), starts the server on a unix socket in cfg.Dir (no TCP)
// in a process group of its own, and waits until it answers. The server
// runs as root when this process is root, else as this user; root connects
// over the socket without a password. When ctx is done the server is
// killed; call Stop to shut it down cleanly. A server that fails to
// bootstrap, start or answer is killed, and the error (wrapping ErrServer)
// quotes its error log.
func StartServer(ctx context.Context, b *Binary, cfg ServerConfig) (*Server, error) {
	if err := platform(); err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		return nil, fmt.Errorf("start server %s: %w: no work directory", b.Mariadbd, ErrServer)
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("start server: %w", err)
	}
	s := &Server{
		Binary:   b,
		Dir:      dir,
		DataDir:  filepath.Join(dir, "data"),
		Socket:   filepath.Join(dir, b.program()+".sock"),
		ErrorLog: filepath.Join(dir, "error.log"),
		Config:   filepath.Join(dir, "my.cnf"),
		cfg:      cfg,
		exited:   make(chan struct{}),
		stopping: make(chan struct{}),
		stopDone: make(chan struct{}),
		console:  &syncBuffer{},
	}
	if len(s.Socket) > maxSocketPath {
		return nil, fmt.Errorf("start server: %w: socket path %s is %d bytes, more than a unix socket takes (%d); use a shorter work directory", ErrServer, s.Socket, len(s.Socket), maxSocketPath)
	}
	if s.cfg.StartTimeout <= 0 {
		s.cfg.StartTimeout = DefaultStartTimeout
	}
	if s.cfg.StopTimeout <= 0 {
		s.cfg.StopTimeout = DefaultStopTimeout
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("start server: work directory %w", describePath(dir, err, true))
	}
	// The server's temporary files go to its own directory, not /tmp,
	// where anything else on the machine may clean them away under it.
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		return nil, fmt.Errorf("start server: %w", describePath(filepath.Join(dir, "tmp"), err, true))
	}
	if err := os.WriteFile(s.Config, []byte(s.myCnf()), 0o644); err != nil {
		return nil, fmt.Errorf("start server: %w", describePath(s.Config, err, false))
	}
	// A datadir is reused only when its bootstrap finished: the marker
	// is written after it, and names the version that made it.
	marker := filepath.Join(dir, bootstrappedName)
	if made, err := os.ReadFile(marker); err != nil || string(made) != b.Mariadbd+" "+b.Version+"\n" {
		if err := s.bootstrap(ctx); err != nil {
			return nil, err
		}
		if err := writeFileAtomic(marker, []byte(b.Mariadbd+" "+b.Version+"\n")); err != nil {
			return nil, fmt.Errorf("start server: %w", err)
		}
	}
	if err := s.start(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// program returns the server program's usual name, for the files of its
// work directory.
func (b *Binary) program() string {
	if b.Kind == MySQL {
		return "mysqld"
	}
	return "mariadbd"
}

// myCnf returns the server's my.cnf: the same for every version of a
// kind but for the paths of a fetched tree. Both kinds get a unix socket
// and no TCP, no binary log and a buffer pool that holds the tables;
// MySQL also gets no X Protocol (mysqlx=OFF), an empty secure-file-priv
// (its compiled-in /var/lib/mysql-files exists only where the package was
// installed, and mysqld aborts without it) and, installed or not, the
// paths of the tree its mysqld is in (basedir, messages, charsets,
// plugins), so that a self-built one runs from its install prefix.
func (s *Server) myCnf() string {
	pool := s.cfg.BufferPool
	if pool == "" {
		pool = DefaultBufferPool
	}
	var b strings.Builder
	b.WriteString("# written by flamediff (lab.StartServer)\n[mysqld]\n")
	bin := s.Binary
	lines := []string{
		"datadir=" + s.DataDir,
		"socket=" + s.Socket,
		"pid-file=" + filepath.Join(s.Dir, bin.program()+".pid"),
		"log-error=" + s.ErrorLog,
		"tmpdir=" + filepath.Join(s.Dir, "tmp"),
		"skip-networking",
	}
	if bin.Kind == MySQL {
		// Binary logging is on by default since MySQL 8.0.
		lines = append(lines, "disable-log-bin", "mysqlx=OFF", "secure-file-priv=")
	} else {
		lines = append(lines, "skip-log-bin")
	}
	lines = append(lines, "innodb_buffer_pool_size="+pool)
	if os.Geteuid() == 0 {
		lines = append(lines, "user=root")
	}
	switch {
	case bin.Kind == MySQL:
		prefix := filepath.Dir(filepath.Dir(bin.Mariadbd)) // the usr of usr/sbin/mysqld
		lines = append(lines,
			"basedir="+prefix,
			"lc-messages-dir="+bin.ShareDir,
			"character-sets-dir="+filepath.Join(bin.ShareDir, "charsets"))
		for _, d := range []string{"lib/mysql/plugin", "lib/plugin"} {
			if fi, err := os.Stat(filepath.Join(prefix, d)); err == nil && fi.IsDir() {
				lines = append(lines, "plugin-dir="+filepath.Join(prefix, d))
				break
			}
		}
	case bin.Root != "" && bin.Root != "/":
		lines = append(lines,
			"basedir="+filepath.Join(bin.Root, "usr"),
			"lc-messages-dir="+bin.ShareDir,
			"character-sets-dir="+filepath.Join(bin.ShareDir, "charsets"),
			"plugin-dir="+filepath.Join(bin.Root, "usr/lib/mysql/plugin"))
	}
	lines = append(lines, s.cfg.Options...)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func (s *Server) logf(format string, a ...any) {
	if s.cfg.Log != nil {
		fmt.Fprintf(s.cfg.Log, format+"\n", a...)
	}
}

// bootstrap creates an empty datadir and fills it: MariaDB's from the
// system-table SQL fed to `mariadbd --bootstrap`, as mariadb-install-db
// does; MySQL's with `mysqld --initialize-insecure` (root without a
// password), which writes its messages to the error log.
func (s *Server) bootstrap(ctx context.Context) error {
	if s.Binary.Kind == MySQL {
		return s.initialize(ctx)
	}
	files, err := systemTableSQL(s.Binary.ShareDir)
	if err != nil {
		return fmt.Errorf("bootstrap %s: %w: %w", s.DataDir, ErrServer, err)
	}
	if err := s.emptyDataDir(); err != nil {
		return err
	}
	var sqlText bytes.Buffer
	sqlText.WriteString("create database if not exists mysql;\nuse mysql;\nSET @auth_root_socket=NULL;\n")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("bootstrap: %w", describePath(f, err, false))
		}
		sqlText.Write(data)
		sqlText.WriteByte('\n')
	}
	s.logf("server %s: bootstrap %s from %s", s.Binary.Version, s.DataDir, s.Binary.ShareDir)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	argv := s.Binary.Command("--defaults-file="+s.Config, "--bootstrap", "--log-warnings=0",
		"--max_allowed_packet=8M", "--net_buffer_length=16K")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = s.Binary.Env()
	cmd.Stdin = &sqlText
	ownGroup(cmd, true)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("bootstrap %s: %w: %w\n%s%s", s.DataDir, ErrServer, err, indent(out.String()), s.ErrorLogTail(20))
	}
	return nil
}

// initialize makes MySQL's datadir with `mysqld --initialize-insecure`.
func (s *Server) initialize(ctx context.Context) error {
	if err := s.emptyDataDir(); err != nil {
		return err
	}
	s.logf("server %s: initialize %s (mysqld --initialize-insecure)", s.Binary.Version, s.DataDir)
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
	defer cancel()
	// The error log of a failed attempt would be quoted with this one's.
	if err := os.Remove(s.ErrorLog); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("initialize: %w", describePath(s.ErrorLog, err, false))
	}
	argv := s.Binary.Command("--defaults-file="+s.Config, "--initialize-insecure")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = s.Binary.Env()
	ownGroup(cmd, true)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initialize %s: %w: %w\n%s%s", s.DataDir, ErrServer, err, indent(out.String()), s.ErrorLogTail(20))
	}
	return nil
}

// emptyDataDir removes the datadir and makes it again, empty.
func (s *Server) emptyDataDir() error {
	if err := os.RemoveAll(s.DataDir); err != nil {
		return fmt.Errorf("bootstrap: data directory %w", describePath(s.DataDir, err, true))
	}
	if err := os.Mkdir(s.DataDir, 0o750); err != nil {
		return fmt.Errorf("bootstrap: data directory %w", describePath(s.DataDir, err, true))
	}
	return nil
}

// start starts the server and waits until it answers.
func (s *Server) start(ctx context.Context) error {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", s.Socket
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	s.db = sql.OpenDB(connector)
	s.db.SetMaxOpenConns(2)

	argv := s.Binary.Command("--defaults-file=" + s.Config)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = s.Binary.Env()
	cmd.Stdout, cmd.Stderr = s.console, s.console
	// Its own group, so that signals reach only it; killed if we die.
	ownGroup(cmd, false)
	if err := cmd.Start(); err != nil {
		_ = s.db.Close()
		return fmt.Errorf("start server %s: %w: %w", s.Binary.Mariadbd, ErrServer, err)
	}
	s.cmd = cmd
	go func() {
		_ = cmd.Wait() // ProcessState says how it ended
		close(s.exited)
	}()
	go func() { // kill on ctx done, unless stopped first
		select {
		case <-ctx.Done():
			s.killFor(ctx.Err())
		case <-s.exited:
		case <-s.stopping:
		}
	}()
	s.logf("server %s: started, pid %d, socket %s", s.Binary.Version, cmd.Process.Pid, s.Socket)

	deadline := time.Now().Add(s.cfg.StartTimeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		err := s.db.PingContext(pctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			s.killFor(errors.New("exited before answering")) // its group, and the pool
			return fmt.Errorf("start server %s: %w: exited before answering (%s)\n%s%s", s.Binary.Version, ErrServer, s.cmd.ProcessState, indent(s.console.String()), s.ErrorLogTail(20))
		case <-ctx.Done():
			s.killFor(ctx.Err())
			return fmt.Errorf("start server %s: %w", s.Binary.Version, ctx.Err())
		default:
		}
		if time.Now().After(deadline) {
			s.killFor(fmt.Errorf("no answer within %v", s.cfg.StartTimeout))
			return fmt.Errorf("start server %s: %w: no answer within %v: %w\n%s", s.Binary.Version, ErrServer, s.cfg.StartTimeout, err, s.ErrorLogTail(20))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// killFor sends SIGKILL to the server's process group, for reason, and
// waits for it to exit.
func (s *Server) killFor(reason error) {
	s.mu.Lock()
	if s.killReason == nil {
		s.killReason = reason
	}
	s.mu.Unlock()
	_ = s.db.Close() // before the kill: a clean COM_QUIT, no broken pipe
	killGroup(s.cmd.Process.Pid)
	<-s.exited
}

// PID returns the server's process id (also its process group's).
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Done returns a channel closed when the server process has exited.
func (s *Server) Done() <-chan struct{} { return s.exited }

// Err returns nil while the server runs and after a Stop that shut it
// down cleanly; else an error wrapping ErrServer that says how it ended:
// killed because StartServer's context was done (wrapping the context's
// error), or died by itself (quoting its error log).
func (s *Server) Err() error {
	select {
	case <-s.exited:
	default:
		return nil
	}
	select {
	case <-s.stopDone:
		return s.stopErr
	case <-s.stopping:
		return nil // exited because Stop asked
	default:
	}
	s.mu.Lock()
	reason := s.killReason
	s.mu.Unlock()
	if reason != nil {
		return fmt.Errorf("server %s: %w: killed: %w", s.Binary.Version, ErrServer, reason)
	}
	return fmt.Errorf("server %s: %w: died (%s)\n%s", s.Binary.Version, ErrServer, s.cmd.ProcessState, s.ErrorLogTail(20))
}

// DB returns the server's connection pool (root on the socket). It is
// closed by Stop.
func (s *Server) DB() *sql.DB { return s.db }

// DSN returns the go-sql-driver DSN of root on the socket, no database.
func (s *Server) DSN() string { return workload.SocketDSN(s.Socket, "root", "") }

// Version returns what SELECT VERSION() says.
func (s *Server) Version(ctx context.Context) (string, error) {
	var v string
	if err := s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "", fmt.Errorf("server %s: version: %w", s.Socket, err)
	}
	return v, nil
}

// Stop shuts the server down: SIGTERM (a clean shutdown), then, when it
// has not exited within the stop timeout, SIGKILL to its process group.
// It blocks until the server has exited. A server that had died before
// gives that error (see Err); one that had to be killed an error wrapping
// ErrServer. Stop is idempotent.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		defer close(s.stopDone)
		died := s.Err()
		close(s.stopping)
		if s.db != nil {
			_ = s.db.Close()
		}
		if died != nil {
			s.stopErr = died
			killGroup(s.cmd.Process.Pid)
			return
		}
		terminate(s.cmd.Process.Pid)
		timer := time.NewTimer(s.cfg.StopTimeout)
		defer timer.Stop()
		select {
		case <-s.exited:
			// Whatever it left in its group (nothing, normally).
			killGroup(s.cmd.Process.Pid)
			s.logf("server %s: stopped", s.Binary.Version)
		case <-timer.C:
			killGroup(s.cmd.Process.Pid)
			<-s.exited
			s.stopErr = fmt.Errorf("server %s: %w: did not stop within %v of SIGTERM; killed\n%s", s.Binary.Version, ErrServer, s.cfg.StopTimeout, s.ErrorLogTail(20))
		}
	})
	<-s.exited
	return s.stopErr
}

// ErrorLogTail returns the last n lines of the server's error log,
// indented, for error messages.
func (s *Server) ErrorLogTail(n int) string {
	data, err := os.ReadFile(s.ErrorLog)
	if err != nil {
		return fmt.Sprintf("  (error log: %v)\n", err)
	}
	if len(data) > 64<<10 {
		data = data[len(data)-64<<10:]
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	errs := errorLines(lines, 3)
	head := ""
	if len(errs) > 0 {
		head = "  errors: " + strings.Join(errs, " | ") + "\n"
	}
	return head + "  error log " + s.ErrorLog + " (tail):\n" + indent(strings.Join(lines, "\n"))
}

// mysqlSubsystem is the subsystem tag of MySQL's error log lines,
// after the error code: "[MY-010119] [Server] Aborting".
var mysqlSubsystem = regexp.MustCompile(`^(\[MY-\d+\]) \[[A-Za-z]+\] `)

// errorLines returns the messages of the first n [ERROR] lines of an
// error log: what follows "[ERROR] " in MariaDB's
// ("2026-01-02 10:00:00 0 [ERROR] mariadbd: unknown variable 'x=1'") and
// MySQL's, with its error code and without its subsystem
// ("2026-01-02T10:00:00.123456Z 0 [ERROR] [MY-000067] [Server] unknown
// variable 'x=1'." gives "[MY-000067] unknown variable 'x=1'.").
func errorLines(lines []string, n int) []string {
	var errs []string
	for _, l := range lines {
		if _, msg, ok := strings.Cut(l, "[ERROR] "); ok && len(errs) < n {
			errs = append(errs, mysqlSubsystem.ReplaceAllString(msg, "$1 "))
		}
	}
	return errs
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}

// SysbenchArgs returns the command line of sysbench for w against the
// server: the workload's options, the connection (root on the socket,
// database sbtest), extra, then command ("prepare", "run", "cleanup").
func (s *Server) SysbenchArgs(w Workload, command string, extra ...string) []string {
	return s.sysbench(w.SysbenchArgs(), command, extra...)
}

// sysbench is the command line of sysbench with the workload options
// opts against the server.
func (s *Server) sysbench(opts []string, command string, extra ...string) []string {
	argv := append([]string{"sysbench"}, opts...)
	argv = append(argv, "--db-driver=mysql", "--mysql-socket="+s.Socket, "--mysql-user=root", "--mysql-db=sbtest")
	argv = append(argv, extra...)
	return append(argv, command)
}

// Prepare creates sysbench's tables for w in database sbtest (dropped and
// created again first), unless the last Prepare made the same tables and
// w's runs leave them usable (a workload with FreshTables gets new ones
// every time, and the next workload too; the workload after one that
// AddsRows gets new ones); tables made with other prepare
// options (a named microbenchmark's, w.PrepareArgs: k uniform) are not
// the same. It runs `sysbench prepare` in a process group of its own,
// stopped when ctx is done; its output goes to the config's Log.
func (s *Server) Prepare(ctx context.Context, w Workload) error {
	opts := w.PrepareArgs()
	key := fmt.Sprintf("%d/%d", w.Tables, w.TableSize)
	if w.Bench != nil {
		key += " " + strings.Join(suite.PrepareArgs(), " ")
	}
	if w.FreshTables() {
		key = "" // neither this workload's next run nor another reuses them
	}
	s.mu.Lock()
	same := s.prepared == key && key != ""
	if same && w.AddsRows() {
		s.prepared = "" // the next workload gets tables of its size again
	}
	s.mu.Unlock()
	if same {
		return nil
	}
	for _, q := range []string{"DROP DATABASE IF EXISTS sbtest", "CREATE DATABASE sbtest"} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("prepare %s on %s: %s: %w", w.Name, s.Binary.Version, q, err)
		}
	}
	s.logf("server %s: sysbench prepare %s of %s", s.Binary.Version, names.Plural(w.Tables, "table"), names.Plural(w.TableSize, "row"))
	run, err := workload.Start(ctx, s.sysbench(opts, "prepare"), s.cfg.Log)
	if err != nil {
		return fmt.Errorf("prepare %s on %s: %w", w.Name, s.Binary.Version, err)
	}
	if err := run.Wait(); err != nil {
		if died := s.Err(); died != nil {
			return fmt.Errorf("prepare %s: %w", w.Name, died)
		}
		return fmt.Errorf("prepare %s on %s: %w", w.Name, s.Binary.Version, err)
	}
	if w.AddsRows() {
		key = "" // the next workload gets tables of its size again
	}
	s.mu.Lock()
	s.prepared = key
	s.mu.Unlock()
	return nil
}

// syncBuffer is a bytes.Buffer safe for concurrent Write and String.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil // enough to explain a failed start
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
