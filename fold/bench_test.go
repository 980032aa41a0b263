package fold

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"testing"
)

// perlMBps is stackcollapse-perf.pl's throughput on these machines (the
// issue's figure; `make bench` measures it live when STACKCOLLAPSE_PL is set).
const perlMBps = 25.0

var (
	benchOnce  sync.Once
	benchInput []byte
)

// benchData is at least 100 MB of real perf script text: the MariaDB 10.5
// update-index capture (the largest, 4 MB, 629 distinct stacks) repeated.
func benchData(b *testing.B) []byte {
	benchOnce.Do(func() {
		one := gunzipFile(b, "../testdata/perf/mariadb-10.5-update-index.perf.script.gz")
		n := (100<<20)/len(one) + 1
		benchInput = bytes.Repeat(one, n)
	})
	return benchInput
}

func benchmarkFold(b *testing.B, workers int) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := parsePerf(bytes.NewReader(data), PerfOptions{}, false, workers)
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteFolded(io.Discard, p); err != nil {
			b.Fatal(err)
		}
	}
	mbps := float64(len(data)) * float64(b.N) / b.Elapsed().Seconds() / 1e6
	b.ReportMetric(mbps, "MB/s")
	b.ReportMetric(mbps/perlMBps, "x-perl")
}

// BenchmarkFoldPerfScript folds >100 MB of perf script text on one core and
// on all cores, and reports MB/s and the ratio to stackcollapse-perf.pl's
// 25 MB/s.
func BenchmarkFoldPerfScript(b *testing.B) {
	b.Run("workers=1", func(b *testing.B) { benchmarkFold(b, 1) })
	b.Run("workers=all", func(b *testing.B) { benchmarkFold(b, runtime.GOMAXPROCS(0)) })
}

// BenchmarkParseFolded reads the folded output of the same input.
func BenchmarkParseFolded(b *testing.B) {
	p, err := parsePerf(bytes.NewReader(benchData(b)), PerfOptions{TID: true}, false, 2)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteFolded(&buf, p); err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat(buf.Bytes(), 100)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ParseFolded(bytes.NewReader(data), false); err != nil {
			b.Fatal(err)
		}
	}
}
