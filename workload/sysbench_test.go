package workload

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func TestParseSysbench(t *testing.T) {
	tests := []struct {
		file        string
		want        *SysbenchReport
		errContains []string
	}{
		{
			file: "mariadb-10.11-point-select.sysbench",
			want: &SysbenchReport{Threads: 1, TotalTime: 12.0007, Transactions: 98341, Queries: 98341, Reads: 98341,
				TPS: 8193.88, QPS: 8193.88, LatencyMinMs: 0.02, LatencyAvgMs: 0.12, LatencyMaxMs: 8.77,
				LatencyP95Ms: 0.30, LatencySumMs: 11944.49, Percentile: 95},
		},
		{
			file: "mariadb-11.8-update-index.sysbench",
			want: &SysbenchReport{Threads: 1, TotalTime: 12.0008, Transactions: 28413, Queries: 28413, Writes: 28413,
				TPS: 2367.41, QPS: 2367.41, LatencyMinMs: 0.12, LatencyAvgMs: 0.42, LatencyMaxMs: 8.93,
				LatencyP95Ms: 0.83, LatencySumMs: 11971.17, Percentile: 95},
		},
		{
			file: "local-read-write-4threads.sysbench",
			want: &SysbenchReport{Threads: 4, TotalTime: 3.0124, Transactions: 1729, Queries: 34580,
				Reads: 24206, Writes: 6916, Other: 3458, TPS: 573.78, QPS: 11475.53, LatencyMinMs: 1.39,
				LatencyAvgMs: 6.95, LatencyMaxMs: 24.91, LatencyP95Ms: 18.61, LatencySumMs: 12009.42, Percentile: 99},
		},
		{file: "local-read-write-nopercentile.sysbench"}, // golden only
		{file: "truncated.sysbench", errContains: []string{`no "max" line in "Latency (ms)"`}},
		{file: "failed-no-table.sysbench", errContains: []string{`no "SQL statistics" section`, "Unknown database 'sbtest'"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "sysbench", tt.file)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseSysbench(bytes.NewReader(data))
			checkGolden(t, strings.TrimSuffix(path, ".sysbench")+".golden.json", goldenJSON(t, got, err))
			if tt.errContains != nil {
				if !errors.Is(err, ErrNoSysbenchReport) {
					t.Fatalf("ParseSysbench(%s) error = %v, want ErrNoSysbenchReport", tt.file, err)
				}
				for _, s := range tt.errContains {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("ParseSysbench(%s) error = %q, want it to contain %q", tt.file, err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSysbench(%s): %v", tt.file, err)
			}
			if tt.want != nil && !sameSummary(got, tt.want) {
				t.Errorf("ParseSysbench(%s) =\n%+v\nwant\n%+v", tt.file, *got, *tt.want)
			}
		})
	}
}

func TestParseSysbenchText(t *testing.T) {
	const summary = `SQL statistics:
    transactions:                        10  (5.00 per sec.)
    queries:                             20  (10.00 per sec.)
General statistics:
    total time:                          2.0000s
Latency (ms):
         min:                                    0.10
         avg:                                    0.20
         max:                                    0.30
         sum:                                    2.00
`
	tests := []struct {
		name    string
		text    string
		check   func(*SysbenchReport) bool
		wantErr string
	}{
		{name: "minimal", text: summary, check: func(r *SysbenchReport) bool {
			return r.Transactions == 10 && r.TPS == 5 && r.QPS == 10 && r.Percentile == 0 && r.Threads == 0
		}},
		{name: "CRLF", text: strings.ReplaceAll(summary, "\n", "\r\n"), check: func(r *SysbenchReport) bool {
			return r.TotalTime == 2 && r.LatencySumMs == 2
		}},
		{name: "rates computed when missing", text: strings.NewReplacer("(5.00 per sec.)", "", "(10.00 per sec.)", "").Replace(summary),
			check: func(r *SysbenchReport) bool { return r.TPS == 5 && r.QPS == 10 }},
		{name: "percentile 100", text: summary + "         100th percentile:  0.30\n", check: func(r *SysbenchReport) bool {
			return r.Percentile == 100 && r.LatencyP95Ms == 0.3
		}},
		{name: "empty", text: "", wantErr: `no "SQL statistics" section`},
		{name: "only interim reports", text: "Threads started!\n\n[ 1s ] thds: 1 tps: 1.00 qps: 1.00\n", wantErr: `no "SQL statistics" section`},
		{name: "no latency", text: summary[:strings.Index(summary, "Latency")], wantErr: `no "Latency (ms)" section`},
		{name: "negative count", text: strings.Replace(summary, "10  (5.00", "-10  (5.00", 1), wantErr: "transactions"},
		{name: "NaN", text: strings.Replace(summary, "0.20", "NaN", 1), wantErr: "avg"},
		{name: "bad threads", text: "Number of threads: many\n" + summary, wantErr: "number of threads"},
		{name: "percentile 0th", text: summary + "         0th percentile:  0.30\n", wantErr: "percentile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSysbench(strings.NewReader(tt.text))
			if tt.wantErr != "" {
				if !errors.Is(err, ErrNoSysbenchReport) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSysbench(%q) error = %v, want ErrNoSysbenchReport naming %q", tt.text, err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("ParseSysbench(%q) = %+v with an error, want nil", tt.text, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSysbench(%q): %v", tt.text, err)
			}
			if !tt.check(got) {
				t.Errorf("ParseSysbench(%q) = %+v", tt.text, got)
			}
		})
	}
}

func TestParseSysbenchReadError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ParseSysbench(iotest.ErrReader(boom))
	if !errors.Is(err, boom) {
		t.Fatalf("ParseSysbench(failing reader) error = %v, want %v", err, boom)
	}
}

// goldenJSON renders a parse result (or its error) for a golden file.
func goldenJSON(t *testing.T, rep *SysbenchReport, err error) []byte {
	t.Helper()
	v := any(rep)
	if err != nil {
		v = map[string]string{"error": err.Error()}
	}
	data, jerr := json.MarshalIndent(v, "", "  ")
	if jerr != nil {
		t.Fatal(jerr)
	}
	return append(data, '\n')
}

// checkGolden compares got with the golden file, or rewrites it with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test -update if the change is intended):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// sameSummary compares two reports' summaries, leaving the interim reports out.
func sameSummary(a, b *SysbenchReport) bool {
	x, y := *a, *b
	x.Intervals, y.Intervals = nil, nil
	return reflect.DeepEqual(x, y)
}

func TestSysbenchIntervals(t *testing.T) {
	f, err := os.Open("testdata/sysbench/local-read-write-4threads.sysbench")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := ParseSysbench(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Intervals) != 3 {
		t.Fatalf("Intervals = %+v, want 3", rep.Intervals)
	}
	want := SysbenchInterval{At: 2, Every: 1, Threads: 4, TPS: 630.42, QPS: 12614.43}
	if rep.Intervals[1] != want {
		t.Errorf("Intervals[1] = %+v, want %+v", rep.Intervals[1], want)
	}
	// Cut off before its summary: the same interim reports.
	data, err := os.ReadFile("testdata/sysbench/local-read-write-4threads.sysbench")
	if err != nil {
		t.Fatal(err)
	}
	cut, _, _ := bytes.Cut(data, []byte("SQL statistics"))
	ivs, err := ParseSysbenchIntervals(bytes.NewReader(cut))
	if err != nil || !reflect.DeepEqual(ivs, rep.Intervals) {
		t.Errorf("ParseSysbenchIntervals(cut off) = %+v, %v; want %+v", ivs, err, rep.Intervals)
	}
	tests := []struct {
		from, to     float64
		qps, covered float64
	}{
		{0, 3, (9186.63 + 12614.43 + 12769.79) / 3, 3},
		{1, 3, (12614.43 + 12769.79) / 2, 2},
		{0.5, 2.5, 12614.43, 1},
		{1.2, 1.8, 0, 0},
	}
	for _, tt := range tests {
		qps, cov := rep.QPSBetween(tt.from, tt.to)
		if math.Abs(qps-tt.qps) > 1e-6 || cov != tt.covered {
			t.Errorf("QPSBetween(%v, %v) = %v, %v; want %v, %v", tt.from, tt.to, qps, cov, tt.qps, tt.covered)
		}
	}
	// QPSOver counts the edge reports for their part inside the span.
	over := []struct {
		from, to     float64
		qps, covered float64
	}{
		{0, 3, (9186.63 + 12614.43 + 12769.79) / 3, 3},
		{0.5, 2.5, (0.5*9186.63 + 12614.43 + 0.5*12769.79) / 2, 2},
		{1.2, 1.8, 12614.43, 0.6},
		{-5, 0, 0, 0},
	}
	for _, tt := range over {
		qps, cov := rep.QPSOver(tt.from, tt.to)
		if math.Abs(qps-tt.qps) > 1e-6 || math.Abs(cov-tt.covered) > 1e-9 {
			t.Errorf("QPSOver(%v, %v) = %v, %v; want %v, %v", tt.from, tt.to, qps, cov, tt.qps, tt.covered)
		}
	}
}
