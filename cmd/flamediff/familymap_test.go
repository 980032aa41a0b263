package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// familyMapFile is the shipped map of the MySQL family: MySQL and MariaDB
// on one set of names.
const familyMapFile = "../../examples/symbolmaps/mysql.yaml"

// updateShare is the share (%) of a run's samples that the UPDATE
// statement holds in its stacks as recorded, without any map: stacks
// through mysql_update (MariaDB 10.x), or through Sql_cmd_dml::execute
// with a Sql_cmd_update:: frame below it (MariaDB 11.x, MySQL 8.0+).
func updateShare(t *testing.T, run string) float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(run, "stacks.folded"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var in, total float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		i := strings.LastIndexByte(sc.Text(), ' ')
		if i < 0 {
			t.Fatalf("%s: bad line %q", run, sc.Text())
		}
		stack := sc.Text()[:i]
		n, err := strconv.ParseFloat(sc.Text()[i+1:], 64)
		if err != nil {
			t.Fatalf("%s: bad line %q", run, sc.Text())
		}
		total += n
		frames := strings.Split(stack, ";")
		dml := false
		for _, fr := range frames {
			if fr == "mysql_update" || (dml && strings.HasPrefix(fr, "Sql_cmd_update::")) {
				in += n
				break
			}
			dml = dml || fr == "Sql_cmd_dml::execute"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return 100 * in / total
}

// TestFamilyMapLinesUpUpdate: with the family map, diff lines up the UPDATE
// statement between MariaDB 10.11, 11.8 and MySQL 9.7, on run directories
// and on plain unlabelled copies of their stacks alike, each version's
// mysql_update holding what its own stacks give the statement (within
// 0.1 points: samples whose Sql_cmd_update:: frame is deeper than the
// rule's depth are left out); and it files none of MySQL's SELECT under
// UPDATE.
func TestFamilyMapLinesUpUpdate(t *testing.T) {
	needParse(t)
	dir := t.TempDir()
	runs := map[string]string{
		"10.11": filepath.Join(runsDir, "mariadb-10.11-update-non-index"),
		"11.8":  filepath.Join(runsDir, "mariadb-11.8-update-non-index"),
		"9.7":   filepath.Join(runsDir, "mysql-9.7-update-non-index"),
		// 10.5's only UPDATE run is update-index: the statement lines up
		// all the same.
		"10.5": filepath.Join(runsDir, "mariadb-10.5-update-index"),
	}
	for _, pair := range [][2]string{{"10.11", "9.7"}, {"11.8", "9.7"}, {"10.5", "9.7"}, {"10.11", "11.8"}, {"10.5", "11.8"}} {
		t.Run(pair[0]+"-vs-"+pair[1], func(t *testing.T) {
			base, target := runs[pair[0]], runs[pair[1]]
			onRuns, _ := csvShares(t, "--map", familyMapFile, base, target)
			plain, errOut := csvShares(t, "--map", familyMapFile,
				copyStacks(t, base, dir, pair[0]+"-before.folded"), copyStacks(t, target, dir, pair[1]+"-after.folded"))
			if strings.Contains(errOut, "no label") {
				t.Errorf("diff of plain files warned about labels:\n%s", errOut)
			}
			for _, k := range []string{"function mysql_update", "subsystem update", "subsystem commit", "function mysqld_stmt_execute", "function ha_commit_trans"} {
				if onRuns[k] != plain[k] {
					t.Errorf("%s: run directories %v, plain files %v: want the same", k, onRuns[k], plain[k])
				}
			}
			upd := plain["function mysql_update"]
			for i, v := range pair {
				want := updateShare(t, runs[v])
				t.Logf("%s: mysql_update %.2f%% mapped, UPDATE %.2f%% in its own stacks; subsystem update %.2f%%, commit %.2f%%", v, upd[i], want, plain["subsystem update"][i], plain["subsystem commit"][i])
				if d := upd[i] - want; d > 0.1 || d < -0.1 || want < 10 {
					t.Errorf("%s: mysql_update %.2f%% after mapping, its stacks give UPDATE %.2f%%: want within 0.1 points (and at least 10%%)", v, upd[i], want)
				}
			}
			if s := plain["subsystem update"]; s != upd {
				t.Errorf("update subsystem %v differs from mysql_update %v", s, upd)
			}
			for _, gone := range []string{"function Sql_cmd_update::update_single_table", "function Sql_cmd_update::execute_inner", "function TC_LOG_DUMMY::commit", "function do_handle_one_connection", "function clone3"} {
				if v := plain[gone]; v[0] != 0 || v[1] != 0 {
					t.Errorf("%s holds %v after mapping: want it gone", gone, v)
				}
			}
		})
	}
	t.Run("point-select", func(t *testing.T) {
		got, _ := csvShares(t, "--map", familyMapFile,
			filepath.Join(runsDir, "mariadb-10.11-point-select"), filepath.Join(runsDir, "mysql-9.7-point-select"))
		if v := got["function mysql_update"]; v[0] != 0 || v[1] != 0 {
			t.Errorf("mysql_update %v in point-select runs: want 0 (MySQL's SELECT runs through Sql_cmd_dml::execute too)", v)
		}
		t.Logf("point-select 10.11 vs 9.7: handle_select %v, mysql_select %v, subsystem select %v", got["function handle_select"], got["function mysql_select"], got["subsystem select"])
		for _, k := range []string{"function handle_select", "function mysql_select", "subsystem select"} {
			if v := got[k]; v[0] < 10 || v[1] < 10 {
				t.Errorf("%s %v: want both at least 10%% (SELECT lined up)", k, v)
			}
		}
	})
}

// TestSuggestProposesMySQLUpdate: map suggest, with no map, on MariaDB
// 10.11 and MySQL 9.7 proposes the UPDATE rename (Sql_cmd_dml::execute ->
// mysql_update) among its first proposals by score.
func TestSuggestProposesMySQLUpdate(t *testing.T) {
	needParse(t)
	out, errOut, code := runCLI(t, "map", "suggest",
		filepath.Join(runsDir, "mariadb-10.11-update-non-index"), filepath.Join(runsDir, "mysql-9.7-update-non-index"))
	if code != exitOK {
		t.Fatalf("map suggest: exit %d, stderr:\n%s", code, errOut)
	}
	head := regexp.MustCompile(`(?m)^  # #(\d+) (\w+), score ([0-9.]+): (.*)$`)
	var scores []float64
	update := -1.0
	for _, m := range head.FindAllStringSubmatch(out, -1) {
		s, _ := strconv.ParseFloat(m[3], 64)
		scores = append(scores, s)
		if m[2] == "rename" && strings.HasPrefix(m[4], "9.7 Sql_cmd_dml::execute ") && strings.Contains(m[4], " is 10.11 mysql_update ") {
			update = s
		}
	}
	if update < 0 {
		t.Fatalf("map suggest proposed no rename of Sql_cmd_dml::execute to mysql_update:\n%s", out)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(scores)))
	rank := sort.Search(len(scores), func(i int) bool { return scores[i] <= update }) + 1
	t.Logf("UPDATE rename: score %.2f, rank %d of %d proposals", update, rank, len(scores))
	if rank > 8 {
		t.Errorf("UPDATE rename ranks %d of %d by score (%.2f): want among the first 8", rank, len(scores), update)
	}
}
