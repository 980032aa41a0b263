package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/report"
)

func TestDiffGolden(t *testing.T) {
	needParse(t)
	base := filepath.Join(runsDir, "mariadb-10.11-update-index")
	target := filepath.Join(runsDir, "mariadb-11.8-update-index")
	cases := []struct {
		name string
		args []string
	}{
		{"update-index", []string{"--top", "15", base, target}},
		{"update-index-map", []string{"--map", mapFile, "--root", "mysqld_stmt_execute", "--depth", "2", "--top", "15", base, target}},
		// A looser collapse threshold reaches the level where the statement branches (commit, update).
		{"update-index-map-collapse97", []string{"--map", mapFile, "--root", "mysqld_stmt_execute", "--depth", "1", "--collapse-threshold", "0.97", "--top", "5", base, target}},
		// Runs that recorded their stack completeness and unwinding (61.86%
		// and 99.52%), beside one that did not.
		{"unwind", []string{"--top", "5", filepath.Join(unwindDir, "mariadb-10.11-point-select-fp"), filepath.Join(unwindDir, "mariadb-11.8-update-non-index-cfi"), base}},
	}
	for _, c := range cases {
		for _, format := range formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				args := append([]string{"diff", "--format", format}, c.args...)
				out, errOut, code := runCLI(t, args...)
				if code != exitOK {
					t.Fatalf("flamediff %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errOut)
				}
				golden(t, filepath.Join("diff", c.name+"."+formatExt[format]), []byte(out))
			})
		}
	}
}

func TestDiffUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"one profile", []string{"diff", "a"}, "diff takes a BASE and at least one TARGET"},
		{"stdin twice", []string{"diff", "-", "-"}, "standard input (-) is given twice"},
		{"negative top", []string{"diff", "--top", "-1", "a", "b"}, "--top -1"},
		{"unknown format", []string{"diff", "--format", "html", "a", "b"}, "want table, json, csv or markdown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCLI(t, tt.args...)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("flamediff %v: exit %d, stderr %q; want exit %d and %q", tt.args, code, errOut, exitUsage, tt.want)
			}
		})
	}
}

func TestDiffRootNotFound(t *testing.T) {
	needParse(t)
	base := filepath.Join(runsDir, "mariadb-10.11-update-index")
	target := filepath.Join(runsDir, "mariadb-11.8-update-index")
	_, errOut, code := runCLI(t, "diff", "--root", "mysql_updat", base, target)
	if code != exitUsage || !strings.Contains(errOut, `--root "mysql_updat": no such function`) || !strings.Contains(errOut, "mysql_update") {
		t.Errorf("exit %d, stderr %q; want a usage error suggesting mysql_update", code, errOut)
	}
}

func TestDiffHandBuilt(t *testing.T) {
	// The target loses do_command and __send and gains net_flush; its CPU
	// per op goes from 2000 to 3000 µs.
	target := &fold.Profile{Meta: &fold.Meta{Label: "v2", CPUSecondsTotal: 6, Operations: 2000}, Stacks: []fold.Stack{
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "mysql_update", "row_upd"}, Value: 10},
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "trans_commit_stmt", "trans_commit_stmt", "fsync"}, Value: 20},
		{Frames: []string{"t", "start_thread", "net_flush"}, Value: 10},
	}}
	tests := []struct {
		name     string
		baseMeta *fold.Meta
		format   string
		want     []string
	}{
		{
			name:     "per op",
			baseMeta: &fold.Meta{Label: "v1", CPUSecondsTotal: 2, Operations: 1000},
			format:   formatTable,
			want: []string{
				"Diff: v1 (base) vs v2",
				"│ v2      │ samples │    40 │  6.00 │ 2000 │   - │    - │  3000.00 │    - │",
				"│ mysql_update        │     50.00 │     25.00 │ -25.00 │  0.50 │",
				"│ net_flush           │      0.00 │     25.00 │ +25.00 │   new │",
				"Only in one profile",
				"│ net_flush  │ v2      │  25.00 │",
				"│ do_command │ v1      │  15.00 │",
				"warning: v1: 10.00% of samples",
			},
		},
		{
			name:   "no metadata",
			format: formatMarkdown,
			want: []string{
				"| `mysql_update` | 50.00 | 25.00 | -25.00 | 0.50 |",
				"> note: per-op figures (CPU µs per operation) need run metadata: a run directory whose run.json gives cpu_seconds and operations, for every profile; missing for b",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			opts := &DiffOptions{
				IO: &streams{Out: &out, ErrOut: &errOut}, Base: "b", Targets: []string{"t"},
				commonFlags: commonFlags{Format: tt.format, tableFlags: tableFlags{Top: 30, Depth: 2}},
				Load:        fakeLoad(map[string]*fold.Profile{"b": handProfile(tt.baseMeta), "t": target}),
			}
			if err := runDiff(context.Background(), opts); err != nil {
				t.Fatal(err)
			}
			rest := out.String()
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks (or misorders) %q:\n%s", w, out.String())
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestDiffJSONRoundTrip checks the JSON numbers against diff.Compute on the
// same profiles and map.
func TestDiffJSONRoundTrip(t *testing.T) {
	needParse(t)
	paths := []string{filepath.Join(runsDir, "mariadb-10.11-update-index"), filepath.Join(runsDir, "mariadb-11.8-update-index")}
	out, errOut, code := runCLI(t, append([]string{"diff", "--format", "json", "--top", "0", "--map", mapFile, "--root", "mysqld_stmt_execute"}, paths...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got report.JSONDiff
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	s := &streams{ErrOut: &bytes.Buffer{}}
	m, err := loadMap(s, mapFile)
	if err != nil {
		t.Fatal(err)
	}
	in, err := input.ReadSet(context.Background(), loader(s, nil), m, paths, nil, fold.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts, err := (&tableFlags{Depth: 2, Roots: []string{"mysqld_stmt_execute"}}).diffOptions(in)
	if err != nil {
		t.Fatal(err)
	}
	r, err := diff.Compute(in.Profiles[0], in.Profiles[1:], opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Profiles) != 2 || got.Profiles[0].Label != "10.11" || got.Profiles[1].Label != "11.8" ||
		*got.Profiles[1].RQPS != r.Summaries[1].Profile.RelativeQPS {
		t.Errorf("profiles = %+v", got.Profiles)
	}
	if len(got.Functions) != len(r.Functions) {
		t.Fatalf("%d functions, want %d", len(got.Functions), len(r.Functions))
	}
	onlyIn := 0
	for i, f := range r.Functions {
		g := got.Functions[i]
		if g.Name != f.Name || g.OnlyIn != f.OnlyIn || g.DeltaPP[0] != f.DeltaPP[0] || g.SelfDeltaPP[0] != f.SelfDeltaPP[0] ||
			g.DeltaMicrosPerOp[0] != f.DeltaMicrosPerOp[0] {
			t.Errorf("functions[%d] = %+v, want %+v", i, g, f)
		}
		if (g.Ratio[0] == nil) != (math.IsInf(f.Ratio[0], 0) || math.IsNaN(f.Ratio[0])) || g.Ratio[0] != nil && *g.Ratio[0] != f.Ratio[0] {
			t.Errorf("functions[%d] ratio = %v, want %v", i, g.Ratio[0], f.Ratio[0])
		}
		for p := range f.Profiles {
			gp, fp := g.Profiles[p], f.Profiles[p]
			if gp.Inclusive != fp.Inclusive || gp.Self != fp.Self || gp.InclusivePct != fp.InclusivePct || gp.SelfPct != fp.SelfPct ||
				*gp.InclusiveMicrosPerOp != fp.InclusiveMicrosPerOp {
				t.Errorf("functions[%d].profiles[%d] = %+v, want %+v", i, p, gp, fp)
			}
		}
		if f.OnlyIn != "" {
			onlyIn++
		}
	}
	if onlyIn == 0 {
		t.Error("no function is only_in one profile; 10.11 and 11.8 differ in libc symbols")
	}
	if len(got.Subsystems) != len(r.Subsystems) {
		t.Fatalf("%d subsystems, want %d", len(got.Subsystems), len(r.Subsystems))
	}
	var sum float64
	for i, sub := range r.Subsystems {
		g := got.Subsystems[i]
		if g.Name != sub.Name || g.Profiles[0].Pct != sub.Profiles[0].Pct || g.DeltaPP[0] != sub.DeltaPP[0] {
			t.Errorf("subsystems[%d] = %+v, want %+v", i, g, sub)
		}
		sum += g.Profiles[1].Pct
	}
	if math.Abs(sum-100) > 1e-9 {
		t.Errorf("target subsystem shares sum to %v, want 100", sum)
	}
	if len(got.Attribution) != 1 {
		t.Fatalf("attribution = %+v, want one", got.Attribution)
	}
	a := got.Attribution[0]
	var parts int64
	for _, p := range a.Parts {
		parts += int64(math.Round(p.DeltaMicrosPerOp * 100))
	}
	if parts != int64(math.Round(a.DeltaMicrosPerOp*100)) || a.Sentence != r.Attribution[0].Sentence() {
		t.Errorf("attribution parts sum to %d hundredths, total %v; sentence %q", parts, a.DeltaMicrosPerOp, a.Sentence)
	}
	if len(got.Subtrees) != 1 || got.Subtrees[0].Nodes[0].Profiles[0].Value != r.Subtrees[0].Rows[0].Profiles[0].Value {
		t.Errorf("subtrees = %+v", got.Subtrees)
	}
}
