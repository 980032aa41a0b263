package diff

import (
	"reflect"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

func TestWarnings(t *testing.T) {
	complete := &fold.Profile{Stacks: []fold.Stack{{Frames: []string{"t", "start_thread", "f"}, Value: 4}}}
	cut := &fold.Profile{Stacks: []fold.Stack{{Frames: []string{"t", "start_thread", "f"}, Value: 3}, {Frames: []string{"t", "f"}, Value: 1}}}
	root := func(f string) bool { return f == "start_thread" }
	opts := Options{IsThreadRoot: root, Labels: []string{"a", "b"}}
	cutWarning := "25.00% of samples are in stacks that do not start at a thread root (truncated unwinding): callers' inclusive shares are understated by up to 25.00 percentage points"
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"complete", Summarize(complete, opts).Warnings(), nil},
		{"no thread roots given", Summarize(cut, Options{}).Warnings(), nil},
		{"cut", Summarize(cut, opts).Warnings(), []string{cutWarning}},
		{"labelled", LabelledWarnings([]*Summary{Summarize(cut, opts)}), []string{"a: " + cutWarning}},
	}
	r, err := Compute(complete, []*fold.Profile{cut}, opts)
	if err != nil {
		t.Fatal(err)
	}
	tests = append(tests, struct {
		name string
		got  []string
		want []string
	}{"result", r.Warnings(), []string{"b: " + cutWarning}})
	for _, tt := range tests {
		if !reflect.DeepEqual(tt.got, tt.want) {
			t.Errorf("%s: Warnings() = %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}
