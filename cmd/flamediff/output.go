package main

// Output of `flamediff report` and `flamediff diff`: one document model
// rendered as a table (tablewriter), GitHub markdown, CSV or JSON.
//
// # JSON schema
//
// The JSON field names are an interface: they stay stable, fields are only
// ever added. Numbers are not rounded. Percentages are of the profile's
// total value (samples, or sample periods for perf input) and run from 0 to
// 100; "pp" are percentage points; "us_per_op" are CPU microseconds per
// operation (share × cpu_seconds × 1e6 / operations). Fields marked
// "optional" are left out when the figure is unknown; a ratio that is
// undefined (the base has none of it) is null.
//
// Shared objects:
//
//	profile = {
//	  "label": string,            // run.json label, else the file name
//	  "unit": "samples"|"period", // what "total" and every value count
//	  "count_unit": "samples"|"ns"|"period", // the same, as tables and flame graphs name it:
//	                              //   ns for period sums of cpu-clock (CPU nanoseconds)
//	  "total": int,               // sum of all stack values
//	  "cpu_seconds": float,       // optional: process CPU over the window
//	  "operations": int,          // optional: operations in the window
//	  "window_seconds": float,    // optional
//	  "cpu_us_per_op": float,     // optional: cpu/o
//	  "cs_per_op": float,         // optional: context switches per op (cs/o)
//	  "qps": float,               // optional: operations per second
//	  "rqps": float,              // optional: qps / base qps (1 for the base)
//	  "completeness": {           // optional: stacks not starting at a thread root
//	    "incomplete": int, "incomplete_pct": float
//	  }
//	}
//	subsystem = {"name": string, "value": int, "pct": float, "us_per_op": float (optional)}
//	rewrite = {"original": string, "result": string ("" when elided), "rule": string, "value": int}
//
// `flamediff report --format json` prints one object:
//
//	{
//	  "profile": profile,
//	  "per_op_missing": string,   // optional: why per-op figures are absent
//	  "functions_total": int,     // functions in the profile (before --top)
//	  "functions": [{             // sorted by inclusive desc, then name; --top applies
//	    "name": string,
//	    "inclusive": int, "self": int,
//	    "inclusive_pct": float, "self_pct": float,
//	    "inclusive_us_per_op": float, "self_us_per_op": float  // optional
//	  }],
//	  "subsystems": [subsystem],  // optional (--map with subsystems), map order, sums to 100%
//	  "subtrees": [{              // one per --root
//	    "root": string, "depth": int,
//	    "summary": string,        // "mysqld_stmt_execute 68.35% → mysql_execute_command 66.43%: trans_commit_stmt 40.68%, ..."
//	    "nodes": [{               // depth first, root first
//	      "path": [string],       // root ... node (each row's first function)
//	      "level": int,           // 0 for the root
//	      "value": int, "self": int,
//	      "pct": float,           // of the profile total
//	      "pct_of_root": float,
//	      "chain": [string],      // optional: a row merging pass-through calls, first ... last
//	      "end_value": int,       // optional (with chain): value of the chain's last function;
//	      "end_pct": float,       //   "self" and the children are that function's
//	      "unresolved": true      // optional: the "[unresolved]" row, stacks ending inside
//	    }]                        //   unresolved frames ([mariadbd], ...) under the parent
//	  }],
//
// Unless --keep-unresolved, unresolved frames are looked through; unless
// --no-collapse, a callee holding >= 95% of its caller shares its row.
//	  "rewrites": [rewrite],      // optional (--explain)
//	  "warnings": [string]        // optional: e.g. the stack completeness warning
//	}
//
// `flamediff diff --format json` prints one object; every per-profile array
// has the base first, then the targets in command-line order, and every
// per-target array ("delta_pp", "ratio", ...) has one entry per target:
//
//	{
//	  "profiles": [profile],
//	  "per_op_missing": string,   // optional
//	  "functions_total": int,
//	  "functions": [{             // sorted by largest |delta_pp|, then name; --top applies
//	    "name": string,
//	    "profiles": [{"inclusive": int, "self": int, "inclusive_pct": float, "self_pct": float,
//	                  "inclusive_us_per_op": float, "self_us_per_op": float}], // per-op optional
//	    "delta_pp": [float],      // inclusive_pct(target) - inclusive_pct(base)
//	    "self_delta_pp": [float],
//	    "delta_us_per_op": [float], // optional
//	    "ratio": [float|null],    // inclusive_pct(target) / inclusive_pct(base)
//	    "only_in": string         // optional: label of the one profile it occurs in
//	  }],
//	  "subsystems": [{            // optional; sorted like functions
//	    "name": string,
//	    "profiles": [{"value": int, "pct": float, "us_per_op": float}], // us_per_op optional
//	    "delta_pp": [float], "delta_us_per_op": [float] (optional), "ratio": [float|null]
//	  }],
//	  "subtrees": [{
//	    "root": string, "depth": int,
//	    "summaries": [string],    // each profile's one-line summary, as in report
//	    "nodes": [{"path": [string], "level": int,
//	               "chain": [string], "unresolved": true,  // optional, as in report; a chain only
//	                                                       // where it passes through in every profile
//	               "profiles": [{"value": int, "pct": float, "pct_of_root": float,
//	                             "end_value": int, "end_pct": float}], // end_* optional (with chain)
//	               "delta_pp": [float]}]
//	  }],
//	  "attribution": [{           // optional: per target, with per-op figures and subsystems
//	    "base": string, "target": string,
//	    "base_us_per_op": float, "target_us_per_op": float,
//	    "delta_us_per_op": float, // rounded to 0.01
//	    "parts": [{"subsystem": string, "delta_us_per_op": float}], // add up exactly to delta_us_per_op (in 0.01 units)
//	    "sentence": string
//	  }],
//	  "rewrites": [{"profile": string, "rewrites": [rewrite]}], // optional (--explain)
//	  "warnings": [string]
//	}

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Output formats.
const (
	formatTable    = "table"
	formatJSON     = "json"
	formatCSV      = "csv"
	formatMarkdown = "markdown"
)

var formats = []string{formatTable, formatJSON, formatCSV, formatMarkdown}

// formatHTML is the document format of flamediff html's tables (not a
// --format value): as table, with names whole for the page to shorten.
const formatHTML = "html"

func checkFormat(f string) error {
	for _, ok := range formats {
		if f == ok {
			return nil
		}
	}
	return usageError("--format %q: want one of %s", f, strings.Join(formats, ", "))
}

// column is one column of a section: its heading and whether it holds numbers
// (right-aligned).
type column struct {
	head string
	num  bool
}

// section is one titled table of a document, with sentences printed after it.
type section struct {
	title string
	cols  []column
	rows  [][]string
	notes []string
}

// document is what table and markdown output render: sections, then notes.
type document struct {
	title    string
	sections []section
	notes    []string
}

// writeDocument renders d as a terminal table or as GitHub markdown.
func writeDocument(w io.Writer, format string, d *document) error {
	var b bytes.Buffer
	md := format == formatMarkdown
	if d.title != "" {
		if md {
			fmt.Fprintf(&b, "## %s\n\n", d.title)
		} else {
			fmt.Fprintf(&b, "%s\n\n", d.title)
		}
	}
	for _, s := range d.sections {
		if md {
			fmt.Fprintf(&b, "### %s\n\n", s.title)
			writeMarkdownTable(&b, s)
		} else {
			fmt.Fprintf(&b, "%s\n", s.title)
			if err := writeTextTable(&b, s); err != nil {
				return err
			}
		}
		for _, n := range s.notes {
			fmt.Fprintf(&b, "\n%s\n", n)
		}
		b.WriteString("\n")
	}
	for _, n := range d.notes {
		if md {
			fmt.Fprintf(&b, "> %s\n\n", n)
		} else {
			fmt.Fprintf(&b, "%s\n", n)
		}
	}
	out := bytes.TrimRight(b.Bytes(), "\n")
	out = append(out, '\n')
	_, err := w.Write(out)
	return err
}

func writeTextTable(w io.Writer, s section) error {
	align := make([]tw.Align, len(s.cols))
	head := make([]string, len(s.cols))
	for i, c := range s.cols {
		head[i] = c.head
		align[i] = tw.AlignLeft
		if c.num {
			align[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithBehavior(tw.Behavior{TrimSpace: tw.Off}),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header(head)
	for _, r := range s.rows {
		if err := t.Append(r); err != nil {
			return fmt.Errorf("table %s: %w", s.title, err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("table %s: %w", s.title, err)
	}
	return nil
}

// writeMarkdownTable writes a GitHub pipe table. Function names go in code
// spans (C++ templates would otherwise be taken for HTML); pipes are escaped.
func writeMarkdownTable(w io.Writer, s section) {
	cells := func(r []string) string {
		out := make([]string, len(r))
		for i, c := range r {
			out[i] = strings.ReplaceAll(c, "|", `\|`)
		}
		return "| " + strings.Join(out, " | ") + " |\n"
	}
	head := make([]string, len(s.cols))
	rule := make([]string, len(s.cols))
	for i, c := range s.cols {
		head[i] = c.head
		rule[i] = "---"
		if c.num {
			rule[i] = "---:"
		}
	}
	io.WriteString(w, cells(head))
	io.WriteString(w, "|"+strings.Join(rule, "|")+"|\n")
	for _, r := range s.rows {
		io.WriteString(w, cells(r))
	}
}

// mdName formats a name for a markdown cell, in a code span that shows it
// as it is (names.CodeSpan); indent is kept with non-breaking spaces so
// that tree levels show.
func mdName(name string, level int) string {
	return strings.Repeat("\u00a0\u00a0", level) + names.CodeSpan(name)
}

// treeName indents a subtree node for the terminal table.
func treeName(name string, level int) string {
	return strings.Repeat("  ", level) + name
}

func writeCSV(w io.Writer, header []string, rows [][]string) error {
	for _, r := range rows {
		for i, c := range r {
			r[i] = names.Clean(c)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("json output: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// Fixed number formatting, the same in every text format.
func f2(x float64) string  { return fmt.Sprintf("%.2f", round2(x)) }
func sf2(x float64) string { return fmt.Sprintf("%+.2f", x) }
func itoa(x int64) string  { return fmt.Sprintf("%d", x) }
func optf2(ok bool, x float64) string {
	if !ok {
		return ""
	}
	return f2(x)
}

// ratioText prints a ratio for tables: "new" when the base has none, "-"
// when neither has any.
func ratioText(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "new"
	case math.IsNaN(r):
		return "-"
	}
	return fmt.Sprintf("%.2f", r)
}

// ratioCSV prints a ratio for CSV: "inf" when the base has none, empty when
// neither has any.
func ratioCSV(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "inf"
	case math.IsNaN(r):
		return ""
	}
	return fmt.Sprintf("%.4f", r)
}

// ratioJSON is null when the ratio is undefined.
func ratioJSON(r float64) *float64 {
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return nil
	}
	return &r
}

func fptr(ok bool, x float64) *float64 {
	if !ok {
		return nil
	}
	return &x
}

// JSON types; see the schema at the top of this file.

type jsonCompleteness struct {
	Incomplete    int64   `json:"incomplete"`
	IncompletePct float64 `json:"incomplete_pct"`
}

type jsonProfile struct {
	Label            string            `json:"label"`
	Unit             string            `json:"unit"`
	CountUnit        string            `json:"count_unit"`
	Total            int64             `json:"total"`
	CPUSeconds       *float64          `json:"cpu_seconds,omitempty"`
	Operations       *int64            `json:"operations,omitempty"`
	WindowSeconds    *float64          `json:"window_seconds,omitempty"`
	CPUMicrosPerOp   *float64          `json:"cpu_us_per_op,omitempty"`
	CtxSwitchesPerOp *float64          `json:"cs_per_op,omitempty"`
	QPS              *float64          `json:"qps,omitempty"`
	RQPS             *float64          `json:"rqps,omitempty"`
	Completeness     *jsonCompleteness `json:"completeness,omitempty"`
}

func toJSONProfile(s *diff.Summary) jsonProfile {
	f := s.Profile
	j := jsonProfile{Label: f.Label, Unit: f.Unit, CountUnit: f.CountUnit, Total: f.Total}
	if f.HasPerOp {
		ops := f.Operations
		j.CPUSeconds = &f.CPUSeconds
		j.Operations = &ops
		j.CPUMicrosPerOp = fptr(true, f.MicrosPerOp)
	}
	j.WindowSeconds = fptr(f.WindowSeconds > 0, f.WindowSeconds)
	j.CtxSwitchesPerOp = fptr(f.HasCtxSwitches, f.CtxSwitchesPerOp)
	j.QPS = fptr(f.QPS > 0, f.QPS)
	j.RQPS = fptr(f.RelativeQPS > 0, f.RelativeQPS)
	if c := s.Completeness; c != nil {
		j.Completeness = &jsonCompleteness{Incomplete: c.Incomplete, IncompletePct: c.IncompletePct}
	}
	return j
}

// jsonFunction is a function's share in a report: its name, then the
// fields of jsonShare at the same level.
type jsonFunction struct {
	Name string `json:"name"`
	jsonShare
}

type jsonSubsystem struct {
	Name        string   `json:"name"`
	Value       int64    `json:"value"`
	Pct         float64  `json:"pct"`
	MicrosPerOp *float64 `json:"us_per_op,omitempty"`
}

type jsonNode struct {
	Path       []string `json:"path"`
	Level      int      `json:"level"`
	Value      int64    `json:"value"`
	Self       int64    `json:"self"`
	Pct        float64  `json:"pct"`
	PctOfRoot  float64  `json:"pct_of_root"`
	Chain      []string `json:"chain,omitempty"`
	EndValue   *int64   `json:"end_value,omitempty"`
	EndPct     *float64 `json:"end_pct,omitempty"`
	Unresolved bool     `json:"unresolved,omitempty"`
}

type jsonSubtree struct {
	Root    string     `json:"root"`
	Depth   int        `json:"depth"`
	Summary string     `json:"summary"`
	Nodes   []jsonNode `json:"nodes"`
}

type jsonRewrite struct {
	Original string `json:"original"`
	Result   string `json:"result"`
	Rule     string `json:"rule"`
	Value    int64  `json:"value"`
}

func toJSONRewrites(e *symbolmap.Explanation) []jsonRewrite {
	out := []jsonRewrite{}
	if e == nil {
		return out
	}
	for _, r := range e.Rewrites {
		out = append(out, jsonRewrite{Original: r.Original, Result: r.Result, Rule: r.Rule, Value: r.Value})
	}
	return out
}

type jsonReport struct {
	Profile        jsonProfile     `json:"profile"`
	PerOpMissing   string          `json:"per_op_missing,omitempty"`
	FunctionsTotal int             `json:"functions_total"`
	Functions      []jsonFunction  `json:"functions"`
	Subsystems     []jsonSubsystem `json:"subsystems,omitempty"`
	Subtrees       []jsonSubtree   `json:"subtrees,omitempty"`
	Rewrites       []jsonRewrite   `json:"rewrites,omitempty"`
	Warnings       []string        `json:"warnings,omitempty"`
}

type jsonShare struct {
	Inclusive            int64    `json:"inclusive"`
	Self                 int64    `json:"self"`
	InclusivePct         float64  `json:"inclusive_pct"`
	SelfPct              float64  `json:"self_pct"`
	InclusiveMicrosPerOp *float64 `json:"inclusive_us_per_op,omitempty"`
	SelfMicrosPerOp      *float64 `json:"self_us_per_op,omitempty"`
}

// toJSONShare is one function's figures; the per-op ones only with perOp.
func toJSONShare(incl, self int64, inclPct, selfPct, inclOp, selfOp float64, perOp bool) jsonShare {
	return jsonShare{Inclusive: incl, Self: self, InclusivePct: inclPct, SelfPct: selfPct,
		InclusiveMicrosPerOp: fptr(perOp, inclOp), SelfMicrosPerOp: fptr(perOp, selfOp)}
}

type jsonFunctionDiff struct {
	Name             string      `json:"name"`
	Profiles         []jsonShare `json:"profiles"`
	DeltaPP          []float64   `json:"delta_pp"`
	SelfDeltaPP      []float64   `json:"self_delta_pp"`
	DeltaMicrosPerOp []float64   `json:"delta_us_per_op,omitempty"`
	Ratio            []*float64  `json:"ratio"`
	OnlyIn           string      `json:"only_in,omitempty"`
}

type jsonSubsystemValue struct {
	Value       int64    `json:"value"`
	Pct         float64  `json:"pct"`
	MicrosPerOp *float64 `json:"us_per_op,omitempty"`
}

type jsonSubsystemDiff struct {
	Name             string               `json:"name"`
	Profiles         []jsonSubsystemValue `json:"profiles"`
	DeltaPP          []float64            `json:"delta_pp"`
	DeltaMicrosPerOp []float64            `json:"delta_us_per_op,omitempty"`
	Ratio            []*float64           `json:"ratio"`
}

type jsonNodeValue struct {
	Value     int64    `json:"value"`
	Pct       float64  `json:"pct"`
	PctOfRoot float64  `json:"pct_of_root"`
	EndValue  *int64   `json:"end_value,omitempty"`
	EndPct    *float64 `json:"end_pct,omitempty"`
}

type jsonNodeDiff struct {
	Path       []string        `json:"path"`
	Level      int             `json:"level"`
	Chain      []string        `json:"chain,omitempty"`
	Unresolved bool            `json:"unresolved,omitempty"`
	Profiles   []jsonNodeValue `json:"profiles"`
	DeltaPP    []float64       `json:"delta_pp"`
}

type jsonSubtreeDiff struct {
	Root      string         `json:"root"`
	Depth     int            `json:"depth"`
	Summaries []string       `json:"summaries,omitempty"`
	Nodes     []jsonNodeDiff `json:"nodes"`
}

type jsonPart struct {
	Subsystem        string  `json:"subsystem"`
	DeltaMicrosPerOp float64 `json:"delta_us_per_op"`
}

type jsonAttribution struct {
	Base              string     `json:"base"`
	Target            string     `json:"target"`
	BaseMicrosPerOp   float64    `json:"base_us_per_op"`
	TargetMicrosPerOp float64    `json:"target_us_per_op"`
	DeltaMicrosPerOp  float64    `json:"delta_us_per_op"`
	Parts             []jsonPart `json:"parts"`
	Sentence          string     `json:"sentence"`
}

type jsonProfileRewrites struct {
	Profile  string        `json:"profile"`
	Rewrites []jsonRewrite `json:"rewrites"`
}

type jsonDiff struct {
	Profiles       []jsonProfile         `json:"profiles"`
	PerOpMissing   string                `json:"per_op_missing,omitempty"`
	FunctionsTotal int                   `json:"functions_total"`
	Functions      []jsonFunctionDiff    `json:"functions"`
	Subsystems     []jsonSubsystemDiff   `json:"subsystems,omitempty"`
	Subtrees       []jsonSubtreeDiff     `json:"subtrees,omitempty"`
	Attribution    []jsonAttribution     `json:"attribution,omitempty"`
	Rewrites       []jsonProfileRewrites `json:"rewrites,omitempty"`
	Warnings       []string              `json:"warnings,omitempty"`
}

func ratiosJSON(rs []float64) []*float64 {
	out := make([]*float64, len(rs))
	for i, r := range rs {
		out[i] = ratioJSON(r)
	}
	return out
}
