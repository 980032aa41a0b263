package benchreport

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// hostRuns copies the point-select fixtures of 10.11 and 11.8 three times
// each, adding to run.json a host block whose figures the test knows and
// the placement given for each (server, repeat).
func hostRuns(t *testing.T, placement func(server string, repeat int) map[string]any) []Run {
	t.Helper()
	dir := t.TempDir()
	var runs []Run
	for _, srv := range []string{"10.11", "11.8"} {
		for k := 1; k <= 3; k++ {
			dst := filepath.Join(dir, srv, fmt.Sprint(k))
			// 10.11 spends 0.8 times 11.8's host CPU per op and makes twice
			// its switches.
			cpu, cs := 10.0*float64(k), float64(k)
			if srv == "10.11" {
				cpu, cs = 8*float64(k), 2*float64(k)
			}
			copyRun(t, fixtureDir(srv, "point-select"), dst, func(m map[string]any) {
				m["host"] = map[string]any{"cpus": 2, "seconds": 10, "cpu_seconds": 15, "user_seconds": 9, "system_seconds": 6,
					"idle_seconds": 5, "steal_seconds": 0, "steal_share": 0.001 * float64(k), "ctxt": 100000,
					"cpu_us_per_op": cpu, "ctxt_per_op": cs,
					"cpu_freq": map[string]any{"exposed": false, "note": "not exposed"}}
				if p := placement(srv, k); p != nil {
					m["placement"] = p
				}
			}, nil)
			runs = append(runs, Run{Server: srv, Workload: "point-select", Repeat: k, Dir: dst})
		}
	}
	return runs
}

func TestHostAndPlacement(t *testing.T) {
	same := func(string, int) map[string]any {
		return map[string]any{"asked": "same", "server_cpus": "1", "client_cpus": "1"}
	}
	r := mustBuild(t, hostRuns(t, same), Options{Base: "10.11", Servers: []string{"10.11", "11.8"}, Map: loadMariaDBMap(t)})
	want := "Placement: same (server threads and client on CPU 1), in every run that recorded it (6 of 6)."
	if r.Placement != want {
		t.Errorf("Placement = %q, want %q", r.Placement, want)
	}
	h := r.Workloads[0].Host
	if len(h) != 2 || h[1].Server != "11.8" || h[1].Repeats != 3 {
		t.Fatalf("Host = %+v, want 10.11 and 11.8 with 3 repeats each", h)
	}
	// The three repeats' host figures, from run.json as written above.
	if f := h[1].CPUPerOp; f == nil || f.Median != 20 || f.Min != 10 || f.Max != 30 {
		t.Errorf("11.8 host cpu/o = %+v, want median 20 (10–30)", f)
	}
	if f := h[1].CSPerOp; f == nil || f.Median != 2 {
		t.Errorf("11.8 host cs/o = %+v, want median 2", f)
	}
	if f := h[0].StealPct; f == nil || math.Abs(f.Median-0.2) > 1e-12 || h[0].CPUFreq != "not exposed" {
		t.Errorf("10.11 steal %% = %+v, CPU frequency %q; want median 0.2, not exposed", f, h[0].CPUFreq)
	}
	if x := h[1].Relative; x == nil || x.CPUPerOp == nil || x.CSPerOp == nil || *x.CPUPerOp != 20.0/16 || *x.CSPerOp != 2.0/4 {
		t.Errorf("11.8 host relative %+v, want cpu/o 20/16, cs/o 2/4", x)
	}
	if x := h[0].Relative; x == nil || *x.CPUPerOp != 1 || *x.CSPerOp != 1 {
		t.Errorf("10.11 (the base) host relative %+v, want 1 and 1", x)
	}
	md := markdown(t, r)
	rel := "| 11.8 | 1.25 | 0.50 |"
	for _, s := range []string{want, "Host: the whole machine, client included", "| 11.8 | 3 | 20.00 (10.00–30.00) | 2.00 (1.00–3.00) | 0.20 (0.10–0.30) | not exposed |",
		"Host relative to 10.11", rel} {
		if !strings.Contains(md, s) {
			t.Errorf("report.md has no %q:\n%s", s, md)
		}
	}
	var sum bytes.Buffer
	if err := r.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), want) {
		t.Errorf("summary has no placement line:\n%s", sum.String())
	}

	// Placements that differ between runs, and one that did not hold.
	mixed := func(srv string, k int) map[string]any {
		if srv == "11.8" && k == 2 {
			return map[string]any{"asked": "separate", "server_cpus": "1", "client_cpus": "0", "mismatched": []string{"server 7 mariadbd: 0-1"}}
		}
		return same(srv, k)
	}
	r = mustBuild(t, hostRuns(t, mixed), Options{Base: "10.11", Servers: []string{"10.11", "11.8"}, Map: loadMariaDBMap(t)})
	for _, s := range []string{"Placement DIFFERS between runs: same (server threads and client on CPU 1) in 5 runs; separate (server threads on CPU 1, client on CPU 0) in 1 runs",
		"It did not hold (threads elsewhere at the window's end, run.json placement.mismatched) in: point-select on 11.8 repeat 2."} {
		if !strings.Contains(r.Placement, s) {
			t.Errorf("Placement = %q, want %q", r.Placement, s)
		}
	}
}

// Runs without host or placement (recorded before they existed, as the
// fixtures) give neither the table nor the line.
func TestHostAbsent(t *testing.T) {
	r := mustBuild(t, fixtureRuns(), fixtureOptions(t))
	if r.Placement != "" || r.Workloads[0].Host != nil {
		t.Errorf("fixtures without host figures: Placement %q, Host %+v", r.Placement, r.Workloads[0].Host)
	}
	if md := markdown(t, r); strings.Contains(md, "Host:") || strings.Contains(md, "Placement") {
		t.Errorf("report.md of runs without host figures mentions them")
	}
}
