package symbolmap

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func mustParse(t *testing.T, src string) *Map {
	t.Helper()
	m, diags, err := Parse(strings.NewReader(src), "t.yaml")
	if err != nil {
		t.Fatalf("Parse: %v\n%v", err, diags)
	}
	return m
}

func profile(label string, stacks ...string) *fold.Profile {
	p := &fold.Profile{Meta: &fold.Meta{Label: label}}
	for _, s := range stacks {
		i := strings.LastIndexByte(s, ' ')
		v, err := strconv.ParseInt(s[i+1:], 10, 64)
		if err != nil {
			panic(err)
		}
		p.Stacks = append(p.Stacks, fold.Stack{Frames: strings.Split(s[:i], ";"), Value: v})
	}
	p.Normalize()
	return p
}

func folded(p *fold.Profile) string {
	var b strings.Builder
	for _, s := range p.Stacks {
		fmt.Fprintf(&b, "%s %d\n", s.Key(), s.Value)
	}
	return b.String()
}

func TestApplyRules(t *testing.T) {
	tests := []struct {
		name  string
		m     string
		label string
		in    []string
		want  string
	}{
		{
			name: "exact rename",
			m:    "version: 1\nrename:\n  - to: mysql_update\n    from: [Sql_cmd_dml::execute]\n",
			in:   []string{"t;do_command;Sql_cmd_dml::execute;x 1"},
			want: "t;do_command;mysql_update;x 1\n",
		},
		{
			name: "glob rename",
			m:    "version: 1\nrename:\n  - to: upd\n    glob: ['Sql_cmd_update::*']\n",
			in:   []string{"t;Sql_cmd_update::execute_inner;Sql_cmd_update::update_single_table 1", "t;Sql_cmd_dml::execute 2"},
			want: "t;Sql_cmd_dml::execute 2\nt;upd;upd 1\n",
		},
		{
			name: "glob question mark and literal bracket",
			m:    "version: 1\nrename:\n  - to: '[libc]'\n    glob: ['[libc.so.?]']\n",
			in:   []string{"t;[libc.so.6];f 1", "t;[libc.so.66];g 1"},
			want: "t;[libc.so.66];g 1\nt;[libc];f 1\n",
		},
		{
			name: "regexp with group",
			m:    "version: 1\nrename:\n  - to: '$1'\n    re: ['(.*)_impl']\n",
			in:   []string{"t;foo_impl;bar_impl_x 1"},
			want: "t;foo;bar_impl_x 1\n",
		},
		{
			name: "regexp named group",
			m:    "version: 1\nrename:\n  - to: 'ha_${e}'\n    re: ['ha_(?P<e>innobase|rocksdb)::.*']\n",
			in:   []string{"t;ha_innobase::write_row 1"},
			want: "t;ha_innobase 1\n",
		},
		{
			name: "first rule wins",
			m:    "version: 1\nrename:\n  - to: first\n    glob: ['a*']\n  - to: second\n    from: [ab]\n",
			in:   []string{"t;ab 1"},
			want: "t;first 1\n",
		},
		{
			name: "renamed name is not renamed again",
			m:    "version: 1\nrename:\n  - to: b\n    from: [a]\n  - to: c\n    from: [b]\n",
			in:   []string{"t;a 1"},
			want: "t;b 1\n",
		},
		{
			name: "exact before glob within a rule set is per rule order",
			m:    "version: 1\nrename:\n  - to: g\n    glob: ['x*']\n    from: [xy]\n",
			in:   []string{"t;xy;xz 1"},
			want: "t;g;g 1\n",
		},
		{
			name: "elide merges stacks",
			m:    "version: 1\nelide:\n  - from: [wrapper]\n",
			in:   []string{"t;a;wrapper;b 1", "t;a;b 2"},
			want: "t;a;b 3\n",
		},
		{
			name: "elide before rename",
			m:    "version: 1\nelide:\n  - glob: ['w*']\nrename:\n  - to: x\n    from: [wrap]\n",
			in:   []string{"t;wrap;f 1"},
			want: "t;f 1\n",
		},
		{
			name: "comm only on frame 0",
			m:    "version: 1\ncomm:\n  - to: mariadbd\n    from: [one_connection]\n",
			in:   []string{"one_connection;one_connection 1"},
			want: "mariadbd;one_connection 1\n",
		},
		{
			name: "comm glob and regexp",
			m:    "version: 1\ncomm:\n  - to: mariadbd\n    glob: ['ib_*']\n  - to: 'w$1'\n    re: ['worker-(\\d+)']\n",
			in:   []string{"ib_tpool_worker;f 1", "worker-12;f 1"},
			want: "mariadbd;f 1\nw12;f 1\n",
		},
		{
			name: "rename and elide never touch frame 0",
			m:    "version: 1\nelide:\n  - from: [mariadbd]\nrename:\n  - to: x\n    from: [mariadbd]\n",
			in:   []string{"mariadbd;mariadbd;f 1"},
			want: "mariadbd;f 1\n",
		},
		{
			name:  "label match",
			m:     "version: 1\nrename:\n  - to: mysql_update\n    from: [Sql_cmd_dml::execute]\n    labels: ['11.*']\n",
			label: "11.8",
			in:    []string{"t;Sql_cmd_dml::execute 1"},
			want:  "t;mysql_update 1\n",
		},
		{
			name:  "label no match",
			m:     "version: 1\nrename:\n  - to: mysql_update\n    from: [Sql_cmd_dml::execute]\n    labels: ['11.*']\n",
			label: "10.11",
			in:    []string{"t;Sql_cmd_dml::execute 1"},
			want:  "t;Sql_cmd_dml::execute 1\n",
		},
		{
			name:  "no label never matches a label-limited rule",
			m:     "version: 1\nelide:\n  - from: [f]\n    labels: ['1*']\n",
			label: "",
			in:    []string{"t;f;g 1"},
			want:  "t;f;g 1\n",
		},
		{
			name: "normalize before rename",
			m:    "version: 1\nrename:\n  - to: lock\n    from: [pthread_mutex_lock]\n",
			in:   []string{"t;pthread_mutex_lock@@GLIBC_2.2.5 1"},
			want: "t;lock 1\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustParse(t, tt.m)
			in := profile(tt.label, tt.in...)
			before := folded(in)
			got, _ := m.Apply(in)
			if folded(got) != tt.want {
				t.Errorf("Apply = \n%s\nwant\n%s", folded(got), tt.want)
			}
			if folded(in) != before {
				t.Errorf("Apply modified its input: %s, was %s", folded(in), before)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		in, all, off string
		opts         string
	}{
		{in: "pthread_mutex_lock@@GLIBC_2.2.5", all: "pthread_mutex_lock", opts: "symbol_versions", off: "pthread_mutex_lock@@GLIBC_2.2.5"},
		{in: "memcpy@GLIBC_2.14", all: "memcpy", opts: "symbol_versions", off: "memcpy@GLIBC_2.14"},
		{in: "finish_task_switch.isra.0", all: "finish_task_switch", opts: "clone_suffixes", off: "finish_task_switch.isra.0"},
		{in: "foo.constprop.0.isra.0", all: "foo", opts: "clone_suffixes", off: "foo.constprop.0.isra.0"},
		{in: "foo.part.0", all: "foo", opts: "clone_suffixes", off: "foo.part.0"},
		{in: "foo.cold", all: "foo", opts: "clone_suffixes", off: "foo.cold"},
		{in: "foo.lto_priv.0", all: "foo", opts: "clone_suffixes", off: "foo.lto_priv.0"},
		{in: "foo [clone .isra.0]", all: "foo", opts: "clone_suffixes", off: "foo [clone .isra.0]"},
		{in: "__GI___pthread_mutex_unlock_usercnt", all: "__pthread_mutex_unlock_usercnt", opts: "glibc_aliases", off: "__GI___pthread_mutex_unlock_usercnt"},
		{in: "__GI_memcpy", all: "memcpy", opts: "glibc_aliases", off: "__GI_memcpy"},
		{in: "__GI___clone3", all: "clone3", opts: "glibc_aliases", off: "__GI___clone3"},
		{in: "__clone", all: "clone", opts: "glibc_aliases", off: "__clone"},
		{in: "__clone_internal", all: "__clone_internal", opts: "glibc_aliases", off: "__clone_internal"},
		{in: "__GI___lll_lock_wait.isra.0@GLIBC_2.2.5", all: "__lll_lock_wait", opts: "glibc_aliases", off: "__GI___lll_lock_wait"},
		{in: "schedule.isra.0_[k]", all: "schedule_[k]", opts: "clone_suffixes", off: "schedule.isra.0_[k]"},
		// Not clone suffixes: left alone.
		{in: "std::vector<int>::size", all: "std::vector<int>::size", opts: "clone_suffixes", off: "std::vector<int>::size"},
		{in: "libfoo.so.6", all: "libfoo.so.6", opts: "clone_suffixes", off: "libfoo.so.6"},
		{in: "[libc.so.6]", all: "[libc.so.6]", opts: "clone_suffixes", off: "[libc.so.6]"},
		{in: "@weird", all: "@weird", opts: "symbol_versions", off: "@weird"},
		{in: "__GI_", all: "__GI_", opts: "glibc_aliases", off: "__GI_"},
	}
	for _, tt := range tests {
		if got := NormalizeName(tt.in); got != tt.all {
			t.Errorf("NormalizeName(%q) = %q, want %q", tt.in, got, tt.all)
		}
		m := mustParse(t, fmt.Sprintf("version: 1\nnormalize:\n  %s: false\n", tt.opts))
		got, keep := m.MapName("", 1, tt.in)
		if !keep || got != tt.off {
			t.Errorf("with %s off: MapName(%q) = %q, %v, want %q", tt.opts, tt.in, got, keep, tt.off)
		}
		if got := m.Normalize(tt.in); got != tt.off {
			t.Errorf("with %s off: Normalize(%q) = %q, want %q", tt.opts, tt.in, got, tt.off)
		}
		if got := Default().Normalize(tt.in); got != tt.all {
			t.Errorf("Default().Normalize(%q) = %q, want %q", tt.in, got, tt.all)
		}
	}
	// Frame 0 (the thread name) is never normalised.
	if got, _ := Default().MapName("", 0, "x.isra.0"); got != "x.isra.0" {
		t.Errorf("frame 0 normalised: %q", got)
	}
}

// TestResolver maps frames one at a time through a Resolver: the same
// names as Apply gives, label-limited rules chosen by the Resolver's
// label, the thread name (frame 0) through comm rules only.
func TestResolver(t *testing.T) {
	m := mustParse(t, `version: 1
comm:
  - to: conn
    glob: ['one_connection*']
elide:
  - from: [wrapper]
rename:
  - to: mysql_update
    from: [Sql_cmd_dml::execute]
    labels: ['11.*']
`)
	tests := []struct {
		label string
		i     int
		name  string
		want  string
		keep  bool
	}{
		{"11.8", 1, "Sql_cmd_dml::execute", "mysql_update", true},
		{"10.11", 1, "Sql_cmd_dml::execute", "Sql_cmd_dml::execute", true},
		{"11.8", 1, "Sql_cmd_dml::execute.isra.0", "mysql_update", true},
		{"11.8", 1, "wrapper", "", false},
		{"11.8", 0, "one_connection_7", "conn", true},
		{"11.8", 0, "wrapper", "wrapper", true},
		{"", 1, "memcpy@GLIBC_2.14", "memcpy", true},
	}
	rs := map[string]*Resolver{}
	for _, tt := range tests {
		r := rs[tt.label]
		if r == nil {
			r = m.Resolver(tt.label)
			rs[tt.label] = r
		}
		for range 2 { // the second time from the cache
			if got, keep := r.Frame(tt.i, tt.name); got != tt.want || keep != tt.keep {
				t.Errorf("Resolver(%q).Frame(%d, %q) = %q, %v, want %q, %v", tt.label, tt.i, tt.name, got, keep, tt.want, tt.keep)
			}
		}
		if got, keep := m.MapName(tt.label, tt.i, tt.name); got != tt.want || keep != tt.keep {
			t.Errorf("MapName(%q, %d, %q) = %q, %v, want %q, %v", tt.label, tt.i, tt.name, got, keep, tt.want, tt.keep)
		}
	}
}

func TestSubsystem(t *testing.T) {
	m := mustParse(t, `version: 1
subsystems:
  - name: commit
    from: [trans_commit_stmt]
  - name: update
    from: [mysql_update]
  - name: innodb
    glob: ['ha_innobase::*']
  - name: update2
    re: ['ha_.*']
`)
	tests := []struct {
		stack string
		want  string
	}{
		{"t;do_command;mysql_update;ha_innobase::update_row", "update"},     // nearest root wins
		{"t;do_command;trans_commit_stmt;mysql_update", "commit"},           // nearest root wins, other order
		{"t;do_command;ha_innobase::write_row;trans_commit_stmt", "innodb"}, // glob
		{"t;ha_innobase::x", "innodb"},                                      // tie at one frame: first listed wins
		{"t;ha_rocksdb::x", "update2"},                                      // regexp
		{"t;do_command;dispatch_command", OtherSubsystem},                   // none
		{"trans_commit_stmt", "commit"},                                     // frame 0 counts too
		{"", OtherSubsystem},                                                // empty
	}
	for _, tt := range tests {
		var fr []string
		if tt.stack != "" {
			fr = strings.Split(tt.stack, ";")
		}
		if got := m.Subsystem(fr); got != tt.want {
			t.Errorf("Subsystem(%q) = %q, want %q", tt.stack, got, tt.want)
		}
	}
	want := []string{"commit", "update", "innodb", "update2", OtherSubsystem}
	if got := m.Subsystems(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Subsystems() = %v, want %v", got, want)
	}
	if !m.HasSubsystems() || Default().HasSubsystems() {
		t.Errorf("HasSubsystems: map %v, default %v", m.HasSubsystems(), Default().HasSubsystems())
	}
	if got := Default().Subsystem([]string{"t", "trans_commit_stmt"}); got != OtherSubsystem {
		t.Errorf("Default().Subsystem = %q, want other", got)
	}
}

func TestThreadRoots(t *testing.T) {
	ext := mustParse(t, "version: 1\nthread_roots:\n  from: [handle_one_connection]\n  glob: ['tpool::*']\n")
	repl := mustParse(t, "version: 1\nthread_roots:\n  replace_defaults: true\n  from: [handle_one_connection]\n")
	tests := []struct {
		name              string
		def, extend, repl bool
	}{
		{"start_thread", true, true, false},
		{"clone3", true, true, false},
		{"__libc_start_main", true, true, false},
		{"_start", true, true, false},
		{"handle_one_connection", false, true, true},
		{"tpool::thread_pool_generic::worker_main", false, true, false},
		{"do_command", false, false, false},
	}
	for _, tt := range tests {
		if got := Default().IsThreadRoot(tt.name); got != tt.def {
			t.Errorf("Default().IsThreadRoot(%q) = %v, want %v", tt.name, got, tt.def)
		}
		if got := ext.IsThreadRoot(tt.name); got != tt.extend {
			t.Errorf("extended IsThreadRoot(%q) = %v, want %v", tt.name, got, tt.extend)
		}
		if got := repl.IsThreadRoot(tt.name); got != tt.repl {
			t.Errorf("replaced IsThreadRoot(%q) = %v, want %v", tt.name, got, tt.repl)
		}
	}
}

func TestExplanation(t *testing.T) {
	m := mustParse(t, "version: 1\nelide:\n  - from: [w]\nrename:\n  - to: b\n    from: [a]\n")
	p := profile("", "t;a;w;a 3", "t;a 2", "t;x.isra.0 5", "t;c 7")
	_, ex := m.Apply(p)
	got := map[string]int64{}
	for _, r := range ex.Rewrites {
		got[r.Original+">"+r.Result] = r.Value
	}
	want := map[string]int64{"a>b": 5, "w>": 3, "x.isra.0>x": 5}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rewrites = %v, want %v", got, want)
	}
	for i := 1; i < len(ex.Rewrites); i++ {
		if ex.Rewrites[i].Value > ex.Rewrites[i-1].Value {
			t.Errorf("rewrites not sorted by value: %v", ex.Rewrites)
		}
	}
	for _, r := range ex.Rewrites {
		if r.Original == "a" && !strings.Contains(r.Rule, `rename -> "b" (t.yaml:5)`) {
			t.Errorf("rule of a = %q, want it to name the rename and its line", r.Rule)
		}
	}
}

func TestCheck(t *testing.T) {
	m := mustParse(t, `version: 1
comm:
  - to: mariadbd
    from: [one_connection, nosuch_thread]
elide:
  - from: [Sql_cmd_update::execute_inner]
    labels: ['11.*']
rename:
  - to: mysql_update
    from: [Sql_cmd_dml::execute, mysql_update_typo]
subsystems:
  - name: update
    from: [mysql_update, Sql_cmd_dml::execute]
thread_roots:
  from: [handle_one_connection]
`)
	p := profile("10.11", "one_connection;start_thread;handle_one_connection;Sql_cmd_dml::execute 1")
	var got []string
	for _, d := range m.Check(p) {
		if d.Severity != Warning {
			t.Errorf("Check gave a non-warning: %v", d)
		}
		got = append(got, fmt.Sprintf("%d:%d %s", d.Line, d.Column, d.Msg))
	}
	want := []string{
		`4:28 comm -> "mariadbd" (t.yaml:3): "nosuch_thread" matches no thread name of profile "10.11"`,
		`6:5 elide (t.yaml:6): not applicable to profile "10.11": labels [11.*] do not match`,
		`10:34 rename -> "mysql_update" (t.yaml:9): "mysql_update_typo" matches no frame left after normalize and elide of profile "10.11"`,
		`13:26 subsystem "update": "Sql_cmd_dml::execute" matches no mapped frame of profile "10.11"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Check =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := Default().Check(p); len(d) != 0 {
		t.Errorf("Default().Check = %v, want none", d)
	}
}

// TestBadMaps compares the diagnostics of each map under testdata/bad with
// its .golden file (go test -update rewrites them).
func TestBadMaps(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad maps: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			m, diags, err := Parse(bytes.NewReader(data), f)
			var b strings.Builder
			for _, d := range diags {
				fmt.Fprintln(&b, d)
			}
			hasErr := false
			for _, d := range diags {
				if d.Line < 1 || d.Column < 1 || d.Hint == "" {
					t.Errorf("diagnostic without position or hint: %#v", d)
				}
				hasErr = hasErr || d.Severity == Error
			}
			if hasErr != (err != nil) || (err != nil) == (m != nil) {
				t.Errorf("Parse: map %v, err %v, with error diagnostics %v", m != nil, err, hasErr)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse error %v does not wrap ErrInvalid", err)
			}
			golden := strings.TrimSuffix(f, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if b.String() != string(want) {
				t.Errorf("diagnostics of %s:\n%s\nwant:\n%s", f, b.String(), want)
			}
		})
	}
}

func TestParseDiagnostics(t *testing.T) {
	tests := []struct {
		name, src string
		wantErr   bool
		want      string // substring of one diagnostic
	}{
		{"did you mean", "version: 1\nsubsytems: []\n", true, `1:1` + ""},
		{"empty", "", true, "empty symbol map"},
		{"comment only", "# nothing\n", true, "empty symbol map"},
		{"not a mapping", "- a\n", true, "expected a mapping"},
		{"version missing", "rename:\n  - to: a\n    from: [b]\n", false, "no version key"},
		{"version too new", "version: 9\n", true, "version 9 is newer"},
		{"two documents", "version: 1\n---\nversion: 1\n", true, "one YAML document"},
		{"alias entry", "version: 1\nelide:\n  - from: &a [x]\n  - from: [*a]\n", true, "entries must be strings"},
		{"empty name", "version: 1\nelide:\n  - from: ['']\n", true, "empty name"},
		{"glob without wildcard", "version: 1\nelide:\n  - glob: [abc]\n", false, "has no wildcard"},
		{"dollar without re", "version: 1\nrename:\n  - to: $1\n    glob: ['a*']\n", true, "only re patterns have groups"},
		{"named group missing", "version: 1\nrename:\n  - to: ${x}\n    re: ['(a)']\n", true, "no group of that name"},
		{"replace roots with none", "version: 1\nthread_roots:\n  replace_defaults: true\n", true, "no stack would be complete"},
		{"rename of elided name", "version: 1\nelide:\n  - from: [w]\nrename:\n  - to: x\n    from: [w]\n", false, "never applies"},
		{"label-limited duplicate target is fine", "version: 1\nrename:\n  - to: x\n    from: [a]\n    labels: ['5.7']\n  - to: x\n    from: [b]\n    labels: ['8.*']\n", false, ""},
	}
	tests[0].want = `unknown key "subsytems" (hint: did you mean "subsystems"?)`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, diags, err := Parse(strings.NewReader(tt.src), "t.yaml")
			if (err != nil) != tt.wantErr || (m == nil) != tt.wantErr {
				t.Fatalf("Parse(%q) = map %v, err %v; want error %v (diags %v)", tt.src, m != nil, err, tt.wantErr, diags)
			}
			var all []string
			for _, d := range diags {
				all = append(all, d.String())
			}
			joined := strings.Join(all, "\n")
			if tt.want == "" {
				if len(diags) != 0 {
					t.Errorf("Parse(%q) diagnostics = %s, want none", tt.src, joined)
				}
				return
			}
			if !strings.Contains(joined, tt.want) {
				t.Errorf("Parse(%q) diagnostics = %s, want one containing %q", tt.src, joined, tt.want)
			}
		})
	}
}

// TestParseSyntaxErrors: a YAML syntax error is reported at the line and
// column of the problem (yaml.v3 itself says the line in the comment), and
// the error summary names that line too.
func TestParseSyntaxErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // the diagnostic without "t.yaml:"
	}{
		// yaml.v3: line 3
		{"unclosed [", "version: 1\nrename:\n  - to: a\n    from: [x, y\n  - to: b\n    from: [z]\n",
			"4:11: error: YAML syntax: the '[' opened here is never closed (hint: close it with ']', or quote the value if the '[' is part of it)"},
		// yaml.v3: line 1
		{"unclosed {", "version: 1\nnormalize: {clone_suffixes: false\nrename:\n  - to: b\n    from: [a]\n",
			"2:12: error: YAML syntax: the '{' opened here is never closed (hint: close it with '}', or quote the value if the '{' is part of it)"},
		// yaml.v3: line 2
		{"[ closed by }", "version: 1\n\nthread_roots: {from: [a, b}\n",
			"3:22: error: YAML syntax: the '[' opened here is closed by a '}' (line 3, column 27) (hint: close it with ']', or quote the value if the '[' is part of it)"},
		// yaml.v3: line 1
		{"] closes nothing", "version: 1\nelide:\n  - from: [a]]\n",
			"3:14: error: YAML syntax: this ']' closes nothing (hint: remove it, or quote the value it is part of)"},
		{"unclosed double quote", "version: 1\nrename:\n  - to: \"mysql_update\n    from: [x]\n",
			`3:9: error: YAML syntax: the quote (") opened here is never closed (hint: end the string with "; inside double quotes write \" for a quote)`},
		// yaml.v3: line 5
		{"quote closed on a later line", "version: 1\nrename:\n  - to: \"a\n    from: [x]\n  - to: \"b\"\n    from: [y]\n",
			`3:9: error: YAML syntax: the quote (") opened here ends only on line 5 (hint: end the string on this line with "; inside double quotes write \" for a quote)`},
		{"unclosed single quote", "version: 1\nelide:\n  - glob: ['a*]\n",
			"3:12: error: YAML syntax: the quote (') opened here is never closed (hint: end the string with '; inside single quotes write '' for a quote)"},
		// yaml.v3: line 3
		{"tab indentation", "version: 1\nrename:\n  - to: a\n\tfrom: [x]\n",
			"4:1: error: YAML syntax: a tab indents this line; YAML indents with spaces only (hint: replace the tab by spaces)"},
		// yaml.v3: line 2
		{"key indented less", "version: 1\nrename:\n  - to: a\n   from: [x]\n",
			"4:4: error: YAML syntax: did not find expected '-' indicator (hint: check indentation and quoting; patterns with ':', '*', '[' or '{' need quotes)"},
		{"key indented more", "version: 1\nrename:\n  - to: a\n      from: [x]\n",
			"4:7: error: YAML syntax: mapping values are not allowed in this context (hint: check indentation and quoting; patterns with ':', '*', '[' or '{' need quotes)"},
		{"mapping value not allowed", "version: 1\nrename:\n  - to: a\n    from: [x]\n  - to: Item::val: int\n    from: [y]\n",
			"5:3: error: YAML syntax: mapping values are not allowed in this context (hint: check indentation and quoting; patterns with ':', '*', '[' or '{' need quotes)"},
		// yaml.v3: line 2
		{"list item in a mapping", "version: 1\nrename:\n  to: a\n  - from: [x]\n",
			"4:3: error: YAML syntax: did not find expected key (hint: check indentation and quoting; patterns with ':', '*', '[' or '{' need quotes)"},
		// Not syntax errors for yaml.v3: the parser's own checks.
		{"repeated top-level key", "version: 1\nelide:\n  - from: [a]\nelide:\n  - from: [b]\n",
			`4:1: error: top level: key "elide" repeated (hint: merge it with the one on line 2)`},
		{"repeated rule key", "version: 1\nrename:\n  - to: a\n    from: [x]\n    to: b\n",
			`5:5: error: rename[0]: key "to" repeated (hint: merge it with the one on line 3)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, diags, err := Parse(strings.NewReader(tt.src), "t.yaml")
			if m != nil || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) = map %v, %v; want no map and an error wrapping ErrInvalid", tt.src, m != nil, err)
			}
			if len(diags) != 1 {
				t.Fatalf("Parse(%q) diagnostics = %v, want one", tt.src, diags)
			}
			if got := strings.TrimPrefix(diags[0].String(), "t.yaml:"); got != tt.want {
				t.Errorf("Parse(%q) = %s\nwant %s", tt.src, got, tt.want)
			}
			line, _, _ := strings.Cut(tt.want, ":")
			if want := "1 error, first at line " + line + ":"; !strings.Contains(err.Error(), want) {
				t.Errorf("Parse(%q) error = %v, want it to say %q", tt.src, err, want)
			}
		})
	}
}

// TestShippedMaps: the maps under examples/ parse without errors or warnings.
func TestShippedMaps(t *testing.T) {
	files, _ := filepath.Glob("../examples/symbolmaps/*.yaml")
	if len(files) < 2 {
		t.Fatalf("shipped maps: %v, want mariadb.yaml and mysql.yaml", files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, diags, err := Parse(bytes.NewReader(data), f)
		if err != nil || len(diags) != 0 {
			t.Errorf("Parse(%s) = %v, diagnostics %v", f, err, diags)
			continue
		}
		if st := m.Stats(); st.Rename == 0 || st.Subsystems < 5 {
			t.Errorf("%s: stats %+v, want renames and >= 5 subsystems", f, st)
		}
	}
}

// readFolded is a minimal folded-stacks reader, so that this test does not
// depend on fold.Parse.
func readFolded(t *testing.T, path, label string) *fold.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &fold.Profile{Meta: &fold.Meta{Label: label}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l := sc.Text()
		i := strings.LastIndexByte(l, ' ')
		v, err := strconv.ParseInt(l[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("%s: bad line %q", path, l)
		}
		p.Stacks = append(p.Stacks, fold.Stack{Frames: strings.Split(l[:i], ";"), Value: v})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	p.Normalize()
	return p
}

// inclusive returns each name's inclusive share (stack counted once).
func inclusive(p *fold.Profile) map[string]float64 {
	v := map[string]int64{}
	for _, s := range p.Stacks {
		seen := map[string]bool{}
		for _, f := range s.Frames[1:] {
			if !seen[f] {
				seen[f] = true
				v[f] += s.Value
			}
		}
	}
	out := map[string]float64{}
	for k, x := range v {
		out[k] = float64(x) / float64(p.Total())
	}
	return out
}

func TestMariaDBMapOnFixtures(t *testing.T) {
	data, err := os.ReadFile("../examples/symbolmaps/mariadb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := Parse(bytes.NewReader(data), "mariadb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if sk := m.SkippedByLabel(""); sk != nil {
		t.Errorf("mariadb.yaml has rules limited by labels, which profiles without label do not get: %v", sk)
	}
	shares := map[string]float64{}
	for _, v := range []string{"10.11", "11.8"} {
		p := readFolded(t, fmt.Sprintf("../testdata/golden/mariadb-%s-update-index.stackcollapse.folded", v), v)
		mp, ex := m.Apply(p)
		// The same stacks without label (a plain file) map the same.
		plain := *p
		plain.Meta = nil
		if mq, _ := m.Apply(&plain); folded(mq) != folded(mp) {
			t.Errorf("%s: the map gives other stacks without the label", v)
		}
		if mp.Total() != p.Total() {
			t.Errorf("%s: Apply changed the total: %d, was %d", v, mp.Total(), p.Total())
		}
		in := inclusive(mp)
		shares[v] = in["mysql_update"]
		if in["mysql_update"] < 0.15 || in["mysql_update"] > 0.35 {
			t.Errorf("%s: mysql_update share %.3f, want 15%%..35%%", v, in["mysql_update"])
		}
		for _, gone := range []string{"Sql_cmd_dml::execute", "Sql_cmd_update::update_single_table", "Sql_cmd_update::execute_inner", "[libc.so.6]"} {
			if in[gone] != 0 {
				t.Errorf("%s: %s still holds %.3f after mapping", v, gone, in[gone])
			}
		}
		for _, s := range mp.Stacks {
			if s.Frames[0] != "mariadbd" {
				t.Errorf("%s: thread name %q left after mapping", v, s.Frames[0])
				break
			}
		}
		if v == "11.8" && len(ex.Rewrites) == 0 {
			t.Errorf("11.8: no rewrites explained")
		}
		// Subsystems: every sample in exactly one, shares add up to 100%.
		sub := map[string]int64{}
		for _, s := range mp.Stacks {
			sub[m.Subsystem(s.Frames)] += s.Value
		}
		var sum int64
		for _, n := range m.Subsystems() {
			sum += sub[n]
		}
		if sum != mp.Total() || len(sub) > len(m.Subsystems()) {
			t.Errorf("%s: subsystem values sum to %d, total %d (%v)", v, sum, mp.Total(), sub)
		}
		if pct := float64(sub["update"]) / float64(mp.Total()); math.Abs(pct-in["mysql_update"]) > 1e-9 {
			t.Errorf("%s: update subsystem %.3f differs from mysql_update's inclusive share %.3f", v, pct, in["mysql_update"])
		}
	}
	if d := math.Abs(shares["10.11"] - shares["11.8"]); d > 0.05 {
		t.Errorf("mysql_update share 10.11 %.3f vs 11.8 %.3f: more than 5 points apart", shares["10.11"], shares["11.8"])
	}
}

func TestConcurrentUse(t *testing.T) {
	m := mustParse(t, "version: 1\nsubsystems:\n  - name: a\n    glob: ['a*']\n")
	done := make(chan bool)
	for i := 0; i < 4; i++ {
		go func() {
			for j := 0; j < 200; j++ {
				_ = m.Subsystem([]string{"t", fmt.Sprintf("a%d", j)})
				_ = m.IsThreadRoot(fmt.Sprintf("x%d", j))
			}
			done <- true
		}()
	}
	for i := 0; i < 4; i++ {
		<-done
	}
	if m.Subsystem([]string{"t", "a1"}) != "a" {
		t.Error("Subsystem after concurrent use is wrong")
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/bad/*.yaml")
	files = append(files, "../examples/symbolmaps/mariadb.yaml", "../examples/symbolmaps/mysql.yaml", "testdata/context/map.yaml")
	for _, fn := range files {
		if data, err := os.ReadFile(fn); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("version: 1\nrename:\n  - to: '$1'\n    re: ['(a)b']\n"))
	f.Add([]byte("version: 1\nnormalize: {glibc_cancel: false}\nelide:\n  - from: [__send]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, diags, err := Parse(bytes.NewReader(data), "fuzz.yaml")
		if (m == nil) == (err == nil) {
			t.Fatalf("Parse: map %v and error %v: want exactly one", m != nil, err)
		}
		for _, d := range diags {
			if d.Line < 1 || d.Msg == "" {
				t.Fatalf("diagnostic without line or message: %#v", d)
			}
		}
		if m != nil {
			p := profile("11.8", "one_connection;a;b_impl;ab 1", "t;x.isra.0;c 2",
				"t;f;__send;__syscall_cancel;__internal_syscall_cancel;__syscall_cancel_arch 3",
				"t;Sql_cmd_dml::execute;[mariadbd];Sql_cmd_dml::prepare;Sql_cmd_update::prepare_inner 4")
			mp, _ := m.Apply(p)
			if mp.Total() != p.Total() {
				t.Fatalf("Apply changed the total: %d, was %d", mp.Total(), p.Total())
			}
			_ = m.Check(p)
		}
	})
}
