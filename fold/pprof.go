package fold

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// labelComment starts the comment that carries a profile's label in the
// pprof files flamediff writes ("flamediff label: 10.11"); go tool pprof
// shows it among the profile's comments.
const labelComment = "flamediff label: "

// threadLabels are the string labels taken, in this order, as a sample's
// thread name when reading pprof written by other tools.
var threadLabels = []string{"thread", "comm", "thread_name"}

// ParsePprof reads a pprof protobuf profile (gzipped or not). Frames are
// the function names of the sample's locations, inlined functions
// included, root first; a "thread" (or "comm") label, when present, becomes
// the first frame. The value is the sample type named "samples" when there
// is one, else the profile's default (last) sample type. Values that add
// up to more than an int64 holds are an error wrapping ErrOverflow. A
// comment "flamediff label: LABEL" (as WritePprof writes it) becomes the
// profile's label (Meta.Label).
func ParsePprof(r io.Reader) (*Profile, error) {
	pp, err := profile.Parse(r)
	if err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	idx := len(pp.SampleType) - 1
	if pp.DefaultSampleType != "" {
		for i, st := range pp.SampleType {
			if st.Type == pp.DefaultSampleType {
				idx = i
			}
		}
	}
	for i, st := range pp.SampleType {
		if st.Type == "samples" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("pprof: profile has no sample types")
	}
	p := &Profile{Unit: UnitSamples}
	if t := pp.SampleType[idx]; t.Type != "samples" {
		p.Unit = UnitPeriod
		if t.Type == "cpu" {
			p.Event = "cpu-clock"
		}
	}
	sums := make(map[string]int64)
	var frames []string
	var total int64
	for i, s := range pp.Sample {
		if idx >= len(s.Value) {
			return nil, fmt.Errorf("pprof: sample has %d values, want %d", len(s.Value), len(pp.SampleType))
		}
		v := s.Value[idx]
		if v < 0 {
			return nil, fmt.Errorf("pprof: negative sample value %d", v)
		}
		frames = frames[:0]
		for _, l := range threadLabels {
			if t := s.Label[l]; len(t) > 0 {
				frames = append(frames, t[0])
				break
			}
		}
		for i := len(s.Location) - 1; i >= 0; i-- {
			loc := s.Location[i]
			if loc == nil {
				continue
			}
			if len(loc.Line) == 0 {
				frames = append(frames, fmt.Sprintf("[0x%x]", loc.Address))
				continue
			}
			for j := len(loc.Line) - 1; j >= 0; j-- {
				name := "[unknown]"
				if fn := loc.Line[j].Function; fn != nil && fn.Name != "" {
					name = fn.Name
				}
				frames = append(frames, name)
			}
		}
		if len(frames) == 0 {
			continue
		}
		if v > math.MaxInt64-total {
			return nil, fmt.Errorf("pprof: sample %d: %s: %w", i+1, overflowMsg, ErrOverflow)
		}
		total += v
		sums[strings.Join(frames, ";")] += v
	}
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.Stacks = append(p.Stacks, Stack{Frames: strings.Split(k, ";"), Value: sums[k]})
	}
	if p.Unit == UnitSamples {
		p.Samples = p.Total()
	}
	for _, c := range pp.Comments {
		if l, ok := strings.CutPrefix(c, labelComment); ok && strings.TrimSpace(l) != "" {
			p.Meta = &Meta{Format: 1, Label: strings.TrimSpace(l)}
			break
		}
	}
	return p, nil
}

// WritePprof writes p as a gzipped pprof protobuf profile that `go tool
// pprof` opens. Every frame, the thread name included, becomes a function
// and a location, so that reading it back gives the same stacks. The sample
// label, when it has one, is written as the comment "flamediff label:
// LABEL", which ParsePprof reads back. The sample
// type is ("samples", "count"), or ("cpu", "nanoseconds") for period-weighted
// cpu-clock profiles, or ("period", "count") for other events.
func WritePprof(w io.Writer, p *Profile) error {
	st := &profile.ValueType{Type: "samples", Unit: "count"}
	if p.Unit == UnitPeriod {
		st = &profile.ValueType{Type: "period", Unit: "count"}
		if p.Event == "" || strings.HasPrefix(p.Event, "cpu-clock") || strings.HasPrefix(p.Event, "task-clock") {
			st = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
		}
	}
	pp := &profile.Profile{SampleType: []*profile.ValueType{st}}
	if l := p.Label(); l != "" {
		pp.Comments = []string{labelComment + l}
	}
	if p.Meta != nil && p.Meta.FrequencyHz > 0 {
		pp.PeriodType = &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}
		pp.Period = int64(1e9 / p.Meta.FrequencyHz)
	}
	funcs := make(map[string]*profile.Location)
	for _, s := range p.Stacks {
		locs := make([]*profile.Location, 0, len(s.Frames))
		for i := len(s.Frames) - 1; i >= 0; i-- {
			name := s.Frames[i]
			loc, ok := funcs[name]
			if !ok {
				fn := &profile.Function{ID: uint64(len(pp.Function) + 1), Name: name, SystemName: name}
				pp.Function = append(pp.Function, fn)
				loc = &profile.Location{ID: uint64(len(pp.Location) + 1), Line: []profile.Line{{Function: fn}}}
				pp.Location = append(pp.Location, loc)
				funcs[name] = loc
			}
			locs = append(locs, loc)
		}
		pp.Sample = append(pp.Sample, &profile.Sample{Location: locs, Value: []int64{s.Value}})
	}
	if err := pp.CheckValid(); err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	return pp.Write(w)
}
