package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// copyStacks copies a run directory's stacks.folded to a plain file named
// name in dir: the same stacks, no run.json, so no label.
func copyStacks(t *testing.T, run, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(run, "stacks.folded"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// csvShares runs diff --format csv with args and returns the inclusive
// share of each function and subsystem in the base and the target, keyed
// "function NAME" and "subsystem NAME", and the standard error.
func csvShares(t *testing.T, args ...string) (map[string][2]float64, string) {
	t.Helper()
	args = append([]string{"diff", "--format", "csv", "--top", "100000"}, args...)
	out, errOut, code := runCLI(t, args...)
	if code != exitOK {
		t.Fatalf("flamediff %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errOut)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("diff csv: %v (%d rows)", err, len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	var pct []int
	for i, h := range rows[0] {
		if strings.HasSuffix(h, "_inclusive_pct") {
			pct = append(pct, i)
		}
	}
	if len(pct) != 2 {
		t.Fatalf("diff csv header %v: want two *_inclusive_pct columns", rows[0])
	}
	shares := map[string][2]float64{}
	for _, r := range rows[1:] {
		var v [2]float64
		for j, c := range pct {
			v[j], _ = strconv.ParseFloat(r[c], 64)
		}
		shares[r[col["kind"]]+" "+r[col["name"]]] = v
	}
	return shares, errOut
}

// TestUnlabelledWarning checks the warning given once when profiles have
// no label and the map has rules limited by labels, and that --label
// silences it and makes the rules apply.
func TestUnlabelledWarning(t *testing.T) {
	needParse(t)
	dir := t.TempDir()
	m := filepath.Join("testdata", "label", "labelled.yaml")
	a := copyStacks(t, filepath.Join(runsDir, "mariadb-10.11-update-index"), dir, "before.folded")
	b := copyStacks(t, filepath.Join(runsDir, "mariadb-11.8-update-index"), dir, "after.folded")
	shares, errOut := csvShares(t, "--map", m, a, b)
	var warn []string
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, "no label") {
			warn = append(warn, strings.ReplaceAll(l, dir+string(filepath.Separator), ""))
		}
	}
	if len(warn) != 1 {
		t.Fatalf("want one warning about labels, got %d:\n%s", len(warn), errOut)
	}
	golden(t, filepath.Join("label", "warning.txt"), []byte(warn[0]+"\n"))
	if v := shares["function mysql_update"]; v[1] != 0 {
		t.Errorf("mysql_update holds %.2f%% of the unlabelled 11.8: the 11.* rule applied", v[1])
	}
	shares, errOut = csvShares(t, "--map", m, "--label", "10.11", "--label", "11.8", a, b)
	if strings.Contains(errOut, "no label") {
		t.Errorf("with --label, still warned:\n%s", errOut)
	}
	if v := shares["function mysql_update"]; v[1] < 15 {
		t.Errorf("with --label 11.8, mysql_update holds %.2f%% of 11.8, want the 11.* rule applied (>= 15%%)", v[1])
	}
	// One label given, the other kept empty: only the 10.11 file is unlabelled.
	_, errOut = csvShares(t, "--map", m, "--label", "", "--label", "11.8", a, b)
	if !strings.Contains(errOut, "before.folded has no label, so 3 rules") {
		t.Errorf("with --label '' --label 11.8: want the warning for before.folded alone, got:\n%s", errOut)
	}
}
