package bpf

import "testing"

func TestStackCopyNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want StackCopy
		err  bool
	}{
		{in: "never", want: StackCopyNever},
		{in: "auto", want: StackCopyAuto},
		{in: "always", want: StackCopyAlways},
		{in: "Always", err: true},
		{in: "", err: true},
		{in: "sometimes", err: true},
	} {
		got, err := ParseStackCopy(tc.in)
		switch {
		case tc.err && err == nil:
			t.Errorf("ParseStackCopy(%q) = %v, want an error", tc.in, got)
		case !tc.err && (err != nil || got != tc.want):
			t.Errorf("ParseStackCopy(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case !tc.err && got.String() != tc.in:
			t.Errorf("ParseStackCopy(%q).String() = %q", tc.in, got.String())
		}
	}
	if s := StackCopy(7).String(); s != "StackCopy(7)" {
		t.Errorf("StackCopy(7).String() = %q", s)
	}
}
