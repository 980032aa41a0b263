package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrNoSysbenchReport is wrapped by ParseSysbench's error when the text
// has no complete summary: sysbench failed or was stopped before printing
// it, or the text was cut.
var ErrNoSysbenchReport = errors.New("no complete sysbench report")

// SysbenchReport is the summary sysbench 1.0.x prints at the end of a
// "run" of a database test. Counts cover the whole run; rates are per
// second of TotalTime, as sysbench computes them.
type SysbenchReport struct {
	// Threads is "Number of threads" (0 when the header is not there).
	Threads int
	// TotalTime is "total time" in seconds.
	TotalTime float64
	// Transactions, Queries and the kinds of queries (Reads, Writes, Other).
	Transactions, Queries, Reads, Writes, Other int64
	// TPS and QPS are the "per sec." rates of transactions and queries.
	TPS, QPS float64
	// Latency of an event (a transaction) in milliseconds: min, avg, max,
	// the Percentile-th percentile and the sum over all events.
	LatencyMinMs, LatencyAvgMs, LatencyMaxMs, LatencyP95Ms, LatencySumMs float64
	// Percentile says which percentile LatencyP95Ms is (sysbench
	// --percentile, 95 by default); 0 when percentile stats were disabled.
	Percentile int
	// IgnoredErrors and Reconnects are the counts of the same names.
	IgnoredErrors, Reconnects int64
	// Intervals are the interim reports of `--report-interval=N`, in order.
	Intervals []SysbenchInterval
}

// SysbenchInterval is one interim report line:
// "[ 5s ] thds: 1 tps: 1701.95 qps: 1701.95 (r/w/o: ...) lat (ms,95%): 1.10 ...".
type SysbenchInterval struct {
	// At is the end of the interval, in seconds since sysbench started
	// its threads; the interval is the Every seconds before it.
	At, Every float64
	Threads   int
	TPS, QPS  float64
}

// QPSBetween returns the mean QPS of the interim reports whose intervals
// lie wholly within [from, to] seconds since sysbench started, and how many
// seconds they cover (0 when none does).
func (rep *SysbenchReport) QPSBetween(from, to float64) (qps, covered float64) {
	var ops float64
	for _, iv := range rep.Intervals {
		if iv.At-iv.Every >= from-1e-9 && iv.At <= to+1e-9 {
			ops += iv.QPS * iv.Every
			covered += iv.Every
		}
	}
	if covered == 0 {
		return 0, 0
	}
	return ops / covered, covered
}

// QPSOver returns the QPS of the interim reports over [from, to] seconds
// since sysbench started: each report that overlaps the span counts for
// the part of its interval inside it, at its own rate, and covered is the
// seconds so counted (0 when no report overlaps). Unlike QPSBetween it
// keeps the parts of the reports at the span's edges: a rate that swings
// from one second to the next (a loaded machine: 370 to 2,600 QPS within
// a run) would otherwise be judged without the span's first and last
// fractions of a second.
func (rep *SysbenchReport) QPSOver(from, to float64) (qps, covered float64) {
	var ops float64
	for _, iv := range rep.Intervals {
		if o := min(iv.At, to) - max(iv.At-iv.Every, from); o > 0 {
			ops += iv.QPS * o
			covered += o
		}
	}
	if covered <= 0 {
		return 0, 0
	}
	return ops / covered, covered
}

// ParseSysbenchIntervals returns the interim reports ("[ 5s ] thds: ...")
// of sysbench output that may have been cut off: a run stopped before its
// summary, or one still running. Lines that are not interim reports are
// skipped; errors reading r are wrapped.
func ParseSysbenchIntervals(r io.Reader) ([]SysbenchInterval, error) {
	var ivs []SysbenchInterval
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		prev := 0.0
		if n := len(ivs); n > 0 {
			prev = ivs[n-1].At
		}
		text := strings.TrimRight(sc.Text(), "\r")
		if text == "" || text[0] != '[' {
			continue
		}
		if iv, ok := parseInterval(strings.TrimSpace(text), prev); ok {
			ivs = append(ivs, iv)
		}
	}
	if err := sc.Err(); err != nil {
		return ivs, fmt.Errorf("sysbench interim reports: %w", err)
	}
	return ivs, nil
}

// parseInterval parses an interim report line, or returns false.
func parseInterval(line string, prevAt float64) (SysbenchInterval, bool) {
	rest, ok := strings.CutPrefix(line, "[")
	if !ok {
		return SysbenchInterval{}, false
	}
	at, rest, ok := strings.Cut(rest, "s ]")
	if !ok {
		return SysbenchInterval{}, false
	}
	var iv SysbenchInterval
	var err error
	if iv.At, err = strconv.ParseFloat(strings.TrimSpace(at), 64); err != nil || iv.At <= prevAt {
		return SysbenchInterval{}, false
	}
	iv.Every = iv.At - prevAt
	f := strings.Fields(rest)
	for i := 0; i+1 < len(f); i++ {
		switch f[i] {
		case "thds:":
			iv.Threads, _ = strconv.Atoi(f[i+1])
		case "tps:":
			iv.TPS, _ = strconv.ParseFloat(f[i+1], 64)
		case "qps:":
			iv.QPS, _ = strconv.ParseFloat(f[i+1], 64)
		}
	}
	return iv, true
}

// The sections of sysbench's summary.
const (
	sectionSQL     = "SQL statistics"
	sectionGeneral = "General statistics"
	sectionLatency = "Latency (ms)"
)

// ParseSysbench parses the output of `sysbench TEST run` (1.0.x): the
// header, any interim reports and the summary. It needs the "SQL
// statistics", "General statistics" and "Latency (ms)" sections; without
// them the error wraps ErrNoSysbenchReport, names the missing section or
// line and quotes sysbench's first FATAL lines if there are any. Errors
// reading r are wrapped. On error the report is nil.
func ParseSysbench(r io.Reader) (*SysbenchReport, error) {
	var (
		rep     SysbenchReport
		section string
		fatal   []string
		seen    = map[string]bool{}
		// found records the lines read, by section and key.
		found = map[string]bool{}
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimSpace(text)
		if trimmed == "" {
			continue
		}
		if len(fatal) < 3 && strings.HasPrefix(trimmed, "FATAL:") {
			fatal = append(fatal, trimmed)
		}
		if text[0] == '[' {
			prev := 0.0
			if n := len(rep.Intervals); n > 0 {
				prev = rep.Intervals[n-1].At
			}
			if iv, ok := parseInterval(trimmed, prev); ok {
				rep.Intervals = append(rep.Intervals, iv)
			}
			continue
		}
		if text[0] != ' ' && text[0] != '\t' {
			// A section heading ("SQL statistics:") or a top-level line.
			section = ""
			if name, ok := strings.CutSuffix(trimmed, ":"); ok {
				section = name
				seen[name] = true
			}
			if v, ok := strings.CutPrefix(trimmed, "Number of threads:"); ok {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil || n < 0 {
					return nil, fmt.Errorf("sysbench output line %d: %w: number of threads %q", line, ErrNoSysbenchReport, strings.TrimSpace(v))
				}
				rep.Threads = n
			}
			continue
		}
		key, val, ok := strings.Cut(trimmed, ":")
		if !ok {
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if err := rep.set(section, key, val); err != nil {
			return nil, fmt.Errorf("sysbench output line %d: %w: %w", line, ErrNoSysbenchReport, err)
		}
		found[section+"\x00"+key] = true
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sysbench output: %w", err)
	}
	missing := func(what string) error {
		if len(fatal) > 0 {
			return fmt.Errorf("sysbench output: %w: %s; sysbench said: %s", ErrNoSysbenchReport, what, strings.Join(fatal, " | "))
		}
		return fmt.Errorf("sysbench output: %w: %s", ErrNoSysbenchReport, what)
	}
	for _, s := range []string{sectionSQL, sectionGeneral, sectionLatency} {
		if !seen[s] {
			return nil, missing(fmt.Sprintf("no %q section", s))
		}
	}
	for _, need := range [][2]string{
		{sectionSQL, "transactions"}, {sectionSQL, "queries"},
		{sectionGeneral, "total time"},
		{sectionLatency, "min"}, {sectionLatency, "avg"}, {sectionLatency, "max"}, {sectionLatency, "sum"},
	} {
		if !found[need[0]+"\x00"+need[1]] {
			return nil, missing(fmt.Sprintf("no %q line in %q", need[1], need[0]))
		}
	}
	if rep.TPS == 0 && rep.TotalTime > 0 {
		rep.TPS = float64(rep.Transactions) / rep.TotalTime
	}
	if rep.QPS == 0 && rep.TotalTime > 0 {
		rep.QPS = float64(rep.Queries) / rep.TotalTime
	}
	return &rep, nil
}

// set stores the value of one "key: value" line of a section.
func (rep *SysbenchReport) set(section, key, val string) error {
	switch section {
	case sectionSQL:
		switch key {
		case "read":
			return parseCount(key, val, &rep.Reads, nil)
		case "write":
			return parseCount(key, val, &rep.Writes, nil)
		case "other":
			return parseCount(key, val, &rep.Other, nil)
		case "transactions":
			return parseCount(key, val, &rep.Transactions, &rep.TPS)
		case "queries":
			return parseCount(key, val, &rep.Queries, &rep.QPS)
		case "ignored errors":
			return parseCount(key, val, &rep.IgnoredErrors, nil)
		case "reconnects":
			return parseCount(key, val, &rep.Reconnects, nil)
		}
	case sectionGeneral:
		if key == "total time" {
			return parseFloat(key, strings.TrimSuffix(val, "s"), &rep.TotalTime)
		}
	case sectionLatency:
		switch key {
		case "min":
			return parseFloat(key, val, &rep.LatencyMinMs)
		case "avg":
			return parseFloat(key, val, &rep.LatencyAvgMs)
		case "max":
			return parseFloat(key, val, &rep.LatencyMaxMs)
		case "sum":
			return parseFloat(key, val, &rep.LatencySumMs)
		case "percentile stats": // "percentile stats: disabled" (--percentile=0)
			rep.Percentile, rep.LatencyP95Ms = 0, 0
			return nil
		}
		if p, ok := strings.CutSuffix(key, "th percentile"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 1 || n > 100 {
				return fmt.Errorf("percentile %q is not 1 to 100", p)
			}
			rep.Percentile = n
			return parseFloat(key, val, &rep.LatencyP95Ms)
		}
	}
	return nil
}

// parseCount parses "98341  (8193.88 per sec.)": the count, and the rate
// into rate when it is not nil and the rate is there.
func parseCount(key, val string, count *int64, rate *float64) error {
	fields := strings.Fields(val)
	if len(fields) == 0 {
		return fmt.Errorf("%s: no value", key)
	}
	n, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%s: %q is not a count", key, fields[0])
	}
	*count = n
	if rate == nil || len(fields) < 2 || !strings.HasPrefix(fields[1], "(") {
		return nil
	}
	return parseFloat(key+" per second", strings.TrimPrefix(fields[1], "("), rate)
}

// parseFloat parses a finite, non-negative number.
func parseFloat(key, val string, dst *float64) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("%s: %q is not a number", key, val)
	}
	*dst = f
	return nil
}
