package lab

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestParseConfigGood(t *testing.T) {
	const text = `servers:
  - label: "10.5"
    suite: bullseye
    options: [--innodb_flush_log_at_trx_commit=2]
  - label: "10.11"
    path: /usr/sbin/mariadbd
    base: true
  - label: "11.8"
    suite: trixie
    package: mariadb-server-core
server_options: [skip-name-resolve, "innodb_adaptive_hash_index=OFF"]
workloads:
  - test: oltp_point_select
  - name: upd
    test: oltp_update_non_index
    tables: 2
    table_size: 5000
    threads: 4
    duration: 1m
    warmup: 10
    prepared_statements: false
capture: {sampler: perf, frequency: 99, call_graph: dwarf, stack_copy: always, events: cpu}
map: ../symbolmaps/mariadb.yaml
roots: [mysqld_stmt_execute, dispatch_command]
placement: server=1,client=0
`
	c, err := ParseConfig(strings.NewReader(text), "bench.yaml")
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	want := &Config{
		File: "bench.yaml",
		Servers: []ServerSpec{
			{Label: "10.5", Suite: "bullseye", Options: []string{"innodb_flush_log_at_trx_commit=2"}, Line: 2},
			{Label: "10.11", Path: "/usr/sbin/mariadbd", Base: true, Line: 5},
			{Label: "11.8", Suite: "trixie", Package: "mariadb-server-core", Line: 8},
		},
		ServerOptions: []string{"skip-name-resolve", "innodb_adaptive_hash_index=OFF"},
		Workloads: []Workload{
			{Name: "oltp_point_select", Test: "oltp_point_select", Tables: DefaultTables, TableSize: DefaultTableSize,
				Threads: DefaultThreads, Duration: DefaultDuration, Warmup: DefaultWarmup, PreparedStatements: true, Line: 13},
			{Name: "upd", Test: "oltp_update_non_index", Tables: 2, TableSize: 5000, Threads: 4,
				Duration: time.Minute, Warmup: 10 * time.Second, PreparedStatements: false, Line: 14},
		},
		Capture:   Capture{Sampler: "perf", Frequency: 99, CallGraph: "dwarf", StackCopy: "always", Events: "cpu", OffCPU: "auto"},
		Map:       "../symbolmaps/mariadb.yaml",
		Roots:     []string{"mysqld_stmt_execute", "dispatch_command"},
		Placement: "server=1,client=0",
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("ParseConfig =\n%+v\nwant\n%+v", c, want)
	}
	if got := c.Base(); got == nil || got.Label != "10.11" {
		t.Errorf("Base() = %+v, want 10.11", got)
	}
	if got, want := c.MapPath("/etc/flamediff"), "/etc/symbolmaps/mariadb.yaml"; got != want {
		t.Errorf("MapPath = %q, want %q", got, want)
	}
	wantArgs := []string{"oltp_update_non_index", "--tables=2", "--table-size=5000", "--threads=4", "--time=60", "--db-ps-mode=disable"}
	if got := c.Workloads[1].SysbenchArgs(); !reflect.DeepEqual(got, wantArgs) {
		t.Errorf("SysbenchArgs = %q, want %q", got, wantArgs)
	}
	if got := c.Workloads[0].SysbenchArgs(); got[len(got)-1] != "--db-ps-mode=auto" {
		t.Errorf("SysbenchArgs of the default workload = %q, want --db-ps-mode=auto last", got)
	}
}

func TestParseConfigDefaults(t *testing.T) {
	c, err := ParseConfig(strings.NewReader("servers: [{label: x, path: /usr/sbin/mariadbd}]\nworkloads: [{test: oltp_read_only}]\n"), "min.yaml")
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if b := c.Base(); b == nil || b.Label != "x" {
		t.Errorf("Base() of a single server = %+v, want it", b)
	}
	want := Capture{Sampler: DefaultSampler, Frequency: DefaultFrequency, CallGraph: DefaultCallGraph, StackCopy: DefaultStackCopy, Events: DefaultEvents, OffCPU: DefaultOffCPU}
	if c.Capture != want {
		t.Errorf("Capture = %+v, want %+v", c.Capture, want)
	}
	if !reflect.DeepEqual(c.Roots, []string{DefaultRoot}) {
		t.Errorf("Roots = %q, want [%s]", c.Roots, DefaultRoot)
	}
	if c.MapPath("/x") != "" {
		t.Errorf("MapPath without map = %q, want empty", c.MapPath("/x"))
	}
	if c.Placement != DefaultPlacement || DefaultPlacement != "same" {
		t.Errorf("Placement = %q (DefaultPlacement %q), want same", c.Placement, DefaultPlacement)
	}
}

// capture.call_graph takes dwarf,SIZE as record does, in block and
// (quoted) flow style, and hands it on unchanged.
func TestParseConfigCallGraphSize(t *testing.T) {
	const head = "servers: [{label: x, path: /usr/sbin/mariadbd}]\nworkloads: [{test: oltp_read_only}]\n"
	for _, text := range []string{
		head + "capture:\n  sampler: perf\n  call_graph: dwarf,16384\n",
		head + "capture: {sampler: perf, call_graph: \"dwarf,16384\"}\n",
	} {
		c, err := ParseConfig(strings.NewReader(text), "c.yaml")
		if err != nil {
			t.Fatalf("ParseConfig(%q): %v", text, err)
		}
		if c.Capture.CallGraph != "dwarf,16384" {
			t.Errorf("ParseConfig(%q): call graph %q, want dwarf,16384", text, c.Capture.CallGraph)
		}
	}
}

// TestParseConfigErrors checks each mistake is reported at its line and
// column with a fix.
// capture.switch_fix reaches the config (and the matrix passes it to
// record.Config.SwitchFix or NoSwitchFix); absent, record's default.
func TestParseConfigSwitchFix(t *testing.T) {
	for _, tt := range []struct {
		capture string
		want    string
	}{{"{switch_fix: true}", "true"}, {"{switch_fix: false}", "false"}, {"{frequency: 99}", "default"}} {
		c, err := ParseConfig(strings.NewReader("servers: [{label: a, path: /usr/sbin/mariadbd}]\nworkloads: [{test: oltp_point_select}]\ncapture: "+tt.capture+"\n"), "c.yaml")
		if err != nil {
			t.Fatalf("%s: %v", tt.capture, err)
		}
		got := "default"
		if v := c.Capture.SwitchFix; v != nil {
			got = strconv.FormatBool(*v)
		}
		if got != tt.want {
			t.Errorf("capture: %s: switch_fix %s, want %s", tt.capture, got, tt.want)
		}
	}
}

// capture.off_cpu reaches the config with where it was written (for
// Start's error when on cannot be): auto, on and off, true and false for
// on and off; left out, auto at line 0. With the perf sampler, auto and
// off are accepted (on is an error: TestParseConfigErrors).
func TestParseConfigOffCPU(t *testing.T) {
	for _, tt := range []struct {
		capture   string
		want      string
		line, col int
	}{
		{"{frequency: 99}", "auto", 0, 0},
		{"{off_cpu: auto}", "auto", 3, 20},
		{"{off_cpu: on}", "on", 3, 20},
		{"{off_cpu: off}", "off", 3, 20},
		{"\n  sampler: bpf\n  off_cpu: true", "on", 5, 12},
		{"{off_cpu: false}", "off", 3, 20},
		{"{sampler: perf, off_cpu: auto}", "auto", 3, 35},
		{"{sampler: perf, off_cpu: off}", "off", 3, 35},
	} {
		c, err := ParseConfig(strings.NewReader("servers: [{label: a, path: /usr/sbin/mariadbd}]\nworkloads: [{test: oltp_point_select}]\ncapture: "+tt.capture+"\n"), "c.yaml")
		if err != nil {
			t.Fatalf("capture: %s: %v", tt.capture, err)
		}
		if got := c.Capture; got.OffCPU != tt.want || got.OffCPULine != tt.line || got.OffCPUColumn != tt.col {
			t.Errorf("capture: %s: off_cpu %q at %d:%d, want %q at %d:%d", tt.capture, got.OffCPU, got.OffCPULine, got.OffCPUColumn, tt.want, tt.line, tt.col)
		}
	}
}

// A server's kind is optional: named, it picks the suite's package of
// that kind (and Resolve checks the binary); left out, the binary says.
func TestParseConfigKind(t *testing.T) {
	const text = `servers:
  - {label: "10.11", path: /usr/sbin/mariadbd, base: true}
  - {label: "9.7", suite: sid, kind: mysql}
  - {label: "11.8", suite: sid}
  - {label: "9.7-own", path: /opt/mysql/bin/mysqld, kind: mysql}
  - {label: "9.7-pkg", suite: sid, package: mysql-server-core}
workloads: [{test: oltp_point_select}]
`
	c, err := ParseConfig(strings.NewReader(text), "k.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		kind    Kind
		pkg     string
		defPkg  string
		defFail bool
	}{
		{kind: "", defPkg: "mariadb-server-core"}, // a path: not fetched
		{kind: MySQL, defPkg: "mysql-server-core"},
		{kind: "", defPkg: "mariadb-server-core"},
		{kind: MySQL, defFail: true},
		{kind: "", pkg: "mysql-server-core", defPkg: "mariadb-server-core"},
	} {
		sp := c.Servers[i]
		if sp.Kind != want.kind || sp.Package != want.pkg {
			t.Errorf("server %s: Kind %q, Package %q; want %q, %q", sp.Label, sp.Kind, sp.Package, want.kind, want.pkg)
		}
		suite := sp.Suite
		if suite == "" {
			suite = "sid"
		}
		if sp.Path != "" && sp.Kind == MySQL {
			suite = "trixie" // no MySQL there
		}
		got, err := DefaultPackage(suite, sp.Kind)
		if (err != nil) != want.defFail || got != want.defPkg && !want.defFail {
			t.Errorf("DefaultPackage(%s, %q) = %q, %v; want %q (error: %v)", suite, sp.Kind, got, err, want.defPkg, want.defFail)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	const okServers = "servers: [{label: a, path: /usr/sbin/mariadbd}]\n"
	const okWorkloads = "workloads: [{test: oltp_point_select}]\n"
	for _, tc := range []struct {
		name, text string
		want       []string // each must appear in the error, in order
	}{
		{"empty", "", []string{"c.yaml:1:1: empty config"}},
		{"syntax", "servers:\n\t- a\n", []string{"c.yaml:2:1: YAML syntax: a tab indents this line", "fix: replace the tab by spaces"}},
		{"syntax yaml.v3 words", "servers:\n  - a\n   b: 1\n", []string{"c.yaml:3:4: YAML syntax: mapping values are not allowed in this context", "fix: check indentation"}},
		{"not a mapping", "- a\n", []string{"c.yaml:1:1: expected a mapping"}},
		{"unknown top key", okServers + okWorkloads + "captur: {}\n", []string{`c.yaml:3:1: top level: unknown key "captur" (fix: did you mean "capture"?)`}},
		{"no servers", okWorkloads, []string{"c.yaml:1:1: no servers (fix: add a servers: list"}},
		{"no workloads", okServers, []string{"c.yaml:1:1: no workloads"}},
		{"placement", okServers + okWorkloads + "placement: apart\n",
			[]string{`c.yaml:3:12: placement "apart": want none, same, separate`, `fix: write same, separate, none, or server=CPUS,client=CPUS`}},
		{"placement list", okServers + okWorkloads + "placement: server=1,client=x\n",
			[]string{`c.yaml:3:12: placement "server=1,client=x": client: CPU list "x": "x" is not a CPU number`}},
		{"unknown suite", "servers:\n  - label: a\n    suite: bulseye\n" + okWorkloads,
			[]string{`c.yaml:3:12: server "a": unknown suite "bulseye" (fix: did you mean "bullseye"?)`}},
		{"unknown suite far", "servers:\n  - label: a\n    suite: jessie\n" + okWorkloads,
			[]string{`c.yaml:3:12: server "a": unknown suite "jessie" (fix: known suites: bullseye, bookworm, trixie, sid)`}},
		{"unknown kind", "servers:\n  - {label: a, suite: sid, kind: mysqld}\n" + okWorkloads,
			[]string{`c.yaml:2:34: server "a": unknown kind "mysqld" (fix: did you mean "mysql"?)`}},
		{"mysql from a release", "servers:\n  - {label: a, suite: trixie, kind: mysql}\n" + okWorkloads,
			[]string{`c.yaml:2:23: server "a": suite trixie has no MySQL server package (suites with one: sid) (fix: fetch MySQL from suite: sid, or name the package: to fetch)`}},
		{"path and suite", "servers:\n  - label: a\n    path: /usr/sbin/mariadbd\n    suite: trixie\n" + okWorkloads,
			[]string{`c.yaml:4:12: server "a" has both path and suite`}},
		{"neither path nor suite", "servers:\n  - label: a\n" + okWorkloads,
			[]string{`c.yaml:2:5: server "a" has neither path nor suite (fix: add path: /usr/sbin/mariadbd`}},
		{"relative path", "servers:\n  - {label: a, path: mariadbd}\n" + okWorkloads,
			[]string{`c.yaml:2:22: server "a": path "mariadbd" is not absolute`}},
		{"no label", "servers:\n  - path: /usr/sbin/mariadbd\n" + okWorkloads,
			[]string{"c.yaml:2:5: servers[0] has no label"}},
		{"repeated label", "servers:\n  - {label: a, path: /a, base: true}\n  - {label: a, suite: trixie}\n" + okWorkloads,
			[]string{`c.yaml:3:13: label "a" repeated (fix: give each server its own label (line 2 has this one))`}},
		{"missing base", "servers:\n  - {label: a, path: /a}\n  - {label: b, suite: trixie}\n" + okWorkloads,
			[]string{"c.yaml:2:3: no base server among 2 servers (fix: add base: true"}},
		{"two bases", "servers:\n  - {label: a, path: /a, base: true}\n  - {label: b, suite: trixie, base: true}\n" + okWorkloads,
			[]string{"c.yaml:3:37: more than one base server (fix: keep base: true on one server only (line 2 has it first))"}},
		{"base not bool", "servers:\n  - {label: a, path: /a, base: yes please}\n" + okWorkloads,
			[]string{`c.yaml:2:32: server "a": base must be true or false, found "yes please"`}},
		{"package without suite", "servers:\n  - {label: a, path: /a, package: foo}\n" + okWorkloads,
			[]string{`c.yaml:2:35: server "a": package is only for servers fetched from a suite`}},
		{"bad option", "servers:\n  - {label: a, path: /a, options: [\"=1\"]}\n" + okWorkloads,
			[]string{`c.yaml:2:36: server "a".options[0]: "=1" is not a server option`}},
		{"unknown server key", "servers:\n  - {label: a, path: /a, bsae: true}\n" + okWorkloads,
			[]string{`c.yaml:2:26: server "a": unknown key "bsae" (fix: did you mean "base"?)`}},
		{"command and test", okServers + "workloads:\n  - {name: x, test: oltp_point_select, command: [super-smack]}\n",
			[]string{`c.yaml:3:21: workloads[0]: test does not go with command (fix: keep test: (a sysbench test or microbenchmark) or command: (any other benchmark), not both)`}},
		{"command threads", okServers + "workloads:\n  - {name: x, command: [super-smack], threads: 4}\n",
			[]string{`c.yaml:3:48: workloads[0]: threads does not go with command (fix: remove threads: a command is run as it is; give its options in its arguments)`}},
		{"command string", okServers + "workloads:\n  - {name: x, command: super-smack -d mysql a.smack}\n",
			[]string{`c.yaml:3:24: workloads[0].command must be a non-empty list, found "super-smack -d mysql a.smack" (fix: write the command as a list`}},
		{"command without name", okServers + "workloads:\n  - {command: [super-smack]}\n",
			[]string{`c.yaml:3:5: workloads[0] runs a command and has no name (fix: add name:`}},
		{"command unknown field", okServers + "workloads:\n  - {name: x, command: [sh, -c, \"mysql -S {sock}\"]}\n",
			[]string{`c.yaml:3:33: workloads[0].command[2]: unknown field {sock} (fix: the lab fills in {socket}, {user}, {database})`}},
		{"unknown test", okServers + "workloads:\n  - test: oltp_update_nonindex\n",
			[]string{`c.yaml:3:11: workloads[0]: unknown test "oltp_update_nonindex" (fix: did you mean "oltp_update_non_index"?)`}},
		{"no test", okServers + "workloads:\n  - threads: 2\n",
			[]string{"c.yaml:3:5: workloads[0] has no test"}},
		{"repeated workload", okServers + "workloads:\n  - test: oltp_insert\n  - test: oltp_insert\n",
			[]string{`c.yaml:4:5: workloads[1]: workload "oltp_insert" repeated (fix: give the workload a name: of its own (line 3 has "oltp_insert"))`}},
		{"zero threads", okServers + "workloads:\n  - {test: oltp_insert, threads: 0}\n",
			[]string{`c.yaml:3:34: workloads[0].threads must be a whole number above zero, found "0"`}},
		{"bad duration", okServers + "workloads:\n  - {test: oltp_insert, duration: soon}\n",
			[]string{`c.yaml:3:35: workloads[0].duration: "soon" is not a duration`}},
		{"fractional duration", okServers + "workloads:\n  - {test: oltp_insert, duration: 1500ms}\n",
			[]string{"c.yaml:3:35: workloads[0].duration: 1.5s is not a whole number of seconds"}},
		{"warmup too long", okServers + "workloads:\n  - {test: oltp_insert, duration: 10s, warmup: 10s}\n",
			[]string{"c.yaml:3:48: workloads[0]: warmup 10s is not shorter than duration 10s"}},
		{"ps not bool", okServers + "workloads:\n  - {test: oltp_insert, prepared_statements: auto}\n",
			[]string{`prepared_statements must be true or false, found "auto"`}},
		{"unknown microbenchmark", okServers + "workloads:\n  - test: random-pionts\n",
			[]string{`c.yaml:3:11: workloads[0]: unknown test "random-pionts" (fix: did you mean "random-points"?)`}},
		{"range on a sysbench test", okServers + "workloads:\n  - {test: oltp_read_only, range: 10}\n",
			[]string{`c.yaml:3:35: workloads[0]: range is for the named microbenchmarks; oltp_read_only is sysbench's own test (fix: remove range:, or name a microbenchmark that takes one: points-covered-pk,`}},
		{"range on a name that takes none", okServers + "workloads:\n  - test: hot-points\n    range: 100\n",
			[]string{`c.yaml:4:12: workloads[0]: hot-points takes no range (fix: remove range:, or name a microbenchmark that takes one: points-covered-pk, points-covered-si, points-notcovered-pk, points-notcovered-si, random-points, range-covered-pk, range-covered-si, range-notcovered-pk, range-notcovered-si, read-only, read-write)`}},
		{"zero range", okServers + "workloads:\n  - {test: random-points, range: 0}\n",
			[]string{`c.yaml:3:34: workloads[0].range must be a whole number above zero, found "0"`}},
		{"range not a number", okServers + "workloads:\n  - {test: random-points, range: wide}\n",
			[]string{`c.yaml:3:34: workloads[0].range must be a whole number above zero, found "wide"`}},
		{"two ranges of one name", okServers + "workloads:\n  - {test: random-points, range: 10}\n  - {test: random-points}\n",
			[]string{`c.yaml:4:5: workloads[1]: workload "random-points-10" repeated (fix: give the workload a name: of its own (line 3 has "random-points-10"))`}},
		{"unknown suite of microbenchmarks", okServers + "suite: smal\n",
			[]string{`c.yaml:2:8: suite: unknown suite of microbenchmarks "smal" (fix: did you mean "small"?)`}},
		{"Debian suite at the top level", okServers + "suite: bookworm\n",
			[]string{`c.yaml:2:8: suite: unknown suite of microbenchmarks "bookworm" (fix: the top-level suite: names microbenchmarks (full, small); a Debian suite goes in a server's suite:)`}},
		{"suite and a workload of the same name", okServers + "suite: small\nworkloads:\n  - test: scan\n",
			[]string{`c.yaml:4:5: workloads[0]: workload "scan" repeated (fix: give the workload a name: of its own (line 2 has "scan"))`}},
		{"workload_defaults with a test", okServers + okWorkloads + "workload_defaults: {test: scan}\n",
			[]string{`c.yaml:3:21: workload_defaults: unknown key "test" (fix: known keys: tables, table_size, threads, duration, warmup, prepared_statements)`}},
		{"workload_defaults warmup too long", okServers + "suite: small\nworkload_defaults: {duration: 4s}\n",
			[]string{"c.yaml:3:20: workload_defaults: warmup 5s is not shorter than duration 4s"}},
		{"workload_defaults not a mapping", okServers + okWorkloads + "workload_defaults: 10s\n",
			[]string{"c.yaml:3:20: workload_defaults must be a mapping, found \"10s\""}},
		{"neither workloads nor suite", okServers,
			[]string{"c.yaml:1:1: no workloads (fix: add a workloads: list, e.g. workloads: [{test: oltp_point_select}], or suite: small)"}},
		{"unknown sampler", okServers + okWorkloads + "capture: {sampler: pref}\n",
			[]string{`c.yaml:3:20: capture: unknown sampler "pref" (fix: did you mean "perf"?)`}},
		{"frequency too high", okServers + okWorkloads + "capture: {frequency: 100000}\n",
			[]string{"c.yaml:3:22: capture: frequency 100000 Hz is too high"}},
		{"unknown call graph", okServers + okWorkloads + "capture: {call_graph: dwarff}\n",
			[]string{`c.yaml:3:23: capture: unknown call_graph "dwarff" (fix: did you mean "dwarf"?)`}},
		{"unknown stack copy", okServers + okWorkloads + "capture: {stack_copy: alway}\n",
			[]string{`c.yaml:3:23: capture: unknown stack_copy "alway" (fix: did you mean "always"?)`}},
		{"unknown events", okServers + okWorkloads + "capture: {events: cpus}\n",
			[]string{`c.yaml:3:19: capture: unknown events "cpus" (fix: did you mean "cpu"?)`}},
		{"dwarf size not a multiple of 8", okServers + okWorkloads + "capture:\n  sampler: perf\n  call_graph: dwarf,4100\n",
			[]string{`c.yaml:5:15: capture: call_graph "dwarf,4100": stack size 4100 is not a multiple of 8 bytes (perf's unit): use 4104 (fix: write dwarf for the default stack size, or dwarf,SIZE with a size perf takes)`}},
		{"dwarf,SIZE unquoted in a flow mapping", okServers + okWorkloads + "capture: {sampler: perf, call_graph: dwarf,4096, events: cpu}\n",
			[]string{`c.yaml:3:44: capture: call_graph dwarf,4096 in a {...} mapping reads as call_graph: dwarf and a key 4096 (fix: quote it: call_graph: "dwarf,4096")`}},
		{"dwarf size above perf's", okServers + okWorkloads + "capture: {call_graph: \"dwarf,65536\"}\n",
			[]string{`c.yaml:3:23: capture: call_graph "dwarf,65536": stack size 65536: want 8 to 65528 bytes (perf's limits) (fix: write dwarf for the default stack size, or dwarf,SIZE with a size perf takes)`}},
		{"fp with a size", okServers + okWorkloads + "capture: {call_graph: \"fp,32\"}\n",
			[]string{`c.yaml:3:23: capture: call_graph "fp,32": fp takes no size (a stack size goes with dwarf: dwarf,SIZE) (fix: write dwarf for the default stack size, or dwarf,SIZE with a size perf takes)`}},
		{"unknown call graph with a size", okServers + okWorkloads + "capture: {call_graph: \"dwarff,4096\"}\n",
			[]string{`c.yaml:3:23: capture: unknown call_graph "dwarff,4096" (fix: did you mean "dwarf"?)`}},
		{"bpf with dwarf and a size", okServers + okWorkloads + "capture: {sampler: bpf, call_graph: \"dwarf,4096\"}\n",
			[]string{`c.yaml:3:37: capture: the bpf sampler walks frame pointers, not dwarf (fix: use sampler: perf (or auto) for dwarf, or call_graph: auto or fp with bpf)`}},
		{"bpf with dwarf", okServers + okWorkloads + "capture: {sampler: bpf, call_graph: dwarf}\n",
			[]string{`c.yaml:3:37: capture: the bpf sampler walks frame pointers, not dwarf (fix: use sampler: perf (or auto) for dwarf, or call_graph: auto or fp with bpf)`}},
		{"switch fix with perf", okServers + okWorkloads + "capture: {sampler: perf, switch_fix: true}\n",
			[]string{`c.yaml:3:38: capture: switch_fix corrects the BPF sampler's cpu-clock events (fix: use sampler: bpf or auto, or drop switch_fix)`}},
		{"switch fix not a bool", okServers + okWorkloads + "capture: {switch_fix: often}\n",
			[]string{`c.yaml:3:23: capture: switch_fix must be true or false, found "often" (fix: write true (record --switch-fix) or false)`}},
		{"off-CPU unknown", okServers + okWorkloads + "capture:\n  off_cpu: sometimes\n",
			[]string{`c.yaml:4:12: capture: off_cpu must be auto, on or off, found "sometimes" (fix: write one of auto, on, off`}},
		{"off-CPU a list", okServers + okWorkloads + "capture: {off_cpu: [on]}\n",
			[]string{`c.yaml:3:20: capture: off_cpu must be auto, on or off, found a list`}},
		{"off-CPU with perf", okServers + okWorkloads + "capture: {sampler: perf, off_cpu: on}\n",
			[]string{`c.yaml:3:35: capture: off_cpu needs the BPF sampler (its sched_switch program) (fix: use sampler: bpf or auto`}},
		{"off-CPU with dwarf", okServers + okWorkloads + "capture:\n  call_graph: dwarf\n  off_cpu: true\n",
			[]string{`c.yaml:5:12: capture: off_cpu needs the BPF sampler`}},
		{"empty roots", okServers + okWorkloads + "roots: []\n",
			[]string{"c.yaml:3:8: roots must be a non-empty list, found an empty list"}},
		{"map not a string", okServers + okWorkloads + "map: [a]\n",
			[]string{"c.yaml:3:6: map must be a word or a path, found a list"}},
		{"two documents", okServers + okWorkloads + "---\nx: 1\n",
			[]string{"a config holds one YAML document"}},
		{"several mistakes sorted", "servers:\n  - {label: a, suite: woody}\nworkloads:\n  - test: tpcc\n",
			[]string{"2 mistakes", `c.yaml:2:23: server "a": unknown suite "woody"`, `c.yaml:4:11: workloads[0]: unknown test "tpcc" (fix: sysbench tests: bulk_insert,`, "; microbenchmarks: delete, hot-points,"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig(strings.NewReader(tc.text), "c.yaml")
			if err == nil {
				t.Fatalf("ParseConfig(%q) = %+v, want an error", tc.text, c)
			}
			if c != nil {
				t.Errorf("ParseConfig(%q) returned a config with its error", tc.text)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("ParseConfig(%q) error %v does not wrap ErrInvalidConfig", tc.text, err)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Diagnostics) == 0 {
				t.Fatalf("ParseConfig(%q) error %T is not a *ConfigError with diagnostics", tc.text, err)
			}
			msg := err.Error()
			pos := 0
			for _, w := range tc.want {
				i := strings.Index(msg[pos:], w)
				if i < 0 {
					t.Fatalf("ParseConfig(%q) error:\n%s\nwant, after offset %d: %s", tc.text, msg, pos, w)
				}
				pos += i + len(w)
			}
		})
	}
}

// TestParseConfigCommand: a workload that is any command keeps its argv,
// gets the fields filled in by CommandArgs, prepares sysbench's tables
// with oltp_point_select and runs no sysbench test.
func TestParseConfigCommand(t *testing.T) {
	text := "servers: [{label: a, path: /usr/sbin/mariadbd}]\nworkloads:\n  - name: select-key\n    command: [sh, -c, \"client -S {socket} -u {user} {database}\", \"{socket}\"]\n    duration: 20s\n    table_size: 500\n"
	c, err := ParseConfig(strings.NewReader(text), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w := c.Workloads[0]
	if w.Name != "select-key" || w.Test != "" || w.Bench != nil || len(w.Command) != 4 || w.Duration != 20*time.Second {
		t.Fatalf("workload %+v, want select-key running its command for 20 s", w)
	}
	got := w.CommandArgs("/tmp/s.sock", "root", "sbtest")
	want := []string{"sh", "-c", "client -S /tmp/s.sock -u root sbtest", "/tmp/s.sock"}
	if !slices.Equal(got, want) {
		t.Errorf("CommandArgs = %q, want %q", got, want)
	}
	if w.Command[2] != "client -S {socket} -u {user} {database}" {
		t.Errorf("CommandArgs changed the workload's Command: %q", w.Command)
	}
	if p := w.PrepareArgs(); p[0] != "oltp_point_select" || !slices.Contains(p, "--table-size=500") {
		t.Errorf("PrepareArgs = %q, want oltp_point_select with --table-size=500", p)
	}
}

// TestParseConfigSyntax: a YAML syntax error is reported at the line and
// column of the problem (yaml.v3 itself says the line in the comment).
func TestParseConfigSyntax(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       string // the whole error
	}{
		// yaml.v3: line 3
		{"unclosed [", "servers:\n  - label: a\n    path: /a\n    options: [skip-log-bin\nworkloads:\n  - test: oltp_insert\n",
			"c.yaml:4:14: YAML syntax: the '[' opened here is never closed (fix: close it with ']', or quote the value if the '[' is part of it)"},
		// yaml.v3: line 1
		{"unclosed {", "servers:\n  - {label: a, path: /a\nworkloads: [{test: oltp_insert}]\n",
			"c.yaml:2:5: YAML syntax: the '{' opened here is never closed (fix: close it with '}', or quote the value if the '{' is part of it)"},
		{"{ closed by ]", "servers: [{label: a, path: /a]\n",
			"c.yaml:1:11: YAML syntax: the '{' opened here is closed by a ']' (line 1, column 30) (fix: close it with '}', or quote the value if the '{' is part of it)"},
		// yaml.v3: line 1
		{"] closes nothing", "servers: [{label: a, path: /a}]]\n",
			"c.yaml:1:32: YAML syntax: this ']' closes nothing (fix: remove it, or quote the value it is part of)"},
		{"unclosed quote", "servers:\n  - label: \"10.11\n    path: /a\n",
			`c.yaml:2:12: YAML syntax: the quote (") opened here is never closed (fix: end the string with "; inside double quotes write \" for a quote)`},
		// yaml.v3: line 2
		{"tab indentation", "servers:\n  - label: a\n\tpath: /a\n",
			"c.yaml:3:1: YAML syntax: a tab indents this line; YAML indents with spaces only (fix: replace the tab by spaces)"},
		// yaml.v3: line 2
		{"key indented less", "servers:\n  - label: a\n   path: /a\n",
			`c.yaml:3:4: YAML syntax: did not find expected '-' indicator (fix: check indentation and quoting; quote labels such as "10.5")`},
		{"mapping value not allowed", "servers:\n  - label: a\n    path: /a: b\n",
			`c.yaml:3:5: YAML syntax: mapping values are not allowed in this context (fix: check indentation and quoting; quote labels such as "10.5")`},
		// Not a syntax error for yaml.v3: the parser's own check.
		{"repeated key", "servers: [{label: a, path: /a}]\nworkloads: [{test: oltp_insert}]\nservers: []\n",
			`c.yaml:3:1: top level: key "servers" repeated (fix: keep one of this and line 1)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseConfig(strings.NewReader(tc.text), "c.yaml")
			if c != nil || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("ParseConfig(%q) = %v, %v; want an error wrapping ErrInvalidConfig", tc.text, c, err)
			}
			if want := "bench config c.yaml: 1 mistake\n  " + tc.want; err.Error() != want {
				t.Errorf("ParseConfig(%q) = %v\nwant %s", tc.text, err, want)
			}
		})
	}
}

func TestParseConfigReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ParseConfig(iotest.ErrReader(boom), "c.yaml")
	if !errors.Is(err, boom) || errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ParseConfig(failing reader) = %v, want it wrapping boom only", err)
	}
}

// TestExampleConfigs checks the shipped configs parse and name a symbol
// map that exists.
func TestExampleConfigs(t *testing.T) {
	paths, err := filepath.Glob("../examples/lab/*.yaml")
	if err != nil || len(paths) < 2 {
		t.Fatalf("examples/lab: %v, %d configs; want demo.yaml and ci.yaml", err, len(paths))
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			c, err := ParseConfig(f, p)
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if c.Base() == nil {
				t.Errorf("%s has no base server", p)
			}
			if m := c.MapPath(filepath.Dir(p)); m != "" {
				if _, err := os.Stat(m); err != nil {
					t.Errorf("%s: map: %v", p, err)
				}
			}
		})
	}
}

func TestBufferPoolFor(t *testing.T) {
	for _, tc := range []struct {
		ws   []Workload
		want string
	}{
		{nil, "512M"},
		{[]Workload{{Tables: 1, TableSize: 100000}}, "512M"},
		{[]Workload{{Tables: 8, TableSize: 1000000}, {Tables: 1, TableSize: 10}}, "6272M"},
	} {
		if got := BufferPoolFor(tc.ws); got != tc.want {
			t.Errorf("BufferPoolFor(%+v) = %s, want %s", tc.ws, got, tc.want)
		}
	}
}

func TestReadConfigFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	text := "servers:\n  - label: a\n    path: /usr/sbin/mariadbd\nworkloads:\n  - test: oltp_point_select\n"
	if err := os.WriteFile(good, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, data, err := ReadConfigFile(good)
	if err != nil || string(data) != text || len(cfg.Servers) != 1 || cfg.File != good {
		t.Fatalf("ReadConfigFile(good) = %+v, %q, %v; want its one server and its bytes", cfg, data, err)
	}
	absent := filepath.Join(dir, "absent.yaml")
	if _, _, err := ReadConfigFile(absent); err == nil || !strings.HasPrefix(err.Error(), "config "+absent) {
		t.Errorf("ReadConfigFile(absent) = %v, want an error naming the file", err)
	}
}
