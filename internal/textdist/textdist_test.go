package textdist

import "testing"

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"Questions", "Questoins", 2},
		{"rename", "renam", 1},
		{"kitten", "sitting", 3},
		{"mysql_update", "mysql_update", 0},
	}
	for _, tt := range tests {
		if got := Levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"perf", "bpf", "auto", "rename", "oltp_update_non_index"}
	tests := []struct {
		s     string
		limit int
		want  string
	}{
		{"pref", 2, "perf"},    // 2 edits
		{"bfp", 2, ""},         // short word: 1 edit at most, and this is 2
		{"xyz", 2, ""},         // too far
		{"RENAM", 2, "rename"}, // case folded
		{"oltp_update_non", 2, "oltp_update_non_index"},      // the nearest, 6 edits away, and a prefix of it
		{"oltp_update_nonindex", 2, "oltp_update_non_index"}, // 1 edit
		{"oltp_updt_nn_indx", 2, ""},                         // 4 edits
		{"oltp_updt_nn_indx", 4, "oltp_update_non_index"},    // within a larger limit
	}
	for _, tt := range tests {
		if got := Closest(tt.s, known, tt.limit); got != tt.want {
			t.Errorf("Closest(%q, limit %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
}
