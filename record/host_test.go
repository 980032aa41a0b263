package record

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/fuzzseed"
)

func readStatFixture(t *testing.T, name string) *HostStat {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata/proc", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseHostStat(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ParseHostStat(%s) = %v", name, err)
	}
	return s
}

func TestParseHostStat(t *testing.T) {
	// The figures of testdata/proc/stat-a, read off the file by eye.
	got := readStatFixture(t, "stat-a")
	want := &HostStat{User: 72258, System: 40802, Idle: 7766698, IOWait: 2169, SoftIRQ: 891, CPUs: 2, Ctxt: 6973707}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseHostStat(stat-a) = %+v, want %+v", got, want)
	}
	if b := got.Busy(); b != 72258+40802+891 {
		t.Errorf("Busy() = %d, want %d", b, 72258+40802+891)
	}

	tests := []struct {
		name, text string
		want       *HostStat
		wantErr    string
	}{
		{"all ten columns", "cpu  1 2 3 4 5 6 7 8 9 10\ncpu0 1 2 3 4 5 6 7 8 9 10\nctxt 11\n",
			&HostStat{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 11}, ""},
		// Linux 2.6.0-2.6.10 wrote seven columns, before steal.
		{"old kernel", "cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\ncpu1 0 0 0 0 0 0 0\nctxt 5\n",
			&HostStat{User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7, CPUs: 2, Ctxt: 5}, ""},
		{"a column of a newer kernel", "cpu  1 2 3 4 5 6 7 8 9 10 11\nctxt 5\n",
			&HostStat{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 5}, ""},
		{"no cpu line", "cpu0 1 2 3 4\nctxt 5\n", nil, "no cpu line"},
		{"no ctxt", "cpu  1 2 3 4\n", nil, "no ctxt line"},
		{"three columns", "cpu  1 2 3\nctxt 5\n", nil, "line 1: the cpu line has 3 columns"},
		{"not a count", "cpu  1 2 x 4\nctxt 5\n", nil, `line 1: cpu column 3: "x" is not a count`},
		{"negative", "cpu  1 2 -3 4\nctxt 5\n", nil, `"-3" is not a count`},
		{"two cpu lines", "cpu  1 2 3 4\ncpu  1 2 3 4\nctxt 5\n", nil, "line 2: a second cpu line"},
		{"cpu name", "cpu  1 2 3 4\ncpuX 1 2 3 4\nctxt 5\n", nil, `line 2: "cpuX" is not cpu followed by a number`},
		{"ctxt", "cpu  1 2 3 4\nctxt\n", nil, "line 2: want ctxt and one count"},
		{"ctxt twice", "cpu  1 2 3 4\nctxt 1\nctxt 2\n", nil, "line 3: a second ctxt line"},
		{"empty", "", nil, "no cpu line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHostStat(strings.NewReader(tt.text))
			if tt.wantErr != "" {
				if err == nil || !errors.Is(err, ErrBadHostStat) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseHostStat(%q) = %+v, %v; want an error wrapping ErrBadHostStat with %q", tt.text, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("ParseHostStat(%q) = %+v, %v; want %+v", tt.text, got, err, tt.want)
			}
		})
	}
}

func TestHostStatRoundTrip(t *testing.T) {
	for _, name := range []string{"stat-a", "stat-b", "stat-vm-2cpu"} {
		s := readStatFixture(t, name)
		var b bytes.Buffer
		if _, err := s.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		s2, err := ParseHostStat(&b)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Errorf("%s: parse, write, parse = %+v, %v; want %+v", name, s2, err, s)
		}
	}
}

func TestHostWindow(t *testing.T) {
	a, b := readStatFixture(t, "stat-a"), readStatFixture(t, "stat-b")
	t0 := time.Date(2026, 12, 4, 15, 0, 0, 0, time.UTC)
	before := &hostSnapshot{at: t0, stat: a}
	after := &hostSnapshot{at: t0.Add(time.Second), stat: b}
	got := hostWindow(before, after, 1000)
	// stat-a to stat-b, by hand: user 72258 -> 72300 (42 ticks), system
	// 40802 -> 40851 (49), softirq 891 -> 900 (9): 100 ticks busy, 1.00 s;
	// idle 51 and iowait 51 ticks; no steal; ctxt 6973707 -> 6997941.
	want := &fold.Host{CPUs: 2, Seconds: 1, CPUSeconds: 1.00, UserSeconds: 0.42, SystemSeconds: 0.58, IdleSeconds: 1.02,
		ContextSwitches: 24234, CPUMicrosPerOp: 1000, CtxSwitchesPerOp: 24.234,
		CPUFreq: &fold.CPUFreq{Note: cpuFreqNotExposed}}
	if !hostEqual(got, want) {
		t.Errorf("hostWindow = %+v, want %+v", got, want)
	}
	// Steal: a share of all the CPU time, busy, idle and steal.
	st := func(busy, idle, steal uint64) *HostStat {
		return &HostStat{User: busy, Idle: idle, Steal: steal, CPUs: 1}
	}
	h := hostWindow(&hostSnapshot{at: t0, stat: st(0, 0, 0)}, &hostSnapshot{at: t0.Add(time.Second), stat: st(60, 30, 10)}, 0)
	if h.StealSeconds != 0.1 || math.Abs(h.StealShare-0.1) > 1e-12 || h.CPUMicrosPerOp != 0 || h.CtxSwitchesPerOp != 0 {
		t.Errorf("60 busy, 30 idle, 10 steal ticks, no operations: %+v; want steal 0.1 s, share 0.1, nothing per op", h)
	}
	// A counter going backwards (a fixture's mistake, or a CPU unplugged)
	// counts as zero, not as a huge number.
	h = hostWindow(&hostSnapshot{at: t0, stat: st(50, 0, 0)}, &hostSnapshot{at: t0, stat: st(40, 0, 0)}, 1)
	if h.CPUSeconds != 0 {
		t.Errorf("busy 50 -> 40 ticks: CPUSeconds %v, want 0", h.CPUSeconds)
	}
}

func hostEqual(a, b *fold.Host) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.CPUs == b.CPUs && near(a.Seconds, b.Seconds) && near(a.CPUSeconds, b.CPUSeconds) && near(a.UserSeconds, b.UserSeconds) &&
		near(a.SystemSeconds, b.SystemSeconds) && near(a.IdleSeconds, b.IdleSeconds) && near(a.StealSeconds, b.StealSeconds) &&
		near(a.StealShare, b.StealShare) && a.ContextSwitches == b.ContextSwitches && near(a.CPUMicrosPerOp, b.CPUMicrosPerOp) &&
		near(a.CtxSwitchesPerOp, b.CtxSwitchesPerOp) && reflect.DeepEqual(a.CPUFreq, b.CPUFreq)
}

func TestCPUFreq(t *testing.T) {
	root := t.TempDir()
	if got := readCPUFreq(root); got != nil {
		t.Errorf("readCPUFreq(no cpufreq files) = %v, want nil", got)
	}
	if got := cpuFreqWindow(nil, nil); got.Exposed || !strings.Contains(got.Note, "not exposed") {
		t.Errorf("cpuFreqWindow(nil, nil) = %+v, want not exposed", got)
	}
	// cpu10 sorts after cpu2 by number, not by name.
	for cpu, khz := range map[string]string{"cpu0": "2100000\n", "cpu2": "800000\n", "cpu10": "3000000\n"} {
		dir := filepath.Join(root, "devices/system/cpu", cpu, "cpufreq")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "scaling_cur_freq"), []byte(khz), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := readCPUFreq(root)
	if want := []int64{2100000, 800000, 3000000}; !reflect.DeepEqual(start, want) {
		t.Fatalf("readCPUFreq = %v, want %v", start, want)
	}
	if f := cpuFreqWindow(start, start); !f.Exposed || f.Changed {
		t.Errorf("same frequencies: %+v, want exposed, not changed", f)
	}
	end := []int64{2100000, 1600000, 3000000}
	if f := cpuFreqWindow(start, end); !f.Exposed || !f.Changed || !reflect.DeepEqual(f.EndKHz, end) {
		t.Errorf("CPU 2 from 0.8 to 1.6 GHz: %+v, want changed", f)
	}
	if f := cpuFreqWindow(start, nil); f.Exposed {
		t.Errorf("frequencies at the start only: %+v, want not exposed", f)
	}
	if err := os.WriteFile(filepath.Join(root, "devices/system/cpu/cpu2/cpufreq/scaling_cur_freq"), []byte("fast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readCPUFreq(root); got != nil {
		t.Errorf("readCPUFreq with a file that is not a number = %v, want nil", got)
	}
}

func TestReadHost(t *testing.T) {
	proc := t.TempDir()
	data, err := os.ReadFile("testdata/proc/stat-vm-2cpu")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "stat"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := readHost(proc, t.TempDir())
	if err != nil || h.stat.CPUs != 2 || h.freq != nil || h.at.IsZero() {
		t.Fatalf("readHost = %+v, %v; want 2 CPUs, no frequencies", h, err)
	}
	if _, err := readHost(t.TempDir(), t.TempDir()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("readHost without a stat file = %v, want ErrNotExist", err)
	}
}

func FuzzParseHostStat(f *testing.F) {
	fuzzseed.AddFiles(f, "testdata/proc/stat-*")
	for _, s := range []string{"", "cpu 1 2 3 4\nctxt 1", "cpu  1 2 3 4 5 6 7 8 9 10 11 12\ncpu0\nctxt 18446744073709551615\n", "cpu0 1\n", "ctxt 1 2\n", "cpu 1 2 3 18446744073709551616\nctxt 1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseHostStat(bytes.NewReader(data))
		if (s == nil) == (err == nil) {
			t.Fatalf("ParseHostStat(%q) = %v, %v: want a result or an error", data, s, err)
		}
		if err != nil {
			return
		}
		var b bytes.Buffer
		if _, err := s.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		s2, err := ParseHostStat(&b)
		if err != nil || !reflect.DeepEqual(s, s2) {
			t.Fatalf("round trip of %q: %+v, %v; want %+v", data, s2, err, s)
		}
	})
}
