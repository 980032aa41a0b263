package report

import (
	"math"
	"testing"
)

func TestRounding(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"F2 rounds half away from zero", F2(0.125), "0.13"},
		{"F2 negative half", F2(-0.125), "-0.13"},
		{"F2 keeps two decimals", F2(3), "3.00"},
		{"F3", F3(0.0005), "0.001"},
		{"Signed positive", Signed(1.254), "+1.25"},
		{"Signed negative", Signed(-0.5), "-0.50"},
		{"Signed zero", Signed(0), "+0.00"},
		{"Delta is of the figures shown", Delta(10.004, 10.016), "+0.02"},
		{"Delta of equal figures shown", Delta(1.001, 1.004), "+0.00"},
		{"Int", Int(-12), "-12"},
		{"OptF2 absent", OptF2(false, 1), ""},
		{"OptF2 present", OptF2(true, 1), "1.00"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestRatio(t *testing.T) {
	tests := []struct {
		r          float64
		text, csv  string
		jsonIsNull bool
	}{
		{2, "2.00", "2.0000", false},
		{0.123456, "0.12", "0.1235", false},
		{math.Inf(1), "new", "inf", true},
		{math.NaN(), "-", "", true},
	}
	for _, tt := range tests {
		if got := RatioText(tt.r); got != tt.text {
			t.Errorf("RatioText(%v) = %q, want %q", tt.r, got, tt.text)
		}
		if got := RatioCSV(tt.r); got != tt.csv {
			t.Errorf("RatioCSV(%v) = %q, want %q", tt.r, got, tt.csv)
		}
		if got := RatioJSON(tt.r); (got == nil) != tt.jsonIsNull {
			t.Errorf("RatioJSON(%v) = %v, want null %v", tt.r, got, tt.jsonIsNull)
		}
	}
}
