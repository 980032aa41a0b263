package record

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
)

func TestWriteSummaryPlacementHost(t *testing.T) {
	noHint := func(*diff.Unwinding) string { return "" }
	for _, tt := range []struct {
		name string
		meta fold.Meta
		want []string
	}{
		{"held", fold.Meta{Operations: 1000, CPUSecondsTotal: 1, WindowSeconds: 1,
			Placement: &fold.Placement{Asked: "same", ServerCPUs: "1", ClientCPUs: "1",
				Server: []fold.Affinity{{CPUs: "1", Threads: 12}}, Client: []fold.Affinity{{CPUs: "1", Threads: 2}}},
			Host: &fold.Host{CPUs: 2, Seconds: 1, CPUSeconds: 1.5, CPUMicrosPerOp: 1500, CtxSwitchesPerOp: 2.5, StealShare: 0.012,
				CPUFreq: &fold.CPUFreq{Note: cpuFreqNotExposed}}},
			[]string{"  placement same: server threads 12 on CPU 1; client threads 2 on CPU 1 (held at the window's end)\n",
				"  host (whole machine, client included): cpu/o 1500.0 µs, cs/o 2.50, steal 1.2%, CPU frequency not exposed\n"}},
		{"did not hold, no operations", fold.Meta{
			Placement: &fold.Placement{Asked: "server=1", Server: []fold.Affinity{{CPUs: "1", Threads: 11}, {CPUs: "0-1", Threads: 1}},
				Mismatched: []string{"server 7 x: 0-1"}},
			Host: &fold.Host{CPUs: 2, Seconds: 3, CPUSeconds: 1.25, CPUFreq: &fold.CPUFreq{Exposed: true, Changed: true}}},
			[]string{"  placement server=1: server threads 11 on CPU 1, 1 on CPUs 0-1 (did not hold for 1 threads)\n",
				"no operation count", "  host (whole machine, client included): busy 1.25 s of 2 CPUs x 3.0 s, steal 0.0%, CPU frequency CHANGED during the window\n"}},
		{"unprofiled", fold.Meta{Sampler: SamplerNone, Operations: 10, CPUSecondsTotal: 1, WindowSeconds: 1,
			Placement: &fold.Placement{Asked: "same", ServerCPUs: "1", ClientCPUs: "1",
				Server: []fold.Affinity{{CPUs: "1", Threads: 12}}, Client: []fold.Affinity{{CPUs: "1", Threads: 2}}},
			Host: &fold.Host{CPUs: 2, Seconds: 1, CPUSeconds: 1.5, CPUMicrosPerOp: 150000, CtxSwitchesPerOp: 2.5, CPUFreq: &fold.CPUFreq{Note: cpuFreqNotExposed}}},
			[]string{"without a sampler", "  placement same: server threads 12 on CPU 1; client threads 2 on CPU 1 (held at the window's end)\n", "10 operations"}},
		{"off-cpu", fold.Meta{OffCPU: &fold.OffCPU{Seconds: 1.234, Voluntary: 700, ProcVoluntary: 701, Involuntary: 3, ProcInvoluntary: 3}},
			[]string{"  off the CPU 1.23 s: 700 voluntary switches (/proc 701), 3 involuntary (/proc 3)\n"}},
		{"none", fold.Meta{Placement: &fold.Placement{Asked: "none", Server: []fold.Affinity{{CPUs: "0-1", Threads: 9}}}},
			[]string{"  placement none (left to the scheduler): server threads 9 on CPUs 0-1\n"}},
	} {
		var b bytes.Buffer
		(&Result{Dir: "run", Meta: &tt.meta}).WriteSummary(&b, noHint)
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: summary\n%s\nwant %q", tt.name, b.String(), w)
			}
		}
		if got := b.String(); tt.meta.Host != nil && !strings.HasSuffix(got, hostLine(tt.meta.Host)+"\n") {
			t.Errorf("%s: the host line is not last:\n%s", tt.name, got)
		}
	}
}
