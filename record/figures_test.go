package record

import (
	"bytes"
	"strings"
	"testing"
	"time"
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
		samples int64
		freq    int
		cpu     float64
		perCPU  bool
		want    string // "" or a part of the warning
	}{
		{1000, 100, 10, false, ""},
		{880, 100, 10, false, ""},                    // 12% fewer: within 15%
		{500, 100, 10, false, "50% fewer"},           // far too few
		{1300, 100, 10, false, "30% more"},           // more samples than CPU
		{20, 99, 0.3, false, ""},                     // 33% fewer, but 30 expected: within 3 sigma
		{0, 99, 0, false, ""},                        // no CPU: nothing to compare
		{1508, 999, 2.91, true, "48% fewer"},         // per-CPU events, point selects
		{1508, 999, 2.91, true, "without --per-cpu"}, // and the way out
		{500, 100, 10, false, "the other --sampler"},
	} {
		got := sampledGap(tt.samples, tt.freq, tt.cpu, tt.perCPU)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("sampledGap(%d, %d, %g) = %q, want %q", tt.samples, tt.freq, tt.cpu, got, tt.want)
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
