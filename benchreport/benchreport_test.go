package benchreport

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/diff"
)

func TestGolden(t *testing.T) {
	r := mustBuild(t, fixtureRuns(), fixtureOptions(t))
	for _, c := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{"report.json", r.WriteJSON},
		{"report.md", r.WriteMarkdown},
		{"summary.txt", r.WriteSummary},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := c.write(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, c.name, b.Bytes())
		})
	}
}

// TestDeterministic builds the report twice (the map's caches warm the
// second time) and wants the same bytes.
func TestDeterministic(t *testing.T) {
	opts := fixtureOptions(t)
	var out [2]bytes.Buffer
	for i := range out {
		r := mustBuild(t, fixtureRuns(), opts)
		if err := r.WriteJSON(&out[i]); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteMarkdown(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
		t.Fatal("two builds of the same runs wrote different bytes")
	}
}

// rawProfile is a stacks.folded read here, apart from fold: each line's
// frames and count.
type rawStack struct {
	frames []string
	value  int64
}

func readRaw(t *testing.T, dir string) []rawStack {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "stacks.folded"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []rawStack
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		line := sc.Text()
		sp := strings.LastIndexByte(line, ' ')
		if sp < 0 {
			continue
		}
		v, err := strconv.ParseInt(line[sp+1:], 10, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", dir, line, err)
		}
		out = append(out, rawStack{strings.Split(line[:sp], ";"), v})
	}
	return out
}

// rawShare is the % of the total of the stacks that contain root and,
// after it, the given callees in a row (frames in brackets, which the
// profiler could not name, looked through).
func rawShare(stacks []rawStack, root string, callees ...string) float64 {
	var total, in int64
	for _, s := range stacks {
		total += s.value
		at := slices.Index(s.frames, root)
		if at < 0 {
			continue
		}
		var named []string
		for _, f := range s.frames[at+1:] {
			if !strings.HasPrefix(f, "[") || !strings.HasSuffix(f, "]") {
				named = append(named, f)
			}
		}
		if len(callees) == 0 {
			in += s.value
			continue
		}
		for i := 0; i+len(callees) <= len(named); i++ {
			if slices.Equal(named[i:i+len(callees)], callees) {
				in += s.value
				break
			}
		}
	}
	return float64(in) / float64(total) * 100
}

// TestConsistency recomputes rQPS, cpu/o and subtree shares from the run
// directories directly and compares them with the report.
func TestConsistency(t *testing.T) {
	withMap := mustBuild(t, fixtureRuns(), fixtureOptions(t))
	noMap := mustBuild(t, fixtureRuns(), Options{Base: fixtureBase, Servers: fixtureServers, Workloads: fixtureWorkloads})
	const eps = 1e-9
	for wi, wl := range fixtureWorkloads {
		base := rawMeta(t, fixtureDir(fixtureBase, wl))
		for _, srv := range fixtureServers {
			dir := fixtureDir(srv, wl)
			m := rawMeta(t, dir)
			v := withMap.Workloads[wi].version(srv)
			if v.Missing != "" {
				t.Fatalf("%s %s: missing: %s", wl, srv, v.Missing)
			}
			wantRQPS := m["qps"] / base["qps"]
			if v.RQPS == nil || math.Abs(*v.RQPS-wantRQPS) > eps {
				t.Errorf("%s %s: rQPS = %v, want %v (qps %v / %v)", wl, srv, v.RQPS, wantRQPS, m["qps"], base["qps"])
			}
			wantCPU := m["cpu_seconds"] * 1e6 / m["operations"]
			if math.Abs(v.CPUPerOp.Median-wantCPU) > eps {
				t.Errorf("%s %s: cpu/o = %v, want %v", wl, srv, v.CPUPerOp.Median, wantCPU)
			}
			wantRel := wantCPU / (base["cpu_seconds"] * 1e6 / base["operations"])
			if v.Relative == nil || v.Relative.CPUPerOp == nil || math.Abs(*v.Relative.CPUPerOp-wantRel) > eps {
				t.Errorf("%s %s: relative cpu/o = %+v, want %v", wl, srv, v.Relative, wantRel)
			}
			raw := readRaw(t, dir)
			// The root's share does not depend on the map (it renames
			// no root and elision keeps every stack's value).
			st := withMap.Workloads[wi].Subtrees[0]
			got := st.Rows[0].Shares[colOf(t, st, srv)].Median
			if want := rawShare(raw, DefaultRoot); math.Abs(got-want) > eps {
				t.Errorf("%s %s: %s share = %v, want %v", wl, srv, DefaultRoot, got, want)
			}
			if wl == "update-index" {
				nst := noMap.Workloads[wi].Subtrees[0]
				row := rowByPath(t, nst, DefaultRoot, "mysql_update")
				got := row.Shares[colOf(t, nst, srv)].Median
				want := rawShare(raw, DefaultRoot, "mysql_execute_command", "mysql_update")
				if srv == "11.8" {
					want = 0 // no mysql_update in 11.8 without the map's rename
				}
				if math.Abs(got-want) > eps {
					t.Errorf("%s %s: mysql_update share = %v, want %v", wl, srv, got, want)
				}
				if srv != fixtureBase {
					if d := row.DeltaPP[colOf(t, nst, srv)]; d == nil || math.Abs(*d-(got-row.Shares[colOf(t, nst, fixtureBase)].Median)) > eps {
						t.Errorf("%s %s: mysql_update Δpp = %v, want share minus the base's", wl, srv, d)
					}
				}
			}
		}
	}
	// With the map, 11.8's Sql_cmd_dml::execute is mysql_update: the row
	// is there in every version.
	st := withMap.Workloads[1].Subtrees[0]
	row := rowByPath(t, st, DefaultRoot, "mysql_update")
	for i, sh := range row.Shares {
		if sh.Median <= 0 {
			t.Errorf("with the map, mysql_update share of %s = %v, want > 0", st.Servers[i], sh.Median)
		}
	}
	// The attribution's parts add up to its total, in hundredths.
	for _, w := range withMap.Workloads {
		for _, c := range w.Comparisons {
			if c.Attribution == nil {
				t.Fatalf("%s %s: no attribution with a map with subsystems", w.Name, c.Server)
			}
			var sum int64
			for _, p := range c.Attribution.Parts {
				sum += int64(math.Round(p.DeltaMicrosPerOp * 100))
			}
			if want := int64(math.Round(c.Attribution.DeltaMicrosPerOp * 100)); sum != want {
				t.Errorf("%s %s: attribution parts add up to %d hundredths, want %d", w.Name, c.Server, sum, want)
			}
			if got, want := c.TargetMicrosPerOp, w.version(c.Server).CPUPerOp.Median; math.Abs(got-want) > eps {
				t.Errorf("%s %s: comparison µs/op = %v, want the cell's cpu/o %v", w.Name, c.Server, got, want)
			}
		}
	}
}

// factors vary the repeats: repeat k has its operations (and QPS) scaled
// by factors[k-1].
var factors = []float64{0.98, 1.00, 1.02}

// repeatRuns copies the point-select runs of the given servers three times,
// varying run.json's operations and qps by factors, and (with stackNoise)
// the counts of the stacks through the root by the same factors, so that
// the subtree shares vary too. copies adds, for each name, a server whose
// runs are exactly the base's.
func repeatRuns(t *testing.T, servers []string, copies []string, stackNoise bool) ([]Run, []string) {
	dir := t.TempDir()
	var runs []Run
	add := func(label, src string) {
		for k, f := range factors {
			dst := filepath.Join(dir, fmt.Sprintf("%s-%d", label, k+1))
			var stacks func([]string) []string
			if stackNoise {
				stacks = func(lines []string) []string {
					out := make([]string, len(lines))
					for i, l := range lines {
						out[i] = l
						sp := strings.LastIndexByte(l, ' ')
						if !strings.Contains(l, DefaultRoot) {
							continue
						}
						v, _ := strconv.ParseInt(l[sp+1:], 10, 64)
						out[i] = fmt.Sprintf("%s %d", l[:sp], int64(math.Round(float64(v)*f)))
					}
					return out
				}
			}
			copyRun(t, src, dst, func(m map[string]any) {
				m["operations"] = math.Round(m["operations"].(float64) * f)
				m["qps"] = m["qps"].(float64) * f
			}, stacks)
			runs = append(runs, Run{Server: label, Workload: "point-select", Repeat: k + 1, Dir: dst})
		}
	}
	for _, s := range servers {
		add(s, fixtureDir(s, "point-select"))
	}
	for _, c := range copies {
		add(c, fixtureDir(fixtureBase, "point-select"))
	}
	return runs, append(slices.Clone(servers), copies...)
}

func TestRepeats(t *testing.T) {
	runs, servers := repeatRuns(t, []string{"10.11", "11.8"}, []string{"10.11-copy"}, true)
	r := mustBuild(t, runs, Options{Base: "10.11", Servers: servers, Map: loadMariaDBMap(t)})
	if r.Repeats != 3 {
		t.Fatalf("Repeats = %d, want 3", r.Repeats)
	}
	w := r.Workloads[0]
	base, target, cp := w.version("10.11"), w.version("11.8"), w.version("10.11-copy")
	qps := rawMeta(t, fixtureDir("11.8", "point-select"))["qps"]
	if target.Repeats != 3 || len(target.QPS.Values) != 3 {
		t.Fatalf("11.8: %d repeats, %d QPS values, want 3", target.Repeats, len(target.QPS.Values))
	}
	if got, want := target.QPS.Median, qps; math.Abs(got-want) > 1e-9 {
		t.Errorf("11.8 median QPS = %v, want %v (the unscaled repeat)", got, want)
	}
	if got, want := target.QPS.Min, qps*0.98; math.Abs(got-want) > 1e-9 {
		t.Errorf("11.8 min QPS = %v, want %v", got, want)
	}
	if base.QPSTest != nil || base.CPUPerOpTest != nil {
		t.Errorf("the base has tests against itself: %+v %+v", base.QPSTest, base.CPUPerOpTest)
	}
	// QPS of 10.11 and 11.8 differ by ~10% with ±2% noise: the ranges do
	// not overlap, so the difference is significant.
	if target.QPS.Min <= base.QPS.Max {
		t.Fatalf("fixture: 11.8's QPS range %v–%v overlaps 10.11's %v–%v", target.QPS.Min, target.QPS.Max, base.QPS.Min, base.QPS.Max)
	}
	if target.QPSTest == nil || !target.QPSTest.Significant {
		t.Errorf("10.11 vs 11.8 QPS test = %+v, want significant", target.QPSTest)
	}
	// The copy has exactly the base's repeats: no difference at all.
	for name, x := range map[string]*Test{"qps": cp.QPSTest, "cpu/o": cp.CPUPerOpTest} {
		if x == nil || x.Significant || x.WelchP != 1 {
			t.Errorf("10.11 vs its copy, %s test = %+v, want not significant with Welch p 1", name, x)
		}
	}
	if cp.RQPS == nil || *cp.RQPS != 1 {
		t.Errorf("copy rQPS = %v, want 1", cp.RQPS)
	}
	st := w.Subtrees[0]
	bc, tc, cc := colOf(t, st, "10.11"), colOf(t, st, "11.8"), colOf(t, st, "10.11-copy")
	for _, row := range st.Rows {
		if x := row.Tests[cc]; x == nil || x.Significant {
			t.Errorf("row %q: copy test = %+v, want not significant", row.Label, x)
		}
		if d := row.DeltaPP[cc]; d == nil || *d != 0 {
			t.Errorf("row %q: copy Δpp = %v, want 0", row.Label, d)
		}
		if row.Tests[bc] != nil || row.DeltaPP[bc] != nil {
			t.Errorf("row %q: the base column has a test or a Δpp", row.Label)
		}
		if len(row.Shares[tc].Values) != 3 {
			t.Errorf("row %q: 11.8 has %d share values, want 3", row.Label, len(row.Shares[tc].Values))
		}
	}
	// The root's share: recomputed here per repeat, clearly apart.
	root := st.Rows[0]
	bs, ts := root.Shares[bc], root.Shares[tc]
	if bs.Max-bs.Min <= 0 {
		t.Fatalf("fixture: the root's share does not vary over the base's repeats (%v)", bs.Values)
	}
	if ts.Max < bs.Min || ts.Min > bs.Max {
		if x := root.Tests[tc]; x == nil || !x.Significant {
			t.Errorf("root share 10.11 %v vs 11.8 %v: test = %+v, want significant", bs.Values, ts.Values, x)
		}
	} else {
		t.Fatalf("fixture: root share ranges overlap: 10.11 %v, 11.8 %v", bs.Values, ts.Values)
	}
	// The attribution's parts: each subsystem's µs/op in every repeat,
	// judged as one family. Against the copy nothing differs; every part
	// of 11.8's that the fixture moves has three values a side whose
	// repeat-by-repeat changes bracket nothing of the other sign.
	if len(w.Comparisons) != 2 {
		t.Fatalf("%d comparisons, want 2", len(w.Comparisons))
	}
	for _, c := range w.Comparisons {
		for _, p := range c.Attribution.Parts {
			if p.Base == nil || p.Target == nil || len(p.Base.Values) != 3 || len(p.Target.Values) != 3 || len(p.RoundDeltas) != 3 || p.Test == nil {
				t.Errorf("%s part %s: base %v, target %v, round deltas %v, test %v; want 3 repeats a side, 3 deltas and a test", c.Server, p.Subsystem, p.Base, p.Target, p.RoundDeltas, p.Test)
				continue
			}
			if p.Test.Family < len(c.Attribution.Parts) {
				t.Errorf("%s part %s: judged in a family of %d, want at least the %d parts", c.Server, p.Subsystem, p.Test.Family, len(c.Attribution.Parts))
			}
			for k, d := range p.RoundDeltas {
				if want := p.Target.Values[k] - p.Base.Values[k]; d != want {
					t.Errorf("%s part %s: round %d delta %v, want %v", c.Server, p.Subsystem, k+1, d, want)
				}
			}
			if c.Server == "10.11-copy" && (p.Test.Significant || p.DeltaMicrosPerOp != 0 || slices.ContainsFunc(p.RoundDeltas, func(d float64) bool { return d != 0 })) {
				t.Errorf("copy part %s: Δ %v, round deltas %v, test %+v; want 0 and within noise", p.Subsystem, p.DeltaMicrosPerOp, p.RoundDeltas, p.Test)
			}
		}
	}
	md := markdown(t, r)
	golden(t, "repeats.md", []byte(md))
	for _, want := range []string{
		"| point-select | 1.00 (0.98–1.02, n=3) | 1.10 (1.08–1.12, n=3) | " + noise + "1.00 (0.98–1.02, n=3) |", // the rQPS row: the copy within noise
		"within noise", "significant", "Welch p",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// TestPartialRepeats: a repeat that failed is listed, the cell keeps the
// others and is still tested against the base.
func TestPartialRepeats(t *testing.T) {
	runs, servers := repeatRuns(t, []string{"10.11", "11.8"}, nil, false)
	for i, r := range runs {
		if r.Server == "11.8" && r.Repeat == 2 {
			runs[i].Missing = "sampler died"
		}
	}
	r := mustBuild(t, runs, Options{Base: "10.11", Servers: servers})
	v := r.Workloads[0].version("11.8")
	if v.Missing != "" || v.Repeats != 2 || len(v.CPUPerOp.Values) != 2 || v.QPSTest == nil {
		t.Fatalf("11.8 with one failed repeat: missing %q, %d repeats, test %v; want 2 repeats, tested", v.Missing, v.Repeats, v.QPSTest)
	}
	if want := (MissingRun{Workload: "point-select", Server: "11.8", Repeat: 2, Dir: runs[4].Dir, Reason: "sampler died"}); len(r.Missing) != 1 || r.Missing[0] != want {
		t.Errorf("Missing = %+v, want [%+v]", r.Missing, want)
	}
	if md := markdown(t, r); !strings.Contains(md, "11.8: 2 of 3 repeats usable") {
		t.Error("markdown does not say 11.8 has 2 of 3 repeats")
	}
	// Every repeat failing makes the cell missing, with each reason.
	for i, r := range runs {
		if r.Server == "11.8" {
			runs[i].Missing = fmt.Sprintf("failure %d", r.Repeat)
		}
	}
	r = mustBuild(t, runs, Options{Base: "10.11", Servers: servers})
	if got, want := r.Workloads[0].version("11.8").Missing, "repeat 1: failure 1; repeat 2: failure 2; repeat 3: failure 3"; got != want {
		t.Errorf("11.8 with every repeat failed: missing %q, want %q", got, want)
	}
}

// TestRepeatsIdentical: repeats without any variation between versions give
// no significant difference anywhere.
func TestRepeatsIdentical(t *testing.T) {
	runs, servers := repeatRuns(t, []string{"10.11"}, []string{"a", "b"}, false)
	r := mustBuild(t, runs, Options{Base: "10.11", Servers: servers})
	for _, v := range r.Workloads[0].Versions[1:] {
		if v.QPSTest == nil || v.QPSTest.Significant {
			t.Errorf("%s: QPS test = %+v, want not significant", v.Server, v.QPSTest)
		}
	}
	for _, row := range r.Workloads[0].Subtrees[0].Rows {
		for i, x := range row.Tests[1:] {
			if x == nil || x.Significant {
				t.Errorf("row %q column %d: test = %+v, want not significant", row.Label, i+1, x)
			}
		}
	}
}

func TestMissing(t *testing.T) {
	tests := []struct {
		name string
		// run returns the run of 11.8 update-index, given a temp dir.
		run        func(t *testing.T, dir string) Run
		wantReason string
	}{
		{"no directory", func(t *testing.T, dir string) Run {
			return Run{Dir: filepath.Join(dir, "nope")}
		}, "no such file or directory"},
		{"incomplete", func(t *testing.T, dir string) Run {
			copyRun(t, fixtureDir("11.8", "update-index"), dir, func(m map[string]any) {
				m["complete"] = false
				m["incomplete_reason"] = "interrupted by Ctrl-C"
			}, nil)
			return Run{Dir: dir}
		}, "incomplete capture (run.json complete: false): interrupted by Ctrl-C"},
		{"no run.json", func(t *testing.T, dir string) Run {
			copyRun(t, fixtureDir("11.8", "update-index"), dir, nil, nil)
			os.Remove(filepath.Join(dir, "run.json"))
			return Run{Dir: dir}
		}, "run directory DIR/run.json: no such file"},
		{"no operations", func(t *testing.T, dir string) Run {
			copyRun(t, fixtureDir("11.8", "update-index"), dir, func(m map[string]any) { delete(m, "operations") }, nil)
			return Run{Dir: dir}
		}, "run.json has no cpu_seconds or no operations"},
		{"no samples", func(t *testing.T, dir string) Run {
			copyRun(t, fixtureDir("11.8", "update-index"), dir, nil, func([]string) []string { return nil })
			return Run{Dir: dir}
		}, "DIR/stacks.folded: no samples (blank lines and comments, no stack, in 1 bytes); the run recorded nothing: see DIR/run.json and the run's workload.log"},
		{"only zero counts", func(t *testing.T, dir string) Run {
			copyRun(t, fixtureDir("11.8", "update-index"), dir, nil, func([]string) []string { return []string{"a;b 0", "a;c 0"} })
			return Run{Dir: dir}
		}, "DIR/stacks.folded: no samples (2 stacks, every count 0)"},
		{"server failed", func(t *testing.T, dir string) Run {
			return Run{Dir: dir, Missing: "server 11.8 did not start: libssl.so.3: cannot open shared object file"}
		}, "server 11.8 did not start: libssl.so.3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			runs := fixtureRuns()
			for i, r := range runs {
				if r.Server == "11.8" && r.Workload == "update-index" {
					dir := t.TempDir()
					nr := tc.run(t, dir)
					tc.wantReason = strings.ReplaceAll(tc.wantReason, "DIR", dir)
					nr.Server, nr.Workload, nr.Repeat = r.Server, r.Workload, r.Repeat
					runs[i] = nr
				}
			}
			r := mustBuild(t, runs, fixtureOptions(t))
			if len(r.Missing) != 1 {
				t.Fatalf("Missing = %+v, want one run", r.Missing)
			}
			m := r.Missing[0]
			if m.Server != "11.8" || m.Workload != "update-index" || m.Repeat != 1 || !strings.Contains(m.Reason, tc.wantReason) {
				t.Errorf("Missing[0] = %+v, want 11.8 update-index repeat 1 with reason containing %q", m, tc.wantReason)
			}
			v := r.Workloads[1].version("11.8")
			if !strings.Contains(v.Missing, tc.wantReason) || v.QPS != nil || v.RQPS != nil {
				t.Errorf("11.8 update-index cell: missing %q, QPS %v, want missing with %q and no figures", v.Missing, v.QPS, tc.wantReason)
			}
			// The rest still renders: the other cells have their figures,
			// the subtree has the other versions' columns, 10.5 its comparison.
			if v := r.Workloads[1].version("10.5"); v.Missing != "" || v.RQPS == nil {
				t.Errorf("10.5 update-index: %+v, want figures", v)
			}
			if got := r.Workloads[1].Subtrees[0].Servers; !slices.Equal(got, []string{"10.5", "10.11"}) {
				t.Errorf("update-index subtree columns = %q, want 10.5 and 10.11", got)
			}
			if v := r.Workloads[0].version("11.8"); v.Missing != "" {
				t.Errorf("11.8 point-select is missing too: %s", v.Missing)
			}
			md := markdown(t, r)
			for _, want := range []string{
				"| update-index | 1.13 (n=1) | 1.00 (n=1) | missing |",
				"## Missing runs",
				"| update-index | 11.8 | 1 | ",
				tc.wantReason,
				"11.8: missing: ",
				"11.8: missing (no usable run).",
			} {
				if !strings.Contains(md, want) {
					t.Errorf("markdown lacks %q", want)
				}
			}
			var js bytes.Buffer
			if err := r.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(js.String(), `"missing": "`) {
				t.Error("report.json has no missing cell")
			}
		})
	}
}

// TestMissingBase: without the base, a workload still shows its absolute
// figures, and says why there are no relative ones.
func TestMissingBase(t *testing.T) {
	var runs []Run
	for _, r := range fixtureRuns() {
		if r.Server == fixtureBase && r.Workload == "point-select" {
			continue // no run given at all
		}
		runs = append(runs, r)
	}
	r := mustBuild(t, runs, fixtureOptions(t))
	w := r.Workloads[0]
	if got := w.version(fixtureBase).Missing; got != "no run given" {
		t.Errorf("base cell missing = %q, want %q", got, "no run given")
	}
	if len(r.Missing) != 1 || r.Missing[0].Repeat != 0 {
		t.Errorf("Missing = %+v, want one entry with repeat 0 (all)", r.Missing)
	}
	v := w.version("11.8")
	if v.QPS == nil || v.RQPS != nil || len(w.Comparisons) != 0 {
		t.Errorf("11.8 point-select without base: QPS %v, rQPS %v, %d comparisons; want QPS only", v.QPS, v.RQPS, len(w.Comparisons))
	}
	if len(w.Subtrees) != 1 || len(w.Subtrees[0].Rows) == 0 {
		t.Fatal("no subtree without the base")
	}
	for _, row := range w.Subtrees[0].Rows {
		for _, d := range row.DeltaPP {
			if d != nil {
				t.Fatalf("row %q has a Δpp without a base", row.Label)
			}
		}
	}
	md := markdown(t, r)
	if !strings.Contains(md, "| point-select | - | missing | - |") || !strings.Contains(md, "the base 10.11 has no usable run") {
		t.Errorf("markdown without the base:\n%s", md[:min(len(md), 1500)])
	}
	// update-index is complete.
	if len(r.Workloads[1].Comparisons) != 2 {
		t.Errorf("update-index has %d comparisons, want 2", len(r.Workloads[1].Comparisons))
	}
}

func TestBuildErrors(t *testing.T) {
	runs := fixtureRuns()
	tests := []struct {
		name string
		runs []Run
		opts Options
		want string
	}{
		{"no runs", nil, Options{}, "no runs"},
		{"base not a server", runs, Options{Base: "12.0"}, `base "12.0" is not one of the servers`},
		{"unlisted server", runs, Options{Servers: []string{"10.5", "10.11"}}, `server "11.8" is not one of`},
		{"unlisted workload", runs, Options{Workloads: []string{"point-select"}}, `workload "update-index" is not one of`},
		{"duplicate", append(slices.Clone(runs), runs[0]), Options{}, "repeat 1 given twice"},
		{"negative repeat", []Run{{Server: "a", Workload: "w", Repeat: -1, Dir: "x"}}, Options{}, "repeat -1 is negative"},
		{"server listed twice", runs, Options{Servers: []string{"10.5", "10.11", "11.8", "10.5"}}, `server "10.5" listed twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.runs, tc.opts)
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Build = %v, want an ErrInvalid error containing %q", err, tc.want)
			}
		})
	}
}

// TestDefaults: without Options, servers and workloads come in order of
// appearance, the first server is the base, the root is DefaultRoot.
func TestDefaults(t *testing.T) {
	r := mustBuild(t, fixtureRuns(), Options{})
	if !slices.Equal(r.Servers, fixtureServers) || r.Base != "10.5" || r.Alpha != 0.05 || r.Depth != DefaultDepth || r.Map != "<default>" {
		t.Errorf("defaults: servers %q base %q alpha %v depth %d map %q", r.Servers, r.Base, r.Alpha, r.Depth, r.Map)
	}
	if !slices.Equal(r.Roots, []string{DefaultRoot}) {
		t.Errorf("Roots = %q, want [%s]", r.Roots, DefaultRoot)
	}
	for _, w := range r.Workloads {
		for _, c := range w.Comparisons {
			if c.Attribution != nil {
				t.Errorf("%s %s: attribution without subsystems", w.Name, c.Server)
			}
		}
	}
	if md := markdown(t, r); !strings.Contains(md, "A symbol map with subsystems splits these changes") {
		t.Error("markdown without subsystems does not say how to get the attribution")
	}
}

func TestWriteFiles(t *testing.T) {
	opts := fixtureOptions(t)
	opts.SVG = true
	r := mustBuild(t, fixtureRuns(), opts)
	dir := filepath.Join(t.TempDir(), "out")
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "index.html", html)
	var want []string
	for _, w := range fixtureWorkloads {
		for _, s := range fixtureServers {
			want = append(want, PlainGraphPath(w, s))
			if s != fixtureBase {
				want = append(want, DiffGraphPath(w, fixtureBase, s))
			}
		}
	}
	for _, p := range want {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Errorf("graph %s: %v", p, err)
			continue
		}
		if err := wellFormed(data); err != nil {
			t.Errorf("graph %s is not well-formed XML: %v", p, err)
		}
		if !bytes.Contains(html, []byte(`href="`+p+`"`)) {
			t.Errorf("index.html does not link %s", p)
		}
	}
	if p := DiffGraphPath("update-index", "10.11", "11.8"); p != "svg/update-index/10.11-vs-11.8.svg" {
		t.Errorf("DiffGraphPath = %q", p)
	}
	for _, name := range []string{JSONFile, MarkdownFile} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		write := r.WriteJSON
		if name == MarkdownFile {
			write = r.WriteMarkdown
		}
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(data, b.Bytes()) {
			t.Errorf("%s differs from what WriteJSON/WriteMarkdown write", name)
		}
	}
	// The rQPS matrix as text and CSV, beside report.md, linked from the page.
	for _, name := range []string{RQPSTextFile, RQPSCSVFile} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, name, data)
		if !bytes.Contains(html, []byte(`<a href="`+name+`">`)) {
			t.Errorf("index.html does not link %s", name)
		}
	}
	// A second write gives the same bytes and leaves no temporary file.
	before := snapshot(t, dir)
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	after := snapshot(t, dir)
	if len(before) != len(after) {
		t.Errorf("second write: %d files, want %d", len(after), len(before))
	}
	for p, data := range before {
		if !bytes.Equal(after[p], data) {
			t.Errorf("second write changed %s", p)
		}
		if strings.Contains(filepath.Base(p), ".tmp") {
			t.Errorf("temporary file %s left behind", p)
		}
	}
}

// TestWriteFilesNoSVG: without Options.SVG, no graphs are drawn or linked.
func TestWriteFilesNoSVG(t *testing.T) {
	r := mustBuild(t, fixtureRuns(), fixtureOptions(t))
	dir := t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, SVGDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("svg directory written without Options.SVG: %v", err)
	}
	html, err := os.ReadFile(filepath.Join(dir, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(html, []byte(".svg")) {
		t.Error("index.html links graphs that were not drawn")
	}
}

func TestWriteFilesError(t *testing.T) {
	r := mustBuild(t, fixtureRuns(), fixtureOptions(t))
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFiles(filepath.Join(file, "out")); err == nil || !strings.HasPrefix(err.Error(), "report ") {
		t.Errorf("WriteFiles under a file = %v, want an error starting with \"report \"", err)
	}
}

func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wellFormed(data []byte) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func TestSafeName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"10.11", "10.11"},
		{"point-select", "point-select"},
		{"oltp read/write", "oltp_read_write"},
		{"..", "_"},
		{"", "_"},
		{"ünï", "_n_"},
	} {
		if got := safeName(c.in); got != c.want {
			t.Errorf("safeName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFmtP(t *testing.T) {
	for _, c := range []struct {
		p    float64
		want string
	}{{0, "<0.001"}, {0.0004, "<0.001"}, {0.001, "0.001"}, {0.1, "0.100"}, {1, "1.000"}} {
		if got := fmtP(c.p); got != c.want {
			t.Errorf("fmtP(%v) = %q, want %q", c.p, got, c.want)
		}
	}
}

// TestStackCompleteness: runs whose run.json records stack_completeness and
// unwind show them per version, and the one below 99% a warning naming the
// object where walks stopped, with the caller's hint; a run without them
// shows "-" and no warning (its report is as before).
func TestStackCompleteness(t *testing.T) {
	unwind := func(name string) string { return filepath.Join("..", "testdata", "unwind", name) }
	runs := []Run{
		{Server: "10.11", Workload: "w", Repeat: 1, Dir: unwind("mariadb-10.11-point-select-fp")},
		{Server: "11.8", Workload: "w", Repeat: 1, Dir: unwind("mariadb-11.8-update-non-index-cfi")},
		{Server: "10.5", Workload: "w", Repeat: 1, Dir: fixtureDir("10.5", "point-select")},
	}
	hints := diff.Hints{Unwinding: func(u *diff.Unwinding) string { return "a " + u.Sampler + " hint" }}
	r := mustBuild(t, runs, Options{Servers: []string{"10.11", "11.8", "10.5"}, Hints: hints})
	warning := "stacks reach a thread root in 61.86% of samples (unwinding: fp): callers' inclusive shares are understated by up to 38.14 percentage points; libc.so.6: 560 walks stopped there (no frame pointers; a bpf hint)"
	for _, tt := range []struct {
		server   string
		pct      float64 // 0: none recorded
		unwind   string
		warnings []string
	}{
		// The shares are those of the fixtures' stacks.folded
		// (testdata/README.md), recomputed by the record test's way.
		{"10.11", 61.86495176848874, "fp", []string{warning}},
		// 11.8's run.json: sampled 5.553 of 6.25 accounted CPU-s, per-CPU
		// events, 18,309 context switches per CPU-second.
		{"11.8", 99.52276064610867, "cfi+fp", []string{"the samples stand for 88.85% of the CPU the process was accounted: 11.15% of it has no sample, so shares may be off by up to 11.15 percentage points, depending on where that CPU went (see docs/fidelity.md)",
			"the samples were not corrected at context switches (per-CPU events) and the process switched 18309 times per CPU-second: shares may be off by up to about 13 percentage points, mostly toward the code right after wake-ups (0.7 per 1,000 switches per CPU-second on programs whose true CPU is known; the BPF sampler's switch fix on per-thread events corrects it, see docs/fidelity.md)"}},
		{"10.5", 0, "", nil},
	} {
		v := r.Workloads[0].version(tt.server)
		got := 0.0
		if v.StackCompletePct != nil {
			got = v.StackCompletePct.Median
		}
		if math.Abs(got-tt.pct) > 1e-9 || v.Unwind != tt.unwind || !slices.Equal(v.Warnings, tt.warnings) {
			t.Errorf("%s: complete %v, unwind %q, warnings %q; want %v, %q, %q", tt.server, got, v.Unwind, v.Warnings, tt.pct, tt.unwind, tt.warnings)
		}
	}
	golden(t, "unwind.md", []byte(markdown(t, r)))
	var b bytes.Buffer
	if err := r.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	golden(t, "unwind-summary.txt", b.Bytes())
	if !strings.Contains(b.String(), "warning: w on 10.11: "+warning) {
		t.Errorf("summary lacks the warning:\n%s", b.String())
	}
}

// A cell of runs corrected at context switches (the BPF sampler's switch
// fix on per-thread events) whose process switched often gets the
// corrected switch warning, with the median rate over its repeats; a cell
// whose process switched less does not.
func TestCorrectedSwitchWarning(t *testing.T) {
	dir := t.TempDir()
	src := fixtureDir("10.11", "point-select")
	cpu := rawMeta(t, src)["cpu_seconds"]
	var runs []Run
	for _, r := range []struct {
		server string
		repeat int
		rate   float64
	}{{"lo", 1, 5000}, {"hi", 1, 18000}, {"hi", 2, 22000}} {
		dst := filepath.Join(dir, fmt.Sprintf("%s-%d", r.server, r.repeat))
		copyRun(t, src, dst, func(m map[string]any) {
			m["sampler"], m["sampler_scope"], m["switch_fix"] = "bpf", "thread", true
			m["voluntary_ctxt_switches"], m["involuntary_ctxt_switches"] = math.Round(r.rate*cpu/2), math.Round(r.rate*cpu/2)
		}, nil)
		runs = append(runs, Run{Server: r.server, Workload: "w", Repeat: r.repeat, Dir: dst})
	}
	r := mustBuild(t, runs, Options{Servers: []string{"lo", "hi"}})
	want := "median over the repeats: " + diff.SwitchWarning("", true, 20000)
	if w := r.Workloads[0].version("hi").Warnings; !slices.Contains(w, want) {
		t.Errorf("hi: warnings %q, want %q", w, want)
	}
	for _, w := range r.Workloads[0].version("lo").Warnings {
		if strings.Contains(w, "context switches") {
			t.Errorf("lo (5,000 switches per CPU-second): warning %q, want none about switches", w)
		}
	}
}
