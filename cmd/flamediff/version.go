package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/internal/buildinfo"
)

// newVersionCmd builds "flamediff version"; --version on the root prints the same line.
func newVersionCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print flamediff's version, the commit it was built from and the Go version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(s.Out, "flamediff %s\n", buildinfo.String())
			return err
		},
	}
}
