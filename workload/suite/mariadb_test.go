package suite

import (
	"bytes"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/workload"
)

const tableSize = 10000

// TestScriptsMariaDB runs each of our scripts against a private MariaDB:
// for two seconds to see it runs and to log its QPS, then for a few
// hundred events with the general log on, and checks the statements it
// executed do what the name says (EXPLAIN: covered queries read only an
// index, -si ones index k, the updates go by primary key and set only c;
// IN lists and BETWEEN ranges are as long as the range; hot-points stays
// on its 100 ids; update-zipf is skewed).
func TestScriptsMariaDB(t *testing.T) {
	srv := mariadbtest.Start(t, mariadbtest.Options{})
	db := sbtestDB(t, srv)
	mustExec(t, srv.DB(t), "CREATE DATABASE sbtest")
	argv := srv.Sysbench(t, "oltp_point_select", append(PrepareArgs(), "--table-size="+strconv.Itoa(tableSize), "prepare")...)
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	dir := t.TempDir()
	if err := WriteScripts(dir); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "SET GLOBAL log_output = 'TABLE'")
	var benches []Bench
	for _, name := range Names() {
		b, err := Lookup(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.Script {
			benches = append(benches, b)
		}
	}
	big, err := Lookup("random-points", 1000)
	if err != nil {
		t.Fatal(err)
	}
	benches = append(benches, big)
	for _, b := range benches {
		name := b.Name
		t.Run(b.String(), func(t *testing.T) {
			rep := sysbench(t, srv, dir, b, "--time=2")
			if rep.Queries <= 0 {
				t.Fatalf("%s: %d queries in 2s", name, rep.Queries)
			}
			t.Logf("%s: %.0f QPS (%d queries in %.2fs)", b, rep.QPS, rep.Queries, rep.TotalTime)

			events := 300
			if name == "update-zipf" {
				events = 5000
			}
			mustExec(t, db, "TRUNCATE mysql.general_log")
			mustExec(t, db, "SET GLOBAL general_log = 1")
			sysbench(t, srv, dir, b, "--events="+strconv.Itoa(events), "--time=0")
			mustExec(t, db, "SET GLOBAL general_log = 0")
			stmts := executed(t, db)
			if len(stmts) < events {
				t.Fatalf("%s: %d statements in the general log, want >= %d", name, len(stmts), events)
			}
			check(t, db, b, stmts)
		})
	}
}

// TestStockMariaDB runs each stock microbenchmark for a second with the
// options Lookup gives (a typo in them fails sysbench), and checks that
// update-one updates only row 1.
func TestStockMariaDB(t *testing.T) {
	srv := mariadbtest.Start(t, mariadbtest.Options{})
	db := sbtestDB(t, srv)
	mustExec(t, srv.DB(t), "CREATE DATABASE sbtest")
	argv := srv.Sysbench(t, "oltp_point_select", append(PrepareArgs(), "--table-size="+strconv.Itoa(tableSize), "prepare")...)
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	mustExec(t, db, "SET GLOBAL log_output = 'TABLE'")
	for _, name := range Names() {
		b, err := Lookup(name, 0)
		if err != nil {
			t.Fatal(err)
		}
		if b.Script {
			continue
		}
		t.Run(name, func(t *testing.T) {
			args := []string{"--time=1"}
			if b.TableSize > 0 {
				args = append(args, "--table-size="+strconv.Itoa(b.TableSize))
				mustExec(t, db, "TRUNCATE mysql.general_log")
				mustExec(t, db, "SET GLOBAL general_log = 1")
			}
			rep := sysbench(t, srv, "", b, args...)
			if rep.Queries <= 0 {
				t.Fatalf("%s: %d queries in 1s", name, rep.Queries)
			}
			t.Logf("%s: %.0f QPS (%d queries in %.2fs)", b, rep.QPS, rep.Queries, rep.TotalTime)
			if b.TableSize > 0 {
				mustExec(t, db, "SET GLOBAL general_log = 0")
				stmts := executed(t, db)
				ids := map[string]int{}
				for _, s := range stmts {
					if m := whereID.FindStringSubmatch(s); m != nil {
						ids[m[1]]++
					}
				}
				t.Logf("%s: updated ids %v", name, ids)
				if len(ids) != 1 || ids["1"] == 0 {
					t.Errorf("%s: updated ids %v, want only 1", name, ids)
				}
			}
		})
	}
}

// check asserts that the statements of b do what its name says.
func check(t *testing.T, db *sql.DB, b Bench, stmts []string) {
	t.Helper()
	first := stmts[0]
	name := b.Name
	if strings.HasPrefix(first, "SELECT") {
		plan := explain(t, db, first)
		t.Logf("EXPLAIN %.150s\n  -> type=%s key=%s rows=%s Extra=%q", first, plan["type"], plan["key"], plan["rows"], plan["Extra"])
		switch {
		case strings.HasSuffix(name, "-si"):
			if plan["key"] != "k_1" {
				t.Errorf("%s: key %q, want k_1", name, plan["key"])
			}
		case strings.HasSuffix(name, "-pk"), name == "random-points", name == "hot-points":
			if plan["key"] != "PRIMARY" {
				t.Errorf("%s: key %q, want PRIMARY", name, plan["key"])
			}
		case name == "scan":
			if plan["type"] != "ALL" {
				t.Errorf("scan: type %q, want ALL (a full scan)", plan["type"])
			}
			if n := countRows(t, db, first); n != 0 {
				t.Errorf("scan: %d rows, want 0", n)
			}
		}
		covered := strings.Contains(name, "-covered-")
		got := slices.Contains(strings.Split(plan["Extra"], "; "), "Using index") // not "Using index condition"
		if strings.Contains(name, "covered-") && got != covered {
			t.Errorf("%s: Extra %q: Using index = %v, want %v", name, plan["Extra"], got, covered)
		}
	}
	if strings.HasPrefix(first, "UPDATE") {
		// update-inlist and update-zipf: by primary key, of c only (a
		// non-index update).
		plan := explain(t, db, first)
		t.Logf("EXPLAIN %.150s\n  -> type=%s key=%s rows=%s", first, plan["type"], plan["key"], plan["rows"])
		if plan["key"] != "PRIMARY" {
			t.Errorf("%s: key %q, want PRIMARY", name, plan["key"])
		}
		if !updateC.MatchString(first) {
			t.Errorf("%s: %s, want an update of c only", name, first)
		}
	}
	switch name {
	case "range-covered-pk", "range-notcovered-pk", "range-covered-si", "range-notcovered-si":
		for _, s := range stmts[:min(len(stmts), 50)] {
			m := betweenRE.FindStringSubmatch(s)
			if m == nil {
				t.Fatalf("%s: no BETWEEN in %s", name, s)
			}
			lo, _ := strconv.Atoi(m[1])
			hi, _ := strconv.Atoi(m[2])
			if hi-lo != b.Range {
				t.Fatalf("%s: BETWEEN %d AND %d in %s, want a width of %d", name, lo, hi, s, b.Range)
			}
		}
	case "random-points", "points-covered-pk", "points-notcovered-pk", "points-covered-si", "points-notcovered-si":
		if n := len(inList(first)); n != b.Range {
			t.Errorf("%s: IN list of %d in %s, want %d", name, n, first, b.Range)
		}
	case "update-inlist":
		if n := len(inList(first)); n != 10 {
			t.Errorf("update-inlist: IN list of %d in %s, want 10", n, first)
		}
	case "hot-points":
		lo, hi := tableSize/2-49, tableSize/2+50
		seen := map[int]bool{}
		for _, s := range stmts {
			for _, id := range inList(s) {
				if id < lo || id > hi {
					t.Fatalf("hot-points: id %d outside [%d, %d] in %s", id, lo, hi, s)
				}
				seen[id] = true
			}
		}
		if len(seen) != 100 {
			t.Errorf("hot-points: %d distinct ids, want 100", len(seen))
		}
	case "update-zipf":
		checkZipf(t, stmts)
	}
}

var updateC = regexp.MustCompile(`^UPDATE sbtest1 SET c = '[^']*' WHERE id (= \d+|IN \([\d, ]+\))$`)

var betweenRE = regexp.MustCompile(`BETWEEN (\d+) AND (\d+)`)

var whereID = regexp.MustCompile(`WHERE id\s*=\s*(\d+)`)

// checkZipf asserts the updated ids are skewed: the hottest 1% of the
// table takes most updates (1% of them for a uniform distribution) and
// id 1 is the hottest.
func checkZipf(t *testing.T, stmts []string) {
	t.Helper()
	counts := map[int]int{}
	for _, s := range stmts {
		m := whereID.FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("update-zipf: no id in %s", s)
		}
		id, _ := strconv.Atoi(m[1])
		counts[id]++
	}
	ids := make([]int, 0, len(counts))
	for id := range counts {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return counts[ids[i]] > counts[ids[j]] })
	top := 0
	for _, id := range ids[:min(len(ids), tableSize/100)] {
		top += counts[id]
	}
	share := float64(top) / float64(len(stmts))
	t.Logf("update-zipf: %d updates on %d distinct ids; hottest id %d (%d updates, %.1f%%); hottest 1%% of ids: %.1f%% of updates",
		len(stmts), len(ids), ids[0], counts[ids[0]], 100*float64(counts[ids[0]])/float64(len(stmts)), 100*share)
	if ids[0] != 1 {
		t.Errorf("update-zipf: hottest id %d, want 1", ids[0])
	}
	if share < 0.4 {
		t.Errorf("update-zipf: hottest 1%% of ids took %.1f%% of updates, want >= 40%% (zipfian, theta 0.99)", 100*share)
	}
}

var inListRE = regexp.MustCompile(`IN \(([^)]*)\)`)

// inList returns the integers of the statement's IN (...) list.
func inList(stmt string) []int {
	m := inListRE.FindStringSubmatch(stmt)
	if m == nil {
		return nil
	}
	var ids []int
	for _, f := range strings.Split(m[1], ",") {
		id, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// sysbench runs b's script from dir against srv and parses its report.
func sysbench(t *testing.T, srv *mariadbtest.Server, dir string, b Bench, args ...string) *workload.SysbenchReport {
	t.Helper()
	args = append(append(append([]string{}, b.Args...), args...), "run")
	argv := srv.Sysbench(t, b.TestArg(dir), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "LUA_PATH="+LuaPath(dir))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	rep, err := workload.ParseSysbench(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return rep
}

// executed returns the statements the general log holds as executed
// prepared statements (with their values), in order.
func executed(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.Query("SELECT argument FROM mysql.general_log WHERE command_type = 'Execute' ORDER BY event_time")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var arg []byte
		if err := rows.Scan(&arg); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(strings.Fields(string(arg)), " "))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// explain returns the row of table sbtest1 of EXPLAIN stmt by column
// name. (MariaDB turns an IN list of in_predicate_conversion_threshold,
// 1000, values or more into a join with a table value constructor, so
// sbtest1 need not be the first row.)
func explain(t *testing.T, db *sql.DB, stmt string) map[string]string {
	t.Helper()
	rows, err := db.Query("EXPLAIN " + stmt)
	if err != nil {
		t.Fatalf("EXPLAIN %s: %v", stmt, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var all []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		plan := map[string]string{}
		for i, c := range cols {
			plan[c] = vals[i].String
		}
		if plan["table"] == "sbtest1" {
			return plan
		}
		all = append(all, plan)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("EXPLAIN %s: no row of table sbtest1 in %v", stmt, all)
	return nil
}

func countRows(t *testing.T, db *sql.DB, stmt string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(fmt.Sprintf("SELECT COUNT(*) FROM (%s) AS q", stmt)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// sbtestDB opens a pool on srv's database sbtest.
func sbtestDB(t *testing.T, srv *mariadbtest.Server) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = "sbtest"
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func mustExec(t *testing.T, db *sql.DB, stmt string) {
	t.Helper()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
