package fold

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Shared helpers for the package's tests.

// captures lists the real perf script captures (gzipped) under ../testdata/perf.
func captures(t testing.TB) []string {
	t.Helper()
	names, err := filepath.Glob("../testdata/perf/*.perf.script.gz")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("no captures in ../testdata/perf")
	}
	return names
}

// readGz returns the decompressed content of a gzipped fixture.
func readGz(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return data
}

// gz compresses data.
func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// folded returns p in folded form.
func folded(t testing.TB, p *Profile) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteFolded(&buf, p); err != nil {
		t.Fatalf("WriteFolded: %v", err)
	}
	return buf.String()
}

// sameStacks reports whether a and b hold the same stacks in the same order.
func sameStacks(a, b []Stack) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Value != b[i].Value || !reflect.DeepEqual(a[i].Frames, b[i].Frames) {
			return false
		}
	}
	return true
}

func st(v int64, frames ...string) Stack { return Stack{Frames: frames, Value: v} }

func TestStackKey(t *testing.T) {
	tests := []struct {
		s    Stack
		want string
	}{
		{st(1, "a", "b", "c"), "a;b;c"},
		{st(1, "a b", "c"), "a b;c"},
		{st(1), ""},
		{st(1, ""), ""},
	}
	for _, tt := range tests {
		if got := tt.s.Key(); got != tt.want {
			t.Errorf("Stack{%q}.Key() = %q, want %q", tt.s.Frames, got, tt.want)
		}
	}
}

func TestTotalAndLabel(t *testing.T) {
	p := &Profile{Stacks: []Stack{st(3, "a"), st(4, "b"), st(-2, "c")}}
	if got := p.Total(); got != 5 {
		t.Errorf("Total() = %d, want 5", got)
	}
	if got := p.Label(); got != "" {
		t.Errorf("Label() without Meta = %q, want \"\"", got)
	}
	p.Meta = &Meta{Label: "10.11"}
	if got := p.Label(); got != "10.11" {
		t.Errorf("Label() = %q, want %q", got, "10.11")
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct {
		name string
		in   []Stack
		want []Stack
	}{
		{"empty", nil, []Stack{}},
		{"sorted already", []Stack{st(1, "a"), st(2, "b")}, []Stack{st(1, "a"), st(2, "b")}},
		{"sorts by key", []Stack{st(1, "b"), st(2, "a", "z"), st(3, "a")}, []Stack{st(3, "a"), st(2, "a", "z"), st(1, "b")}},
		{"merges duplicates", []Stack{st(1, "a", "b"), st(2, "c"), st(5, "a", "b")}, []Stack{st(6, "a", "b"), st(2, "c")}},
		{"drops frameless", []Stack{st(1), st(2, "a"), {Frames: []string{}, Value: 3}}, []Stack{st(2, "a")}},
		// Byte order as Perl's cmp: 'B' < '_' < 'a', and "a;" sorts by ';' (0x3b) against ' ' and 'b'.
		{"byte order", []Stack{st(1, "a"), st(2, "_"), st(3, "B"), st(4, "a", "x"), st(5, "a b")}, []Stack{st(3, "B"), st(2, "_"), st(1, "a"), st(5, "a b"), st(4, "a", "x")}},
		{"negative and zero values sum", []Stack{st(5, "a"), st(-5, "a"), st(0, "b")}, []Stack{st(0, "a"), st(0, "b")}},
	}
	for _, tt := range tests {
		p := &Profile{Stacks: append([]Stack(nil), tt.in...)}
		p.Normalize()
		if !sameStacks(p.Stacks, tt.want) {
			t.Errorf("%s: Normalize(%v) = %v, want %v", tt.name, tt.in, p.Stacks, tt.want)
		}
	}
}

func TestNormalizeDoesNotAliasInput(t *testing.T) {
	in := []Stack{st(1, "b"), st(2, "a"), st(3, "b")}
	p := &Profile{Stacks: in}
	p.Normalize()
	if in[0].Value != 1 || in[0].Key() != "b" || in[1].Key() != "a" {
		t.Errorf("Normalize changed its input slice: %v", in)
	}
}

func TestMerge(t *testing.T) {
	a := &Profile{Stacks: []Stack{st(1, "a", "b"), st(2, "c")}, Samples: 3, Skipped: 1, Meta: &Meta{Label: "A"}}
	b := &Profile{Unit: UnitSamples, Stacks: []Stack{st(10, "c"), st(4, "a")}, Samples: 14, Skipped: 2, Meta: &Meta{Label: "B"}}
	got, err := a.Merge(b)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := []Stack{st(4, "a"), st(1, "a", "b"), st(12, "c")}
	if !sameStacks(got.Stacks, want) {
		t.Errorf("Merge stacks = %v, want %v", got.Stacks, want)
	}
	if got.Samples != 17 || got.Skipped != 3 {
		t.Errorf("Merge Samples, Skipped = %d, %d, want 17, 3", got.Samples, got.Skipped)
	}
	if got.Label() != "A" {
		t.Errorf("Merge Label = %q, want %q (metadata from the receiver)", got.Label(), "A")
	}
	// The inputs are untouched.
	if !sameStacks(a.Stacks, []Stack{st(1, "a", "b"), st(2, "c")}) || !sameStacks(b.Stacks, []Stack{st(10, "c"), st(4, "a")}) {
		t.Errorf("Merge changed its inputs: %v, %v", a.Stacks, b.Stacks)
	}
	got.Stacks[0].Frames[0] = "changed"
	if b.Stacks[1].Frames[0] != "a" {
		t.Errorf("Merge result shares frames with its argument")
	}

	// No others: a sorted copy.
	self, err := b.Merge()
	if err != nil {
		t.Fatalf("Merge(): %v", err)
	}
	if want := []Stack{st(4, "a"), st(10, "c")}; !sameStacks(self.Stacks, want) {
		t.Errorf("Merge() = %v, want %v", self.Stacks, want)
	}

	// Units must agree; "" is samples.
	per := &Profile{Unit: UnitPeriod, Stacks: []Stack{st(1, "x")}}
	if _, err := a.Merge(per); err == nil {
		t.Errorf("Merge(samples, period) = nil error, want a unit mismatch error")
	}
	if _, err := per.Merge(a); err == nil {
		t.Errorf("Merge(period, samples) = nil error, want a unit mismatch error")
	}
	if _, err := per.Merge(&Profile{Unit: UnitPeriod}); err != nil {
		t.Errorf("Merge(period, period) = %v, want nil", err)
	}
}

// Sums beyond an int64 are errors: Merge's and CheckedTotal's.
func TestMergeOverflow(t *testing.T) {
	const max = math.MaxInt64
	tests := []struct {
		name string
		a, b []Stack
		ok   bool
	}{
		{"same stack", []Stack{st(max, "a")}, []Stack{st(1, "a")}, false},
		{"total only", []Stack{st(max, "a")}, []Stack{st(max, "b")}, false},
		{"total exactly max", []Stack{st(max-1, "a")}, []Stack{st(1, "b")}, true},
		{"negative stack (a difference)", []Stack{st(max, "a")}, []Stack{st(-max, "a"), st(5, "b")}, true},
		{"below the smallest", []Stack{st(-max, "a")}, []Stack{st(-2, "b")}, false},
	}
	for _, tt := range tests {
		a, b := &Profile{Stacks: tt.a}, &Profile{Stacks: tt.b}
		got, err := a.Merge(b)
		if tt.ok != (err == nil) || (err != nil && (!errors.Is(err, ErrOverflow) || got != nil)) {
			t.Errorf("%s: Merge = %v, %v, want ok %v (else an error wrapping ErrOverflow)", tt.name, got, err, tt.ok)
		}
	}
}

func TestCheckedTotal(t *testing.T) {
	const max = math.MaxInt64
	tests := []struct {
		name   string
		stacks []Stack
		want   int64
		ok     bool
	}{
		{"empty", nil, 0, true},
		{"small", []Stack{st(3, "a"), st(-1, "b")}, 2, true},
		{"max", []Stack{st(max-5, "a"), st(5, "b")}, max, true},
		{"over max", []Stack{st(max, "a"), st(max, "b")}, 0, false},
		{"over on the way, back under", []Stack{st(max, "a"), st(max, "b"), st(-max, "c"), st(-max, "d")}, 0, true},
		{"min", []Stack{st(-max, "a"), st(-1, "b")}, math.MinInt64, true},
		{"under min", []Stack{st(-max, "a"), st(-2, "b")}, 0, false},
	}
	for _, tt := range tests {
		p := &Profile{Stacks: tt.stacks}
		got, err := p.CheckedTotal()
		if tt.ok != (err == nil) || got != tt.want || (err != nil && !errors.Is(err, ErrOverflow)) {
			t.Errorf("%s: CheckedTotal() = %d, %v, want %d, ok %v", tt.name, got, err, tt.want, tt.ok)
		}
	}
}

func TestFilter(t *testing.T) {
	p := &Profile{Unit: UnitPeriod, Event: "cycles", Stacks: []Stack{st(1, "a", "x"), st(2, "b"), st(3, "c", "x")}}
	got := p.Filter(func(s Stack) bool { return s.Frames[len(s.Frames)-1] == "x" })
	if want := []Stack{st(1, "a", "x"), st(3, "c", "x")}; !sameStacks(got.Stacks, want) {
		t.Errorf("Filter(leaf x) = %v, want %v", got.Stacks, want)
	}
	if got.Unit != UnitPeriod || got.Event != "cycles" {
		t.Errorf("Filter lost Unit/Event: %q/%q", got.Unit, got.Event)
	}
	if len(p.Stacks) != 3 {
		t.Errorf("Filter changed its receiver: %v", p.Stacks)
	}
	if none := p.Filter(func(Stack) bool { return false }); len(none.Stacks) != 0 {
		t.Errorf("Filter(false) = %v, want no stacks", none.Stacks)
	}
}

func TestScale(t *testing.T) {
	in := []Stack{st(1, "a"), st(2, "b"), st(3, "c"), st(-3, "d"), st(10, "e")}
	tests := []struct {
		f    float64
		want []Stack
	}{
		{1, in},
		{2, []Stack{st(2, "a"), st(4, "b"), st(6, "c"), st(-6, "d"), st(20, "e")}},
		{-1, []Stack{st(-1, "a"), st(-2, "b"), st(-3, "c"), st(3, "d"), st(-10, "e")}},
		// Halves round away from zero; values rounding to zero are dropped.
		{0.5, []Stack{st(1, "a"), st(1, "b"), st(2, "c"), st(-2, "d"), st(5, "e")}},
		{-0.5, []Stack{st(-1, "a"), st(-1, "b"), st(-2, "c"), st(2, "d"), st(-5, "e")}},
		{0.1, []Stack{st(1, "e")}},
		{-0.1, []Stack{st(-1, "e")}},
		{0.01, []Stack{}},
		{0, []Stack{}},
	}
	for _, tt := range tests {
		p := &Profile{Stacks: in, Unit: UnitPeriod}
		got := p.Scale(tt.f)
		if !sameStacks(got.Stacks, tt.want) {
			t.Errorf("Scale(%v) = %v, want %v", tt.f, got.Stacks, tt.want)
		}
		if got.Unit != UnitPeriod {
			t.Errorf("Scale(%v) Unit = %q, want %q", tt.f, got.Unit, UnitPeriod)
		}
		if !sameStacks(p.Stacks, in) {
			t.Errorf("Scale(%v) changed its receiver", tt.f)
		}
	}
}

// The diff_base recipe: Scale(-1) then Merge leaves the difference.
func TestScaleMergeDiff(t *testing.T) {
	base := &Profile{Stacks: []Stack{st(5, "a"), st(3, "b")}}
	target := &Profile{Stacks: []Stack{st(7, "a"), st(3, "b"), st(1, "c")}}
	d, err := target.Merge(base.Scale(-1))
	if err != nil {
		t.Fatal(err)
	}
	if want := []Stack{st(2, "a"), st(0, "b"), st(1, "c")}; !sameStacks(d.Stacks, want) {
		t.Errorf("target.Merge(base.Scale(-1)) = %v, want %v", d.Stacks, want)
	}
}

func TestMapFrames(t *testing.T) {
	p := &Profile{Stacks: []Stack{
		st(1, "mysqld", "do_command", "foo"),
		st(2, "mariadbd", "do_command", "foo"),
		st(4, "mariadbd", "[unknown]", "do_command", "bar"),
		st(8, "mariadbd", "[unknown]"),
	}}
	got := p.MapFrames(func(i int, name string) (string, bool) {
		if i == 0 {
			return "server", true
		}
		if name == "[unknown]" {
			return "", false
		}
		return strings.ToUpper(name), true
	})
	want := []Stack{st(8, "server"), st(4, "server", "DO_COMMAND", "BAR"), st(3, "server", "DO_COMMAND", "FOO")}
	if !sameStacks(got.Stacks, want) {
		t.Errorf("MapFrames = %v, want %v", got.Stacks, want)
	}
	if p.Stacks[0].Frames[0] != "mysqld" || len(p.Stacks) != 4 {
		t.Errorf("MapFrames changed its receiver: %v", p.Stacks)
	}
	// Dropping every frame drops the stack.
	if none := p.MapFrames(func(int, string) (string, bool) { return "", false }); len(none.Stacks) != 0 {
		t.Errorf("MapFrames(drop all) = %v, want no stacks", none.Stacks)
	}
}

func TestClone(t *testing.T) {
	complete := true
	p := &Profile{
		Stacks:  []Stack{st(1, "a", "b"), st(2, "c")},
		Unit:    UnitPeriod,
		Samples: 3,
		Event:   "cpu-clock",
		Meta: &Meta{Label: "x", Operations: 5, Complete: &complete,
			Extra: map[string]json.RawMessage{"k": json.RawMessage(`1`)}},
	}
	q := p.Clone()
	if !reflect.DeepEqual(p, q) {
		t.Fatalf("Clone() = %+v, want %+v", q, p)
	}
	q.Stacks[0].Frames[0] = "changed"
	q.Stacks[0].Value = 100
	q.Stacks = append(q.Stacks, st(9, "z"))
	q.Meta.Label = "y"
	q.Meta.Extra["k2"] = json.RawMessage(`2`)
	*q.Meta.Complete = false
	if p.Stacks[0].Frames[0] != "a" || p.Stacks[0].Value != 1 || len(p.Stacks) != 2 {
		t.Errorf("changing the clone's stacks changed the original: %v", p.Stacks)
	}
	if p.Meta.Label != "x" {
		t.Errorf("changing the clone's Meta changed the original: Label = %q", p.Meta.Label)
	}
	if _, ok := p.Meta.Extra["k2"]; ok {
		t.Errorf("changing the clone's Meta.Extra changed the original's")
	}
	if !*p.Meta.Complete {
		t.Errorf("changing the clone's Meta.Complete changed the original's")
	}
	if q := (&Profile{}).Clone(); q.Meta != nil || len(q.Stacks) != 0 {
		t.Errorf("Clone of an empty profile = %+v", q)
	}
}

func TestWithoutKernel(t *testing.T) {
	p := &Profile{Stacks: []Stack{
		{Frames: []string{"t_[k]", "a", "sys_[k]", "b_[k]"}, Value: 2},
		{Frames: []string{"t_[k]", "a"}, Value: 3},
		{Frames: []string{"u", "c", "x_[k]"}, Value: 1},
	}}
	got := p.WithoutKernel()
	want := []Stack{{Frames: []string{"t_[k]", "a"}, Value: 5}, {Frames: []string{"u", "c"}, Value: 1}}
	if len(got.Stacks) != len(want) {
		t.Fatalf("stacks %+v, want %+v", got.Stacks, want)
	}
	for i := range want {
		if got.Stacks[i].Key() != want[i].Key() || got.Stacks[i].Value != want[i].Value {
			t.Errorf("stack %d = %+v, want %+v (the thread name kept, kernel frames dropped, stacks merged)", i, got.Stacks[i], want[i])
		}
	}
	if p.Stacks[0].Frames[3] != "b_[k]" {
		t.Error("WithoutKernel changed its receiver")
	}
}
