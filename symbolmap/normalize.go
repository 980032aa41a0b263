package symbolmap

import "strings"

// normalizeOpts are the build-noise switches; all default to on.
type normalizeOpts struct {
	SymbolVersions bool // "memcpy@GLIBC_2.14" -> "memcpy"
	CloneSuffixes  bool // "foo.isra.0", "foo.constprop.0.isra.0", "foo.cold" -> "foo"
	GlibcAliases   bool // "__GI_memcpy" -> "memcpy"
}

func defaultNormalize() normalizeOpts {
	return normalizeOpts{SymbolVersions: true, CloneSuffixes: true, GlibcAliases: true}
}

// cloneSuffixes are the suffixes GCC and Clang append to the clones they
// make of a function: those taking a number (".isra.0") and not (".cold").
var (
	cloneNumbered = map[string]bool{"isra": true, "constprop": true, "part": true, "cold": true,
		"lto_priv": true, "clone": true, "llvm": true, "specialized": true}
	cloneBare = map[string]bool{"cold": true, "localalias": true, "isra": true, "part": true}
)

// NormalizeName applies the default build-noise normalisation to one
// symbol: see the normalize section of the map format. It never returns "".
func NormalizeName(name string) string {
	return defaultNormalize().apply(name)
}

// Normalize applies the map's build-noise normalisation (its normalize
// section, or the defaults) to one symbol, as Apply does to every frame
// but the thread name. It never returns "" for a non-empty name.
func (m *Map) Normalize(name string) string {
	return m.normalize.apply(name)
}

func (o normalizeOpts) apply(name string) string {
	if name == "" || name[0] == '[' {
		return name // "[unknown]", "[mariadbd]": a DSO, not a symbol
	}
	// Keep stackcollapse-perf.pl's annotations: "_[k]" (kernel), "_[j]" (JIT),
	// "_[i]" (inlined), "_[w]" (waker).
	annot := ""
	if n := len(name); n > 4 && name[n-4] == '_' && name[n-3] == '[' && name[n-1] == ']' {
		annot, name = name[n-4:], name[:n-4]
	}
	if o.SymbolVersions {
		if i := strings.IndexByte(name, '@'); i > 0 {
			name = name[:i]
		}
	}
	if o.CloneSuffixes {
		name = stripClones(name)
	}
	if o.GlibcAliases {
		if rest, ok := strings.CutPrefix(name, "__GI_"); ok && rest != "" {
			name = rest
		}
	}
	return name + annot
}

// stripClones removes compiler clone suffixes, repeatedly: ".isra.0",
// ".constprop.0.isra.0", ".part.0", ".cold", ".cold.1", ".lto_priv.0",
// ".llvm.123456" and the demangler's " [clone .isra.0]" forms.
func stripClones(name string) string {
	for {
		if i := strings.LastIndex(name, " [clone ."); i > 0 && strings.HasSuffix(name, "]") {
			name = name[:i]
			continue
		}
		i := strings.LastIndexByte(name, '.')
		if i <= 0 {
			return name
		}
		last := name[i+1:]
		if cloneBare[last] {
			name = name[:i]
			continue
		}
		if !isDigits(last) {
			return name
		}
		j := strings.LastIndexByte(name[:i], '.')
		if j <= 0 || !cloneNumbered[name[j+1:i]] {
			return name
		}
		name = name[:j]
	}
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
