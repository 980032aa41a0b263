package symbolmap

import (
	"fmt"
	"regexp"
	"strings"
)

// patKind is how a pattern matches a name.
type patKind int

const (
	patExact patKind = iota
	patGlob
	patRegexp
)

func (k patKind) key() string {
	switch k {
	case patGlob:
		return "glob"
	case patRegexp:
		return "re"
	}
	return "from"
}

// pattern is one entry of a from/glob/re list, with its position in the file.
type pattern struct {
	kind      patKind
	text      string
	re        *regexp.Regexp // glob and regexp, anchored
	line, col int
}

func (p *pattern) String() string {
	if p.kind == patExact {
		return fmt.Sprintf("%q", p.text)
	}
	return fmt.Sprintf("%s %q", p.kind.key(), p.text)
}

// matcher holds the from/glob/re lists of one rule. Exact names are tried
// first, then globs, then regular expressions, each list in file order.
type matcher struct {
	exact map[string]*pattern
	pats  []*pattern // all patterns in file order (exact included)
}

func (m *matcher) add(p *pattern) {
	if m.exact == nil {
		m.exact = map[string]*pattern{}
	}
	if p.kind == patExact {
		if _, dup := m.exact[p.text]; !dup {
			m.exact[p.text] = p
		}
	}
	m.pats = append(m.pats, p)
}

func (m *matcher) count() int { return len(m.pats) }

// match returns the pattern that matches name, exact names first.
func (m *matcher) match(name string) (*pattern, bool) {
	if p, ok := m.exact[name]; ok {
		return p, true
	}
	for _, kind := range []patKind{patGlob, patRegexp} {
		for _, p := range m.pats {
			if p.kind == kind && p.re.MatchString(name) {
				return p, true
			}
		}
	}
	return nil, false
}

// compileGlob turns a glob into an anchored regexp: '*' matches any run of
// characters, '?' one character, '\' escapes the next character; every
// other character, '[' included, is literal, so that "[libc.so.*]" means
// what it says.
func compileGlob(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 == len(g) {
				return nil, fmt.Errorf("trailing backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	b.WriteString(`)$`)
	return regexp.Compile(b.String())
}

// compileRegexp compiles a user regular expression anchored at both ends:
// a pattern matches a whole name, as exact names and globs do.
func compileRegexp(s string) (*regexp.Regexp, error) {
	if _, err := regexp.Compile(s); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + s + `)$`)
}

// matchLabel reports whether label matches one of the label globs.
func matchLabel(globs []*pattern, label string) bool {
	for _, g := range globs {
		if g.re.MatchString(label) {
			return true
		}
	}
	return false
}
