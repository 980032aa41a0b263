//go:build linux

package capture

import "testing"

// FuzzParsePerfStderr: perf's stderr is whatever perf printed; parsing it
// never panics and never yields negative figures.
func FuzzParsePerfStderr(f *testing.F) {
	for _, s := range []string{
		"[ perf record: Woken up 1 times to write data ]\n[ perf record: Captured and wrote 0.123 MB perf.data (987 samples) ]\n",
		"Processed 12345 events and lost 3 chunks!\n",
		"Processed 1000 samples and lost 2.50% samples!\n",
		"  Lost 17 samples\n",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r := parsePerfStderr(s)
		if r.Samples < -1 || r.Lost < 0 {
			t.Fatalf("parsePerfStderr(%q) = %+v: negative figures", s, r)
		}
		_ = classifyPerfError(s)
	})
}
