package lab

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/flamediff/flamediff/internal/names"
)

// ErrNoMirror is wrapped by FindMirror's error when apt's sources name no
// Debian archive.
var ErrNoMirror = errors.New("no Debian mirror in apt's sources")

// Paragraph is one stanza of a deb822 file (apt .sources, dpkg status,
// a package's control fields): field values by lower-case field name,
// continuation lines joined with "\n".
type Paragraph map[string]string

// Get returns the value of field name, whatever its case.
func (p Paragraph) Get(name string) string { return p[strings.ToLower(name)] }

// ParseParagraphs reads deb822 stanzas from r: "Field: value" lines,
// continuation lines starting with a space or tab, stanzas separated by
// blank lines, '#' comment lines ignored. A line that is none of these is
// an error naming its number.
func ParseParagraphs(r io.Reader) ([]Paragraph, error) {
	var (
		out  []Paragraph
		cur  Paragraph
		last string
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.TrimSpace(text) == "":
			if cur != nil {
				out = append(out, cur)
				cur, last = nil, ""
			}
		case text[0] == '#':
		case text[0] == ' ' || text[0] == '\t':
			if last == "" {
				return nil, fmt.Errorf("line %d: continuation line without a field", line)
			}
			cur[last] += "\n" + strings.TrimSpace(text)
		default:
			name, value, ok := strings.Cut(text, ":")
			if !ok || strings.ContainsAny(name, " \t") || name == "" {
				return nil, fmt.Errorf("line %d: %q is not a \"Field: value\" line", line, text)
			}
			if cur == nil {
				cur = Paragraph{}
			}
			last = strings.ToLower(name)
			cur[last] = strings.TrimSpace(value)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out, nil
}

// Source is one apt source: a one-line entry of sources.list or a stanza
// of a .sources file.
type Source struct {
	// Types are "deb" and/or "deb-src".
	Types []string
	// URIs are the archive roots.
	URIs []string
	// Suites are the suites ("bookworm", "bookworm-security").
	Suites []string
	// Components are the components ("main").
	Components []string
	// SignedBy is the keyring file of the Signed-By option; empty when
	// unset or given inline.
	SignedBy string
	// Enabled is false for "Enabled: no" stanzas.
	Enabled bool
	// Origin is "FILE:LINE" (one-line) or "FILE stanza N" (deb822).
	Origin string
}

// ParseSourcesList reads the one-line format of /etc/apt/sources.list:
// "deb [options] URI SUITE [COMPONENT...]". Comments and blank lines are
// skipped. name is used in Origin and errors; a malformed line is an
// error naming it.
func ParseSourcesList(r io.Reader, name string) ([]Source, error) {
	var out []Source
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		if f[0] != "deb" && f[0] != "deb-src" {
			return nil, fmt.Errorf("apt sources %s line %d: %q is not deb or deb-src", name, line, f[0])
		}
		s := Source{Types: []string{f[0]}, Enabled: true, Origin: fmt.Sprintf("%s:%d", name, line)}
		rest := f[1:]
		if len(rest) > 0 && strings.HasPrefix(rest[0], "[") {
			// Options: "[arch=amd64 signed-by=/usr/share/keyrings/x.gpg]",
			// possibly split over several fields.
			var opts []string
			for len(rest) > 0 {
				o := rest[0]
				rest = rest[1:]
				end := strings.HasSuffix(o, "]")
				o = strings.TrimSuffix(strings.TrimPrefix(o, "["), "]")
				if o != "" {
					opts = append(opts, o)
				}
				if end {
					break
				}
			}
			for _, o := range opts {
				if k, v, ok := strings.Cut(o, "="); ok && strings.EqualFold(k, "signed-by") {
					s.SignedBy = v
				}
			}
		}
		if len(rest) < 2 {
			return nil, fmt.Errorf("apt sources %s line %d: want URI and suite after %s", name, line, f[0])
		}
		s.URIs, s.Suites, s.Components = rest[:1], rest[1:2], rest[2:]
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("apt sources %s: %w", name, err)
	}
	return out, nil
}

// ParseDeb822Sources reads a .sources file of /etc/apt/sources.list.d
// (deb822 stanzas with Types, URIs, Suites, Components, Signed-By,
// Enabled). name is used in Origin and errors; a stanza without Types,
// URIs or Suites is an error.
func ParseDeb822Sources(r io.Reader, name string) ([]Source, error) {
	paras, err := ParseParagraphs(r)
	if err != nil {
		return nil, fmt.Errorf("apt sources %s: %w", name, err)
	}
	out := make([]Source, 0, len(paras))
	for i, p := range paras {
		s := Source{
			Types:      strings.Fields(p.Get("Types")),
			URIs:       strings.Fields(p.Get("URIs")),
			Suites:     strings.Fields(p.Get("Suites")),
			Components: strings.Fields(p.Get("Components")),
			Enabled:    !strings.EqualFold(p.Get("Enabled"), "no"),
			Origin:     fmt.Sprintf("%s stanza %d", name, i+1),
		}
		if k := p.Get("Signed-By"); k != "" && !strings.Contains(k, "\n") {
			s.SignedBy = strings.Fields(k)[0]
		}
		if len(s.Types) == 0 || len(s.URIs) == 0 || len(s.Suites) == 0 {
			return nil, fmt.Errorf("apt sources %s stanza %d: want Types, URIs and Suites", name, i+1)
		}
		out = append(out, s)
	}
	return out, nil
}

// SystemSources reads the apt sources of the system under root ("/" for
// this machine): etc/apt/sources.list and the *.list and *.sources files
// of etc/apt/sources.list.d, in apt's order. Missing files are skipped;
// unreadable or malformed ones are errors.
func SystemSources(root string) ([]Source, error) {
	etc := filepath.Join(root, "etc", "apt")
	files := []string{filepath.Join(etc, "sources.list")}
	parts, err := filepath.Glob(filepath.Join(etc, "sources.list.d", "*"))
	if err != nil {
		return nil, fmt.Errorf("apt sources: %w", err)
	}
	sort.Strings(parts)
	files = append(files, parts...)
	var out []Source
	for _, path := range files {
		var parse func(io.Reader, string) ([]Source, error)
		switch {
		case strings.HasSuffix(path, ".list"):
			parse = ParseSourcesList
		case strings.HasSuffix(path, ".sources"):
			parse = ParseDeb822Sources
		default:
			continue // apt ignores other names (.disabled, .save, ...)
		}
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("apt sources %w", describePath(path, err, false))
		}
		s, err := parse(f, path)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
}

// debianCodenames are the names whose suites FindMirror takes for Debian's.
var debianCodenames = []string{
	"buster", "bullseye", "bookworm", "trixie", "forky", "duke", "sid",
	"oldoldstable", "oldstable", "stable", "testing", "unstable",
}

// Mirror is where the Debian archive and its security archive are, as this
// machine's apt sources say.
type Mirror struct {
	// Archive is the URI of the main archive (suites, -updates).
	Archive string
	// Security is the URI of the security archive; empty when the sources
	// have none (then security updates are not fetched).
	Security string
	// SignedBy is the keyring the Debian sources use; empty when they name
	// none (apt's trusted keys apply).
	SignedBy string
}

// debianSuffixes are the suffixes of Debian's own suites.
var debianSuffixes = []string{"", "-updates", "-backports", "-backports-sloppy", "-proposed-updates", "-security", "/updates"}

// FindMirror picks the Debian mirror out of apt sources. A candidate is an
// enabled "deb" source whose suite is a Debian codename or alias with one
// of Debian's suffixes (-updates, -backports, -security, ...), so that
// third-party sources ("nodistro", "bookworm-pgdg") are ignored. Sources
// signed with Debian's archive keyring are preferred to others (a vendor's
// repository may use a Debian codename as its suite); among equals the
// first wins. A -security (or /updates) suite gives Security, any other
// Archive. Without an archive the error wraps ErrNoMirror.
func FindMirror(sources []Source) (Mirror, error) {
	var m Mirror
	for _, pass := range []bool{true, false} { // Debian-signed first
		for _, s := range sources {
			if !s.Enabled || !slices.Contains(s.Types, "deb") || len(s.URIs) == 0 || !mirrorURI(s.URIs[0]) {
				continue
			}
			if pass != strings.Contains(filepath.Base(s.SignedBy), "debian-archive") {
				continue
			}
			for _, suite := range s.Suites {
				code, suffix := splitSuite(suite)
				if !slices.Contains(debianCodenames, code) || !slices.Contains(debianSuffixes, suffix) {
					continue
				}
				security := suffix == "-security" || suffix == "/updates"
				switch {
				case security && m.Security == "":
					m.Security = strings.TrimRight(s.URIs[0], "/")
				case !security && m.Archive == "":
					m.Archive = strings.TrimRight(s.URIs[0], "/")
					m.SignedBy = s.SignedBy
				}
			}
		}
	}
	if m.Archive == "" {
		return Mirror{}, fmt.Errorf("%w: no enabled deb source with a Debian suite (%s) among %s; add one for your Debian mirror", ErrNoMirror, strings.Join(debianCodenames[:4], ", "), names.Plural(len(sources), "source"))
	}
	return m, nil
}

// splitSuite splits "bookworm-security" into "bookworm" and "-security".
func splitSuite(suite string) (string, string) {
	if i := strings.IndexAny(suite, "-/"); i >= 0 {
		return suite[:i], suite[i:]
	}
	return suite, ""
}

// SourcesList returns the one-line sources.list of suite on m: the suite
// and its -updates from the archive, its -security from the security
// archive, component main, with m's keyring. Unstable (sid) has neither
// -updates nor -security: its sources.list is the suite alone.
func (m Mirror) SourcesList(suite string) string {
	opt := ""
	if oneLineSignedBy(m.SignedBy) {
		opt = "[signed-by=" + m.SignedBy + "] "
	}
	var b strings.Builder
	fmt.Fprintf(&b, "deb %s%s %s main\n", opt, m.Archive, suite)
	if !updatedSuite(suite) {
		return b.String()
	}
	fmt.Fprintf(&b, "deb %s%s %s-updates main\n", opt, m.Archive, suite)
	if m.Security != "" {
		fmt.Fprintf(&b, "deb %s%s %s-security main\n", opt, m.Security, suite)
	}
	return b.String()
}

// updatedSuite reports whether suite has -updates and -security suites:
// every release does, unstable (sid) and experimental do not.
func updatedSuite(suite string) bool {
	return suite != "sid" && suite != "unstable" && suite != "experimental"
}

// oneLineSignedBy reports whether a Signed-By value can be written as a
// one-line sources.list option: not empty, no blank, ']' or '#' (a deb822
// Signed-By may hold a whole inline key). One that cannot is left out of
// SourcesList, and apt checks the suite against its default keyrings
// (debian-archive-keyring for Debian's mirrors) instead.
func oneLineSignedBy(v string) bool {
	return v != "" && !strings.ContainsAny(v, " \t\n]#")
}

// mirrorURI reports whether uri can be a mirror in a one-line entry: a
// scheme ("http://", "https://", "file:", "mirror+http://", ...) and no
// blank or '#' (a comment in sources.list).
func mirrorURI(uri string) bool {
	i := strings.Index(uri, ":")
	return i > 0 && !strings.ContainsAny(uri, " \t\n#") && strings.Trim(uri[i+1:], "/") != ""
}
