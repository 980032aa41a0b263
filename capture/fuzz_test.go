//go:build linux

package capture

import (
	"strings"
	"testing"
)

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

// FuzzVDSORange: any maps text gives a range of at most 1 MiB with its
// end above its start, or an error.
func FuzzVDSORange(f *testing.F) {
	f.Add("7ffd1c5f2000-7ffd1c5f4000 r-xp 00000000 00:00 0                          [vdso]\n")
	f.Add("55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234 /usr/bin/x\n7fff-7ffe r-xp 0 00:00 0 [vdso]\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		start, end, err := vdsoRange(strings.NewReader(s))
		if err == nil && (end <= start || end-start > 1<<20) {
			t.Errorf("range %#x-%#x without an error", start, end)
		}
	})
}
