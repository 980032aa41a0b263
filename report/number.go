package report

import (
	"fmt"
	"math"
	"strconv"
)

// The one rounding rule of every table, markdown, CSV and HTML figure: a
// figure is rounded once, to a fixed number of decimals, half away from
// zero (Round), and printed with exactly those decimals (Fixed). A change
// shown beside two figures is the difference of the figures shown (Delta),
// so that a reader who subtracts gets the same number. JSON keeps figures
// unrounded.

// Round returns x rounded to decimals places, half away from zero.
func Round(x float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(x*p) / p
}

// Fixed prints x rounded (Round) to decimals places: Fixed(2.005, 2) is
// "2.01" where fmt's %.2f may say "2.00".
func Fixed(x float64, decimals int) string {
	return strconv.FormatFloat(Round(x, decimals), 'f', decimals, 64)
}

// F2 prints x with two decimals, the precision of shares (%), CPU µs per
// operation and seconds.
func F2(x float64) string { return Fixed(x, 2) }

// F3 prints x with three decimals, the precision of small per-op counts
// (context switches, reads, KB per operation) and p-values.
func F3(x float64) string { return Fixed(x, 3) }

// Signed prints x with two decimals and its sign: "+1.25", "-0.50".
func Signed(x float64) string { return fmt.Sprintf("%+.2f", Round(x, 2)) }

// Delta is the change from base to target as the reader computes it from
// the two figures shown: both rounded to two decimals first, then
// subtracted (one rounding).
func Delta(base, target float64) string { return Signed(Round(target, 2) - Round(base, 2)) }

// Int prints an integer figure (a count).
func Int(x int64) string { return strconv.FormatInt(x, 10) }

// OptF2 is F2(x) when ok, else "" (a CSV cell of an absent figure).
func OptF2(ok bool, x float64) string {
	if !ok {
		return ""
	}
	return F2(x)
}

// RatioText prints a ratio for tables: "new" when the base has none, "-"
// when neither has any.
func RatioText(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "new"
	case math.IsNaN(r):
		return "-"
	}
	return F2(r)
}

// RatioCSV prints a ratio for CSV: four decimals, "inf" when the base has
// none, empty when neither has any.
func RatioCSV(r float64) string {
	switch {
	case math.IsInf(r, 1):
		return "inf"
	case math.IsNaN(r):
		return ""
	}
	return Fixed(r, 4)
}

// RatioJSON is the ratio for JSON: nil (null) when it is undefined.
func RatioJSON(r float64) *float64 {
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return nil
	}
	return &r
}

// ratiosJSON is RatioJSON of each ratio.
func ratiosJSON(rs []float64) []*float64 {
	out := make([]*float64, len(rs))
	for i, r := range rs {
		out[i] = RatioJSON(r)
	}
	return out
}

// ptr is &x when ok, else nil: an optional JSON figure.
func ptr(ok bool, x float64) *float64 {
	if !ok {
		return nil
	}
	return &x
}
