package symbolmap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestContextRules maps the stacks of testdata/context with its map.yaml
// (rules with caller and callee conditions) and compares stacks and
// rewrites with the .golden files (go test -update rewrites them). Each
// case also states the stacks it must give, so that a golden rewritten
// carelessly still fails.
func TestContextRules(t *testing.T) {
	f, err := os.Open("testdata/context/map.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, diags, err := Parse(f, "map.yaml")
	if err != nil || len(diags) > 0 {
		t.Fatalf("Parse(map.yaml) = %v, %v", diags, err)
	}
	tests := []struct {
		file string
		want []string // lines of the mapped profile
		not  []string // substrings no mapped stack may hold
	}{
		{"caller.folded", []string{
			// elided under Sql_cmd_dml::execute (then renamed: its callee)
			"one_connection;do_command;mysql_update;Sql_cmd_update::update_single_table;update_row;ha_innobase::update_row 10",
			// caller at any depth holds, but no InnoDB callee
			"one_connection;do_command;mysql_update;Sql_cmd_update::update_single_table;handler::ha_update_row 2",
			"one_connection;do_command;mysql_update;update_row;ha_innobase::update_row 5",
			// another caller: kept
			"one_connection;do_command;Sql_cmd_update::execute_inner;Sql_cmd_update::update_single_table 3",
		}, nil},
		{"callee.folded", []string{
			"one_connection;do_command;mysql_update;Sql_cmd_update::update_single_table 10",
			"one_connection;do_command;mysql_update;Sql_cmd_update::prepare_inner 4", // depth 2
			"one_connection;do_command;mysql_delete;Sql_cmd_delete::execute_inner;Sql_cmd_delete::delete_from_single_table 6",
			"one_connection;do_command;mysql_delete;Sql_cmd_delete::prepare_inner 1",
		}, []string{"Sql_cmd_dml::"}},
		{"unresolved.folded", []string{
			// unresolved frames are looked through and not counted
			"one_connection;do_command;mysql_update;[mariadbd];[unknown];0x7f3a0c2b1e40;Sql_cmd_update::update_single_table 7",
			"one_connection;do_command;mysql_update;[mariadbd];[mariadbd];Sql_cmd_update::prepare_inner 3",
			"one_connection;do_command;mysql_delete;[libc.so.6];Sql_cmd_delete::execute_inner 2",
		}, []string{"Sql_cmd_dml::"}},
		{"nomatch.folded", []string{
			"one_connection;do_command;Sql_cmd_dml::execute 4",                                                                          // no callee
			"one_connection;do_command;Sql_cmd_dml::execute;Sql_cmd_dml::prepare;open_tables_for_query;Sql_cmd_update::prepare_inner 3", // too deep
			"one_connection;do_command;Sql_cmd_dml::execute;execute_sqlcom_select;JOIN::exec 5",
			"one_connection;do_command;Sql_cmd_dml::execute;Sql_cmd_insert::execute_inner;write_record 2",
			"one_connection;do_command;mysql_update;Sql_cmd_update::execute_inner 1",                            // another caller
			"one_connection;Sql_cmd_update::execute_inner 1",                                                    // the thread name is no caller
			"one_connection;do_command;Sql_cmd_update::update_single_table;handler::ha_update_row;[mariadbd] 2", // an unresolved callee is none
		}, []string{"mysql_delete", ";update_row;"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata/context", tt.file)
			got := explained(t, m, path)
			golden := strings.TrimSuffix(path, ".folded") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("Apply(%s) =\n%s\nwant\n%s", path, got, want)
			}
			mp, _ := m.Apply(readFolded(t, path, ""))
			stacks := folded(mp)
			for _, w := range tt.want {
				if !strings.Contains(stacks, w+"\n") {
					t.Errorf("Apply(%s) lacks %q:\n%s", path, w, stacks)
				}
			}
			if n := strings.Count(stacks, "\n"); n != len(tt.want) {
				t.Errorf("Apply(%s) gives %d stacks, want %d:\n%s", path, n, len(tt.want), stacks)
			}
			for _, n := range tt.not {
				if strings.Contains(stacks, n) {
					t.Errorf("Apply(%s) still holds %q:\n%s", path, n, stacks)
				}
			}
			// Resolver.Stack says the same as Apply.
			r := m.Resolver("")
			for _, s := range readFolded(t, path, "").Stacks {
				var kept []string
				for _, f := range r.Stack(s.Frames) {
					if f.Keep {
						kept = append(kept, f.Name)
					}
				}
				if k := strings.Join(kept, ";"); !strings.Contains(stacks, k+" ") {
					t.Errorf("Resolver.Stack(%s) = %q, which Apply does not give", s.Key(), k)
				}
			}
		})
	}
}

// TestContextExplain checks that --explain names the condition that made
// a context rule apply, and the frame that satisfied it.
func TestContextExplain(t *testing.T) {
	m := mustParse(t, "version: 1\nrename:\n  - to: mysql_update\n    from: [Sql_cmd_dml::execute]\n    callee: {glob: ['Sql_cmd_update::*'], depth: 2}\n")
	_, ex := m.Apply(profile("", "t;Sql_cmd_dml::execute;[mariadbd];Sql_cmd_dml::prepare;Sql_cmd_update::prepare_inner 3", "t;Sql_cmd_dml::execute 2"))
	if len(ex.Rewrites) != 1 {
		t.Fatalf("rewrites = %+v, want one", ex.Rewrites)
	}
	want := `rename -> "mysql_update" (t.yaml:3) when callee "Sql_cmd_update::prepare_inner" matches glob "Sql_cmd_update::*" (depth 2)`
	if r := ex.Rewrites[0]; r.Rule != want || r.Value != 3 {
		t.Errorf("rewrite = %q (value %d), want %q (value 3)", r.Rule, r.Value, want)
	}
}

func TestIsUnresolvedFrame(t *testing.T) {
	for name, want := range map[string]bool{
		"[unknown]": true, "[mariadbd]": true, "[libc.so.6]": true, "0x7f3a0c2b1e40": true, "0XAB": true,
		"0x": false, "0xzz": false, "mysql_update": false, "[x": false, "operator[]": false, "": false,
	} {
		if got := IsUnresolvedFrame(name); got != want {
			t.Errorf("IsUnresolvedFrame(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestAppliedAndSkipped checks what map check --profile and the no-label
// warning are built on: the rules that changed a profile, once per stack,
// with their conditions, and the rules a label leaves out.
func TestAppliedAndSkipped(t *testing.T) {
	m := mustParse(t, `version: 1
comm:
  - {to: mariadbd, from: [one_connection], labels: ['11.*']}
elide:
  - {from: [w]}
rename:
  - {to: mysql_update, from: [Sql_cmd_dml::execute], callee: {glob: ['Sql_cmd_update::*']}}
  - {to: never, from: [nothing]}
`)
	p := profile("", "one_connection;Sql_cmd_dml::execute;Sql_cmd_update::execute_inner;w;w 3",
		"one_connection;Sql_cmd_dml::execute 2", "one_connection;w 5")
	var got []string
	for _, u := range m.Applied(p) {
		got = append(got, fmt.Sprintf("%s %d/%d [%s]", u.Rule, u.Value, u.Total, u.Context))
	}
	want := []string{
		"elide (t.yaml:5) 8/10 []",
		`rename -> "mysql_update" (t.yaml:7) 3/10 [callee glob "Sql_cmd_update::*" (depth 1)]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Applied =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sk := m.SkippedByLabel("")
	if len(sk) != 1 || sk[0].Kind != "comm" || sk[0].Labels != "[11.*]" || sk[0].Line != 3 {
		t.Errorf("SkippedByLabel(\"\") = %+v, want the comm rule of line 3", sk)
	}
	if sk := m.SkippedByLabel("11.8"); sk != nil {
		t.Errorf("SkippedByLabel(\"11.8\") = %+v, want none", sk)
	}
	p.Meta.Label = "11.8"
	if u := m.Applied(p); len(u) != 3 || u[0].Kind != "comm" || u[0].Value != 10 {
		t.Errorf("Applied(label 11.8) = %+v, want the comm rule first (10/10)", u)
	}
}
