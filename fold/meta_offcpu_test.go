package fold

import (
	"strings"
	"testing"
)

func TestOffCPUSwitchGap(t *testing.T) {
	for _, tt := range []struct {
		name string
		t    OffCPU
		want string // "" or part of the warning
	}{
		{"equal", OffCPU{Voluntary: 1000, ProcVoluntary: 1000, Involuntary: 10, ProcInvoluntary: 10}, ""},
		{"within 3%", OffCPU{Voluntary: 1029, ProcVoluntary: 1000, Involuntary: 97, ProcInvoluntary: 100}, ""},
		{"voluntary off", OffCPU{Voluntary: 1040, ProcVoluntary: 1000}, "voluntary 1040 against /proc's 1000"},
		{"involuntary off", OffCPU{Voluntary: 5, ProcVoluntary: 5, Involuntary: 90, ProcInvoluntary: 100}, "involuntary 90 against /proc's 100"},
		{"a few apart", OffCPU{Voluntary: 5, ProcVoluntary: 5, Involuntary: 32, ProcInvoluntary: 31}, ""},
		{"none in /proc", OffCPU{Involuntary: 6}, "involuntary 6 against /proc's 0"},
		{"minimum", OffCPU{Voluntary: 10, ProcVoluntary: 1000, MinBlockMicros: 100}, ""},
		// 10.11's run in docs/lab.md: a tpool thread exited in the window.
		{"exited threads left out", OffCPU{Voluntary: 64422, ProcVoluntary: 61496, Involuntary: 17620, ProcInvoluntary: 14466,
			ExitedThreads: 1, ExitedVoluntary: 2930, ExitedInvoluntary: 3150}, ""},
		// TestRunOffCPU beside the other packages' tests: 7 more
		// involuntary switches than /proc's inner window saw, inside the
		// window around the sampler's.
		{"within the outer window", OffCPU{Voluntary: 6014, ProcVoluntary: 5983, ProcOuterVoluntary: 6020,
			Involuntary: 91, ProcInvoluntary: 84, ProcOuterInvoluntary: 93}, ""},
		{"beyond the outer window", OffCPU{Voluntary: 6014, ProcVoluntary: 5983, ProcOuterVoluntary: 6020,
			Involuntary: 110, ProcInvoluntary: 84, ProcOuterInvoluntary: 93}, "involuntary 110 against /proc's 84 to 93"},
		{"below the inner window", OffCPU{Voluntary: 5000, ProcVoluntary: 5983, ProcOuterVoluntary: 6020}, "voluntary 5000 against /proc's 5983 to 6020"},
		{"exited threads, still off", OffCPU{Voluntary: 64422, ProcVoluntary: 61496, ExitedThreads: 2, ExitedVoluntary: 100},
			"voluntary 64322 against /proc's 61496, leaving out the 2 threads that exited"},
	} {
		got := tt.t.SwitchGap()
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: SwitchGap(%+v) = %q, want %q", tt.name, tt.t, got, tt.want)
		}
	}
}
