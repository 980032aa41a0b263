// Package names prepares frame names for people: one rule for invalid
// UTF-8 (each invalid byte sequence becomes U+FFFD) and one for names too
// long for a column (an ellipsis in the middle, both ends kept). Every
// output that shows names to people (tables, markdown, CSV, JSON, SVG,
// HTML) goes through it, so the same name looks the same everywhere.
// Folded output is data and keeps the input's bytes.
package names

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Replacement is what an invalid UTF-8 sequence becomes.
const Replacement = "\uFFFD"

// Ellipsis marks the middle part Shorten left out.
const Ellipsis = "…"

// Clean returns s with every run of invalid UTF-8 bytes replaced by one
// U+FFFD, as strings.ToValidUTF8 does; valid strings are returned as they are.
func Clean(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, Replacement)
}

// CleanAll returns a copy of ss with each string cleaned (nil for nil).
func CleanAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = Clean(s)
	}
	return out
}

// Shorten returns Clean(s) if it has at most max runes, else its first and
// last runes around an ellipsis, max runes in all (the start gets the
// extra rune when max-1 is odd). max below 3 is taken as 3.
func Shorten(s string, max int) string {
	s = Clean(s)
	if max < 3 {
		max = 3
	}
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	keep := max - 1
	head := (keep + 1) / 2
	tail := keep - head
	r := []rune(s)
	return string(r[:head]) + Ellipsis + string(r[n-tail:])
}

// Plural returns "1 word" or "N words" (word + "s").
func Plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// Width is the most runes a name takes in a table cell (text, markdown,
// HTML) before Shorten cuts its middle out.
const Width = 80

// ChainSeparator joins the functions of a call chain in one cell.
const ChainSeparator = " → "

// ShortenChain shortens each function of a cell that may hold a call chain
// ("a → b → c") to max runes, so that a chain of ordinary names stays whole
// and one long name does not push a column off the page.
func ShortenChain(s string, max int) string {
	parts := strings.Split(Clean(s), ChainSeparator)
	for i, p := range parts {
		parts[i] = Shorten(p, max)
	}
	return strings.Join(parts, ChainSeparator)
}

// CodeSpan returns s as a markdown code span that shows s unchanged: the
// fence is one backtick longer than the longest run of backticks in s
// (backslashes do not escape inside code spans), with a space inside each
// fence where s starts or ends with a backtick or a space, as CommonMark
// strips one. A | must still be written \| inside a table cell.
func CodeSpan(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") ||
		len(s) >= 2 && s[0] == ' ' && s[len(s)-1] == ' ' && strings.Trim(s, " ") != "" {
		s = " " + s + " "
	}
	return fence + s + fence
}
