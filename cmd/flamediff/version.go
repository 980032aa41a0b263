package main

import (
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// versionString says which flamediff this is: the module version, the
// commit it was built from (with "+dirty" for uncommitted changes) and the
// Go version, from the build information the Go toolchain embeds.
func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(no build information)"
	}
	return formatVersion(bi)
}

func formatVersion(bi *debug.BuildInfo) string {
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

func newVersionCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print flamediff's version, the commit it was built from and the Go version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(s.Out, "flamediff %s\n", versionString())
			return err
		},
	}
}
