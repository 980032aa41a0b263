package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestShippedMapOnPlainFiles checks that the shipped MariaDB map lines up
// the UPDATE statement between 10.11 and 11.8 (10.11's mysql_update, 11.8's
// Sql_cmd_dml::execute -> Sql_cmd_update::*) on the run directories and on
// plain copies of their stacks.folded, which have no label, with the same
// shares, and that it says nothing about labels.
func TestShippedMapOnPlainFiles(t *testing.T) {
	needParse(t)
	dir := t.TempDir()
	for _, w := range []string{"update-index", "update-non-index"} {
		t.Run(w, func(t *testing.T) {
			base := filepath.Join(runsDir, "mariadb-10.11-"+w)
			target := filepath.Join(runsDir, "mariadb-11.8-"+w)
			runs, _ := csvShares(t, "--map", mapFile, base, target)
			plain, errOut := csvShares(t, "--map", mapFile,
				copyStacks(t, base, dir, w+"-before.folded"), copyStacks(t, target, dir, w+"-after.folded"))
			if strings.Contains(errOut, "no label") {
				t.Errorf("diff of plain files warned about labels:\n%s", errOut)
			}
			for _, k := range []string{"function mysql_update", "subsystem update", "subsystem commit", "function mysqld_stmt_execute"} {
				r, p := runs[k], plain[k]
				if r != p {
					t.Errorf("%s: run directories %.2f%% -> %.2f%%, plain files %.2f%% -> %.2f%%: want the same", k, r[0], r[1], p[0], p[1])
				}
			}
			upd := plain["function mysql_update"]
			if upd[0] < 15 || upd[1] < 15 || upd[0]-upd[1] > 5 || upd[1]-upd[0] > 5 {
				t.Errorf("mysql_update %.2f%% (10.11) vs %.2f%% (11.8): want both >= 15%% and within 5 points", upd[0], upd[1])
			}
			if s := plain["subsystem update"]; s != upd {
				t.Errorf("update subsystem %v differs from mysql_update %v", s, upd)
			}
			for _, gone := range []string{"function Sql_cmd_dml::execute", "function Sql_cmd_update::execute_inner", "function Sql_cmd_dml::prepare"} {
				if v, ok := plain[gone]; ok && v[1] != 0 {
					t.Errorf("%s still holds %.2f%% of 11.8 after mapping", gone, v[1])
				}
			}
		})
	}
}

// TestMapCheckApplied checks that map check --profile lists the rules that
// applied to each profile, with their share and their conditions, and that
// --label reaches the rules limited by labels.
func TestMapCheckApplied(t *testing.T) {
	needParse(t)
	dir := t.TempDir()
	b := copyStacks(t, filepath.Join(runsDir, "mariadb-11.8-update-index"), dir, "after.folded")
	out, errOut, code := runCLI(t, "map", "check", mapFile, "-p", b)
	if code != exitOK {
		t.Fatalf("map check: exit %d, stderr:\n%s", code, errOut)
	}
	for _, want := range []string{
		b + " (no label): 7 rules applied\n",
		`  17.63%  rename -> "mysql_update" (` + mapFile, `, callee glob "Sql_cmd_update::*" (depth 2)` + "\n",
		`   4.13%  rename -> "mysql_update" (`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("map check -p after.folded: stdout lacks %q:\n%s", want, out)
		}
	}
	m := filepath.Join("testdata", "label", "labelled.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, " (no label): 1 rule applied\n"},
		{[]string{"--label", "11.8"}, ` (label "11.8"): 4 rules applied` + "\n"},
	} {
		args := append([]string{"map", "check", m, "-p", b}, tc.args...)
		out, errOut, code := runCLI(t, args...)
		if code != exitOK || !strings.Contains(out, tc.want) {
			t.Errorf("flamediff %s: exit %d, stdout lacks %q:\n%s%s", strings.Join(args, " "), code, tc.want, out, errOut)
		}
	}
}
