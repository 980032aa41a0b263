package names

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"ok ünïcode", "ok ünïcode"},
		{"bad\xffbyte", "bad\uFFFDbyte"},
		{"two\xff\xfebytes", "two\uFFFDbytes"},
		{"cut\xe2\x82", "cut\uFFFD"},
	} {
		if got := Clean(tc.in); got != tc.want {
			t.Errorf("Clean(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestShorten(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"short", 10, "short"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcde…hijk"},
		{"abcdefghijk", 5, "ab…jk"},
		{"abcdefghijk", 1, "a…k"},
		{"ääääääääää", 4, "ää…ä"},
		{"bad\xff" + "xxxxxxxx", 6, "bad…xx"},
	} {
		got := Shorten(tc.in, tc.max)
		if got != tc.want {
			t.Errorf("Shorten(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Shorten(%q, %d) = %q: invalid UTF-8", tc.in, tc.max, got)
		}
	}
}

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 arguments"}, {1, "1 argument"}, {2, "2 arguments"}} {
		if got := Plural(tc.n, "argument"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestShortenChain(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct{ in, want string }{
		{"a → b → c", "a → b → c"},
		{"a → " + long, "a → " + Shorten(long, Width)},
		{long + " → b", Shorten(long, Width) + " → b"},
	} {
		if got := ShortenChain(tc.in, Width); got != tc.want {
			t.Errorf("ShortenChain(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCodeSpan(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "`plain`"},
		{"operator|(a`b)", "``operator|(a`b)``"},
		{"`quoted`", "`` `quoted` ``"},
		{"a``b", "```a``b```"},
	} {
		if got := CodeSpan(tc.in); got != tc.want {
			t.Errorf("CodeSpan(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
