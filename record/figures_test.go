package record

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/workload/procstat"
)

func TestSysbenchTime(t *testing.T) {
	tests := []struct {
		args []string
		want time.Duration
	}{
		{[]string{"sysbench", "oltp_read_only", "--time=30", "run"}, 30 * time.Second},
		{[]string{"/usr/bin/sysbench", "--time", "12", "oltp_read_only", "run"}, 12 * time.Second},
		{[]string{"sysbench", "oltp_read_only", "run"}, 10 * time.Second},
		{[]string{"sysbench", "--time=0", "run"}, 0},
		{[]string{"sh", "-c", "--time=30"}, 0},
		{nil, 0},
	}
	for _, tt := range tests {
		if got := sysbenchTime(tt.args); got != tt.want {
			t.Errorf("sysbenchTime(%q) = %s, want %s", tt.args, got, tt.want)
		}
	}
}

func TestSampledGap(t *testing.T) {
	for _, tt := range []struct {
		samples  int64
		freq     int
		cpu      float64
		profiler float64
		perCPU   bool
		want     string // "" or a part of the warning
	}{
		{1000, 100, 10, 0, false, ""},
		{985, 100, 10, 0, false, ""},                           // 1.5% fewer: within 2%
		{970, 100, 10, 0, false, "97.00% of the CPU"},          // 3% fewer
		{500, 100, 10, 0, false, "50.00% of it has no sample"}, // far too few
		{1030, 100, 10, 0, false, "3.00% more than it"},        // more samples than CPU
		{0, 99, 0, 0, false, ""},                               // no CPU: nothing to compare
		{1508, 999, 2.91, 0, true, "per-CPU events lose samples"},
		{1508, 999, 2.91, 0, false, "51.87% of the CPU"},
		// The off-CPU program's 0.5 s charged to the threads has no
		// sample on purpose: 950 samples stand for all of the rest.
		{950, 100, 10, 0.5, false, ""},
		{900, 100, 10, 0.5, false, "off-CPU program's 0.500 s"}, // 94.7% of the rest
		{0, 99, 1, 1, false, ""},                                // all the profiler's: nothing to compare
	} {
		got := sampledGap(tt.samples, tt.freq, tt.cpu, tt.profiler, tt.perCPU)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("sampledGap(%d, %d, %g, %g) = %q, want %q", tt.samples, tt.freq, tt.cpu, tt.profiler, got, tt.want)
		}
		if got != "" && !strings.HasPrefix(got, diff.SampledWarning(100*float64(tt.samples)/float64(tt.freq)/(tt.cpu-tt.profiler))) {
			t.Errorf("sampledGap(%d, %d, %g, %g) = %q: not the reports' words", tt.samples, tt.freq, tt.cpu, tt.profiler, got)
		}
	}
}

func TestLabelFromVersion(t *testing.T) {
	for _, tt := range []struct{ v, dir, want string }{
		{"10.11.19-MariaDB-0+deb12u1", "x", "10.11"},
		{"8.0.40", "x", "8.0"},
		{"11.8.9-MariaDB-log", "x", "11.8"},
		{"", "/tmp/runs/base/", "base"},
	} {
		if got := labelFromVersion(tt.v, tt.dir); got != tt.want {
			t.Errorf("labelFromVersion(%q, %q) = %q, want %q", tt.v, tt.dir, got, tt.want)
		}
	}
}

func TestMarkWriter(t *testing.T) {
	var out bytes.Buffer
	m := &markWriter{w: &out, mark: []byte("Threads started!")}
	for _, p := range []string{"Initializing...\nThreads sta", "rted!\n", "[ 1s ] ...\n"} {
		if _, err := m.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if p == "Initializing...\nThreads sta" && !m.at().IsZero() {
			t.Fatalf("marker seen before it was complete")
		}
	}
	if m.at().IsZero() {
		t.Errorf("marker split across writes was not seen")
	}
	if out.String() != "Initializing...\nThreads started!\n[ 1s ] ...\n" {
		t.Errorf("output = %q, want everything passed through", out.String())
	}
}

func TestStackFigures(t *testing.T) {
	// Counted by hand: 6 + 2 + 1 of 12 samples start at a thread root
	// (start_thread; __GI___clone3, which the default map's glibc_aliases
	// turn into __clone3; clone3), 3 stop in __send.
	p := &fold.Profile{Stacks: []fold.Stack{
		{Frames: []string{"mariadbd", "start_thread", "do_command", "dispatch_command"}, Value: 6},
		{Frames: []string{"mariadbd", "__GI___clone3", "start_thread", "handle_connection"}, Value: 2},
		{Frames: []string{"mariadbd", "clone3", "poll"}, Value: 1},
		{Frames: []string{"mariadbd", "__send"}, Value: 3},
	}}
	libc := &fold.Unwind{Method: "cfi+fp", Objects: []fold.UnwindObject{{Object: "libc.so.6", Frames: 3, None: 3}}}
	tests := []struct {
		name       string
		meta       fold.Meta
		p          *fold.Profile
		wantShare  *float64
		wantUnwind *fold.Unwind
	}{
		{"perf fp", fold.Meta{Sampler: "perf", CallGraph: "fp"}, p, ptrTo(9.0 / 12), &fold.Unwind{Method: "fp"}},
		{"perf dwarf", fold.Meta{Sampler: "perf", CallGraph: "dwarf"}, p, ptrTo(9.0 / 12), &fold.Unwind{Method: "dwarf"}},
		{"the sampler's unwind is kept", fold.Meta{Sampler: "bpf", CallGraph: "fp", Unwind: libc}, p, ptrTo(9.0 / 12), libc},
		{"no samples", fold.Meta{CallGraph: "fp"}, &fold.Profile{}, nil, &fold.Unwind{Method: "fp"}},
		{"no profile", fold.Meta{CallGraph: "fp"}, nil, nil, &fold.Unwind{Method: "fp"}},
	}
	for _, tt := range tests {
		m := tt.meta
		stackFigures(&m, tt.p)
		if (m.StackCompleteness == nil) != (tt.wantShare == nil) || m.StackCompleteness != nil && *m.StackCompleteness != *tt.wantShare {
			t.Errorf("%s: stack_completeness %v, want %v", tt.name, deref(m.StackCompleteness), deref(tt.wantShare))
		}
		if !reflect.DeepEqual(m.Unwind, tt.wantUnwind) {
			t.Errorf("%s: unwind %+v, want %+v", tt.name, m.Unwind, tt.wantUnwind)
		}
	}
}

func ptrTo(v float64) *float64 { return &v }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestThreadFidelity(t *testing.T) {
	// Period units: 300 of 400 ns-units are mariadbd's, 100 io_worker's;
	// the sampler counted 40 samples standing for 0.4 CPU-s.
	p := &fold.Profile{Unit: fold.UnitPeriod, Stacks: []fold.Stack{
		{Frames: []string{"mariadbd", "do_command"}, Value: 200},
		{Frames: []string{"mariadbd", "poll"}, Value: 100},
		{Frames: []string{"io_worker", "pwrite"}, Value: 100},
	}}
	accounted := []procstat.ThreadCPU{{Name: "mariadbd", Threads: 3, Seconds: 0.33}, {Name: "purge", Threads: 1, Seconds: 0.02}}
	corr := map[string]map[string]uint64{"io_worker": {"switch_owed": 2}}
	got := threadFidelity(p, 40, 0.4, accounted, corr)
	want := []fold.ThreadFidelity{
		{Thread: "mariadbd", Threads: 3, Samples: 30, SampledCPUSeconds: 0.3, AccountedCPUSeconds: 0.33},
		{Thread: "purge", Threads: 1, AccountedCPUSeconds: 0.02},
		{Thread: "io_worker", Samples: 10, SampledCPUSeconds: 0.1, Corrections: map[string]uint64{"switch_owed": 2}},
	}
	if len(got) != len(want) {
		t.Fatalf("threadFidelity = %+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Thread != w.Thread || g.Threads != w.Threads || g.Samples != w.Samples ||
			math.Abs(g.SampledCPUSeconds-w.SampledCPUSeconds) > 1e-9 || g.AccountedCPUSeconds != w.AccountedCPUSeconds || !reflect.DeepEqual(g.Corrections, w.Corrections) {
			t.Errorf("line %d = %+v, want %+v", i, g, w)
		}
	}
	if got := threadFidelity(p, 40, 0.4, nil, corr); got != nil {
		t.Errorf("without accounted run times: %+v, want nil", got)
	}
	if got := threadFidelity(&fold.Profile{}, 0, 0, accounted, nil); got != nil {
		t.Errorf("without samples: %+v, want nil", got)
	}
}
