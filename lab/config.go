package lab

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/flamediff/flamediff/internal/fserr"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/internal/textdist"
	"github.com/flamediff/flamediff/internal/yamlpos"
	"github.com/flamediff/flamediff/record"
	"github.com/flamediff/flamediff/workload/suite"
)

// ErrInvalidConfig is wrapped by ParseConfig's error when the config has
// mistakes; the error is a *ConfigError listing them.
var ErrInvalidConfig = errors.New("invalid bench config")

// Suites are the Debian suites a server can be fetched from.
var Suites = []string{"bullseye", "bookworm", "trixie", "sid"}

// SysbenchTests are the sysbench database tests a workload can name (the
// Lua tests shipped with sysbench 1.0).
var SysbenchTests = []string{
	"bulk_insert", "oltp_delete", "oltp_insert", "oltp_point_select",
	"oltp_read_only", "oltp_read_write", "oltp_update_index",
	"oltp_update_non_index", "oltp_write_only", "select_random_points",
	"select_random_ranges",
}

// Samplers, OffCPUModes, CallGraphs, StackCopies and EventScopes are the
// values capture.sampler, capture.off_cpu, capture.call_graph,
// capture.stack_copy and capture.events accept (call_graph also takes
// dwarf,SIZE; off_cpu also true and false).
var (
	Samplers    = []string{"auto", "perf", "bpf"}
	OffCPUModes = []string{"auto", "on", "off"}
	CallGraphs  = []string{"auto", "fp", "dwarf"}
	StackCopies = []string{"never", "auto", "always"}
	EventScopes = []string{"thread", "cpu"}
)

// Defaults of the fields a config may leave out.
const (
	DefaultTables    = 1
	DefaultTableSize = 100000
	DefaultThreads   = 1
	DefaultDuration  = 30 * time.Second
	DefaultWarmup    = 5 * time.Second
	DefaultSampler   = "auto"
	DefaultFrequency = 499
	DefaultCallGraph = "auto"
	DefaultStackCopy = "always"
	DefaultEvents    = "thread"
	DefaultOffCPU    = "auto"
	DefaultRoot      = "mysqld_stmt_execute"
	// DefaultPlacement puts the server's threads and sysbench on one CPU:
	// on VMs, waking a thread on another CPU costs more server CPU than
	// many queries do, which dilutes the differences between versions
	// (docs/lab.md has the measurements).
	DefaultPlacement = record.PlacementSame
)

// Config is a bench configuration: which servers, which workloads, how to
// capture. ParseConfig fills in the defaults, so every field is usable.
type Config struct {
	// File is the name the config was parsed under (for messages).
	File string
	// Servers are the versions to compare, in the order given.
	Servers []ServerSpec
	// ServerOptions are my.cnf settings for every server, before each
	// server's own Options.
	ServerOptions []string
	// Workloads are the sysbench runs: those of Suite, then those
	// listed, in the order given.
	Workloads []Workload
	// Suite is the preset of named microbenchmarks the config runs
	// ("small", "full": suite.Preset), its workloads first; "" for none.
	Suite string
	// Capture says how to sample.
	Capture Capture
	// Map is the symbol map's path as written (empty: none); a relative
	// path is relative to the config file's directory (see MapPath).
	Map string
	// Roots are the functions whose subtrees the report breaks down.
	Roots []string
	// Placement is where every server's threads and sysbench run, the
	// same in every measurement (record.Config.Placement):
	// DefaultPlacement unless the config says otherwise.
	Placement string
}

// ServerSpec is one server version of a config.
type ServerSpec struct {
	// Label names the version in reports ("10.11").
	Label string
	// Path is an installed mariadbd or mysqld (absolute); empty when
	// Suite is set.
	Path string
	// Kind is the server's kind as the config names it; empty to take it
	// from the binary (`--version`). A suite's default package depends on
	// it (DefaultPackage), and a binary of another kind is an error
	// (Resolve).
	Kind Kind
	// Suite is the Debian suite to fetch the server from; empty when Path
	// is set.
	Suite string
	// Package is the server package to fetch; empty for the suite's
	// package of Kind (DefaultPackage).
	Package string
	// Options are my.cnf settings ("name=value" or "name"), after the
	// config's ServerOptions.
	Options []string
	// Base marks the version the others are compared with.
	Base bool
	// Line is where the server is defined in the config.
	Line int
}

// Workload is one sysbench run of a config.
type Workload struct {
	// Name labels the workload in reports; by default the test name, with
	// "-RANGE" after a microbenchmark's that takes a range
	// ("random-points-1000").
	Name string
	// Test is the sysbench test ("oltp_point_select") or the named
	// microbenchmark ("random-points", Bench) as the config gives it.
	Test string
	// Bench is the named microbenchmark of Test (package workload/suite),
	// with its range, sysbench test or script and options; nil when Test
	// is one of sysbench's own tests (SysbenchTests).
	Bench *suite.Bench
	// Command, when not nil, is the command the workload runs instead of
	// sysbench (any benchmark: super-smack, a script), as its argv, with
	// {socket}, {user} and {database} replaced by the server's (CommandArgs);
	// Test and Bench are then empty. The lab counts its operations with
	// the server's Questions counter, reads its report when it is one
	// flamediff knows (sysbench's, super-smack's), and stops it when it is
	// still running at twice Duration.
	Command []string
	// Scripts is the directory the suite's Lua scripts are written to
	// (suite.WriteScripts), from which sysbench runs a Bench that is a
	// script; the lab sets it at run time (a parsed config leaves it
	// empty).
	Scripts string
	// Tables, TableSize and Threads are sysbench's --tables,
	// --table-size and --threads.
	Tables, TableSize, Threads int
	// Duration is the length of the sysbench run (--time, whole seconds).
	Duration time.Duration
	// Warmup is how long after the start of the run the measurement
	// starts; it is shorter than Duration.
	Warmup time.Duration
	// PreparedStatements selects --db-ps-mode=auto (true, the default) or
	// --db-ps-mode=disable.
	PreparedStatements bool
	// Line is where the workload is defined in the config.
	Line int
}

// SysbenchArgs returns the sysbench options of the workload's runs that
// do not depend on the server: the test (a Bench's sysbench test, or its
// script's path under Scripts), a Bench's options (before the workload's
// own), --tables, --table-size (a Bench's TableSize when it has one:
// update-one runs on one row of the prepared table), --threads, --time
// and --db-ps-mode.
func (w Workload) SysbenchArgs() []string {
	test, size := w.Test, w.TableSize
	var args []string
	if w.Bench != nil {
		test, args = w.Bench.TestArg(w.Scripts), w.Bench.Args
		if w.Bench.TableSize > 0 {
			size = w.Bench.TableSize
		}
	}
	out := append([]string{test}, args...)
	return append(out,
		"--tables="+strconv.Itoa(w.Tables),
		"--table-size="+strconv.Itoa(size),
		"--threads="+strconv.Itoa(w.Threads),
		"--time="+strconv.Itoa(int(w.Duration/time.Second)),
		"--db-ps-mode="+w.psMode(),
	)
}

func (w Workload) psMode() string {
	if w.PreparedStatements {
		return "auto"
	}
	return "disable"
}

// PrepareArgs returns the sysbench options of `sysbench prepare` for the
// workload's tables: its own test's for a sysbench test; for a Bench,
// oltp_point_select's (the stock sbtest schema every microbenchmark
// runs on) with suite.PrepareArgs (k uniform), --tables and the
// workload's --table-size; for a Command, oltp_point_select's with
// --tables and --table-size (sysbench's own distribution).
func (w Workload) PrepareArgs() []string {
	if w.Bench == nil && w.Command == nil {
		return w.SysbenchArgs()
	}
	out := []string{"oltp_point_select"}
	if w.Bench != nil {
		out = append(out, suite.PrepareArgs()...)
	}
	return append(out,
		"--tables="+strconv.Itoa(w.Tables),
		"--table-size="+strconv.Itoa(w.TableSize),
		"--db-ps-mode="+w.psMode(),
	)
}

// commandFields are what a Command's arguments may name in braces.
var commandFields = []string{"{socket}", "{user}", "{database}"}

var commandField = regexp.MustCompile(`\{[A-Za-z_]*\}`)

// CommandArgs returns w's Command with {socket}, {user} and {database}
// replaced by the given values.
func (w Workload) CommandArgs(socket, user, database string) []string {
	r := strings.NewReplacer("{socket}", socket, "{user}", user, "{database}", database)
	out := make([]string, len(w.Command))
	for i, a := range w.Command {
		out[i] = r.Replace(a)
	}
	return out
}

// SysbenchEnv returns the environment sysbench's runs of the workload
// need: LUA_PATH with Scripts (suite.LuaPath) for a Bench that is a
// script, which requires the suite's shared module; nil otherwise.
func (w Workload) SysbenchEnv() []string {
	if w.Bench == nil || !w.Bench.Script {
		return nil
	}
	return []string{"LUA_PATH=" + suite.LuaPath(w.Scripts)}
}

// RowsPerQuery returns the rows each query of the workload reads when
// its throughput is rows per second (a Bench with RowsPerQuery, scan:
// the table size), else 0.
func (w Workload) RowsPerQuery() int {
	if w.Bench == nil || !w.Bench.RowsPerQuery {
		return 0
	}
	return w.TableSize
}

// FreshTables reports whether every run of w needs tables made for it
// just before: bulk_insert's run inserts ids 1, 2, ... into the empty
// tables its prepare makes (two columns, not the oltp tests' four), so a
// second run on the same tables stops at the first duplicate key, and
// no other test can run on them.
func (w Workload) FreshTables() bool {
	return w.Test == "bulk_insert"
}

// AddsRows reports whether w's runs add rows to its tables (sysbench's
// oltp_insert, the suite's insert): the workloads after it get tables
// made again, or a scan's rows per operation (the table size) and the
// other versions' tables, grown by as many rows as each version
// inserted, would no longer be the configured ones. (oltp_delete and
// the read-write tests delete and insert the same ids: no rows added.)
func (w Workload) AddsRows() bool {
	test := w.Test
	if w.Bench != nil {
		test = w.Bench.Test
	}
	return test == "oltp_insert"
}

// Capture is how the runs are sampled.
type Capture struct {
	// Sampler is "auto" (BPF where it can run, else perf), "perf" or "bpf".
	Sampler string
	// Frequency is the sampling frequency in Hz.
	Frequency int
	// CallGraph is "auto" (dwarf with perf, frame pointers and stack
	// copies with bpf), "fp", "dwarf" or "dwarf,SIZE" (SIZE bytes of user
	// stack copied per sample; record.ParseCallGraph).
	CallGraph string
	// StackCopy is the BPF sampler's stack copies: "never", "auto" or
	// "always" (record.Config.StackCopy).
	StackCopy string
	// Events is "thread" (events on the server's threads) or "cpu" (one
	// per CPU, record --per-cpu).
	Events string
	// SwitchFix is record --switch-fix: the BPF sampler corrects what its
	// cpu-clock events miss (docs/fidelity.md). Nil (the default): where
	// the BPF sampler runs and the kernel allows it; true: required (it
	// needs the BPF sampler); false: off.
	SwitchFix *bool
	// OffCPU is whether each profiled window also records where the
	// server's threads wait off the CPU (record --off-cpu: offcpu.folded
	// and offcpu-switches.folded beside stacks.folded): "auto" (the
	// default: when the BPF sampler runs and the kernel allows it, which
	// Start checks by loading the program), "on" (required: Start fails
	// when the kernel does not allow it) or "off".
	OffCPU string
	// OffCPULine and OffCPUColumn are where off_cpu is in the config (0
	// when it is left out), for Start's error when on cannot be.
	OffCPULine, OffCPUColumn int
}

// Base returns the base server: the one marked base, or the only one.
func (c *Config) Base() *ServerSpec {
	for i := range c.Servers {
		if c.Servers[i].Base {
			return &c.Servers[i]
		}
	}
	if len(c.Servers) == 1 {
		return &c.Servers[0]
	}
	return nil
}

// Labels returns the servers' labels, in the config's order.
func (c *Config) Labels() []string {
	labels := make([]string, len(c.Servers))
	for i, sp := range c.Servers {
		labels[i] = sp.Label
	}
	return labels
}

// WorkloadNames returns the workloads' names, in the config's order.
func (c *Config) WorkloadNames() []string {
	names := make([]string, len(c.Workloads))
	for i, w := range c.Workloads {
		names[i] = w.Name
	}
	return names
}

// MapPath returns the symbol map's path with a relative path taken
// relative to configDir (the directory of the config file); empty when
// the config names no map.
func (c *Config) MapPath(configDir string) string {
	if c.Map == "" || filepath.IsAbs(c.Map) {
		return c.Map
	}
	return filepath.Join(configDir, c.Map)
}

// Diagnostic is one mistake in a config, with its position and the fix.
type Diagnostic struct {
	File         string
	Line, Column int
	Msg          string
	// Hint says how to fix it (may be empty).
	Hint string
}

// String formats the diagnostic as "FILE:LINE:COL: MSG (fix: HINT)".
func (d Diagnostic) String() string {
	s := fmt.Sprintf("%s:%d:%d: %s", d.File, d.Line, d.Column, d.Msg)
	if d.Hint != "" {
		s += " (fix: " + d.Hint + ")"
	}
	return s
}

// ConfigError is ParseConfig's error for a config with mistakes. It wraps
// ErrInvalidConfig.
type ConfigError struct {
	File        string
	Diagnostics []Diagnostic
}

// Error lists every diagnostic, one per line after a summary line.
func (e *ConfigError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bench config %s: %s", e.File, names.Plural(len(e.Diagnostics), "mistake"))
	for _, d := range e.Diagnostics {
		b.WriteString("\n  ")
		b.WriteString(d.String())
	}
	return b.String()
}

// Unwrap returns ErrInvalidConfig.
func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// ReadConfigFile reads and parses (ParseConfig) the bench config file
// path; it also returns the file's bytes, which a bench keeps beside its
// report.
func ReadConfigFile(path string) (*Config, []byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("config %w", fserr.Describe(path, err, "file"))
	}
	cfg, err := ParseConfig(bytes.NewReader(data), path)
	return cfg, data, err
}

// ParseConfig reads a bench config (YAML) from r; name is the file name
// used in messages. It checks the whole config and reports every mistake
// at once in a *ConfigError (wrapping ErrInvalidConfig), each with its
// line, column and fix. A read error of r is returned wrapped. On error
// the config is nil.
func ParseConfig(r io.Reader, name string) (*Config, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("bench config %s: %w", name, err)
	}
	p := &configParser{file: name, c: &Config{File: name}}
	p.parse(data)
	if len(p.diags) > 0 {
		sort.SliceStable(p.diags, func(i, j int) bool {
			a, b := p.diags[i], p.diags[j]
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Column < b.Column
		})
		return nil, &ConfigError{File: name, Diagnostics: p.diags}
	}
	return p.c, nil
}

type configParser struct {
	file  string
	diags []Diagnostic
	c     *Config
}

func (p *configParser) errorf(n *yaml.Node, hint, format string, a ...any) {
	p.diags = append(p.diags, Diagnostic{File: p.file, Line: n.Line, Column: n.Column,
		Msg: fmt.Sprintf(format, a...), Hint: hint})
}

var (
	topKeys      = []string{"servers", "server_options", "workloads", "suite", "workload_defaults", "capture", "map", "roots", "placement"}
	serverKeys   = []string{"label", "path", "suite", "kind", "package", "options", "base"}
	workloadKeys = []string{"name", "test", "command", "range", "tables", "table_size", "threads", "duration", "warmup", "prepared_statements"}
	// defaultKeys are the keys of workload_defaults: a workload's
	// settings, not what it runs.
	defaultKeys = []string{"tables", "table_size", "threads", "duration", "warmup", "prepared_statements"}
	captureKeys = []string{"sampler", "frequency", "call_graph", "stack_copy", "events", "switch_fix", "off_cpu"}
)

func (p *configParser) parse(data []byte) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&doc)
	switch {
	case errors.Is(err, io.EOF):
		p.errorf(&yaml.Node{Line: 1, Column: 1}, "start from examples/lab/demo.yaml", "empty config")
		return
	case err != nil:
		// yaml.v3 reports most syntax errors at the line before the
		// construct they break; Locate finds the line of the problem.
		pr := yamlpos.Locate(data, err)
		hint := pr.Fix
		if hint == "" {
			hint = "check indentation and quoting; quote labels such as \"10.5\""
		}
		p.errorf(&yaml.Node{Line: pr.Line, Column: pr.Column}, hint, "YAML syntax: %s", pr.Msg)
		return
	}
	var more yaml.Node
	if dec.Decode(&more) == nil {
		p.errorf(&more, "remove the \"---\" separator and everything after it", "a config holds one YAML document; found another")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "the top level is a mapping: "+strings.Join(topKeys, ", "), "expected a mapping, found %s", kindName(root))
		return
	}
	keys := p.mapping(root, topKeys, "top level")

	c := p.c
	c.Capture = Capture{Sampler: DefaultSampler, Frequency: DefaultFrequency, CallGraph: DefaultCallGraph, StackCopy: DefaultStackCopy, Events: DefaultEvents, OffCPU: DefaultOffCPU}
	c.Roots = []string{DefaultRoot}
	c.Placement = DefaultPlacement
	if n, ok := keys["servers"]; ok {
		p.servers(n)
	} else {
		p.errorf(root, "add a servers: list, e.g. servers: [{label: \"10.11\", path: /usr/sbin/mariadbd}]", "no servers")
	}
	if n, ok := keys["server_options"]; ok {
		c.ServerOptions = p.options(n, "server_options")
	}
	defaults := p.workloadDefaults(keys["workload_defaults"])
	names := map[string]int{}
	if n, ok := keys["suite"]; ok {
		p.suite(n, defaults, names)
	}
	if n, ok := keys["workloads"]; ok {
		p.workloads(n, defaults, names)
	} else if _, ok := keys["suite"]; !ok {
		p.errorf(root, "add a workloads: list, e.g. workloads: [{test: oltp_point_select}], or suite: small", "no workloads")
	}
	if n, ok := keys["capture"]; ok {
		p.capture(n)
	}
	if n, ok := keys["map"]; ok {
		if s, ok := p.str(n, "map", "give the symbol map's path, e.g. map: ../symbolmaps/mariadb.yaml"); ok {
			c.Map = s
		}
	}
	if n, ok := keys["roots"]; ok {
		if roots := p.strings(n, "roots", "give function names, e.g. roots: [mysqld_stmt_execute]"); roots != nil {
			c.Roots = roots
		}
	}
	if n, ok := keys["placement"]; ok {
		const hint = "write same, separate, none, or server=CPUS,client=CPUS, e.g. placement: \"server=1,client=0\""
		if s, ok := p.str(n, "placement", hint); ok {
			if _, err := record.ParsePlacement(s); err != nil {
				p.errorf(n, hint, "placement %v", err)
			}
			c.Placement = s
		}
	}
}

// mapping checks that n's keys are known and unique and returns their values.
func (p *configParser) mapping(n *yaml.Node, known []string, where string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "keys are plain words: "+strings.Join(known, ", "), "%s: key must be a plain word, found %s", where, kindName(k))
			continue
		}
		if prev, dup := first[k.Value]; dup {
			p.errorf(k, fmt.Sprintf("keep one of this and line %d", prev.Line), "%s: key %q repeated", where, k.Value)
			continue
		}
		first[k.Value] = k
		if !slices.Contains(known, k.Value) {
			p.errorf(k, didYouMean(k.Value, known, "known keys"), "%s: unknown key %q", where, k.Value)
			continue
		}
		out[k.Value] = v
	}
	return out
}

func (p *configParser) servers(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(n, "write a list of servers, each with a label and a path or a suite", "servers must be a non-empty list, found %s", kindName(n))
		return
	}
	labels := map[string]int{}
	var bases []*yaml.Node
	for i, sn := range n.Content {
		where := fmt.Sprintf("servers[%d]", i)
		if sn.Kind != yaml.MappingNode {
			p.errorf(sn, "write e.g. {label: \"10.11\", path: /usr/sbin/mariadbd}", "%s must be a mapping, found %s", where, kindName(sn))
			continue
		}
		for j := 0; j+1 < len(sn.Content); j += 2 {
			if k, v := sn.Content[j], sn.Content[j+1]; k.Value == "label" && v.Kind == yaml.ScalarNode && v.Value != "" {
				where = fmt.Sprintf("server %q", v.Value)
			}
		}
		keys := p.mapping(sn, serverKeys, where)
		s := ServerSpec{Line: sn.Line}
		if v, ok := keys["label"]; ok {
			if l, ok := p.str(v, where+".label", "write e.g. label: \"10.11\""); ok {
				s.Label = l
				if prev, dup := labels[l]; dup {
					p.errorf(v, fmt.Sprintf("give each server its own label (line %d has this one)", prev), "label %q repeated", l)
				}
				labels[l] = v.Line
				if strings.ContainsAny(l, "/\\ \t\n") || l == "." || l == ".." {
					p.errorf(v, "labels name directories; use letters, digits, '.', '-' and '_'", "label %q has a character a directory name cannot", l)
				}
			}
		} else {
			p.errorf(sn, "add label: followed by the version, e.g. label: \"10.11\"", "%s has no label", where)
		}
		path, hasPath := keys["path"]
		suite, hasSuite := keys["suite"]
		switch {
		case hasPath && hasSuite:
			p.errorf(suite, "keep path: for an installed server or suite: to fetch one, not both", "%s has both path and suite", where)
		case !hasPath && !hasSuite:
			p.errorf(sn, "add path: /usr/sbin/mariadbd (installed) or suite: one of "+strings.Join(Suites, ", ")+" (fetched)", "%s has neither path nor suite", where)
		case hasPath:
			if v, ok := p.str(path, where+".path", "write the absolute path of mariadbd"); ok {
				if !filepath.IsAbs(v) {
					p.errorf(path, "write the absolute path, e.g. /usr/sbin/mariadbd", "%s: path %q is not absolute", where, v)
				}
				s.Path = v
			}
		default:
			if v, ok := p.str(suite, where+".suite", "write one of "+strings.Join(Suites, ", ")); ok {
				if !slices.Contains(Suites, v) {
					p.errorf(suite, didYouMean(v, Suites, "known suites"), "%s: unknown suite %q", where, v)
				}
				s.Suite = v
			}
		}
		if v, ok := keys["kind"]; ok {
			if k, ok := p.str(v, where+".kind", "write one of "+strings.Join(Kinds, ", ")); ok {
				if !slices.Contains(Kinds, k) {
					p.errorf(v, didYouMean(k, Kinds, "known kinds"), "%s: unknown kind %q", where, k)
				}
				s.Kind = Kind(k)
			}
		}
		if v, ok := keys["package"]; ok {
			if pkg, ok := p.str(v, where+".package", "write a Debian package name"); ok {
				switch {
				case !hasSuite:
					p.errorf(v, "remove package:, or replace path: by suite:", "%s: package is only for servers fetched from a suite", where)
				case !debPackageName.MatchString(pkg):
					p.errorf(v, "Debian package names are lower-case letters, digits, '+', '-' and '.'", "%s: %q is not a package name", where, pkg)
				}
				s.Package = pkg
			}
		}
		if s.Suite != "" && s.Package == "" && slices.Contains(Suites, s.Suite) && slices.Contains(Kinds, string(s.Kind)) {
			if _, err := DefaultPackage(s.Suite, s.Kind); err != nil {
				p.errorf(suite, "fetch MySQL from suite: sid, or name the package: to fetch", "%s: %v", where, err)
			}
		}
		if v, ok := keys["options"]; ok {
			s.Options = p.options(v, where+".options")
		}
		if v, ok := keys["base"]; ok {
			var b bool
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
				p.errorf(v, "write base: true", "%s: base must be true or false, found %s", where, kindName(v))
			}
			if b {
				bases = append(bases, v)
			}
			s.Base = b
		}
		p.c.Servers = append(p.c.Servers, s)
	}
	switch {
	case len(bases) == 0 && len(n.Content) > 1:
		p.errorf(n, "add base: true to the server the others are compared with", "no base server among %d servers", len(n.Content))
	case len(bases) > 1:
		for _, b := range bases[1:] {
			p.errorf(b, fmt.Sprintf("keep base: true on one server only (line %d has it first)", bases[0].Line), "more than one base server")
		}
	}
}

var (
	debPackageName = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	optionName     = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
)

// options reads a list of my.cnf settings, "name=value" or "name", with
// any leading "--" removed.
func (p *configParser) options(n *yaml.Node, where string) []string {
	if n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		return nil // "options: []"
	}
	list := p.strings(n, where, "write a list such as [innodb_flush_log_at_trx_commit=2, skip-log-bin]")
	if list == nil {
		return nil
	}
	out := make([]string, 0, len(list))
	for i, o := range list {
		o = strings.TrimPrefix(o, "--")
		name, _, _ := strings.Cut(o, "=")
		if !optionName.MatchString(name) || strings.ContainsAny(o, "\n\r") {
			p.errorf(n.Content[i], "write name=value, as in my.cnf, e.g. innodb_buffer_pool_size=1G", "%s[%d]: %q is not a server option", where, i, list[i])
			continue
		}
		out = append(out, o)
	}
	return out
}

// workloadDefaults reads workload_defaults (n may be nil): the settings
// every workload of the config (the suite's and those listed) starts
// from, themselves defaulting to DefaultTables, DefaultTableSize and so on.
func (p *configParser) workloadDefaults(n *yaml.Node) Workload {
	w := Workload{Tables: DefaultTables, TableSize: DefaultTableSize, Threads: DefaultThreads,
		Duration: DefaultDuration, Warmup: DefaultWarmup, PreparedStatements: true}
	if n == nil {
		return w
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "write e.g. workload_defaults: {duration: 10s, warmup: 2s, table_size: 10000}", "workload_defaults must be a mapping, found %s", kindName(n))
		return w
	}
	p.settings(p.mapping(n, defaultKeys, "workload_defaults"), "workload_defaults", n, &w)
	return w
}

// settings reads a workload's settings (tables, table_size, threads,
// duration, warmup, prepared_statements) from keys into w, and checks
// the warmup against the duration when keys set either.
func (p *configParser) settings(keys map[string]*yaml.Node, where string, n *yaml.Node, w *Workload) {
	for _, f := range []struct {
		key string
		dst *int
	}{{"tables", &w.Tables}, {"table_size", &w.TableSize}, {"threads", &w.Threads}} {
		if v, ok := keys[f.key]; ok {
			p.positive(v, where+"."+f.key, f.dst)
		}
	}
	dur, hasDur := keys["duration"]
	if hasDur {
		p.duration(dur, where+".duration", &w.Duration)
		if w.Duration == 0 {
			p.errorf(dur, "give a duration such as 30s", "%s: duration must be more than zero", where)
		}
	}
	warm, hasWarm := keys["warmup"]
	if hasWarm {
		p.duration(warm, where+".warmup", &w.Warmup)
	}
	if (hasDur || hasWarm) && w.Warmup >= w.Duration && w.Duration > 0 {
		node := n
		if hasWarm {
			node = warm
		}
		p.errorf(node, "make the warmup shorter than the duration, or the duration longer", "%s: warmup %v is not shorter than duration %v", where, w.Warmup, w.Duration)
	}
	if v, ok := keys["prepared_statements"]; ok {
		var b bool
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
			p.errorf(v, "write true (sysbench --db-ps-mode=auto) or false (disable)", "%s: prepared_statements must be true or false, found %s", where, kindName(v))
		}
		w.PreparedStatements = b
	}
}

// benchName is the default name of a workload running b: its name, with
// "-RANGE" when it takes a range.
func benchName(b suite.Bench) string {
	if b.Range > 0 {
		return b.Name + "-" + strconv.Itoa(b.Range)
	}
	return b.Name
}

// suite reads suite: and appends the preset's workloads, each from the
// defaults, named by benchName.
func (p *configParser) suite(n *yaml.Node, defaults Workload, names map[string]int) {
	presets := suite.PresetNames()
	name, ok := p.str(n, "suite", "write one of "+strings.Join(presets, ", "))
	if !ok {
		return
	}
	benches, err := suite.Preset(name)
	if err != nil {
		hint := didYouMean(name, presets, "known suites of microbenchmarks")
		if slices.Contains(Suites, name) {
			hint = "the top-level suite: names microbenchmarks (" + strings.Join(presets, ", ") + "); a Debian suite goes in a server's suite:"
		}
		p.errorf(n, hint, "suite: unknown suite of microbenchmarks %q", name)
		return
	}
	p.c.Suite = name
	for _, b := range benches {
		w := defaults
		w.Test, w.Name, w.Line = b.Name, benchName(b), n.Line
		w.Bench = &b
		names[w.Name] = n.Line
		p.c.Workloads = append(p.c.Workloads, w)
	}
}

// knownTests are the names a workload's test: takes.
func knownTests() []string {
	return append(slices.Clone(SysbenchTests), suite.Names()...)
}

// test reads a workload's test: and range: into w.
func (p *configParser) test(keys map[string]*yaml.Node, where string, wn *yaml.Node, w *Workload) {
	rng := 0
	rn, hasRange := keys["range"]
	if hasRange {
		p.positive(rn, where+".range", &rng)
	}
	v, ok := keys["test"]
	if !ok {
		p.errorf(wn, "add test: followed by a sysbench test such as oltp_point_select or a microbenchmark such as random-points", "%s has no test", where)
		return
	}
	t, ok := p.str(v, where+".test", "write a sysbench test such as oltp_point_select or a microbenchmark such as random-points")
	if !ok {
		return
	}
	w.Test = t
	if slices.Contains(SysbenchTests, t) {
		if hasRange {
			p.errorf(rn, "remove range:, or name a microbenchmark that takes one: "+strings.Join(rangedBenches(), ", "), "%s: range is for the named microbenchmarks; %s is sysbench's own test", where, t)
		}
		return
	}
	if _, err := suite.Lookup(t, 0); err != nil {
		hint := "sysbench tests: " + strings.Join(SysbenchTests, ", ") + "; microbenchmarks: " + strings.Join(suite.Names(), ", ")
		if best := textdist.Closest(t, knownTests(), max(2, len(t)/4)); best != "" {
			hint = fmt.Sprintf("did you mean %q?", best)
		}
		p.errorf(v, hint, "%s: unknown test %q", where, t)
		return
	}
	b, err := suite.Lookup(t, rng)
	if err != nil {
		if rng > 0 {
			p.errorf(rn, "remove range:, or name a microbenchmark that takes one: "+strings.Join(rangedBenches(), ", "), "%s: %s takes no range", where, t)
		}
		return
	}
	w.Bench = &b
}

// command reads a workload's command: (a list: the argv of any benchmark
// run against the server) into w; test:, range: and the sysbench
// options threads: and prepared_statements: do not go with it.
func (p *configParser) command(keys map[string]*yaml.Node, where string, cn *yaml.Node, w *Workload) {
	for _, k := range []string{"test", "range", "threads", "prepared_statements"} {
		if v, ok := keys[k]; ok {
			hint := "remove " + k + ": a command is run as it is; give its options in its arguments"
			if k == "test" {
				hint = "keep test: (a sysbench test or microbenchmark) or command: (any other benchmark), not both"
			}
			p.errorf(v, hint, "%s: %s does not go with command", where, k)
		}
	}
	const hint = "write the command as a list, e.g. [super-smack, -d, mysql, select-key.smack, \"10\", \"10000\"], or [sh, -c, \"...\"] for a shell line; {socket}, {user} and {database} are the server's"
	if cn.Kind != yaml.SequenceNode || len(cn.Content) == 0 {
		p.errorf(cn, hint, "%s.command must be a non-empty list, found %s", where, kindName(cn))
		return
	}
	var argv []string
	for i, a := range cn.Content {
		if a.Kind != yaml.ScalarNode || a.Tag == "!!null" || (i == 0 && a.Value == "") {
			p.errorf(a, hint, "%s.command[%d] must be a word, found %s", where, i, kindName(a))
			return
		}
		for _, f := range commandField.FindAllString(a.Value, -1) {
			if !slices.Contains(commandFields, f) {
				p.errorf(a, "the lab fills in "+strings.Join(commandFields, ", "), "%s.command[%d]: unknown field %s", where, i, f)
			}
		}
		argv = append(argv, a.Value)
	}
	w.Command = argv
}

// rangedBenches are the microbenchmarks that take a range.
func rangedBenches() []string {
	var out []string
	for _, n := range suite.Names() {
		if b, err := suite.Lookup(n, 0); err == nil && b.Range > 0 {
			out = append(out, n)
		}
	}
	return out
}

func (p *configParser) workloads(n *yaml.Node, defaults Workload, names map[string]int) {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(n, "write a list of workloads, e.g. [{test: oltp_point_select}]", "workloads must be a non-empty list, found %s", kindName(n))
		return
	}
	for i, wn := range n.Content {
		where := fmt.Sprintf("workloads[%d]", i)
		if wn.Kind != yaml.MappingNode {
			p.errorf(wn, "write e.g. {test: oltp_point_select, threads: 1}", "%s must be a mapping, found %s", where, kindName(wn))
			continue
		}
		keys := p.mapping(wn, workloadKeys, where)
		w := defaults
		w.Line = wn.Line
		if cn, ok := keys["command"]; ok {
			p.command(keys, where, cn, &w)
		} else {
			p.test(keys, where, wn, &w)
		}
		w.Name = w.Test
		if w.Bench != nil {
			w.Name = benchName(*w.Bench)
		}
		nameNode := wn
		if _, named := keys["name"]; !named && w.Command != nil {
			p.errorf(wn, "add name: (it names the workload's directories and its rows in the report)", "%s runs a command and has no name", where)
		}
		if v, ok := keys["name"]; ok {
			if s, ok := p.str(v, where+".name", "write a short name such as update-nonindex"); ok {
				w.Name, nameNode = s, v
				if strings.ContainsAny(s, "/\\ \t\n") || s == "." || s == ".." {
					p.errorf(v, "names name directories; use letters, digits, '.', '-' and '_'", "%s: name %q has a character a directory name cannot", where, s)
				}
			}
		}
		if w.Name != "" {
			if prev, dup := names[w.Name]; dup {
				p.errorf(nameNode, fmt.Sprintf("give the workload a name: of its own (line %d has %q)", prev, w.Name), "%s: workload %q repeated", where, w.Name)
			}
			names[w.Name] = wn.Line
		}
		p.settings(keys, where, wn, &w)
		p.c.Workloads = append(p.c.Workloads, w)
	}
}

// unsplitCallGraph reports call_graph: dwarf,SIZE written unquoted in a
// {...} mapping, which YAML reads as call_graph: dwarf and a key SIZE, and
// returns the mapping without the stray key.
func (p *configParser) unsplitCallGraph(n *yaml.Node) *yaml.Node {
	if n.Style&yaml.FlowStyle == 0 {
		return n
	}
	m := *n
	m.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if i >= 2 && n.Content[i-2].Value == "call_graph" && k.Kind == yaml.ScalarNode && k.ShortTag() == "!!int" && v.ShortTag() == "!!null" {
			cg := n.Content[i-1].Value + "," + k.Value
			p.errorf(k, fmt.Sprintf("quote it: call_graph: %q", cg), "capture: call_graph %s in a {...} mapping reads as call_graph: %s and a key %s", cg, n.Content[i-1].Value, k.Value)
			continue
		}
		m.Content = append(m.Content, k, v)
	}
	return &m
}

func (p *configParser) capture(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "write e.g. capture: {sampler: perf, frequency: 499, call_graph: fp}", "capture must be a mapping, found %s", kindName(n))
		return
	}
	keys := p.mapping(p.unsplitCallGraph(n), captureKeys, "capture")
	c := &p.c.Capture
	if v, ok := keys["sampler"]; ok {
		if s, ok := p.str(v, "capture.sampler", "write one of "+strings.Join(Samplers, ", ")); ok {
			if !slices.Contains(Samplers, s) {
				p.errorf(v, didYouMean(s, Samplers, "known samplers"), "capture: unknown sampler %q", s)
			}
			c.Sampler = s
		}
	}
	if v, ok := keys["frequency"]; ok {
		if p.positive(v, "capture.frequency", &c.Frequency) && c.Frequency > 10000 {
			p.errorf(v, "use at most 10000 Hz; 499 or 999 are usual", "capture: frequency %d Hz is too high", c.Frequency)
		}
	}
	if v, ok := keys["call_graph"]; ok {
		if s, ok := p.str(v, "capture.call_graph", "write one of "+strings.Join(CallGraphs, ", ")); ok {
			method, _, _ := strings.Cut(s, ",")
			if !slices.Contains(CallGraphs, method) {
				p.errorf(v, didYouMean(method, CallGraphs, "known call graphs"), "capture: unknown call_graph %q", s)
			} else if _, err := record.ParseCallGraph(s); err != nil {
				p.errorf(v, "write dwarf for the default stack size, or dwarf,SIZE with a size perf takes", "capture: call_graph %v", err)
			}
			c.CallGraph = s
			if method == "dwarf" && c.Sampler == "bpf" {
				p.errorf(v, "use sampler: perf (or auto) for dwarf, or call_graph: auto or fp with bpf", "capture: the bpf sampler walks frame pointers, not dwarf")
			}
		}
	}
	if v, ok := keys["stack_copy"]; ok {
		if s, ok := p.str(v, "capture.stack_copy", "write one of "+strings.Join(StackCopies, ", ")); ok {
			if !slices.Contains(StackCopies, s) {
				p.errorf(v, didYouMean(s, StackCopies, "known stack copies"), "capture: unknown stack_copy %q", s)
			}
			c.StackCopy = s
		}
	}
	if v, ok := keys["events"]; ok {
		if s, ok := p.str(v, "capture.events", "write one of "+strings.Join(EventScopes, ", ")); ok {
			if !slices.Contains(EventScopes, s) {
				p.errorf(v, didYouMean(s, EventScopes, "known event scopes"), "capture: unknown events %q", s)
			}
			c.Events = s
		}
	}
	if v, ok := keys["switch_fix"]; ok {
		var on bool
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&on) != nil {
			p.errorf(v, "write true (record --switch-fix) or false", "capture: switch_fix must be true or false, found %s", kindName(v))
		} else if c.SwitchFix = &on; on && (c.Sampler == "perf" || strings.HasPrefix(c.CallGraph, "dwarf")) {
			p.errorf(v, "use sampler: bpf or auto, or drop switch_fix", "capture: switch_fix corrects the BPF sampler's cpu-clock events")
		}
	}
	if v, ok := keys["off_cpu"]; ok {
		p.offCPU(v, c)
	}
}

// offCPU reads capture.off_cpu: auto, on or off (true and false for on
// and off).
func (p *configParser) offCPU(v *yaml.Node, c *Capture) {
	s := v.Value
	if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
		var on bool
		if v.Decode(&on) == nil {
			s = map[bool]string{true: "on", false: "off"}[on]
		}
	}
	if v.Kind != yaml.ScalarNode || !slices.Contains(OffCPUModes, s) {
		p.errorf(v, "write one of "+strings.Join(OffCPUModes, ", ")+" (auto: when the kernel allows it)", "capture: off_cpu must be auto, on or off, found %s", kindName(v))
		return
	}
	c.OffCPU, c.OffCPULine, c.OffCPUColumn = s, v.Line, v.Column
	if s == "on" && (c.Sampler == "perf" || strings.HasPrefix(c.CallGraph, "dwarf")) {
		p.errorf(v, "use sampler: bpf or auto (and no call_graph dwarf), or write off_cpu: auto or off", "capture: off_cpu needs the BPF sampler (its sched_switch program)")
	}
}

// str returns n's value when n is a non-empty scalar.
func (p *configParser) str(n *yaml.Node, where, hint string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" || n.Value == "" {
		p.errorf(n, hint, "%s must be a word or a path, found %s", where, kindName(n))
		return "", false
	}
	return n.Value, true
}

// strings returns the values of a list of non-empty scalars (a single
// scalar counts as a list of one); nil after an error.
func (p *configParser) strings(n *yaml.Node, where, hint string) []string {
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" && n.Value != "" {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.errorf(n, hint, "%s must be a non-empty list, found %s", where, kindName(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, e := range n.Content {
		s, good := p.str(e, fmt.Sprintf("%s[%d]", where, i), hint)
		ok = ok && good
		out = append(out, s)
	}
	if !ok {
		return nil
	}
	return out
}

// positive stores n's value into dst when it is an integer above zero.
func (p *configParser) positive(n *yaml.Node, where string, dst *int) bool {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil || v <= 0 {
		p.errorf(n, "write a whole number above zero", "%s must be a whole number above zero, found %s", where, kindName(n))
		return false
	}
	*dst = v
	return true
}

// duration stores n's value into dst: a Go duration ("30s", "1m") or a
// number of seconds, in whole seconds (sysbench --time takes seconds).
func (p *configParser) duration(n *yaml.Node, where string, dst *time.Duration) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, "write a duration such as 30s or 2m", "%s must be a duration, found %s", where, kindName(n))
		return
	}
	var d time.Duration
	if secs, err := strconv.Atoi(n.Value); err == nil {
		d = time.Duration(secs) * time.Second
	} else if d, err = time.ParseDuration(n.Value); err != nil {
		p.errorf(n, "write a duration such as 30s or 2m", "%s: %q is not a duration", where, n.Value)
		return
	}
	if d < 0 || d%time.Second != 0 {
		p.errorf(n, "write whole seconds, e.g. 12s", "%s: %v is not a whole number of seconds", where, d)
		return
	}
	*dst = d
}

// didYouMean returns a hint naming the known word nearest to s when it is
// a plausible typo, and else the list of known words.
func didYouMean(s string, known []string, what string) string {
	if best := textdist.Closest(s, known, max(2, len(s)/4)); best != "" {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return what + ": " + strings.Join(known, ", ")
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		if len(n.Content) == 0 {
			return "an empty list"
		}
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}
