package flamegraph

import (
	"strings"
	"unicode/utf8"
)

// Clean returns s with every character XML 1.0 does not allow, every
// control character (newlines and tabs included: a name is one line) and
// every invalid UTF-8 byte replaced by U+FFFD. It is what a frame name
// becomes in the SVG; XML-escaping comes on top.
func Clean(s string) string {
	ok := true
	for i, r := range s {
		if !allowed(r) || r == utf8.RuneError && isBad(s[i:]) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		if !allowed(r) || r == utf8.RuneError && isBad(s[i:]) {
			b.WriteRune(utf8.RuneError)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isBad reports whether s starts with an invalid UTF-8 sequence (rather
// than an encoded U+FFFD).
func isBad(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return r == utf8.RuneError && n <= 1
}

func allowed(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f:
		return false
	case r >= 0xd800 && r <= 0xdfff, r == 0xfffe, r == 0xffff, r > 0x10ffff:
		return false
	}
	return true
}

// escaper XML-escapes text and attribute values.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// esc returns s cleaned (Clean) and XML-escaped.
func esc(s string) string {
	return escaper.Replace(Clean(s))
}
