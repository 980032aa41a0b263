package workload

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// ErrNoSuperSmackReport is wrapped by ParseSuperSmack's error when the
// text has no complete "Query Barrel Report": super-smack failed, was
// stopped before its clients finished, or the text was cut.
var ErrNoSuperSmackReport = errors.New("no complete super-smack query barrel report")

// SuperSmackReport is what super-smack (1.x) prints when a client's
// threads finish (`collect_threads` in the smack file): one query barrel
// report per such client, in order.
type SuperSmackReport struct {
	Barrels []SuperSmackBarrel
}

// SuperSmackBarrel is the report of one client:
//
//	Query Barrel Report for client smacker1
//	connect: max=3ms  min=0ms avg= 0ms from 10 clients
//	Query_type	num_queries	max_time	min_time	q_per_s
//	select_index	20000	2	0	8530.64
type SuperSmackBarrel struct {
	// Client is the smack file's client name.
	Client string
	// Connect holds the connect times; nil when the line is not there.
	Connect *SuperSmackConnect
	// Queries are the table's rows, in the order printed (super-smack
	// sorts them by query type).
	Queries []SuperSmackQuery
}

// SuperSmackConnect is the "connect:" line: connection times of the
// client's threads in milliseconds (Min is -1 when none reported).
type SuperSmackConnect struct {
	MaxMs, MinMs, AvgMs int64
	Clients             int64
}

// SuperSmackQuery is one row of the table: the queries of one type (the
// smack file's query `type`) over all the client's threads.
type SuperSmackQuery struct {
	Type string
	// Count is num_queries.
	Count int64
	// MaxMs and MinMs are max_time and min_time, whole milliseconds.
	MaxMs, MinMs int64
	// QPS is q_per_s: Count over the client's wall time from
	// create_threads to collect_threads. NoRate says super-smack printed
	// "n/a" (a zero wall time); QPS is then 0.
	QPS    float64
	NoRate bool
}

// Total returns the client's number of queries of all types and the sum
// of their rates: its throughput, since all its types ran over the same
// wall time.
func (b *SuperSmackBarrel) Total() (count int64, qps float64) {
	for _, q := range b.Queries {
		count += q.Count
		qps += q.QPS
	}
	return count, qps
}

const superSmackBarrelPrefix = "Query Barrel Report for client"

var (
	superSmackHeader  = []string{"Query_type", "num_queries", "max_time", "min_time", "q_per_s"}
	superSmackConnect = regexp.MustCompile(`^connect:\s*max=\s*(-?\d+)\s*ms\s+min=\s*(-?\d+)\s*ms\s+avg=\s*(-?\d+)\s*ms\s+from\s+(\d+)\s+clients?\s*$`)
)

// ParseSuperSmack parses super-smack's output: any other lines, and one
// or more query barrel reports, each a "Query Barrel Report for client"
// line, an optional "connect:" line, the "Query_type ..." header and its
// rows (fields separated by tabs, as super-smack prints them, or by
// spaces, as copies in mail and web pages have them). The table ends at
// the first line that is not a row. Without any report, or with a report
// cut before its header, the error wraps ErrNoSuperSmackReport; a row
// with a negative count or rate, or a type twice in one table, is an
// error naming its line. Errors reading r are wrapped. On error the
// report is nil.
func ParseSuperSmack(r io.Reader) (*SuperSmackReport, error) {
	var (
		rep    SuperSmackReport
		cur    *SuperSmackBarrel
		inRows bool
		types  map[string]bool
		start  int // line of cur's first line
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(strings.TrimRight(sc.Text(), "\r"))
		if client, ok := strings.CutPrefix(text, superSmackBarrelPrefix); ok && (client == "" || client[0] == ' ' || client[0] == '\t') {
			if cur != nil && !inRows {
				return nil, fmt.Errorf("super-smack output line %d: %w: the report of line %d has no %q header", line, ErrNoSuperSmackReport, start, "Query_type")
			}
			rep.Barrels = append(rep.Barrels, SuperSmackBarrel{Client: strings.TrimSpace(client)})
			cur, inRows, types, start = &rep.Barrels[len(rep.Barrels)-1], false, map[string]bool{}, line
			continue
		}
		if cur == nil {
			continue
		}
		if inRows {
			q, ok, err := parseSuperSmackRow(text)
			if err != nil {
				return nil, fmt.Errorf("super-smack output line %d: %w", line, err)
			}
			if !ok {
				cur, inRows = nil, false
				continue
			}
			if types[q.Type] {
				return nil, fmt.Errorf("super-smack output line %d: query type %q twice in the report of line %d", line, q.Type, start)
			}
			types[q.Type] = true
			cur.Queries = append(cur.Queries, q)
			continue
		}
		if m := superSmackConnect.FindStringSubmatch(text); m != nil && cur.Connect == nil {
			var c SuperSmackConnect
			for i, dst := range []*int64{&c.MaxMs, &c.MinMs, &c.AvgMs, &c.Clients} {
				v, err := strconv.ParseInt(m[i+1], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("super-smack output line %d: connect times: %w", line, err)
				}
				*dst = v
			}
			cur.Connect = &c
			continue
		}
		if f := strings.Fields(text); len(f) == len(superSmackHeader) && equalFold(f, superSmackHeader) {
			inRows = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("super-smack output: %w", err)
	}
	if len(rep.Barrels) == 0 {
		return nil, fmt.Errorf("super-smack output: %w: no %q line", ErrNoSuperSmackReport, superSmackBarrelPrefix)
	}
	if cur != nil && !inRows {
		return nil, fmt.Errorf("super-smack output: %w: the report of line %d has no %q header (cut?)", ErrNoSuperSmackReport, start, "Query_type")
	}
	return &rep, nil
}

func equalFold(a, b []string) bool {
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

// parseSuperSmackRow parses "type num max min q_per_s": false when the
// line is not a row (the table has ended), an error when it is one with
// figures out of range.
func parseSuperSmackRow(text string) (SuperSmackQuery, bool, error) {
	var q SuperSmackQuery
	// The type is what precedes the last four fields, so that it may hold
	// spaces or tabs.
	rest := text
	var f [4]string
	for i := 3; i >= 0; i-- {
		j := strings.LastIndexAny(rest, " \t")
		if j < 0 {
			return q, false, nil
		}
		f[i] = rest[j+1:]
		rest = strings.TrimRight(rest[:j], " \t")
	}
	q.Type = rest
	if q.Type == "" {
		return q, false, nil
	}
	var err error
	for i, dst := range []*int64{&q.Count, &q.MaxMs, &q.MinMs} {
		if *dst, err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return q, false, nil // not a row: the table has ended
		}
	}
	if f[3] == "n/a" {
		q.NoRate = true
	} else if q.QPS, err = strconv.ParseFloat(f[3], 64); err != nil {
		return q, false, nil // not a row
	}
	if q.Count < 0 {
		return q, false, fmt.Errorf("query type %q: negative num_queries %d", q.Type, q.Count)
	}
	if q.QPS < 0 || math.IsNaN(q.QPS) || math.IsInf(q.QPS, 0) {
		return q, false, fmt.Errorf("query type %q: q_per_s %s is not a rate", q.Type, f[3])
	}
	return q, true, nil
}
