package fold

import "strings"

// Count units, as CountUnit names them to people.
const (
	CountSamples      = "samples"
	CountNanoseconds  = "ns"
	CountPeriod       = "period"
	CountMicroseconds = "us"
	CountSwitches     = "switches"
)

// CountUnit says what one count of the profile stands for, the one rule
// every output follows (tables, JSON, SVG tooltips, HTML): "ns" (CPU
// nanoseconds) when the counts are sums of sample periods of the cpu-clock
// or task-clock event (with or without perf's modifiers, "cpu-clock:ppp"),
// "period" for period sums of any other event, "us" (microseconds off the
// CPU) and "switches" for the two off-CPU profiles, else "samples".
func (p *Profile) CountUnit() string {
	switch p.Unit {
	case UnitOffCPUMicros:
		return CountMicroseconds
	case UnitSwitches:
		return CountSwitches
	}
	if p.Unit != UnitPeriod {
		return CountSamples
	}
	ev, _, _ := strings.Cut(p.Event, ":")
	switch ev {
	case "cpu-clock", "task-clock":
		return CountNanoseconds
	}
	return CountPeriod
}

// Frequencies InferClockPeriod accepts: a period of 10 µs to 1 s.
const (
	minClockPeriod = 10_000
	maxClockPeriod = 1_000_000_000
)

// InferClockPeriod recognises a folded profile of cpu-clock period sums, as
// stackcollapse-perf.pl and flamediff fold write them for perf script
// input: a profile counted in samples, with no event, at least two stacks,
// and every count a multiple of one period P between 10 µs and 1 s whose
// frequency 1e9/P is within 0.01% of a whole number of hertz (perf samples
// cpu-clock at -F N with the period 1e9/N ns, rounded down). Such a profile
// is taken to be in CPU nanoseconds of cpu-clock: Unit becomes "period",
// Event "cpu-clock", Samples the total divided by P, and P is returned;
// otherwise the profile is left as it is and 0 is returned.
//
// A profile of sample counts has stacks sampled once (count 1), so it
// never passes; a folded file of another event's periods is taken for
// cpu-clock only if its period happens to be 1e9/N.
func (p *Profile) InferClockPeriod() int64 {
	if p.IsOffCPU() || p.Unit == UnitPeriod || p.Event != "" || len(p.Stacks) < 2 {
		return 0
	}
	var g int64
	for _, s := range p.Stacks {
		if s.Value <= 0 {
			return 0
		}
		g = gcd(g, s.Value)
		if g < minClockPeriod {
			return 0
		}
	}
	if g > maxClockPeriod {
		return 0
	}
	if hz := 1_000_000_000 / g; 1_000_000_000/hz != g {
		return 0
	}
	total, err := p.CheckedTotal()
	if err != nil {
		return 0
	}
	p.Unit, p.Event, p.Samples = UnitPeriod, "cpu-clock", total/g
	return g
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// IsOffCPU reports whether the profile is an off-CPU one: its counts are
// microseconds off the CPU or switches, not CPU.
func (p *Profile) IsOffCPU() bool {
	return p.Unit == UnitOffCPUMicros || p.Unit == UnitSwitches
}

// PerOp returns what the whole profile amounts to per operation of the
// run, in the unit PerOpUnit names, and whether it is known: for an
// on-CPU profile the run's CPU µs per operation (Meta.CPUMicrosPerOp: the
// CPU the process was accounted, not the samples), for an off-CPU profile
// its total over the operations (µs off the CPU, or switches, per
// operation). A subtree's per-op figure is its share of the profile times
// this. Without run metadata (Meta nil, no operations) ok is false.
func (p *Profile) PerOp() (v float64, ok bool) {
	m := p.Meta
	if p.IsOffCPU() {
		if m == nil || m.Operations <= 0 {
			return 0, false
		}
		return float64(p.Total()) / float64(m.Operations), true
	}
	if !m.HasPerOp() {
		return 0, false
	}
	return m.CPUMicrosPerOp(), true
}

// PerOpUnit names the unit of PerOp as tables head it: "µs/op" (CPU, or
// off-CPU time) or "cs/op" (switches).
func (p *Profile) PerOpUnit() string {
	if p.Unit == UnitSwitches {
		return "cs/op"
	}
	return "µs/op"
}

// Quantity names what the profile measures, for titles and column heads:
// "CPU", "off-CPU time" or "context switches".
func (p *Profile) Quantity() string {
	switch p.Unit {
	case UnitOffCPUMicros:
		return "off-CPU time"
	case UnitSwitches:
		return "context switches"
	}
	return "CPU"
}
