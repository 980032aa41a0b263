package lab

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flamediff/flamediff/benchreport"
)

// The report is laid out as the config says: its base (not the first
// server), its order of servers and workloads, its roots; a missing
// measurement is a missing cell; the files and graphs are written.
func TestWriteReport(t *testing.T) {
	cfg := parseTestConfig(t, `servers:
  - label: "11.8"
    path: /usr/sbin/mariadbd
  - label: "10.11"
    path: /usr/sbin/mariadbd
    base: true
workloads:
  - name: update-index
    test: oltp_update_index
  - name: point-select
    test: oltp_point_select
roots: [do_command]
`)
	runs := filepath.Join("..", "testdata", "runs")
	measured := []Measurement{
		{Server: "10.11", Workload: "point-select", Repeat: 1, Dir: filepath.Join(runs, "mariadb-10.11-point-select")},
		{Server: "11.8", Workload: "point-select", Repeat: 1, Dir: filepath.Join(runs, "mariadb-11.8-point-select")},
		{Server: "10.11", Workload: "update-index", Repeat: 1, Dir: filepath.Join(runs, "mariadb-10.11-update-index")},
		{Server: "11.8", Workload: "update-index", Repeat: 1, Missing: "server died"},
	}
	dir := filepath.Join(t.TempDir(), "report")
	rep, err := WriteReport(dir, cfg, nil, measured)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Base != "10.11" || !slices.Equal(rep.Servers, []string{"11.8", "10.11"}) || !slices.Equal(rep.Roots, []string{"do_command"}) {
		t.Errorf("report base %q, servers %q, roots %q; want 10.11, [11.8 10.11], [do_command]", rep.Base, rep.Servers, rep.Roots)
	}
	var workloads []string
	for _, w := range rep.Workloads {
		workloads = append(workloads, w.Name)
	}
	if !slices.Equal(workloads, []string{"update-index", "point-select"}) {
		t.Errorf("workloads %q, want the config's order", workloads)
	}
	if len(rep.Missing) != 1 || rep.Missing[0].Server != "11.8" || rep.Missing[0].Reason != "server died" {
		t.Errorf("missing %+v, want 11.8's update-index with its reason", rep.Missing)
	}
	for _, f := range []string{benchreport.HTMLFile, benchreport.PlainGraphPath("point-select", "11.8")} {
		if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", f, err)
		}
	}
}

func TestWriteReportError(t *testing.T) {
	cfg := parseTestConfig(t, `servers:
  - label: a
    path: /usr/sbin/mariadbd
workloads:
  - name: w
    test: oltp_point_select
`)
	_, err := WriteReport(t.TempDir(), cfg, nil, []Measurement{{Server: "b", Workload: "w", Repeat: 1, Missing: "x"}})
	if err == nil {
		t.Errorf("WriteReport(a run of a server not in the config) = nil error, want one")
	}
}

// A scan workload's report gives its throughput in rows/s: its table
// size times the cell's o/s; the other workload has none.
func TestWriteReportScanRows(t *testing.T) {
	cfg := parseTestConfig(t, `servers:
  - label: "10.11"
    path: /usr/sbin/mariadbd
workloads:
  - {test: scan, table_size: 2000}
  - {test: point-query}
`)
	runs := filepath.Join("..", "testdata", "runs")
	measured := []Measurement{
		{Server: "10.11", Workload: "scan", Repeat: 1, Dir: filepath.Join(runs, "mariadb-10.11-point-select")},
		{Server: "10.11", Workload: "point-query", Repeat: 1, Dir: filepath.Join(runs, "mariadb-10.11-point-select")},
	}
	rep, err := WriteReport(filepath.Join(t.TempDir(), "report"), cfg, nil, measured)
	if err != nil {
		t.Fatal(err)
	}
	scan, pq := rep.Workloads[0].Versions[0], rep.Workloads[1].Versions[0]
	if rep.Workloads[0].ThroughputUnit != benchreport.RowsUnit || scan.QPS == nil || scan.Throughput == nil ||
		scan.Throughput.Median != 2000*scan.QPS.Median {
		t.Errorf("scan: unit %q, qps %+v, throughput %+v; want rows/s = 2000 x qps", rep.Workloads[0].ThroughputUnit, scan.QPS, scan.Throughput)
	}
	if rep.Workloads[1].ThroughputUnit != "" || pq.Throughput != nil {
		t.Errorf("point-query: unit %q, throughput %+v; want o/s only", rep.Workloads[1].ThroughputUnit, pq.Throughput)
	}
}
