package flamegraph

import (
	"strings"
	"unicode/utf8"

	"github.com/flamediff/flamediff/internal/names"
)

// Clean returns s as the SVG and the HTML page show it: invalid UTF-8
// replaced as names.Clean does (each run of invalid bytes becomes one
// U+FFFD, as in every other output), then every character XML 1.0 does not
// allow and every control character (newlines and tabs included: a name is
// one line) replaced by U+FFFD too. XML-escaping comes on top.
func Clean(s string) string {
	s = names.Clean(s)
	if strings.IndexFunc(s, notAllowed) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if notAllowed(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

// notAllowed reports whether r may not appear in a name drawn as XML text
// (s is valid UTF-8 by then, so surrogates cannot occur).
func notAllowed(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f:
		return true
	case r == 0xfffe, r == 0xffff:
		return true
	}
	return false
}

// escaper XML-escapes text and attribute values.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;")

// esc returns s cleaned (Clean) and XML-escaped.
func esc(s string) string {
	return escaper.Replace(Clean(s))
}
