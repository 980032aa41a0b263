package flamegraph

import (
	"testing"

	"github.com/flamediff/flamediff/fold"
)

func TestParseMinWidth(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		px, percent float64
		wantErr     bool
	}{
		{"pixels", "0.1", 0.1, 0, false},
		{"whole pixels", "3", 3, 0, false},
		{"zero draws every frame", "0", -1, 0, false},
		{"percentage", "0.5%", 0, 0.5, false},
		{"white space", " 2% ", 0, 2, false},
		{"zero percent draws every frame", "0%", -1, 0, false},
		{"percentage under 100", "99.9%", 0, 99.9, false},
		{"100 percent", "100%", 0, 0, true},
		{"negative", "-1", 0, 0, true},
		{"NaN", "NaN", 0, 0, true},
		{"word", "wide", 0, 0, true},
		{"empty", "", 0, 0, true},
		{"unit", "2px", 0, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			px, pct, err := ParseMinWidth(tc.in)
			if (err != nil) != tc.wantErr || px != tc.px || pct != tc.percent {
				t.Errorf("ParseMinWidth(%q) = %g, %g, %v; want %g, %g, error %v", tc.in, px, pct, err, tc.px, tc.percent, tc.wantErr)
			}
		})
	}
	if _, _, err := ParseMinWidth("wide"); err == nil || err.Error() != `"wide": want pixels (0.1) or a percentage of the total (0.5%)` {
		t.Errorf("ParseMinWidth(%q) error %v; want the value quoted and what is wanted", "wide", err)
	}
}

func TestAutoNormalize(t *testing.T) {
	perOp := &fold.Meta{CPUSecondsTotal: 1, Operations: 100}
	noOps := &fold.Meta{CPUSecondsTotal: 1}
	opsOnly := &fold.Meta{Operations: 100}
	tests := []struct {
		name         string
		unit         string
		base, target *fold.Meta
		want         Normalize
	}{
		{"both per-op", "", perOp, perOp, NormalizePerOp},
		{"base without operations", "", noOps, perOp, NormalizeShare},
		{"target without metadata", "", perOp, nil, NormalizeShare},
		{"neither", "", nil, nil, NormalizeShare},
		{"on-CPU without CPU seconds", "", opsOnly, opsOnly, NormalizeShare},
		// An off-CPU profile's per-op figure is its total over the operations.
		{"off-CPU with operations only", fold.UnitSwitches, opsOnly, opsOnly, NormalizePerOp},
		{"off-CPU without operations", fold.UnitOffCPUMicros, noOps, opsOnly, NormalizeShare},
	}
	for _, tc := range tests {
		base := &fold.Profile{Meta: tc.base, Unit: tc.unit, Stacks: []fold.Stack{{Frames: []string{"a"}, Value: 1}}}
		target := &fold.Profile{Meta: tc.target, Unit: tc.unit, Stacks: []fold.Stack{{Frames: []string{"a"}, Value: 1}}}
		if got := AutoNormalize(base, target); got != tc.want {
			t.Errorf("%s: AutoNormalize = %q, want %q", tc.name, got, tc.want)
		}
	}
}
