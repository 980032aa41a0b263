package workload

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// addFiles adds the testdata files matching pattern as seeds.
func addFiles(f *testing.F, pattern string) {
	f.Helper()
	names, err := filepath.Glob(filepath.Join("testdata", pattern))
	if err != nil || len(names) == 0 {
		f.Fatalf("no seeds match testdata/%s (%v)", pattern, err)
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func FuzzParseStat(f *testing.F) {
	addFiles(f, "proc/*.stat")
	addFiles(f, "proc/mariadbd/*/stat")
	for _, s := range []string{"", "1 () S", "1 (a) S 0 1 1 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0", ")(", "1 ((((", "-1 (x) Z 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		utime, stime, comm, err := ParseStat(data)
		if err != nil {
			if utime != 0 || stime != 0 || comm != "" {
				t.Fatalf("ParseStat(%q) = %d, %d, %q and error %v", data, utime, stime, comm, err)
			}
			return
		}
		// Round trip through the kernel's format.
		line := fmt.Sprintf("7 (%s) S 1 7 7 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 0\n", comm, utime, stime)
		u2, s2, c2, err := ParseStat([]byte(line))
		if err != nil || u2 != utime || s2 != stime || c2 != comm {
			t.Fatalf("ParseStat(%q) = %d, %d, %q, %v; want %d, %d, %q", line, u2, s2, c2, err, utime, stime, comm)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	addFiles(f, "proc/*.status")
	f.Add([]byte("voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t2"))
	f.Add([]byte("voluntary_ctxt_switches:1:2\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		vol, invol, err := ParseStatus(data)
		if err != nil {
			if vol != 0 || invol != 0 {
				t.Fatalf("ParseStatus(%q) = %d, %d and error %v", data, vol, invol, err)
			}
			return
		}
		if vol < 0 || invol < 0 {
			t.Fatalf("ParseStatus(%q) = %d, %d: negative", data, vol, invol)
		}
		text := fmt.Sprintf("Name:\tx\nvoluntary_ctxt_switches:\t%d\nnonvoluntary_ctxt_switches:\t%d\n", vol, invol)
		v2, i2, err := ParseStatus([]byte(text))
		if err != nil || v2 != vol || i2 != invol {
			t.Fatalf("ParseStatus(%q) = %d, %d, %v; want %d, %d", text, v2, i2, err, vol, invol)
		}
	})
}

func FuzzParseIO(f *testing.F) {
	addFiles(f, "proc/*.io")
	addFiles(f, "proc/mariadbd/*/io")
	f.Add([]byte("syscr: 1\nsyscw: 2\nread_bytes: 3\nwrite_bytes: 4"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, w, rb, wb, err := ParseIO(data)
		if err != nil {
			if r != 0 || w != 0 || rb != 0 || wb != 0 {
				t.Fatalf("ParseIO(%q) = %d, %d, %d, %d and error %v", data, r, w, rb, wb, err)
			}
			return
		}
		if r < 0 || w < 0 || rb < 0 || wb < 0 {
			t.Fatalf("ParseIO(%q) = %d, %d, %d, %d: negative", data, r, w, rb, wb)
		}
		text := fmt.Sprintf("rchar: 0\nwchar: 0\nsyscr: %d\nsyscw: %d\nread_bytes: %d\nwrite_bytes: %d\ncancelled_write_bytes: 0\n", r, w, rb, wb)
		r2, w2, rb2, wb2, err := ParseIO([]byte(text))
		if err != nil || r2 != r || w2 != w || rb2 != rb || wb2 != wb {
			t.Fatalf("ParseIO(%q) = %d, %d, %d, %d, %v; want %d, %d, %d, %d", text, r2, w2, rb2, wb2, err, r, w, rb, wb)
		}
	})
}

func FuzzParseSysbench(f *testing.F) {
	addFiles(f, "sysbench/*.sysbench")
	f.Add([]byte("SQL statistics:\n    transactions: 1 (1 per sec.)\n    queries: 1\nGeneral statistics:\n    total time: 1s\nLatency (ms):\n  min: 1\n  avg: 1\n  max: 1\n  sum: 1\n  5th percentile: 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := ParseSysbench(bytes.NewReader(data))
		if (rep == nil) == (err == nil) {
			t.Fatalf("ParseSysbench(%q) = %+v, %v: want a report or an error", data, rep, err)
		}
		if err != nil {
			return
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
