package workload

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/flamediff/flamediff/internal/fuzzseed"
)

func FuzzParseSysbench(f *testing.F) {
	fuzzseed.AddFiles(f, "testdata/sysbench/*.sysbench")
	f.Add([]byte("SQL statistics:\n    transactions: 1 (1 per sec.)\n    queries: 1\nGeneral statistics:\n    total time: 1s\nLatency (ms):\n  min: 1\n  avg: 1\n  max: 1\n  sum: 1\n  5th percentile: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ParseSysbench(bytes.NewReader(data))
		if (rep == nil) == (err == nil) {
			t.Fatalf("ParseSysbench(%q) = %+v, %v: want a report or an error", data, rep, err)
		}
		ivs, ierr := ParseSysbenchIntervals(bytes.NewReader(data))
		if ierr != nil && err == nil {
			t.Fatalf("ParseSysbenchIntervals(%q): %v, where ParseSysbench read it", data, ierr)
		}
		for i, iv := range ivs {
			if iv.Every <= 0 || (i > 0 && iv.At <= ivs[i-1].At) {
				t.Fatalf("ParseSysbenchIntervals(%q) = %+v: not in order", data, ivs)
			}
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(ivs, rep.Intervals) && len(ivs)+len(rep.Intervals) > 0 {
			t.Fatalf("ParseSysbenchIntervals(%q) = %+v, ParseSysbench's %+v", data, ivs, rep.Intervals)
		}
		for _, v := range []float64{rep.TotalTime, rep.TPS, rep.QPS, rep.LatencyMinMs, rep.LatencyAvgMs, rep.LatencyMaxMs, rep.LatencyP95Ms, rep.LatencySumMs} {
			if v < 0 || v != v {
				t.Fatalf("ParseSysbench(%q) = %+v: negative or NaN figure", data, rep)
			}
		}
		if rep.Threads < 0 || rep.Transactions < 0 || rep.Queries < 0 || rep.Percentile < 0 || rep.Percentile > 100 {
			t.Fatalf("ParseSysbench(%q) = %+v: out of range", data, rep)
		}
		text := formatSysbench(rep)
		rep2, err := ParseSysbench(bytes.NewReader(text))
		if err != nil || !sameSummary(rep2, rep) {
			t.Fatalf("round trip:\n%s\n= %+v, %v\nwant %+v", text, rep2, err, rep)
		}
	})
}

// formatSysbench writes a report as sysbench does, with exact numbers.
func formatSysbench(r *SysbenchReport) []byte {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var b bytes.Buffer
	fmt.Fprintf(&b, "Running the test with following options:\nNumber of threads: %d\n\nThreads started!\n\n", r.Threads)
	fmt.Fprintf(&b, "SQL statistics:\n    queries performed:\n        read: %d\n        write: %d\n        other: %d\n        total: %d\n",
		r.Reads, r.Writes, r.Other, r.Reads+r.Writes+r.Other)
	fmt.Fprintf(&b, "    transactions: %d (%s per sec.)\n    queries: %d (%s per sec.)\n", r.Transactions, g(r.TPS), r.Queries, g(r.QPS))
	fmt.Fprintf(&b, "    ignored errors: %d (0.00 per sec.)\n    reconnects: %d (0.00 per sec.)\n\n", r.IgnoredErrors, r.Reconnects)
	fmt.Fprintf(&b, "General statistics:\n    total time: %ss\n    total number of events: %d\n\n", g(r.TotalTime), r.Transactions)
	fmt.Fprintf(&b, "Latency (ms):\n         min: %s\n         avg: %s\n         max: %s\n", g(r.LatencyMinMs), g(r.LatencyAvgMs), g(r.LatencyMaxMs))
	if r.Percentile > 0 {
		fmt.Fprintf(&b, "         %dth percentile: %s\n", r.Percentile, g(r.LatencyP95Ms))
	} else {
		b.WriteString("         percentile stats:               disabled\n")
	}
	fmt.Fprintf(&b, "         sum: %s\n", g(r.LatencySumMs))
	return b.Bytes()
}

func FuzzParseSuperSmack(f *testing.F) {
	fuzzseed.AddFiles(f, "testdata/supersmack/*.supersmack")
	f.Add([]byte("Query Barrel Report for client c\nQuery_type\tnum_queries\tmax_time\tmin_time\tq_per_s\na b\t1\t2\t3\tn/a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ParseSuperSmack(bytes.NewReader(data))
		if (rep == nil) == (err == nil) {
			t.Fatalf("ParseSuperSmack(%q) = %+v, %v: want a report or an error", data, rep, err)
		}
		if err != nil {
			return
		}
		if len(rep.Barrels) == 0 {
			t.Fatalf("ParseSuperSmack(%q): a report without barrels", data)
		}
		for _, b := range rep.Barrels {
			for _, q := range b.Queries {
				if q.Type == "" || q.Count < 0 || q.QPS < 0 || q.QPS != q.QPS || (q.NoRate && q.QPS != 0) {
					t.Fatalf("ParseSuperSmack(%q): row %+v out of range", data, q)
				}
			}
		}
		text := formatSuperSmack(rep)
		rep2, err := ParseSuperSmack(bytes.NewReader(text))
		if err != nil || !reflect.DeepEqual(rep2, rep) {
			t.Fatalf("round trip:\n%s\n= %+v, %v\nwant %+v", text, rep2, err, rep)
		}
	})
}

// formatSuperSmack writes a report as super-smack prints it, with exact
// rates.
func formatSuperSmack(r *SuperSmackReport) []byte {
	var b bytes.Buffer
	for _, br := range r.Barrels {
		fmt.Fprintf(&b, "Query Barrel Report for client %s\n", br.Client)
		if c := br.Connect; c != nil {
			fmt.Fprintf(&b, "connect: max=%dms  min=%dms avg= %dms from %d clients \n", c.MaxMs, c.MinMs, c.AvgMs, c.Clients)
		}
		b.WriteString("Query_type\tnum_queries\tmax_time\tmin_time\tq_per_s\n")
		for _, q := range br.Queries {
			rate := strconv.FormatFloat(q.QPS, 'g', -1, 64)
			if q.NoRate {
				rate = "n/a"
			}
			fmt.Fprintf(&b, "%s\t%d\t%d\t%d\t%s\n", q.Type, q.Count, q.MaxMs, q.MinMs, rate)
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}
