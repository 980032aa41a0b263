package workload

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"github.com/flamediff/flamediff/internal/textdist"
)

// ErrUnknownCounter is wrapped by Counters' error when the server has no
// status variable of a requested name.
var ErrUnknownCounter = errors.New("unknown status counter")

// Server is a connection to a MySQL or MariaDB server, for its version and
// status counters. It keeps one connection open, so reading the counters
// does not add connections; each read is one statement and counts as one
// in "Questions". A Server is safe for concurrent use.
type Server struct {
	db   *sql.DB
	addr string
}

// SocketDSN returns the go-sql-driver DSN of a unix socket connection
// without a default database, such as "root@unix(/run/mysqld/mysqld.sock)/".
// An empty user means root.
func SocketDSN(socket, user, password string) string {
	cfg := mysql.NewConfig()
	if user == "" {
		user = "root"
	}
	cfg.User, cfg.Passwd = user, password
	cfg.Net, cfg.Addr = "unix", socket
	return cfg.FormatDSN()
}

// OpenServer connects to the server of dsn (go-sql-driver form, see
// SocketDSN) and checks that it answers. It blocks until the server
// answers or ctx is done. Errors name the address and user, never the
// password.
func OpenServer(ctx context.Context, dsn string) (*Server, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("open server: %w", err)
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("open server: %w", err)
	}
	addr := fmt.Sprintf("%s@%s(%s)", cfg.User, cfg.Net, cfg.Addr)
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connect to server %s: %w", addr, err)
	}
	return &Server{db: db, addr: addr}, nil
}

// Version returns what SELECT VERSION() says, such as
// "10.11.19-MariaDB-0+deb12u1".
func (s *Server) Version(ctx context.Context) (string, error) {
	var v string
	if err := s.db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return "", fmt.Errorf("server %s version: %w", s.addr, err)
	}
	return v, nil
}

// Counters reads SHOW GLOBAL STATUS once and returns the values of the
// named status variables ("Questions", "Com_update", ...), keyed by the
// names as given; names match without regard to case, as the server's
// do. With no names it returns every variable whose value is an integer,
// keyed by the server's names. A name the server does not have gives an
// error wrapping ErrUnknownCounter that lists similar names; a value that
// is not an integer (such as "ON") is an error too. The statement itself
// counts in Questions.
func (s *Server) Counters(ctx context.Context, names ...string) (map[string]int64, error) {
	rows, err := s.db.QueryContext(ctx, "SHOW GLOBAL STATUS")
	if err != nil {
		return nil, fmt.Errorf("server %s status: %w", s.addr, err)
	}
	defer func() { _ = rows.Close() }() // rows.Err reports what matters
	type variable struct{ name, value string }
	all := map[string]variable{} // by lower-case name
	for rows.Next() {
		var v variable
		if err := rows.Scan(&v.name, &v.value); err != nil {
			return nil, fmt.Errorf("server %s status: %w", s.addr, err)
		}
		all[strings.ToLower(v.name)] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("server %s status: %w", s.addr, err)
	}

	out := make(map[string]int64, len(names))
	if len(names) == 0 {
		for _, v := range all {
			if n, err := strconv.ParseInt(v.value, 10, 64); err == nil {
				out[v.name] = n
			}
		}
		return out, nil
	}
	for _, name := range names {
		v, ok := all[strings.ToLower(name)]
		if !ok {
			known := make([]string, 0, len(all))
			for _, v := range all {
				known = append(known, v.name)
			}
			return nil, unknownCounter(s.addr, name, known)
		}
		n, err := strconv.ParseInt(v.value, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("server %s status %s: value %q is not an integer", s.addr, v.name, v.value)
		}
		out[name] = n
	}
	return out, nil
}

// unknownCounter returns the error for a status name the server lacks.
func unknownCounter(addr, name string, known []string) error {
	similar := similarNames(name, known, 5)
	if len(similar) == 0 {
		return fmt.Errorf("server %s: %w %q (no similar names; see SHOW GLOBAL STATUS)", addr, ErrUnknownCounter, name)
	}
	return fmt.Errorf("server %s: %w %q (similar: %s)", addr, ErrUnknownCounter, name, strings.Join(similar, ", "))
}

// similarNames returns up to n names of known close to name: within a few
// edits, or containing it (or contained in it) when it is long enough;
// closest first, then by name.
func similarNames(name string, known []string, n int) []string {
	type cand struct {
		name string
		dist int
	}
	lname := strings.ToLower(name)
	limit := max(2, len(lname)/4)
	var cands []cand
	for _, k := range known {
		lk := strings.ToLower(k)
		d := textdist.Levenshtein(lname, lk)
		switch {
		case d <= limit:
		case len(lname) >= 4 && (strings.Contains(lk, lname) || strings.Contains(lname, lk) && len(lk) >= 4):
			d = limit + 1 + abs(len(lk)-len(lname))
		default:
			continue
		}
		cands = append(cands, cand{k, d})
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	out := make([]string, 0, min(n, len(cands)))
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].name)
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Close closes the connection.
func (s *Server) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("server %s: close: %w", s.addr, err)
	}
	return nil
}
