package benchreport

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

// The off-CPU fixture: workload "w" on A (the base) and B, two repeats
// each, 10,000 operations per window. The profiled windows are the
// 10.11 point-select fixture's run.json and stacks with hand-made
// off-CPU profiles beside them; the unprofiled windows have /proc's
// switches alone. Planted (per operation, every repeat alike):
//
//	A: network 2.00 cs vol, commit 1.00 vol, update 0.50 invol: 3.50 cs/op
//	   (3.00 vol, 0.50 invol); time 20 + 10 + 0.5 = 30.50 µs/op
//	B: network 3.00 vol, commit 8.00 vol + 1.00 invol, update 0.50 invol:
//	   12.50 cs/op (11.00 vol, 1.50 invol); time 30 + 80 + 10 + 0.5 = 120.50
//	   µs/op (110.00 vol, 10.50 invol)
//
// so B − A is +9.00 cs/op, commit +8.00 (vol +7.00, invol +1.00) and
// network +1.00 (vol +1.00), and +90.00 µs/op, commit +80.00 and network
// +10.00. /proc's switches over the profiled windows match the counted
// ones; over the unprofiled windows they are 7.00 cs/o on A and 20.00 on
// B (profiling halved A's switching, as on 10.5 once).
const offOps = 10000

var offProfiles = map[string]struct {
	switches, time []string
	vol, invol     int64 // switches counted, = /proc's unless edited
	unprofiledCS   [2]int64
}{
	"A": {
		switches: []string{
			"mariadbd;do_command;my_net_read_packet;[voluntary] 20000",
			"mariadbd;do_command;dispatch_command;trans_commit_stmt;[voluntary] 10000",
			"mariadbd;do_command;dispatch_command;mysql_update;[involuntary] 5000",
		},
		time: []string{
			"mariadbd;do_command;my_net_read_packet;[voluntary] 200000",
			"mariadbd;do_command;dispatch_command;trans_commit_stmt;[voluntary] 100000",
			"mariadbd;do_command;dispatch_command;mysql_update;[involuntary] 5000",
		},
		vol: 30000, invol: 5000, unprofiledCS: [2]int64{60000, 10000},
	},
	"B": {
		switches: []string{
			"mariadbd;do_command;my_net_read_packet;[voluntary] 30000",
			"mariadbd;do_command;dispatch_command;trans_commit_stmt;[voluntary] 80000",
			"mariadbd;do_command;dispatch_command;trans_commit_stmt;[involuntary] 10000",
			"mariadbd;do_command;dispatch_command;mysql_update;[involuntary] 5000",
		},
		time: []string{
			"mariadbd;do_command;my_net_read_packet;[voluntary] 300000",
			"mariadbd;do_command;dispatch_command;trans_commit_stmt;[voluntary] 800000",
			"mariadbd;do_command;dispatch_command;trans_commit_stmt;[involuntary] 100000",
			"mariadbd;do_command;dispatch_command;mysql_update;[involuntary] 5000",
		},
		vol: 110000, invol: 15000, unprofiledCS: [2]int64{180000, 20000},
	},
}

// offCPURuns writes the fixture into a temporary directory. edit, when
// not nil, may change a profiled window's run.json (server, repeat) and
// return false to leave its off-CPU files out.
func offCPURuns(t *testing.T, edit func(server string, repeat int, meta map[string]any) bool) []Run {
	t.Helper()
	return offCPURunsOf(t, []string{"A", "B"}, map[string]string{"A": "A", "B": "B"}, edit)
}

// offCPURunsOf writes the fixture for the servers given, each with the
// off-CPU profiles of offProfiles[spec[server]].
func offCPURunsOf(t *testing.T, servers []string, spec map[string]string, edit func(server string, repeat int, meta map[string]any) bool) []Run {
	t.Helper()
	dir := t.TempDir()
	var runs []Run
	for _, s := range servers {
		spec := offProfiles[spec[s]]
		for k := 1; k <= 2; k++ {
			prof := filepath.Join(dir, fmt.Sprintf("%s-%d", s, k))
			meas := filepath.Join(dir, fmt.Sprintf("%s-%d-unprofiled", s, k))
			withOff := true
			copyRun(t, fixtureDir("10.11", "point-select"), prof, func(m map[string]any) {
				m["label"], m["operations"], m["qps"] = s, offOps, offOps/6.0
				m["voluntary_ctxt_switches"], m["involuntary_ctxt_switches"] = spec.vol, spec.invol
				m["off_cpu"] = map[string]any{"voluntary": spec.vol, "involuntary": spec.invol, "proc_voluntary": spec.vol, "proc_involuntary": spec.invol}
				if edit != nil {
					withOff = edit(s, k, m)
				}
			}, nil)
			if withOff {
				for name, lines := range map[string][]string{fold.OffCPUSwitchesFile: spec.switches, fold.OffCPUFile: spec.time} {
					if err := os.WriteFile(filepath.Join(prof, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			copyRun(t, fixtureDir("10.11", "point-select"), meas, func(m map[string]any) {
				for _, k := range []string{"samples", "frequency_hz", "event", "unit"} {
					delete(m, k)
				}
				m["label"], m["sampler"], m["window"] = s, "none", "unprofiled"
				m["operations"], m["qps"] = offOps, offOps/6.0
				m["voluntary_ctxt_switches"], m["involuntary_ctxt_switches"] = spec.unprofiledCS[0], spec.unprofiledCS[1]
			}, nil)
			if err := os.Remove(filepath.Join(meas, fold.StacksFile)); err != nil {
				t.Fatal(err)
			}
			runs = append(runs, Run{Server: s, Workload: "w", Repeat: k, Dir: prof, MeasureDir: meas})
		}
	}
	return runs
}

func offOptions(t *testing.T) Options {
	return Options{Base: "A", Servers: []string{"A", "B"}, Workloads: []string{"w"}, Map: loadMariaDBMap(t)}
}

// near says a and b agree to the hundredth the tables print.
func near(a, b float64) bool { return math.Abs(a-b) < 0.005 }

// The planted figures come back: per version, the medians per operation
// and /proc's over both windows; the changes and their split among
// subsystems, voluntary and involuntary apart.
func TestOffCPUPlanted(t *testing.T) {
	r := mustBuild(t, offCPURuns(t, nil), offOptions(t))
	if r.OffCPU != OffCPUAll || len(r.OffCPUMissing) != 0 {
		t.Errorf("OffCPU = %q, OffCPUMissing = %v; want %q and none", r.OffCPU, r.OffCPUMissing, OffCPUAll)
	}
	w := r.Workloads[0]
	for _, tt := range []struct {
		server                                    string
		cs, vcs, ics, us, vus, ius, proc, unprofd float64
	}{
		{"A", 3.50, 3.00, 0.50, 30.50, 30.00, 0.50, 3.50, 7.00},
		{"B", 12.50, 11.00, 1.50, 120.50, 110.00, 10.50, 12.50, 20.00},
	} {
		v := w.version(tt.server)
		o := v.OffCPU
		if o == nil {
			t.Fatalf("%s: no off-CPU figures", tt.server)
		}
		for _, c := range []struct {
			name string
			f    *Figure
			want float64
		}{
			{"cs/op", o.CSPerOp, tt.cs}, {"vol cs/op", o.VoluntaryCSPerOp, tt.vcs}, {"invol cs/op", o.InvoluntaryCSPerOp, tt.ics},
			{"µs/op", o.MicrosPerOp, tt.us}, {"vol µs/op", o.VoluntaryMicrosPerOp, tt.vus}, {"invol µs/op", o.InvoluntaryMicrosPerOp, tt.ius},
			{"/proc cs/o profiled", o.ProcCSPerOp, tt.proc}, {"cs/o unprofiled", v.CSPerOp, tt.unprofd},
		} {
			if c.f == nil || !near(c.f.Median, c.want) || len(c.f.Values) != 2 {
				t.Errorf("%s %s = %+v, want median %.2f over 2 repeats", tt.server, c.name, c.f, c.want)
			}
		}
		if o.Window != fold.WindowProfiled || o.Repeats != 2 || o.Untrusted != "" || len(o.Warnings) != 0 {
			t.Errorf("%s: window %q, repeats %d, untrusted %q, warnings %q; want profiled, 2, none", tt.server, o.Window, o.Repeats, o.Untrusted, o.Warnings)
		}
	}
	if rc := w.version("B").OffCPU.Relative.CSPerOp; rc == nil || !near(*rc, 12.5/3.5) {
		t.Errorf("B relative cs/op = %v, want %.4f", rc, 12.5/3.5)
	}
	if len(w.OffCPUComparisons) != 1 {
		t.Fatalf("OffCPUComparisons = %d, want 1", len(w.OffCPUComparisons))
	}
	c := w.OffCPUComparisons[0]
	for _, tt := range []struct {
		name                string
		a                   *OffCPUAttribution
		unit                string
		base, target        float64
		delta, dvol, dinvol float64
		parts               map[string][3]float64
	}{
		{"switches", c.Switches, "cs/op", 3.50, 12.50, 9.00, 8.00, 1.00,
			map[string][3]float64{"commit": {8.00, 7.00, 1.00}, "network": {1.00, 1.00, 0}, "update": {0, 0, 0}}},
		{"time", c.Time, "µs/op", 30.50, 120.50, 90.00, 80.00, 10.00,
			map[string][3]float64{"commit": {80.00, 70.00, 10.00}, "network": {10.00, 10.00, 0}, "update": {0, 0, 0}}},
	} {
		a := tt.a
		if a.Unit != tt.unit || !near(a.BasePerOp, tt.base) || !near(a.TargetPerOp, tt.target) || !near(a.Delta, tt.delta) || !near(a.DeltaVoluntary, tt.dvol) || !near(a.DeltaInvoluntary, tt.dinvol) {
			t.Errorf("%s: %s %.2f → %.2f, Δ %.2f (vol %.2f, invol %.2f); want %s %.2f → %.2f, Δ %.2f (vol %.2f, invol %.2f)",
				tt.name, a.Unit, a.BasePerOp, a.TargetPerOp, a.Delta, a.DeltaVoluntary, a.DeltaInvoluntary, tt.unit, tt.base, tt.target, tt.delta, tt.dvol, tt.dinvol)
		}
		got := map[string][3]float64{}
		for _, p := range a.Parts {
			got[p.Subsystem] = [3]float64{p.Delta, p.DeltaVoluntary, p.DeltaInvoluntary}
		}
		for sub, want := range tt.parts {
			g := got[sub]
			if !near(g[0], want[0]) || !near(g[1], want[1]) || !near(g[2], want[2]) {
				t.Errorf("%s: %s Δ = %.2f (vol %.2f, invol %.2f), want %.2f (vol %.2f, invol %.2f)", tt.name, sub, g[0], g[1], g[2], want[0], want[1], want[2])
			}
		}
	}
	if want := "A → B: of +9.00 cs/op, commit +8.00, network +1.00"; c.Switches.Sentence != want {
		t.Errorf("switches sentence = %q, want %q", c.Switches.Sentence, want)
	}
	md := markdown(t, r)
	golden(t, "offcpu.md", []byte(md))
	var sum bytes.Buffer
	if err := r.WriteSummary(&sum); err != nil {
		t.Fatal(err)
	}
	golden(t, "offcpu-summary.txt", sum.Bytes())
	if want := "    by subsystem (cs/op): commit +8.00, network +1.00\n"; !strings.Contains(sum.String(), want) {
		t.Errorf("summary lacks %q", want)
	}
	for _, want := range []string{"Off-CPU profiles: in every profiled window", "| A (base) | 3.50 (3.50–3.50, n=2) |", "| commit | +8.00 (+8.00 to +8.00) | +7.00 | +1.00 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// A repeat whose counted switches differ from /proc's by 5% gets the
// switch check's warning, and its cell is marked.
func TestOffCPUSwitchGap(t *testing.T) {
	runs := offCPURuns(t, func(s string, k int, m map[string]any) bool {
		if s == "B" && k == 2 {
			// /proc saw 5% fewer voluntary switches than were counted.
			m["voluntary_ctxt_switches"] = math.Round(110000 / 1.05)
			m["off_cpu"].(map[string]any)["proc_voluntary"] = math.Round(110000 / 1.05)
		}
		return true
	})
	r := mustBuild(t, runs, offOptions(t))
	o := r.Workloads[0].version("B").OffCPU
	if o.Untrusted == "" || len(o.Warnings) != 1 || !strings.Contains(o.Warnings[0], "repeat 2: OFF-CPU SWITCHES DIFFER") || !strings.Contains(o.Warnings[0], "voluntary 110000 against /proc's 104762") {
		t.Errorf("B: untrusted %q, warnings %q; want repeat 2's switch warning (110000 against 104762)", o.Untrusted, o.Warnings)
	}
	if a := r.Workloads[0].version("A").OffCPU; a.Untrusted != "" || len(a.Warnings) != 0 {
		t.Errorf("A: untrusted %q, warnings %q; want none", a.Untrusted, a.Warnings)
	}
	md := markdown(t, r)
	for _, want := range []string{"| B ! |", "Δcs/op B !", "B !: the off-CPU switches of repeat 2 differ from /proc's by more than 3%"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// A repeat where /proc saw 5,238 fewer voluntary switches because a thread
// that switched 5,238 times exited in the window (run.json off_cpu's
// exited_*, which /proc cannot count) gets no warning: the check leaves
// those switches out, as record's does.
func TestOffCPUSwitchGapExitedThread(t *testing.T) {
	runs := offCPURuns(t, func(s string, k int, m map[string]any) bool {
		if s == "B" && k == 2 {
			m["voluntary_ctxt_switches"] = math.Round(110000 / 1.05)
			oc := m["off_cpu"].(map[string]any)
			oc["proc_voluntary"] = math.Round(110000 / 1.05)
			oc["exited_threads"], oc["exited_voluntary"] = 1, 110000-math.Round(110000/1.05)
		}
		return true
	})
	r := mustBuild(t, runs, offOptions(t))
	if o := r.Workloads[0].version("B").OffCPU; o.Untrusted != "" || len(o.Warnings) != 0 {
		t.Errorf("B: untrusted %q, warnings %q; want none: the gap is the exited thread's switches", o.Untrusted, o.Warnings)
	}
}

// A run without off-CPU files beside runs with them is listed, with its
// reason, and the version's figures are over the repeat that has one.
func TestOffCPUPartial(t *testing.T) {
	runs := offCPURuns(t, func(s string, k int, m map[string]any) bool {
		if s == "B" && k == 2 {
			delete(m, "off_cpu")
			return false
		}
		return true
	})
	r := mustBuild(t, runs, offOptions(t))
	if r.OffCPU != OffCPUSome || len(r.OffCPUMissing) != 1 {
		t.Fatalf("OffCPU = %q, OffCPUMissing = %+v; want %q and B's repeat 2", r.OffCPU, r.OffCPUMissing, OffCPUSome)
	}
	m := r.OffCPUMissing[0]
	if m.Server != "B" || m.Repeat != 2 || m.Workload != "w" || m.Reason != errNoOffCPU.Error() {
		t.Errorf("OffCPUMissing[0] = %+v, want w, B, repeat 2: %q", m, errNoOffCPU)
	}
	o := r.Workloads[0].version("B").OffCPU
	if o.Repeats != 1 || len(o.Missing) != 1 || !near(o.CSPerOp.Median, 12.50) || len(o.CSPerOp.Values) != 1 {
		t.Errorf("B: %d repeat(s), missing %q, cs/op %+v; want 1, repeat 2, 12.50", o.Repeats, o.Missing, o.CSPerOp)
	}
	if c := r.Workloads[0].OffCPUComparisons[0]; !near(c.Switches.Delta, 9) {
		t.Errorf("Δcs/op = %.2f over the repeats with off-CPU profiles, want +9.00", c.Switches.Delta)
	}
	md := markdown(t, r)
	for _, want := range []string{"## Runs without off-CPU profiles", "| w | B | 2 | recorded without off-CPU profiles |", "B: repeat 2: recorded without off-CPU profiles (its off-CPU figures are over the 1 repeat(s) with one)."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	var js map[string]any
	var b strings.Builder
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b.String()), &js); err != nil {
		t.Fatal(err)
	}
	if js["off_cpu"] != OffCPUSome || len(js["off_cpu_missing"].([]any)) != 1 {
		t.Errorf("report.json off_cpu = %v, off_cpu_missing = %v", js["off_cpu"], js["off_cpu_missing"])
	}
}

// A report without off-CPU profiles says so in its intro, and nothing
// else of them.
func TestOffCPUNone(t *testing.T) {
	r := mustBuild(t, offCPURuns(t, func(string, int, map[string]any) bool { return false }), offOptions(t))
	if r.OffCPU != OffCPUNone || r.Workloads[0].version("A").OffCPU != nil || r.Workloads[0].OffCPUComparisons != nil {
		t.Errorf("OffCPU = %q, A's %+v, comparisons %v; want none", r.OffCPU, r.Workloads[0].version("A").OffCPU, r.Workloads[0].OffCPUComparisons)
	}
	md := markdown(t, r)
	if n := strings.Count(md, "ff-CPU"); n != 1 || !strings.Contains(md, "Off-CPU profiles: none") {
		t.Errorf("markdown mentions off-CPU %d times, want once, in the intro: none", n)
	}
}

// WriteFiles draws each version's off-CPU graphs and the differential
// ones from the base, and index.html and report.md link them.
func TestOffCPUGraphs(t *testing.T) {
	o := offOptions(t)
	o.SVG = true
	r := mustBuild(t, offCPURuns(t, nil), o)
	dir := t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct{ path, want string }{
		{OffCPUGraphPath("w", "A", "cs"), "context switches"},
		{OffCPUGraphPath("w", "A", "us"), "off-CPU time"},
		{OffCPUGraphPath("w", "B", "cs"), "context switches"},
		{OffCPUGraphPath("w", "B", "us"), "off-CPU time"},
		{OffCPUDiffGraphPath("w", "A", "B", "cs"), "context switches"},
		{OffCPUDiffGraphPath("w", "A", "B", "us"), "off-CPU time"},
	} {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(g.path)))
		if err != nil {
			t.Errorf("%s: %v", g.path, err)
			continue
		}
		if !strings.Contains(string(data), g.want) || !strings.Contains(string(data), "trans_commit_stmt") {
			t.Errorf("%s: no %q or trans_commit_stmt in it", g.path, g.want)
		}
		d := xml.NewDecoder(strings.NewReader(string(data)))
		for {
			if _, err := d.Token(); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Errorf("%s: not well-formed: %v", g.path, err)
				break
			}
		}
		if !strings.Contains(string(html), `href="`+g.path+`"`) || !strings.Contains(string(md), g.path) {
			t.Errorf("%s: not linked from index.html or report.md", g.path)
		}
	}
	if n := strings.Count(string(html), ">Off-CPU flame graphs<"); n != 1 {
		t.Errorf("index.html has %d headings Off-CPU flame graphs, want 1", n)
	}
}

// A profiled window with one off-CPU file of the two is listed with the
// reason, not taken for a run without off-CPU profiles.
func TestOffCPUOneFile(t *testing.T) {
	runs := offCPURuns(t, nil)
	for _, r := range runs {
		if r.Server == "A" && r.Repeat == 2 {
			if err := os.Remove(filepath.Join(r.Dir, fold.OffCPUFile)); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := mustBuild(t, runs, offOptions(t))
	if r.OffCPU != OffCPUSome || len(r.OffCPUMissing) != 1 || !strings.Contains(r.OffCPUMissing[0].Reason, "no offcpu.folded") {
		t.Fatalf("OffCPU %q, missing %+v; want A's repeat 2 for its missing offcpu.folded", r.OffCPU, r.OffCPUMissing)
	}
	if a := r.Workloads[0].version("A").OffCPU; a.Repeats != 1 || !near(a.CSPerOp.Median, 3.50) {
		t.Errorf("A: %d repeat(s), cs/op %+v; want 1 and 3.50", a.Repeats, a.CSPerOp)
	}
}

// Every report.json field of the off-CPU figures is in the schema of the
// package documentation and of docs/json.md.
func TestOffCPUSchemaDocumented(t *testing.T) {
	var fields []string
	for _, v := range []any{OffCPUFigures{}, OffCPURelative{}, OffCPUComparison{}, OffCPUAttribution{}, OffCPUPart{}} {
		ty := reflect.TypeOf(v)
		for i := 0; i < ty.NumField(); i++ {
			if tag := strings.Split(ty.Field(i).Tag.Get("json"), ",")[0]; tag != "" {
				fields = append(fields, tag)
			}
		}
	}
	fields = append(fields, "off_cpu", "off_cpu_missing", "off_cpu_comparisons")
	for _, f := range []string{"doc.go", "../docs/json.md"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range fields {
			if !strings.Contains(string(data), `"`+name+`"`) {
				t.Errorf("%s: no %q in the schema", f, name)
			}
		}
	}
}

// The run directories of `flamediff diff --off-cpu`'s golden test
// (../cmd/flamediff/testdata/offcpu, planted by hand: its README) give
// the bench report the figures that README plants: 3.20 → 18.20 cs/op,
// +15.00 of which commit +12.00 (vol +11.10, invol +0.90), network
// +2.00, update +1.00; 100 → 150 off-CPU µs/op, commit +30, network +15,
// update +5; and their /proc switches, a few above the counted ones,
// pass the check.
func TestOffCPUDiffFixture(t *testing.T) {
	dir := filepath.Join("..", "cmd", "flamediff", "testdata", "offcpu")
	runs := []Run{
		{Server: "10.11", Workload: "update", Dir: filepath.Join(dir, "mariadb-10.11")},
		{Server: "10.5", Workload: "update", Dir: filepath.Join(dir, "mariadb-10.5")},
	}
	r := mustBuild(t, runs, Options{Base: "10.11", Map: loadMariaDBMap(t)})
	w := r.Workloads[0]
	if b, v := w.version("10.11").OffCPU, w.version("10.5").OffCPU; b == nil || v == nil || !near(b.CSPerOp.Median, 3.20) || !near(v.CSPerOp.Median, 18.20) ||
		!near(b.MicrosPerOp.Median, 100) || !near(v.MicrosPerOp.Median, 150) || b.Untrusted != "" || v.Untrusted != "" {
		t.Fatalf("off-CPU figures 10.11 %+v, 10.5 %+v; want 3.20 and 18.20 cs/op, 100 and 150 µs/op, trusted", b, v)
	}
	c := w.OffCPUComparisons[0]
	if want := "10.11 → 10.5: of +15.00 cs/op, commit +12.00, network +2.00, update +1.00"; c.Switches.Sentence != want {
		t.Errorf("switches: %q, want %q", c.Switches.Sentence, want)
	}
	if want := "10.11 → 10.5: of +50.00 µs/op, commit +30.00, network +15.00, update +5.00"; c.Time.Sentence != want {
		t.Errorf("time: %q, want %q", c.Time.Sentence, want)
	}
	for _, p := range c.Switches.Parts {
		if p.Subsystem == "commit" && (!near(p.DeltaVoluntary, 11.10) || !near(p.DeltaInvoluntary, 0.90)) {
			t.Errorf("commit Δvol %.2f, Δinvol %.2f; want +11.10, +0.90", p.DeltaVoluntary, p.DeltaInvoluntary)
		}
	}
}

// Repeats that differ: B's repeat 2 has 1.00 more voluntary switch per
// operation in commit (9.00 of them, not 8.00). The subsystem's change is
// +8.00 in round 1 and +9.00 in round 2, the pooled profiles (stacks and
// operations summed) give +8.50, and B's cs/op are 12.50 and 13.50.
func TestOffCPURepeatsDiffer(t *testing.T) {
	runs := offCPURuns(t, func(s string, k int, m map[string]any) bool {
		if s == "B" && k == 2 {
			m["voluntary_ctxt_switches"] = 120000
			oc := m["off_cpu"].(map[string]any)
			oc["voluntary"], oc["proc_voluntary"] = 120000, 120000
		}
		return true
	})
	for _, r := range runs {
		if r.Server == "B" && r.Repeat == 2 {
			lines := strings.Join(offProfiles["B"].switches, "\n")
			lines = strings.Replace(lines, "trans_commit_stmt;[voluntary] 80000", "trans_commit_stmt;[voluntary] 90000", 1)
			if err := os.WriteFile(filepath.Join(r.Dir, fold.OffCPUSwitchesFile), []byte(lines+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := mustBuild(t, runs, offOptions(t))
	w := r.Workloads[0]
	b := w.version("B").OffCPU
	if vals := b.CSPerOp.Values; len(vals) != 2 || !near(vals[0], 12.5) || !near(vals[1], 13.5) || !near(b.CSPerOp.Median, 13) || b.Untrusted != "" {
		t.Errorf("B cs/op %+v (untrusted %q), want 12.50 and 13.50, median 13.00, trusted", b.CSPerOp, b.Untrusted)
	}
	a := w.OffCPUComparisons[0].Switches
	if !near(a.TargetPerOp, 13) || !near(a.Delta, 9.5) {
		t.Errorf("pooled: %.2f → %.2f cs/op, Δ %.2f; want 3.50 → 13.00, +9.50", a.BasePerOp, a.TargetPerOp, a.Delta)
	}
	for _, p := range a.Parts {
		if p.Subsystem != "commit" {
			continue
		}
		if !near(p.Delta, 8.5) || len(p.RoundDeltas) != 2 || !near(p.RoundDeltas[0], 8) || !near(p.RoundDeltas[1], 9) ||
			!near(p.Base.Median, 1) || !near(p.Target.Min, 9) || !near(p.Target.Max, 10) || p.Test == nil {
			t.Errorf("commit: Δ %.2f, rounds %v, base %+v, target %+v, test %v; want +8.50, [+8 +9], 1.00, 9.00–10.00, a test", p.Delta, p.RoundDeltas, p.Base, p.Target, p.Test)
		}
	}
}

// A version series whose off-CPU figures step: 1.0 and 1.1 have A's
// off-CPU profiles, 1.2 B's. The off-CPU series marks the step at 1.2
// (from 1.1): cs/op 3.50 → 12.50, +257.1%, vol 3.00 → 11.00, invol
// 0.50 → 1.50, µs/op 30.50 → 120.50; the step's differential off-CPU
// graph is 1.1 → 1.2, drawn and linked.
func TestOffCPUSeries(t *testing.T) {
	servers := []string{"1.0", "1.1", "1.2"}
	runs := offCPURunsOf(t, servers, map[string]string{"1.0": "A", "1.1": "A", "1.2": "B"}, nil)
	r := mustBuild(t, runs, Options{Base: "1.0", Servers: servers, Workloads: []string{"w"}, Map: loadMariaDBMap(t), SVG: true})
	s := r.Workloads[0].Series
	if s == nil || !s.Tested || len(s.OffCPU) != 4 {
		t.Fatalf("series %+v: want tested, with 4 off-CPU figures", s)
	}
	want := map[string][2]float64{"off-CPU cs/op": {3.5, 12.5}, "off-CPU vol cs/op": {3, 11}, "off-CPU invol cs/op": {0.5, 1.5}, "off-CPU µs/op": {30.5, 120.5}}
	for _, f := range s.OffCPU {
		w, cp := want[f.Name], f.ChangePoint
		if cp == nil || cp.Server != "1.2" || cp.Previous != "1.1" || cp.Direction != stepUp || !near(cp.Before, w[0]) || !near(cp.After, w[1]) || len(f.Steps) != 1 {
			t.Errorf("%s: change point %+v, %d step(s); want one, at 1.2 from 1.1, up, %.2f → %.2f", f.Name, cp, len(f.Steps), w[0], w[1])
			continue
		}
		kind := "cs"
		if f.Name == "off-CPU µs/op" {
			kind = "us"
		}
		if g := OffCPUDiffGraphPath("w", "1.1", "1.2", kind); cp.Graph != g {
			t.Errorf("%s: step graph %q, want %q", f.Name, cp.Graph, g)
		}
	}
	md := markdown(t, r)
	for _, want := range []string{"### Version series off-CPU (per operation, profiled windows)", "| off-CPU cs/op | 3.50 | 3.50 | 12.50 ▲ step +257.1% |"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	dir := t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"cs", "us"} {
		g := OffCPUDiffGraphPath("w", "1.1", "1.2", kind)
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(g))); err != nil {
			t.Errorf("step graph: %v", err)
		}
		if !strings.Contains(string(html), `href="`+g+`"`) {
			t.Errorf("index.html does not link %s", g)
		}
	}
}

// Without subsystems in the map, the changes are the totals alone.
func TestOffCPUNoSubsystems(t *testing.T) {
	o := offOptions(t)
	o.Map = nil // symbolmap.Default(): no subsystems
	r := mustBuild(t, offCPURuns(t, nil), o)
	c := r.Workloads[0].OffCPUComparisons[0]
	if !near(c.Switches.Delta, 9) || !near(c.Switches.DeltaVoluntary, 8) || !near(c.Switches.DeltaInvoluntary, 1) || len(c.Switches.Parts) != 0 || c.Switches.Sentence != "" ||
		!near(c.Time.Delta, 90) || len(c.Time.Parts) != 0 {
		t.Errorf("switches %+v, time %+v; want +9.00 (vol +8.00, invol +1.00) and +90.00, no parts", c.Switches, c.Time)
	}
	md := markdown(t, r)
	for _, want := range []string{"A → B: cs/op 3.50 → 12.50, +9.00", "A symbol map with subsystems splits these changes among subsystems."} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}
