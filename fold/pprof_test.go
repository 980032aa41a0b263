package fold

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func writePprof(t testing.TB, p *Profile) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WritePprof(&buf, p); err != nil {
		t.Fatalf("WritePprof: %v", err)
	}
	return buf.Bytes()
}

// A real capture folded with period weights round-trips through pprof and
// opens with the pprof library as a cpu/nanoseconds profile.
func TestPprofRoundTripCapture(t *testing.T) {
	for _, name := range captures(t)[:2] {
		src, err := ParsePerfScript(bytes.NewReader(readGz(t, name)), PerfOptions{}, true)
		if err != nil {
			t.Fatal(err)
		}
		if src.Unit != UnitPeriod || src.Event != "cpu-clock:ppp" {
			t.Fatalf("%s: Unit, Event = %q, %q, want period, cpu-clock:ppp", name, src.Unit, src.Event)
		}
		src.Meta = &Meta{FrequencyHz: 499}
		data := writePprof(t, src)

		pp, err := profile.Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: profile.Parse(WritePprof): %v", name, err)
		}
		if err := pp.CheckValid(); err != nil {
			t.Errorf("%s: CheckValid: %v", name, err)
		}
		if len(pp.SampleType) != 1 || pp.SampleType[0].Type != "cpu" || pp.SampleType[0].Unit != "nanoseconds" {
			t.Errorf("%s: sample types = %v, want [cpu/nanoseconds]", name, pp.SampleType)
		}
		if pp.PeriodType == nil || pp.PeriodType.Type != "cpu" || pp.Period != int64(2004008) {
			t.Errorf("%s: period = %v %d, want cpu %d", name, pp.PeriodType, pp.Period, int64(2004008))
		}
		if len(pp.Sample) != len(src.Stacks) {
			t.Errorf("%s: %d pprof samples, want %d", name, len(pp.Sample), len(src.Stacks))
		}

		back, err := ParsePprof(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: ParsePprof(WritePprof): %v", name, err)
		}
		if !sameStacks(back.Stacks, src.Stacks) {
			t.Errorf("%s: ParsePprof(WritePprof(p)) stacks differ from p's (%d vs %d)", name, len(back.Stacks), len(src.Stacks))
		}
		if back.Unit != UnitPeriod || back.Event != "cpu-clock" || back.Total() != src.Total() {
			t.Errorf("%s: round trip Unit, Event, Total = %q, %q, %d, want period, cpu-clock, %d", name, back.Unit, back.Event, back.Total(), src.Total())
		}
	}
}

func TestWritePprofSampleTypes(t *testing.T) {
	stacks := []Stack{st(3, "a", "b"), st(5, "a", "c")}
	tests := []struct {
		unit, event string
		typ, u      string
		backUnit    string
	}{
		{"", "", "samples", "count", UnitSamples},
		{UnitSamples, "cycles", "samples", "count", UnitSamples},
		{UnitPeriod, "", "cpu", "nanoseconds", UnitPeriod},
		{UnitPeriod, "cpu-clock", "cpu", "nanoseconds", UnitPeriod},
		{UnitPeriod, "task-clock:u", "cpu", "nanoseconds", UnitPeriod},
		{UnitPeriod, "cycles", "period", "count", UnitPeriod},
	}
	for _, tt := range tests {
		p := &Profile{Unit: tt.unit, Event: tt.event, Stacks: stacks}
		data := writePprof(t, p)
		pp, err := profile.Parse(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("profile.Parse: %v", err)
		}
		if got := pp.SampleType[0]; got.Type != tt.typ || got.Unit != tt.u {
			t.Errorf("WritePprof(Unit %q, Event %q) sample type = %s/%s, want %s/%s", tt.unit, tt.event, got.Type, got.Unit, tt.typ, tt.u)
		}
		if pp.Period != 0 || (pp.PeriodType != nil && pp.PeriodType.Type != "") {
			t.Errorf("WritePprof without Meta has period type %v, want none", pp.PeriodType)
		}
		back, err := ParsePprof(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if back.Unit != tt.backUnit || !sameStacks(back.Stacks, stacks) {
			t.Errorf("ParsePprof(WritePprof(Unit %q, Event %q)) = %q %v, want %q %v", tt.unit, tt.event, back.Unit, back.Stacks, tt.backUnit, stacks)
		}
		if wantSamples := map[string]int64{UnitSamples: 8, UnitPeriod: 0}[tt.backUnit]; back.Samples != wantSamples {
			t.Errorf("ParsePprof(WritePprof(Unit %q)) Samples = %d, want %d", tt.unit, back.Samples, wantSamples)
		}
	}
}

func TestWritePprofEmpty(t *testing.T) {
	back, err := ParsePprof(bytes.NewReader(writePprof(t, &Profile{})))
	if err != nil {
		t.Fatalf("ParsePprof(WritePprof(empty)): %v", err)
	}
	if len(back.Stacks) != 0 {
		t.Errorf("ParsePprof(WritePprof(empty)) = %v, want no stacks", back.Stacks)
	}
}

// ParsePprof on profiles written by other tools: thread labels, inlined
// lines, locations without lines, several sample types.
func TestParsePprof(t *testing.T) {
	fnA := &profile.Function{ID: 1, Name: "main"}
	fnB := &profile.Function{ID: 2, Name: "work"}
	fnC := &profile.Function{ID: 3, Name: "inlined"}
	fnD := &profile.Function{ID: 4, Name: ""}
	locA := &profile.Location{ID: 1, Line: []profile.Line{{Function: fnA}}}
	// Line[0] is the innermost (inlined) function.
	locB := &profile.Location{ID: 2, Line: []profile.Line{{Function: fnC}, {Function: fnB}}}
	locRaw := &profile.Location{ID: 3, Address: 0xdead}
	locD := &profile.Location{ID: 4, Line: []profile.Line{{Function: fnD}}}
	pp := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Function:   []*profile.Function{fnA, fnB, fnC, fnD},
		Location:   []*profile.Location{locA, locB, locRaw, locD},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{locB, locA}, Value: []int64{2, 20}, Label: map[string][]string{"thread": {"worker"}}},
			{Location: []*profile.Location{locB, locA}, Value: []int64{3, 30}, Label: map[string][]string{"comm": {"worker"}}},
			{Location: []*profile.Location{locRaw, locA}, Value: []int64{1, 10}},
			{Location: []*profile.Location{locD}, Value: []int64{4, 40}},
			{Location: nil, Value: []int64{9, 90}}, // no frames: dropped
		},
	}
	var buf bytes.Buffer
	if err := pp.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err := ParsePprof(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("ParsePprof: %v", err)
	}
	want := []Stack{st(4, "[unknown]"), st(1, "main", "[0xdead]"), st(5, "worker", "main", "work", "inlined")}
	if !sameStacks(got.Stacks, want) {
		t.Errorf("ParsePprof = %v, want %v", got.Stacks, want)
	}
	if got.Unit != UnitSamples || got.Samples != 10 {
		t.Errorf("ParsePprof Unit, Samples = %q, %d, want samples, 10", got.Unit, got.Samples)
	}

	// Without a "samples" type the default (last) one is used.
	pp.SampleType[0].Type = "alloc"
	buf.Reset()
	if err := pp.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err = ParsePprof(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Unit != UnitPeriod || got.Event != "cpu-clock" || got.Total() != 100 {
		t.Errorf("ParsePprof(alloc, cpu) Unit, Event, Total = %q, %q, %d, want period, cpu-clock, 100", got.Unit, got.Event, got.Total())
	}

	// DefaultSampleType chooses among several.
	pp.DefaultSampleType = "alloc"
	buf.Reset()
	if err := pp.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, err = ParsePprof(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Unit != UnitPeriod || got.Event != "" || got.Total() != 10 {
		t.Errorf("ParsePprof(default alloc) Unit, Event, Total = %q, %q, %d, want period, \"\", 10", got.Unit, got.Event, got.Total())
	}
}

func TestParsePprofErrors(t *testing.T) {
	fn := &profile.Function{ID: 1, Name: "f"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	neg := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
		Function:   []*profile.Function{fn},
		Location:   []*profile.Location{loc},
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{-1}}},
	}
	var buf bytes.Buffer
	if err := neg.Write(&buf); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   []byte
		msg  string
	}{
		{"negative value", buf.Bytes(), "negative"},
		{"garbage", []byte("\x00\x01\x02 this is not a profile \xff\xfe"), "pprof"},
		{"negative profile from WritePprof", nil, "negative"},
	}
	// pprof profiles of a diff (Scale(-1)) carry negative values, which
	// ParsePprof refuses.
	tests[2].in = writePprof(t, (&Profile{Stacks: []Stack{st(2, "a")}}).Scale(-1))
	for _, tt := range tests {
		p, err := ParsePprof(bytes.NewReader(tt.in))
		if err == nil || p != nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: ParsePprof = %v, %v, want an error mentioning %q", tt.name, p, err, tt.msg)
		}
	}
}

// TestPprofLabel checks that a profile's label survives WritePprof and
// ParsePprof (as the comment "flamediff label: ..."), and that a pprof
// without one gives no label.
func TestPprofLabel(t *testing.T) {
	for _, label := range []string{"11.8", ""} {
		p := &Profile{Unit: UnitSamples, Stacks: []Stack{{Frames: []string{"t", "main"}, Value: 3}}}
		if label != "" {
			p.Meta = &Meta{Format: 1, Label: label}
		}
		var b bytes.Buffer
		if err := WritePprof(&b, p); err != nil {
			t.Fatal(err)
		}
		q, err := ParsePprof(&b)
		if err != nil {
			t.Fatal(err)
		}
		if q.Label() != label {
			t.Errorf("ParsePprof(WritePprof(label %q)).Label() = %q", label, q.Label())
		}
		if label == "" && q.Meta != nil {
			t.Errorf("ParsePprof of a pprof without label: Meta = %+v, want nil", q.Meta)
		}
	}
}
