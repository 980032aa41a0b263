package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
)

// handProfile is a small hand-built profile: total 20, a recurses, t;__send
// does not start at a thread root.
func handProfile(meta *fold.Meta) *fold.Profile {
	return &fold.Profile{Meta: meta, Stacks: []fold.Stack{
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "mysql_update", "row_upd"}, Value: 10},
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "trans_commit_stmt", "trans_commit_stmt", "fsync"}, Value: 5},
		{Frames: []string{"t", "start_thread", "do_command"}, Value: 3},
		{Frames: []string{"t", "__send"}, Value: 2},
	}}
}

func isRoot(f string) bool { return f == "start_thread" }

// decode marshals v as WriteJSON does and decodes it into a generic map.
func decode(t *testing.T, v any) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSON(&b, v); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "}\n") || !strings.HasPrefix(b.String(), "{\n  \"") {
		t.Errorf("WriteJSON: want an object indented by two spaces and a newline, got %.40q...", b.String())
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestProfileJSONShape(t *testing.T) {
	opts := diff.Options{IsThreadRoot: isRoot, Roots: []string{"mysqld_stmt_execute"}, Depth: 1, Labels: []string{"v1"}}
	tests := []struct {
		name    string
		meta    *fold.Meta
		present []string
		absent  []string
	}{
		{"no metadata", nil, []string{"per_op_missing", "warnings"}, []string{"subsystems", "rewrites"}},
		{"per op", &fold.Meta{CPUSecondsTotal: 2, Operations: 1000}, []string{"warnings"}, []string{"per_op_missing", "rewrites"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum := diff.Summarize(handProfile(tt.meta), opts)
			m := decode(t, ProfileJSON(sum, nil, Options{Top: 2, Explain: tt.meta != nil, Warnings: sum.Warnings()}))
			for _, k := range tt.present {
				if _, ok := m[k]; !ok {
					t.Errorf("%q missing", k)
				}
			}
			for _, k := range tt.absent {
				if _, ok := m[k]; ok {
					t.Errorf("%q present, want it left out", k)
				}
			}
			if got := len(m["functions"].([]any)); got != 2 || m["functions_total"].(float64) != float64(len(sum.Functions)) {
				t.Errorf("functions: %d of %v, want 2 of %d", got, m["functions_total"], len(sum.Functions))
			}
			f := m["functions"].([]any)[0].(map[string]any)
			_, perOp := f["inclusive_us_per_op"]
			if f["name"] != "start_thread" || perOp != (tt.meta != nil) {
				t.Errorf("functions[0] = %v, want start_thread with per-op figures %v", f, tt.meta != nil)
			}
			p := m["profile"].(map[string]any)
			if _, ok := p["cpu_us_per_op"]; ok != (tt.meta != nil) || p["count_unit"] != "samples" || p["label"] != "v1" {
				t.Errorf("profile = %v", p)
			}
			if w := m["warnings"].([]any); len(w) != 1 || !strings.HasPrefix(w[0].(string), "warning: 10.00% of samples") {
				t.Errorf("warnings = %v", w)
			}
			node := m["subtrees"].([]any)[0].(map[string]any)["nodes"].([]any)[0].(map[string]any)
			if node["pct"].(float64) != 75 || node["level"].(float64) != 0 {
				t.Errorf("root node = %v, want 75%% at level 0", node)
			}
		})
	}
}

func TestDiffJSONShape(t *testing.T) {
	target := &fold.Profile{Stacks: []fold.Stack{
		{Frames: []string{"t", "start_thread", "mysqld_stmt_execute", "mysql_update", "row_upd"}, Value: 10},
		{Frames: []string{"t", "start_thread", "net_flush"}, Value: 10},
	}}
	r, err := diff.Compute(handProfile(nil), []*fold.Profile{target}, diff.Options{IsThreadRoot: isRoot, Labels: []string{"v1", "v2"}})
	if err != nil {
		t.Fatal(err)
	}
	j := DiffJSON(r, nil, Options{Warnings: r.Warnings()})
	if len(j.Warnings) != 1 || !strings.HasPrefix(j.Warnings[0], "warning: v1: 10.00%") {
		t.Errorf("warnings = %q, want the base's, labelled", j.Warnings)
	}
	m := decode(t, j)
	for _, f := range m["functions"].([]any) {
		f := f.(map[string]any)
		ratio := f["ratio"].([]any)
		if f["name"] == "net_flush" && (ratio[0] != nil || f["only_in"] != "v2") {
			t.Errorf("net_flush = %v, want ratio null and only_in v2", f)
		}
		if f["name"] == "mysql_update" && ratio[0].(float64) != 1 {
			t.Errorf("mysql_update ratio = %v, want 1 (50%% in both)", ratio[0])
		}
	}
	if len(m["profiles"].([]any)) != 2 {
		t.Errorf("profiles = %v, want base and target", m["profiles"])
	}
}
