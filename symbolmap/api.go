// Package symbolmap loads flamediff's symbol map (a YAML file that makes
// profiles of different server versions comparable) and applies it to a
// fold.Profile: renames, elided frames, thread-name normalisation, build
// noise normalisation, subsystem attribution and thread roots.
package symbolmap

import (
	"errors"
	"io"

	"github.com/flamediff/flamediff/fold"
)

// Map is a loaded symbol map. The zero value is not usable; use Parse or Default.
type Map struct {
	// filled in by the implementation
}

// Severity of a Diagnostic.
type Severity int

const (
	Warning Severity = iota
	Error
)

// Diagnostic is one problem found in a map file, with its position.
type Diagnostic struct {
	Severity Severity
	File     string
	Line     int
	Column   int
	Msg      string
	Hint     string
}

// ErrInvalid is wrapped by Parse when the map has errors.
var ErrInvalid = errors.New("invalid symbol map")

// Parse reads a map from r; name is used in diagnostics (usually the path).
// It returns every diagnostic found; err wraps ErrInvalid when any has Severity Error.
func Parse(r io.Reader, name string) (*Map, []Diagnostic, error) {
	return nil, nil, errors.New("not implemented yet")
}

// Default returns the map used when the user gives none: default
// normalisation and thread roots, no renames, no subsystems.
func Default() *Map { return &Map{} }

// Rewrite is one original symbol turned into another name by a rule.
type Rewrite struct {
	Original  string // the symbol as it was in the profile
	Result    string // canonical name, or "" when the frame was elided
	Rule      string // e.g. `rename "Sql_cmd_update::update_single_table" (line 12)`
	Value     int64  // total value of the stacks the rewrite touched
}

// Explanation lists the rewrites Apply made, sorted by Value descending.
type Explanation struct {
	Rewrites []Rewrite
}

// Apply returns a new profile with the map applied (p is not modified).
// The profile's label (p.Label()) selects label-limited rules.
func (m *Map) Apply(p *fold.Profile) (*fold.Profile, *Explanation) { return p, &Explanation{} }

// Subsystem returns the subsystem of a mapped stack (frames root first):
// the subsystem whose root function appears nearest the thread root wins;
// "other" when none matches.
func (m *Map) Subsystem(frames []string) string { return "other" }

// Subsystems returns the subsystem names in the map's order, "other" last.
func (m *Map) Subsystems() []string { return []string{"other"} }

// HasSubsystems reports whether the map defines any subsystem.
func (m *Map) HasSubsystems() bool { return false }

// IsThreadRoot reports whether a (mapped) frame marks a complete stack.
func (m *Map) IsThreadRoot(name string) bool { return false }

// Check returns diagnostics about how the map fits profile p: rules that can
// never match it (warnings).
func (m *Map) Check(p *fold.Profile) []Diagnostic { return nil }
