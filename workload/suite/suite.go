// Package suite knows flamediff's named sysbench microbenchmarks (issue
// 18): the stock sysbench 1.0.20 tests with their options, and our own Lua
// scripts, embedded here, for what sysbench lacks. Lookup maps a name (and
// a range, where the name takes one) to a Bench, WriteScripts writes the
// embedded scripts to a directory at run time, and Preset expands a
// suite's name ("small", "full") to its benchmarks.
package suite

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

//go:embed lua/*.lua
var scripts embed.FS

// Bench is one microbenchmark as sysbench runs it.
type Bench struct {
	// Name is the microbenchmark's name, such as "random-points".
	Name string
	// Range is the range the name takes (IN-list length or BETWEEN width);
	// 0 for names that take none.
	Range int
	// Test is sysbench's test name ("oltp_point_select") for stock tests,
	// or the file name of our script ("random_points.lua") when Script.
	Test string
	// Script says Test is one of ours: run it from the directory
	// WriteScripts wrote (see TestArg).
	Script bool
	// Args are the sysbench options the name implies ("--range-size=100",
	// "--skip-trx=on"), before the caller's own.
	Args []string
	// TableSize, when not 0, is the --table-size the run must use whatever
	// the prepared table holds (update-one runs on one row).
	TableSize int
	// RowsPerQuery says throughput is rows scanned per second, the table
	// size times the QPS sysbench reports (scan).
	RowsPerQuery bool
}

// TestArg returns the test argument of sysbench's command line: Test for
// stock tests, the script's path under dir (as written by WriteScripts)
// for ours.
func (b Bench) TestArg(dir string) string {
	if b.Script {
		return filepath.Join(dir, b.Test)
	}
	return b.Test
}

// String returns the name, with its range when it takes one.
func (b Bench) String() string {
	if b.Range > 0 {
		return b.Name + " range=" + strconv.Itoa(b.Range)
	}
	return b.Name
}

// PrepareArgs returns the options of `sysbench oltp_point_select prepare`
// for the suite: k uniform over 1..table size (sysbench's default
// --rand-type, special, crowds k in the middle of the range, and the -si
// ranges there then cover most of the table, so the optimizer scans it).
func PrepareArgs() []string {
	return []string{"--rand-type=uniform"}
}

// scriptArgs are the options of all our scripts: ids drawn uniformly
// (update-zipf draws its own).
var scriptArgs = []string{"--rand-type=uniform"}

type spec struct {
	test         string
	script       bool
	args         []string
	defaultRange int // 0: takes no range
	tableSize    int
	rowsPerQuery bool
}

var specs = map[string]spec{
	// Stock sysbench 1.0.20 tests.
	"point-query":     {test: "oltp_point_select", args: []string{"--skip-trx=on"}},
	"read-only":       {test: "oltp_read_only", defaultRange: 100},
	"read-write":      {test: "oltp_read_write", defaultRange: 100},
	"write-only":      {test: "oltp_write_only"},
	"update-index":    {test: "oltp_update_index"},
	"update-nonindex": {test: "oltp_update_non_index"},
	"update-one":      {test: "oltp_update_non_index", tableSize: 1},
	"delete":          {test: "oltp_delete"},
	"insert":          {test: "oltp_insert"},
	// Ours, in lua/.
	"random-points":        {test: "random_points.lua", script: true, defaultRange: 10},
	"hot-points":           {test: "hot_points.lua", script: true},
	"points-covered-pk":    {test: "points_covered_pk.lua", script: true, defaultRange: 10},
	"points-notcovered-pk": {test: "points_notcovered_pk.lua", script: true, defaultRange: 10},
	"points-covered-si":    {test: "points_covered_si.lua", script: true, defaultRange: 10},
	"points-notcovered-si": {test: "points_notcovered_si.lua", script: true, defaultRange: 10},
	"range-covered-pk":     {test: "range_covered_pk.lua", script: true, defaultRange: 100},
	"range-notcovered-pk":  {test: "range_notcovered_pk.lua", script: true, defaultRange: 100},
	"range-covered-si":     {test: "range_covered_si.lua", script: true, defaultRange: 100},
	"range-notcovered-si":  {test: "range_notcovered_si.lua", script: true, defaultRange: 100},
	"update-inlist":        {test: "update_inlist.lua", script: true},
	"scan":                 {test: "scan.lua", script: true, rowsPerQuery: true},
	"update-zipf":          {test: "update_zipf.lua", script: true},
}

// Names returns every microbenchmark name, sorted.
func Names() []string {
	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the microbenchmark name with range rng: 0 takes the
// name's default range; a name that takes no range refuses any other.
func Lookup(name string, rng int) (Bench, error) {
	s, ok := specs[name]
	if !ok {
		return Bench{}, fmt.Errorf("suite: unknown microbenchmark %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	if rng < 0 {
		return Bench{}, fmt.Errorf("suite: %s: negative range %d", name, rng)
	}
	if s.defaultRange == 0 && rng != 0 {
		return Bench{}, fmt.Errorf("suite: %s takes no range (got %d); names that do: %s", name, rng, strings.Join(ranged(), ", "))
	}
	b := Bench{Name: name, Test: s.test, Script: s.script, TableSize: s.tableSize, RowsPerQuery: s.rowsPerQuery}
	b.Args = append(b.Args, s.args...)
	if s.script {
		b.Args = append(b.Args, scriptArgs...)
	}
	if s.defaultRange > 0 {
		b.Range = s.defaultRange
		if rng > 0 {
			b.Range = rng
		}
		b.Args = append(b.Args, "--range-size="+strconv.Itoa(b.Range))
	}
	return b, nil
}

func ranged() []string {
	var out []string
	for _, n := range Names() {
		if specs[n].defaultRange > 0 {
			out = append(out, n)
		}
	}
	return out
}

type entry struct {
	name string
	rng  int
}

var presets = map[string][]entry{
	// small: one of each kind, a few minutes at a few seconds each.
	"small": {
		{"point-query", 0}, {"random-points", 100}, {"hot-points", 0},
		{"points-covered-si", 0}, {"range-notcovered-pk", 100}, {"scan", 0},
		{"update-index", 0}, {"update-nonindex", 0}, {"update-zipf", 0},
		{"insert", 0}, {"read-write", 10},
	},
	"full": {
		{"point-query", 0}, {"points-covered-pk", 0}, {"points-notcovered-pk", 0},
		{"points-covered-si", 0}, {"points-notcovered-si", 0},
		{"random-points", 10}, {"random-points", 100}, {"random-points", 1000},
		{"hot-points", 0},
		{"range-covered-pk", 0}, {"range-notcovered-pk", 0},
		{"range-covered-si", 0}, {"range-notcovered-si", 0},
		{"scan", 0},
		{"read-only", 10}, {"read-only", 100}, {"read-only", 10000},
		{"read-write", 10}, {"read-write", 100}, {"write-only", 0},
		{"update-index", 0}, {"update-nonindex", 0}, {"update-one", 0},
		{"update-inlist", 0}, {"update-zipf", 0},
		{"delete", 0}, {"insert", 0},
	},
}

// PresetNames returns the names Preset knows, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Preset returns the microbenchmarks of suite name, in the order they run.
func Preset(name string) ([]Bench, error) {
	entries, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("suite: unknown suite %q (known: %s)", name, strings.Join(PresetNames(), ", "))
	}
	out := make([]Bench, 0, len(entries))
	for _, e := range entries {
		b, err := Lookup(e.name, e.rng)
		if err != nil {
			return nil, fmt.Errorf("suite %s: %w", name, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// WriteScripts writes our Lua scripts (and the flamediff_suite.lua they
// require) into dir, which must exist. sysbench finds the shared module
// when run from dir or with LUA_PATH including it (see LuaPath).
func WriteScripts(dir string) error {
	files, err := fs.Glob(scripts, "lua/*.lua")
	if err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	for _, f := range files {
		data, err := scripts.ReadFile(f)
		if err != nil {
			return fmt.Errorf("suite: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			return fmt.Errorf("suite: write scripts: %w", err)
		}
	}
	return nil
}

// LuaPath returns the LUA_PATH value that lets sysbench find
// flamediff_suite.lua in dir as well as its own modules (";;" keeps
// Lua's default path).
func LuaPath(dir string) string {
	return filepath.Join(dir, "?.lua") + ";;"
}
