// Package symbolmap loads flamediff's symbol map (a YAML file that makes
// profiles of different server versions comparable) and applies it to a
// fold.Profile: renames, elided frames, thread-name normalisation, build
// noise normalisation, subsystem attribution and thread roots.
//
// The file format is shown by the shipped maps under examples/symbolmaps/
// (commented). Top-level keys: version (1), normalize, thread_roots, comm,
// elide, rename, subsystems. Rules match with from (exact names), glob ('*'
// and '?'; every other character literal) and re (RE2, anchored to the
// whole name; rename's "to" may use $1 or ${name}), and comm, elide and
// rename rules may carry labels (globs on the profile label). Every frame
// of every stack goes through four steps, in this order:
//
//  1. normalize: build noise is removed (symbol versions "@GLIBC_2.2.5",
//     compiler clone suffixes ".isra.0", glibc "__GI_" aliases); frame 0,
//     the thread name, is left alone. Then, on the whole stack, glibc's
//     cancellation frames under a syscall wrapper are dropped
//     (glibc_cancel: "__send;__syscall_cancel;__internal_syscall_cancel;
//     __syscall_cancel_arch" becomes "__send", as glibc before 2.41 has
//     it); see GlibcCancelFrames.
//  2. comm: frame 0 (the thread name) is renamed by the first matching rule.
//  3. elide: frames 1.. that match an elide rule are dropped.
//  4. rename: frames 1.. are renamed by the first matching rule, in file
//     order; a renamed name is not renamed again.
//
// Elide and rename rules may also require a call context: caller and
// callee conditions, looked for among the named frames of the same stack
// (normalised names, unresolved frames skipped and not counted; depth 1
// by default, the direct caller or callee). Map.Apply and Resolver.Stack
// decide them per stack; Resolver.Frame, which sees one frame, takes them
// as not holding. docs/symbolmap.md has the exact semantics.
//
// Rules may be limited to profiles whose label (fold.Profile.Label, usually
// the server version) matches a glob. Subsystems and thread roots are
// matched on the mapped (canonical) names.
//
// A Map is immutable once built and safe for concurrent use. Package
// symbolmap/suggest, beside this one, proposes rules from two profiles.
package symbolmap

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/flamediff/flamediff/internal/names"
)

// Map is a loaded symbol map. The zero value is not usable; use Parse or Default.
type Map struct {
	file      string
	normalize normalizeOpts
	comm      []*rule
	elide     []*rule
	rename    []*rule
	subsys    []*subsystem
	roots     matcher // user thread roots
	rootsRepl bool    // user roots replace the defaults

	mu        sync.RWMutex
	subCache  map[string]int // name -> index of first matching subsystem, -1 none
	rootCache map[string]bool
}

// OtherSubsystem is the subsystem of stacks no subsystem rule matches. It is
// reserved: a map cannot define a subsystem of that name.
const OtherSubsystem = "other"

// DefaultThreadRoots are the frames that mark a complete stack unless the
// map replaces them: glibc's and the kernel's thread and process entry
// points.
var DefaultThreadRoots = []string{
	"start_thread", "clone", "clone3", "__clone", "__clone3", "__clone_internal",
	"_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
	"thread_start", "ret_from_fork", "ret_from_fork_asm", "kthread",
}

// Severity of a Diagnostic.
type Severity int

// Severities, from least to most serious.
const (
	Warning Severity = iota
	Error
)

// String returns "warning" or "error".
func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// Diagnostic is one problem found in a map file, with its position.
type Diagnostic struct {
	Severity Severity
	File     string
	Line     int
	Column   int
	Msg      string
	Hint     string
}

// String formats d as "FILE:LINE:COL: error: msg (hint: ...)", the form
// compilers use, so that editors can jump to it.
func (d Diagnostic) String() string {
	line, col := d.Line, d.Column
	if line < 1 {
		line = 1
	}
	if col < 1 {
		col = 1
	}
	s := fmt.Sprintf("%s:%d:%d: %s: %s", d.File, line, col, d.Severity, d.Msg)
	if d.Hint != "" {
		s += " (hint: " + d.Hint + ")"
	}
	return s
}

// CountDiagnostics returns how many of diags are errors and how many are
// warnings.
func CountDiagnostics(diags []Diagnostic) (errs, warnings int) {
	for _, d := range diags {
		if d.Severity == Error {
			errs++
		} else {
			warnings++
		}
	}
	return errs, warnings
}

// ErrInvalid is wrapped by Parse when the map has errors.
var ErrInvalid = errors.New("invalid symbol map")

// Parse reads a map from r; name is used in diagnostics (usually the path).
// It returns every diagnostic found, sorted by position; err wraps
// ErrInvalid when any has Severity Error, and the map is then nil. Warnings
// alone leave a usable map. Reading errors from r are returned wrapped;
// those of a file (r an *os.File of a directory, say) as Load words them.
func Parse(r io.Reader, name string) (*Map, []Diagnostic, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, nil, fmt.Errorf("symbol map %w", describePath(name, err))
		}
		return nil, nil, fmt.Errorf("symbol map %s: %w", name, err)
	}
	return parse(data, name)
}

// Default returns the map used when the user gives none: default
// normalisation and thread roots, no renames, no subsystems.
func Default() *Map {
	return newMap("<default>")
}

func newMap(file string) *Map {
	return &Map{
		file:      file,
		normalize: defaultNormalize(),
		subCache:  map[string]int{},
		rootCache: map[string]bool{},
	}
}

// Rewrite is one original symbol turned into another name by a rule.
type Rewrite struct {
	Original string // the symbol as it was in the profile
	Result   string // canonical name, or "" when the frame was elided
	Rule     string // e.g. `rename -> "mysql_update" (mariadb.yaml:12)`
	Value    int64  // total value of the stacks the rewrite touched
}

// Explanation lists the rewrites Apply made, sorted by Value descending
// (then by Original, for stable output).
type Explanation struct {
	Rewrites []Rewrite
}

// Stats counts the rules of a map, for summaries.
type Stats struct {
	Rename, Elide, Comm, Subsystems, ThreadRoots int
}

// Stats returns the number of rules of each kind (ThreadRoots counts the
// patterns the map adds or substitutes, not the defaults).
func (m *Map) Stats() Stats {
	return Stats{
		Rename:      len(m.rename),
		Elide:       len(m.elide),
		Comm:        len(m.comm),
		Subsystems:  len(m.subsys),
		ThreadRoots: m.roots.count(),
	}
}

// String is the rule counts as a summary says them: "12 rename rules,
// 3 elide, 1 comm, 6 subsystems" (thread roots are not counted).
func (s Stats) String() string {
	return fmt.Sprintf("%s, %d elide, %d comm, %s",
		names.Plural(s.Rename, "rename rule"), s.Elide, s.Comm, names.Plural(s.Subsystems, "subsystem"))
}

// File returns the name the map was parsed under.
func (m *Map) File() string { return m.file }

// Subsystems returns the subsystem names in the map's order, "other" last.
func (m *Map) Subsystems() []string {
	out := make([]string, 0, len(m.subsys)+1)
	for _, s := range m.subsys {
		out = append(out, s.name)
	}
	return append(out, OtherSubsystem)
}

// HasSubsystems reports whether the map defines any subsystem.
func (m *Map) HasSubsystems() bool { return len(m.subsys) > 0 }

// Subsystem returns the subsystem of a mapped stack (frames root first):
// the subsystem whose root function appears nearest the thread root (lowest
// frame index) wins; when several match the same frame, the first listed in
// the map wins; "other" when none matches. Every stack thus belongs to
// exactly one subsystem, and shares add up to 100%.
func (m *Map) Subsystem(frames []string) string {
	if len(m.subsys) == 0 {
		return OtherSubsystem
	}
	for _, f := range frames {
		if i := m.subsystemOf(f); i >= 0 {
			return m.subsys[i].name
		}
	}
	return OtherSubsystem
}

func (m *Map) subsystemOf(name string) int {
	m.mu.RLock()
	i, ok := m.subCache[name]
	m.mu.RUnlock()
	if ok {
		return i
	}
	i = -1
	for j, s := range m.subsys {
		if _, ok := s.m.match(name); ok {
			i = j
			break
		}
	}
	m.mu.Lock()
	m.subCache[name] = i
	m.mu.Unlock()
	return i
}

// IsThreadRoot reports whether a (mapped) frame marks a complete stack: one
// of DefaultThreadRoots (unless the map replaces them) or a thread root the
// map adds.
func (m *Map) IsThreadRoot(name string) bool {
	m.mu.RLock()
	v, ok := m.rootCache[name]
	m.mu.RUnlock()
	if ok {
		return v
	}
	_, v = m.roots.match(name)
	if !v && !m.rootsRepl {
		for _, r := range DefaultThreadRoots {
			if r == name {
				v = true
				break
			}
		}
	}
	m.mu.Lock()
	m.rootCache[name] = v
	m.mu.Unlock()
	return v
}
