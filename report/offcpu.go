package report

import (
	"strings"

	"github.com/flamediff/flamediff/diff"
)

// Off-CPU profiles (diff.RunFigures.OffCPU) are reported with the tables
// of on-CPU ones, worded by their quantity ("off-CPU time", "context
// switches"), per operation in their unit ("µs/op" off the CPU, "cs/op"),
// and with the voluntary and involuntary switches apart. On-CPU reports
// are unchanged.

// perOpHead is the head of a per-op column: "µs/op" for CPU and off-CPU
// time, "cs/op" for switches, after prefix ("incl µs/op").
func perOpHead(f diff.RunFigures, prefix string) string {
	u := f.PerOpUnit
	if u == "" {
		u = "µs/op"
	}
	if prefix == "" {
		return u
	}
	if strings.HasSuffix(prefix, "Δ") {
		return prefix + u
	}
	return prefix + " " + u
}

// quantityTitle adds the quantity of an off-CPU profile to a title: "Subsystems
// (off-CPU time)"; an on-CPU profile's title is left as it is.
func quantityTitle(f diff.RunFigures, title string) string {
	if !f.OffCPU {
		return title
	}
	return title + " (" + f.Quantity + ")"
}

// kindColumns are the voluntary and involuntary columns of an off-CPU
// table: per operation when the profile's per-op figure is known, else in
// the count unit.
func kindColumns(f diff.RunFigures) []Column {
	if f.HasPerOp {
		return []Column{{"vol " + f.PerOpUnit, true}, {"invol " + f.PerOpUnit, true}}
	}
	return []Column{{"voluntary", true}, {"involuntary", true}}
}

// kindCells are the voluntary and involuntary figures of a row (see
// kindColumns): counts vol and invol of the profile f.
func kindCells(f diff.RunFigures, vol, invol int64) []Cell {
	if !f.HasPerOp {
		return []Cell{Text(Int(vol)), Text(Int(invol))}
	}
	return []Cell{Text(F2(kindPerOp(f, vol))), Text(F2(kindPerOp(f, invol)))}
}

// kindPerOp is count v of profile f per operation.
func kindPerOp(f diff.RunFigures, v int64) float64 {
	if f.Total == 0 {
		return 0
	}
	return float64(v) / float64(f.Total) * f.PerOp
}

// csvPerOp is the stem of a CSV column of per-op figures: "us_per_op"
// (CPU), "offcpu_us_per_op" or "cs_per_op".
func csvPerOp(f diff.RunFigures) string {
	switch {
	case !f.OffCPU:
		return "us_per_op"
	case f.PerOpUnit == "cs/op":
		return "cs_per_op"
	}
	return "offcpu_us_per_op"
}

// int64Ptr is &v when ok, else nil.
func int64Ptr(ok bool, v int64) *int64 {
	if !ok {
		return nil
	}
	return &v
}
