package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/report"
	"github.com/flamediff/flamediff/symbolmap"
)

var formatExt = map[string]string{formatTable: "txt", formatJSON: "json", formatCSV: "csv", formatMarkdown: "md"}

func TestReportGolden(t *testing.T) {
	needParse(t)
	cases := []struct {
		name string
		args []string
	}{
		{"10.11-root", []string{"--root", "mysqld_stmt_execute", "--depth", "2", "--top", "15", filepath.Join(runsDir, "mariadb-10.11-update-index")}},
		{"11.8-map", []string{"--map", mapFile, "--root", "mysqld_stmt_execute", "--depth", "1", "--top", "15", filepath.Join(runsDir, "mariadb-11.8-update-index")}},
		// Runs that recorded their stack completeness and unwinding: at
		// 61.86% (a warning naming libc.so.6, with the command's hint),
		// and at 99.52% (none).
		{"unwind-62", []string{"--top", "5", filepath.Join(unwindDir, "mariadb-10.11-point-select-fp")}},
		{"unwind-99.5", []string{"--top", "5", filepath.Join(unwindDir, "mariadb-11.8-update-non-index-cfi")}},
	}
	for _, c := range cases {
		for _, format := range formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				args := append([]string{"report", "--format", format}, c.args...)
				out, errOut, code := runCLI(t, args...)
				if code != exitOK {
					t.Fatalf("flamediff %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errOut)
				}
				golden(t, filepath.Join("report", c.name+"."+formatExt[format]), []byte(out))
			})
		}
	}
}

func TestReportFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want ReportOptions
	}{
		{
			name: "defaults",
			args: []string{"p.folded"},
			want: ReportOptions{Profile: "p.folded", commonFlags: commonFlags{Format: "table", inputFlags: inputFlags{InputFormat: "auto"}, tableFlags: tableFlags{Top: 30, Depth: 2, CollapseThreshold: diff.DefaultCollapseThreshold}}},
		},
		{
			name: "everything",
			args: []string{"--map", "m.yaml", "--explain", "--format", "json", "-o", "out.json", "--top", "0",
				"--root", "a", "--root", "b", "--depth", "3", "--strict", "--threads", "--input-format", "folded",
				"--keep-unresolved", "--no-collapse", "--collapse-threshold", "0.97", "run/"},
			want: ReportOptions{Profile: "run/", commonFlags: commonFlags{inputFlags: inputFlags{MapFile: "m.yaml", Output: "out.json", Strict: true, InputFormat: "folded"}, Format: "json", tableFlags: tableFlags{Explain: true, Top: 0, Roots: []string{"a", "b"}, Depth: 3, Threads: true, KeepUnresolved: true, NoCollapse: true, CollapseThreshold: 0.97}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *ReportOptions
			s := &streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			cmd := newReportCmd(s, func(o *ReportOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			got.IO = nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("report %v parsed as %+v, want %+v", tt.args, *got, tt.want)
			}
		})
	}
}

func TestReportUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"negative top", []string{"report", "--top", "-1", "x"}, "--top -1"},
		{"negative depth", []string{"report", "--depth", "-1", "x"}, "--depth -1"},
		{"unknown format", []string{"report", "--format", "xml", "x"}, `--format "xml": want table, json, csv or markdown`},
		{"no profile", []string{"report"}, "report takes one PROFILE"},
		{"two profiles", []string{"report", "a", "b"}, "report takes one PROFILE"},
		{"bad flag", []string{"report", "--nope", "x"}, "unknown flag"},
		{"top not a number", []string{"report", "--top", "many", "x"}, "invalid argument"},
		{"collapse threshold 0", []string{"report", "--collapse-threshold", "0", "x"}, "--collapse-threshold 0: want a share above 0 and at most 1"},
		{"collapse threshold above 1", []string{"report", "--collapse-threshold", "1.5", "x"}, "--collapse-threshold 1.5"},
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

// handProfile is a small hand-built profile: total 20, a recurses, t;x is truncated.
func handProfile(meta *fold.Meta) *fold.Profile {
	return &fold.Profile{Meta: meta, Stacks: []fold.Stack{
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "mysql_update", "row_upd"}, Value: 10},
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "trans_commit_stmt", "trans_commit_stmt", "fsync"}, Value: 5},
		{Frames: []string{"t", "start_thread", "do_command"}, Value: 3},
		{Frames: []string{"t", "__send"}, Value: 2},
	}}
}

// fakeLoad serves the profiles ps by argument, a copy each time.
func fakeLoad(ps map[string]*fold.Profile) input.LoadFunc {
	return func(path string, _ fold.ParseOptions) (*fold.Profile, error) {
		p, ok := ps[path]
		if !ok {
			return nil, errors.New("no such test profile " + path)
		}
		return p.Clone(), nil
	}
}

func TestReportRootNotFound(t *testing.T) {
	var out, errOut bytes.Buffer
	opts := &ReportOptions{
		IO:          &streams{Out: &out, ErrOut: &errOut},
		Profile:     "p",
		commonFlags: commonFlags{Format: formatTable, tableFlags: tableFlags{Top: 30, Depth: 2, Roots: []string{"mysqld_stmt_exec"}}},
		Load:        fakeLoad(map[string]*fold.Profile{"p": handProfile(nil)}),
	}
	err := runReport(context.Background(), opts)
	if !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), "closest: mysqld_stmt_execute") {
		t.Errorf("runReport(--root mysqld_stmt_exec) = %v, want a usage error naming mysqld_stmt_execute", err)
	}
}

func TestReportHandBuilt(t *testing.T) {
	tests := []struct {
		name  string
		meta  *fold.Meta
		flags commonFlags
		want  []string // substrings of the table output, in order
	}{
		{
			name:  "per op and subtree",
			meta:  &fold.Meta{Label: "v1", CPUSecondsTotal: 2, Operations: 1000, QPS: 166.67},
			flags: commonFlags{Format: formatTable, tableFlags: tableFlags{Top: 30, Depth: 2, Roots: []string{"mysqld_stmt_execute"}}},
			want: []string{
				"Profile v1: 20 samples",
				"│ v1      │ samples │    20 │  2.00 │ 1000 │ 166.67 │ 1.00 │  2000.00 │    - │",
				"│ mysqld_stmt_execute │        15 │    0 │  75.00 │   0.00 │    1500.00 │       0.00 │",
				"│ trans_commit_stmt   │         5 │    0 │  25.00 │   0.00 │     500.00 │       0.00 │",
				"mysqld_stmt_execute 75.00%: mysql_update 50.00%, trans_commit_stmt 25.00%",
				"warning: 10.00% of samples are in stacks that do not start at a thread root",
			},
		},
		{
			name:  "no metadata",
			flags: commonFlags{Format: formatMarkdown, tableFlags: tableFlags{Top: 2, Depth: 2}},
			want: []string{
				"## Profile p: 20 samples",
				"| `start_thread` | 18 | 0 | 90.00 | 0.00 |",
				"| `mysqld_stmt_execute` | 15 | 0 | 75.00 | 0.00 |",
				"> note: per-op figures (CPU µs per operation) need run metadata",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			opts := &ReportOptions{
				IO: &streams{Out: &out, ErrOut: &errOut}, Profile: "p", commonFlags: tt.flags,
				Load: fakeLoad(map[string]*fold.Profile{"p": handProfile(tt.meta)}),
			}
			if err := runReport(context.Background(), opts); err != nil {
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

// unresolvedProfile is handProfile's shape with unresolved frames: static
// functions between mysqld_stmt_execute and its named callees, and a stack
// ending inside them. Total 20.
func unresolvedProfile() *fold.Profile {
	return &fold.Profile{Stacks: []fold.Stack{
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "[mariadbd]", "execute_loop", "[mariadbd]", "mysql_update", "row_upd"}, Value: 10},
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "[mariadbd]", "execute_loop", "trans_commit_stmt", "fsync"}, Value: 6},
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "[mariadbd]", "execute_loop", "[mariadbd]", "[libc.so.6]"}, Value: 2},
		{Frames: []string{"t", "start_thread", "do_command"}, Value: 2},
	}}
}

func TestReportUnresolvedAndChains(t *testing.T) {
	tests := []struct {
		name  string
		flags commonFlags
		want  []string // substrings of the output, in order
	}{
		{
			name:  "defaults",
			flags: commonFlags{Format: formatTable, tableFlags: tableFlags{Top: 1, Depth: 1, CollapseThreshold: 0.99}},
			want: []string{
				"│ mysqld_stmt_execute → execute_loop │    18 │    0 │      90.00 │    100.00 │",
				"│   mysql_update → row_upd           │    10 │   10 │      50.00 │     55.56 │",
				"│   trans_commit_stmt → fsync        │     6 │    6 │      30.00 │     33.33 │",
				"│   [unresolved]                     │     2 │    2 │      10.00 │     11.11 │",
				"mysqld_stmt_execute 90.00%: mysql_update 50.00%, trans_commit_stmt 30.00%",
				"Unresolved frames ([mariadbd], [libc.so.6], ...) are looked through",
				"a → b: b holds at least 99% of a",
			},
		},
		{
			name:  "keep unresolved, no collapse",
			flags: commonFlags{Format: formatTable, tableFlags: tableFlags{Top: 1, Depth: 2, CollapseThreshold: 0.99, KeepUnresolved: true, NoCollapse: true}},
			want: []string{
				"│ mysqld_stmt_execute │",
				"│   [mariadbd]        │",
				"│     execute_loop    │",
				"mysqld_stmt_execute 90.00%: [mariadbd] 90.00%",
			},
		},
		{
			name:  "json",
			flags: commonFlags{Format: formatJSON, tableFlags: tableFlags{Top: 1, Depth: 1, CollapseThreshold: 0.99}},
			want: []string{
				`"chain": [`, `"mysqld_stmt_execute",`, `"execute_loop"`, `"end_value": 18,`,
				`"[unresolved]"`, `"unresolved": true`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			tt.flags.Roots = []string{"mysqld_stmt_execute"}
			opts := &ReportOptions{
				IO: &streams{Out: &out, ErrOut: &errOut}, Profile: "p", commonFlags: tt.flags,
				Load: fakeLoad(map[string]*fold.Profile{"p": unresolvedProfile()}),
			}
			if err := runReport(context.Background(), opts); err != nil {
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
			if tt.flags.KeepUnresolved && strings.Contains(out.String(), "[unresolved]") {
				t.Errorf("--keep-unresolved output has an [unresolved] row:\n%s", out.String())
			}
		})
	}
}

// TestReportJSONRoundTrip checks the JSON numbers against diff.Summarize on
// the same mapped profile.
func TestReportJSONRoundTrip(t *testing.T) {
	needParse(t)
	dir := filepath.Join(runsDir, "mariadb-10.11-update-index")
	out, errOut, code := runCLI(t, "report", "--format", "json", "--top", "0", "--root", "mysqld_stmt_execute", dir)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got report.JSONReport
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	p, err := loader(&streams{ErrOut: &bytes.Buffer{}}, nil)(dir, fold.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if naive := readFolded(t, filepath.Join(dir, fold.StacksFile)); naive.Total() != p.Total() {
		t.Errorf("loaded total %d, naive reader %d", p.Total(), naive.Total())
	}
	m := symbolmap.Default()
	mp, _ := m.Apply(p)
	sum := diff.Summarize(mp, diff.Options{IsThreadRoot: m.IsThreadRoot, Roots: []string{"mysqld_stmt_execute"}, Depth: 2, Labels: []string{"10.11"}})
	// The defaults look through [mariadbd]: the root row is a chain.
	if got := sum.Subtrees[0].Root.Chain; len(got) < 2 || got[0] != "mysqld_stmt_execute" || slices.Contains(got, "[mariadbd]") {
		t.Errorf("root chain = %v, want mysqld_stmt_execute → ... without [mariadbd]", got)
	}

	if got.Profile.Label != "10.11" || got.Profile.Total != sum.Profile.Total || *got.Profile.CPUMicrosPerOp != sum.Profile.MicrosPerOp {
		t.Errorf("profile = %+v, want label 10.11 total %d cpu/o %v", got.Profile, sum.Profile.Total, sum.Profile.MicrosPerOp)
	}
	if got.FunctionsTotal != len(sum.Functions) || len(got.Functions) != len(sum.Functions) {
		t.Fatalf("functions: %d/%d, want %d", len(got.Functions), got.FunctionsTotal, len(sum.Functions))
	}
	for i, f := range sum.Functions {
		g := got.Functions[i]
		if g.Name != f.Name || g.Inclusive != f.Inclusive || g.Self != f.Self || g.InclusivePct != f.InclusivePct ||
			g.SelfPct != f.SelfPct || *g.InclusiveMicrosPerOp != f.InclusiveMicrosPerOp || *g.SelfMicrosPerOp != f.SelfMicrosPerOp {
			t.Errorf("functions[%d] = %+v, want %+v", i, g, f)
		}
	}
	if len(got.Subtrees) != 1 || got.Subtrees[0].Nodes[0].Value != sum.Subtrees[0].Root.Value || got.Subtrees[0].Summary != sum.Subtrees[0].Summary(0) {
		t.Errorf("subtrees = %+v, want root value %d", got.Subtrees, sum.Subtrees[0].Root.Value)
	}
	if c := got.Profile.Completeness; c == nil || c.Incomplete != sum.Completeness.Incomplete {
		t.Errorf("completeness = %+v, want %+v", c, sum.Completeness)
	}
}

func TestReportRootRenamedOrElided(t *testing.T) {
	needParse(t)
	dir := filepath.Join(runsDir, "mariadb-11.8-update-index")
	_, errOut, code := runCLI(t, "report", "--map", mapFile, "--root", "Sql_cmd_update::update_single_table", dir)
	if code != exitUsage || !strings.Contains(errOut, "the symbol map removes this frame") {
		t.Errorf("elided root: exit %d, stderr %q; want a usage error saying the map removes it", code, errOut)
	}
	out, errOut, code := runCLI(t, "report", "--map", mapFile, "--top", "1", "--root", "Sql_cmd_dml::execute", dir)
	if code != exitOK || !strings.Contains(out, "Subtree mysql_update") {
		t.Errorf("renamed root: exit %d, stderr %q; want the subtree of its canonical name mysql_update:\n%s", code, errOut, out)
	}
}
