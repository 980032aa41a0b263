package procstat

import (
	"fmt"
	"testing"

	"github.com/flamediff/flamediff/internal/fuzzseed"
)

func FuzzParseStat(f *testing.F) {
	fuzzseed.AddFiles(f, "testdata/proc/*.stat")
	fuzzseed.AddFiles(f, "testdata/proc/mariadbd/*/stat")
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

func FuzzParseSchedstat(f *testing.F) {
	for _, s := range []string{"", "123456789 1000 7\n", "18446744073709551615 0 0", "1e9 1 1", " 5"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseSchedstat(data)
		if err != nil {
			if v != 0 {
				t.Fatalf("ParseSchedstat(%q) = %d and error %v", data, v, err)
			}
			return
		}
		// Round trip through the kernel's format.
		line := fmt.Sprintf("%d 0 0\n", v)
		if v2, err := ParseSchedstat([]byte(line)); err != nil || v2 != v {
			t.Fatalf("ParseSchedstat(%q) = %d, %v; want %d", line, v2, err, v)
		}
	})
}

func FuzzParseStatus(f *testing.F) {
	fuzzseed.AddFiles(f, "testdata/proc/*.status")
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
	fuzzseed.AddFiles(f, "testdata/proc/*.io")
	fuzzseed.AddFiles(f, "testdata/proc/mariadbd/*/io")
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
