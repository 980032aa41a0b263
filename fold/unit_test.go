package fold

import "testing"

func TestCountUnit(t *testing.T) {
	for _, tc := range []struct {
		unit, event, want string
	}{
		{"", "", "samples"},
		{UnitSamples, "cpu-clock", "samples"},
		{UnitPeriod, "cpu-clock", "ns"},
		{UnitPeriod, "cpu-clock:ppp", "ns"},
		{UnitPeriod, "task-clock", "ns"},
		{UnitPeriod, "cycles", "period"},
		{UnitPeriod, "", "period"},
	} {
		p := &Profile{Unit: tc.unit, Event: tc.event}
		if got := p.CountUnit(); got != tc.want {
			t.Errorf("CountUnit(unit %q, event %q) = %q, want %q", tc.unit, tc.event, got, tc.want)
		}
	}
}

func TestInferClockPeriod(t *testing.T) {
	stacks := func(vs ...int64) []Stack {
		var ss []Stack
		for i, v := range vs {
			ss = append(ss, Stack{Frames: []string{"m", string(rune('a' + i))}, Value: v})
		}
		return ss
	}
	for _, tc := range []struct {
		name    string
		p       *Profile
		want    int64
		samples int64
	}{
		{"499 Hz", &Profile{Stacks: stacks(4008016, 20040080, 2004008)}, 2004008, 13},
		{"99 Hz", &Profile{Stacks: stacks(10101010, 30303030)}, 10101010, 4},
		{"997 Hz", &Profile{Stacks: stacks(1003009, 2006018)}, 1003009, 3},
		{"sample counts", &Profile{Stacks: stacks(1, 7, 3)}, 0, 0},
		{"one stack", &Profile{Stacks: stacks(2004008)}, 0, 0},
		{"not a cpu-clock period", &Profile{Stacks: stacks(1234000, 2468000)}, 0, 0},
		{"810 Hz", &Profile{Stacks: stacks(1234567, 2469134)}, 1234567, 3},
		{"period too small", &Profile{Stacks: stacks(5000, 10000)}, 0, 0},
		{"already period", &Profile{Unit: UnitPeriod, Stacks: stacks(2004008, 4008016)}, 0, 0},
		{"has an event", &Profile{Event: "cycles", Stacks: stacks(2004008, 4008016)}, 0, 0},
	} {
		got := tc.p.InferClockPeriod()
		if got != tc.want {
			t.Errorf("%s: InferClockPeriod = %d, want %d", tc.name, got, tc.want)
			continue
		}
		if got == 0 {
			continue
		}
		if tc.p.CountUnit() != "ns" || tc.p.Samples != tc.samples {
			t.Errorf("%s: after InferClockPeriod unit %q samples %d, want ns and %d", tc.name, tc.p.CountUnit(), tc.p.Samples, tc.samples)
		}
	}
}

// TestPerOp checks each kind of profile's whole per operation against
// figures worked out by hand, and that an off-CPU profile is never taken
// for cpu-clock periods.
func TestPerOp(t *testing.T) {
	meta := &Meta{Operations: 1000, CPUSecondsTotal: 0.5, VoluntaryCtxSwitches: 4000}
	stacks := []Stack{{Frames: []string{"a", "b"}, Value: 100_000}, {Frames: []string{"a", "c"}, Value: 300_000}}
	for _, c := range []struct {
		unit, count, perOpUnit, quantity string
		meta                             *Meta
		want                             float64
		ok, offCPU                       bool
	}{
		{"", CountSamples, "µs/op", "CPU", meta, 500, true, false}, // 0.5 s over 1,000 operations, whatever the samples
		{UnitOffCPUMicros, CountMicroseconds, "µs/op", "off-CPU time", meta, 400, true, true},
		{UnitSwitches, CountSwitches, "cs/op", "context switches", meta, 400, true, true},
		{UnitOffCPUMicros, CountMicroseconds, "µs/op", "off-CPU time", nil, 0, false, true},
		{UnitSwitches, CountSwitches, "cs/op", "context switches", &Meta{CPUSecondsTotal: 1}, 0, false, true},
		{UnitSamples, CountSamples, "µs/op", "CPU", &Meta{Operations: 5}, 0, false, false}, // no CPU seconds
	} {
		p := &Profile{Stacks: stacks, Unit: c.unit, Meta: c.meta}
		v, ok := p.PerOp()
		if v != c.want || ok != c.ok {
			t.Errorf("unit %q, meta %+v: PerOp = %v, %v; want %v, %v", c.unit, c.meta, v, ok, c.want, c.ok)
		}
		if p.IsOffCPU() != c.offCPU || p.CountUnit() != c.count || p.PerOpUnit() != c.perOpUnit || p.Quantity() != c.quantity {
			t.Errorf("unit %q: IsOffCPU %v, CountUnit %q, PerOpUnit %q, Quantity %q; want %v, %q, %q, %q",
				c.unit, p.IsOffCPU(), p.CountUnit(), p.PerOpUnit(), p.Quantity(), c.offCPU, c.count, c.perOpUnit, c.quantity)
		}
		if got := p.InferClockPeriod(); c.offCPU && got != 0 {
			t.Errorf("unit %q: InferClockPeriod = %d, want 0 (counts of 100,000 µs look like 10 kHz periods)", c.unit, got)
		}
	}
}
