package benchreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A workload with Options.RowsPerOp reports its throughput in rows/s:
// every cell's o/s times the rows, in report.json, the cost table, the
// rQPS notes and the summary; the other workload stays in o/s.
func TestRowsPerOp(t *testing.T) {
	opts := fixtureOptions(t)
	opts.RowsPerOp = map[string]int{"point-select": 2000}
	rep, err := Build(fixtureRuns(), opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Workloads {
		for _, v := range w.Versions {
			if v.QPS == nil {
				t.Fatalf("%s on %s has no QPS", w.Name, v.Server)
			}
			if w.Name != "point-select" {
				if v.Throughput != nil || w.ThroughputUnit != "" || w.RowsPerOp != 0 {
					t.Errorf("%s on %s: throughput %+v %q, want none (o/s only)", w.Name, v.Server, v.Throughput, w.ThroughputUnit)
				}
				continue
			}
			if w.ThroughputUnit != "rows/s" || w.RowsPerOp != 2000 {
				t.Errorf("%s: unit %q, rows %d; want rows/s, 2000", w.Name, w.ThroughputUnit, w.RowsPerOp)
			}
			if v.Throughput == nil || len(v.Throughput.Values) != len(v.QPS.Values) {
				t.Fatalf("%s on %s: throughput %+v, want one value per repeat", w.Name, v.Server, v.Throughput)
			}
			for i, q := range v.QPS.Values {
				if got, want := v.Throughput.Values[i], q*2000; got != want {
					t.Errorf("%s on %s repeat %d: throughput %v, want qps %v x 2000 = %v", w.Name, v.Server, i+1, got, q, want)
				}
			}
		}
	}
	var md, sum, js bytes.Buffer
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	note := "point-select: throughput in rows/s, rows read per second: 2000 rows per operation (its table) × o/s"
	if !strings.Contains(md.String(), "| rows/s |") || !strings.Contains(md.String(), note) {
		t.Errorf("markdown lacks a rows/s column or the note %q:\n%s", note, md.String())
	}
	if !strings.Contains(sum.String(), note) || !strings.Contains(sum.String(), "(rows/s ") {
		t.Errorf("summary lacks the rows/s note or figures:\n%s", sum.String())
	}
	var back struct {
		Workloads []struct {
			Name           string `json:"name"`
			ThroughputUnit string `json:"throughput_unit"`
			RowsPerOp      int    `json:"rows_per_op"`
		} `json:"workloads"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Workloads[0].ThroughputUnit != "rows/s" || back.Workloads[0].RowsPerOp != 2000 || back.Workloads[1].ThroughputUnit != "" {
		t.Errorf("report.json workloads %+v, want rows/s and 2000 on point-select only", back.Workloads)
	}
}
