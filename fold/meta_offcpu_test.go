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
	} {
		got := tt.t.SwitchGap()
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: SwitchGap(%+v) = %q, want %q", tt.name, tt.t, got, tt.want)
		}
	}
}
