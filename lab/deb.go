package lab

import (
	"fmt"
	"io"
	"strings"
)

// Dep is one alternative of a Debian dependency: "libc6 (>= 2.38)".
type Dep struct {
	// Name is the package name, without an architecture qualifier.
	Name string
	// Op is one of "<<", "<=", "=", ">=", ">>", or empty for any version.
	Op string
	// Version is the version Op compares with.
	Version string
}

// String formats the dependency as in a control file.
func (d Dep) String() string {
	if d.Op == "" {
		return d.Name
	}
	return fmt.Sprintf("%s (%s %s)", d.Name, d.Op, d.Version)
}

// ParseDepends parses a Depends or Pre-Depends field: comma-separated
// groups of "|"-separated alternatives. Architecture qualifiers (":any")
// are dropped; a malformed relation is an error quoting it.
func ParseDepends(field string) ([][]Dep, error) {
	var out [][]Dep
	for _, group := range strings.Split(field, ",") {
		group = strings.TrimSpace(group)
		if group == "" {
			continue
		}
		var alts []Dep
		for _, alt := range strings.Split(group, "|") {
			alt = strings.TrimSpace(alt)
			name, rel, hasRel := strings.Cut(alt, "(")
			name = strings.TrimSpace(name)
			if i := strings.IndexAny(name, " \t["); i >= 0 {
				name = name[:i] // "foo [amd64]" (source control files)
			}
			name, _, _ = strings.Cut(name, ":")
			if name == "" || !debPackageName.MatchString(name) {
				return nil, fmt.Errorf("depends %q: %q is not a package", field, alt)
			}
			d := Dep{Name: name}
			if hasRel {
				rel, ok := strings.CutSuffix(strings.TrimSpace(rel), ")")
				if !ok {
					return nil, fmt.Errorf("depends %q: unclosed relation in %q", field, alt)
				}
				rel = strings.TrimSpace(rel)
				for _, op := range []string{"<<", "<=", ">=", ">>", "=", "<", ">"} {
					if v, ok := strings.CutPrefix(rel, op); ok {
						d.Op, d.Version = op, strings.TrimSpace(v)
						break
					}
				}
				switch d.Op { // the deprecated forms
				case "<":
					d.Op = "<="
				case ">":
					d.Op = ">="
				}
				if d.Op == "" || d.Version == "" {
					return nil, fmt.Errorf("depends %q: bad relation %q", field, rel)
				}
			}
			alts = append(alts, d)
		}
		out = append(out, alts)
	}
	return out, nil
}

// Satisfied reports whether version (of package d.Name) meets d.
func (d Dep) Satisfied(version string) bool {
	if d.Op == "" {
		return true
	}
	c := CompareVersions(version, d.Version)
	switch d.Op {
	case "<<":
		return c < 0
	case "<=":
		return c <= 0
	case "=":
		return c == 0
	case ">=":
		return c >= 0
	case ">>":
		return c > 0
	}
	return false
}

// InstalledPackages reads a dpkg status file (/var/lib/dpkg/status) and
// returns the versions of the packages that are installed, by name, with
// the names they provide (at their own version, or at the providing
// package's version when the Provides entry has none).
func InstalledPackages(r io.Reader) (map[string]string, error) {
	paras, err := ParseParagraphs(r)
	if err != nil {
		return nil, fmt.Errorf("dpkg status: %w", err)
	}
	out := map[string]string{}
	for _, p := range paras {
		if !strings.HasSuffix(p.Get("Status"), " installed") {
			continue
		}
		name, version := p.Get("Package"), p.Get("Version")
		if name == "" {
			continue
		}
		out[name] = version
		provides, err := ParseDepends(p.Get("Provides"))
		if err != nil {
			continue // a Provides we cannot read only loses alternatives
		}
		for _, g := range provides {
			for _, d := range g {
				if _, ok := out[d.Name]; ok {
					continue
				}
				v := version
				if d.Op == "=" {
					v = d.Version
				}
				out[d.Name] = v
			}
		}
	}
	return out, nil
}

// CompareVersions compares two Debian versions ([epoch:]upstream[-revision])
// as dpkg does, returning -1, 0 or 1.
func CompareVersions(a, b string) int {
	ea, ua, ra := splitVersion(a)
	eb, ub, rb := splitVersion(b)
	if ea != eb {
		if ea < eb {
			return -1
		}
		return 1
	}
	if c := compareFragment(ua, ub); c != 0 {
		return c
	}
	return compareFragment(ra, rb)
}

func splitVersion(v string) (epoch int, upstream, revision string) {
	if e, rest, ok := strings.Cut(v, ":"); ok {
		for _, c := range e {
			if c < '0' || c > '9' {
				break
			}
			epoch = epoch*10 + int(c-'0')
		}
		v = rest
	}
	if i := strings.LastIndexByte(v, '-'); i >= 0 {
		return epoch, v[:i], v[i+1:]
	}
	return epoch, v, ""
}

// order is dpkg's ordering of a character in the non-digit parts: '~'
// before everything, even the end; letters before other characters.
func order(c byte) int {
	switch {
	case c == '~':
		return -1
	case c >= '0' && c <= '9':
		return 0
	case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		return int(c)
	default:
		return int(c) + 256
	}
}

func compareFragment(a, b string) int {
	for a != "" || b != "" {
		// Non-digit prefix.
		for (a != "" && !isDigit(a[0])) || (b != "" && !isDigit(b[0])) {
			var ca, cb int
			if a != "" && !isDigit(a[0]) {
				ca = order(a[0])
			}
			if b != "" && !isDigit(b[0]) {
				cb = order(b[0])
			}
			if ca != cb {
				if ca < cb {
					return -1
				}
				return 1
			}
			if a != "" && !isDigit(a[0]) {
				a = a[1:]
			}
			if b != "" && !isDigit(b[0]) {
				b = b[1:]
			}
		}
		// Digit run.
		a = strings.TrimLeft(a, "0")
		b = strings.TrimLeft(b, "0")
		na, nb := digits(a), digits(b)
		if na != nb {
			// A longer run (without leading zeros) is a bigger number.
			if na < nb {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a[:na], b[:nb]); c != 0 {
			return c
		}
		a, b = a[na:], b[nb:]
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}
