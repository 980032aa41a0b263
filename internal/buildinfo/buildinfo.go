// Package buildinfo says which build of flamediff is running: the module
// version, the commit it was built from (with "+dirty" for uncommitted
// changes) and the Go version, from the build information the Go
// toolchain embeds in every binary.
package buildinfo

import (
	"runtime/debug"
	"strings"
)

// String describes the running binary, as Format does, or says
// "(no build information)" when the binary carries none.
func String() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build information)"
	}
	return Format(bi)
}

// Format describes bi in one line: "v1.2.3, commit 0123456789ab+dirty of
// 2026-12-03T08:00:00Z, go1.26.8". The version is "(devel)" when the
// module has none; the commit (its first 12 digits) and its time are left
// out when the build has no VCS information.
func Format(bi *debug.BuildInfo) string {
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var rev, when string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			when = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	parts := []string{version}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "+dirty"
		}
		c := "commit " + rev
		if when != "" {
			c += " of " + when
		}
		parts = append(parts, c)
	}
	parts = append(parts, bi.GoVersion)
	return strings.Join(parts, ", ")
}
