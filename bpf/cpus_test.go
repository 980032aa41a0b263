package bpf

import (
	"slices"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []int
	}{
		{"single", "0\n", []int{0}},
		{"range", "0-3\n", []int{0, 1, 2, 3}},
		{"ranges and singles", "0-3,5,7-8\n", []int{0, 1, 2, 3, 5, 7, 8}},
		{"gap", "0,2", []int{0, 2}},
		{"one-cpu range", "4-4", []int{4}},
		{"unsorted and overlapping", "6,0-2,1", []int{0, 1, 2, 6}},
		{"no newline", "0-1", []int{0, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCPUList(tt.in)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("parseCPUList(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseCPUListErrors(t *testing.T) {
	for _, in := range []string{"", "\n", "a", "0-", "-1", "3-1", "0,,1", "0-1-2", "+1", "1 - 2", "99999999", "0x1"} {
		if got, err := parseCPUList(in); err == nil {
			t.Errorf("parseCPUList(%q) = %v, want an error", in, got)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0-3,5\n", "0-127", "1,3,5-7", "", "3-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := parseCPUList(s)
		if (err == nil) == (cpus == nil) {
			t.Fatalf("parseCPUList(%q) = %v, %v: want a result xor an error", s, cpus, err)
		}
		if !slices.IsSorted(cpus) || len(slices.Compact(slices.Clone(cpus))) != len(cpus) {
			t.Fatalf("parseCPUList(%q) = %v: not sorted and unique", s, cpus)
		}
	})
}
