// Package textdist measures how far apart two names are, for "did you
// mean" hints in error messages.
package textdist

import "strings"

// Closest returns the word of known nearest to s (compared in lower case)
// when it is a plausible typo: at most limit edits away (1 for words
// shorter than 4 bytes), or a word that s, 4 bytes or longer, begins.
// Otherwise it returns "".
func Closest(s string, known []string, limit int) string {
	lower := strings.ToLower(s)
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := Levenshtein(lower, k); d < bestD {
			best, bestD = k, d
		}
	}
	if len(s) < 4 {
		limit = 1
	}
	if bestD <= limit || (len(s) > 3 && strings.HasPrefix(best, lower)) {
		return best
	}
	return ""
}

// Levenshtein returns the edit distance of a and b (insertions, deletions
// and substitutions of single bytes).
func Levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
