package benchreport

import (
	"fmt"
	"math"
	"strings"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/report"
)

// windowMixed is a cell's FiguresWindow when some repeats have an
// unprofiled window and some not.
const windowMixed = "mixed"

// Outlier rule: a repeat stands out when its figure differs from the
// cell's median (over all its repeats: with three or more, one repeat far
// off does not move it) by more than outlierCVs times the cell's
// within-run noise (the median coefficient of variation of its per-second
// QPS), and by at least outlierFloorPct; without per-second figures, by
// more than outlierNoCVPct. A window's mean over several seconds varies
// less than one second does, so a repeat beyond three per-second
// deviations is not explained by the noise the runs show: on the lab's
// VMs it is a different placement of the server and the client on the
// CPUs (docs/lab.md).
const (
	outlierCVs      = 3
	outlierFloorPct = 5
	outlierNoCVPct  = 10
	// outlierMinRepeats: with two repeats neither is "the other".
	outlierMinRepeats = 3
)

// cvOf is the coefficient of variation of xs in percent, when xs has at
// least two values and a positive mean.
func cvOf(xs []float64) (float64, bool) {
	s := diff.SampleOf(xs)
	if s.N < 2 || s.Mean <= 0 {
		return 0, false
	}
	return 100 * s.StdDev / s.Mean, true
}

// outlierLimit is the most, in percent, a repeat may differ from the
// median of cell v.
func outlierLimit(v *Version) float64 {
	if v.QPSCVPct == nil {
		return outlierNoCVPct
	}
	return math.Max(outlierFloorPct, outlierCVs*v.QPSCVPct.Median)
}

// outliers sets v's Outliers and Untrusted from its o/s and cpu/o repeats.
func outliers(v *Version) {
	if v.Repeats < outlierMinRepeats {
		return
	}
	limit := outlierLimit(v)
	var why []string
	for _, f := range []struct {
		name string
		fig  *Figure
	}{{"o/s", v.QPS}, {"cpu/o µs", v.CPUPerOp}} {
		m := f.fig.Median
		if m <= 0 {
			continue
		}
		for i, x := range f.fig.Values {
			dev := 100 * (x/m - 1)
			if math.Abs(dev) <= limit {
				continue
			}
			o := Outlier{Figure: f.name, Repeat: v.repeatNums[i], Value: x, Median: m, DeviationPct: dev, LimitPct: limit}
			v.Outliers = append(v.Outliers, o)
			why = append(why, fmt.Sprintf("repeat %d's %s %s is %s%% off the cell's median %s (noise allows ±%s%%)",
				o.Repeat, f.name, report.F2(x), report.Signed(dev), report.F2(m), report.F2(limit)))
		}
	}
	if len(why) > 0 {
		v.Untrusted = strings.Join(why, "; ")
	}
}
