package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/internal/gendocs"
)

// docsDir is where the command reference is committed, relative to the
// repository root; docsRegenerate is the command that rewrites it.
const (
	docsDir        = "docs/commands"
	docsRegenerate = "make docs (or: go run ./cmd/flamediff docs docs/commands)"
)

// newDocsCmd is the hidden "flamediff docs DIR": it writes the command
// reference, one markdown page per command, generated from the commands'
// own help texts and flags. The pages carry no date, so the same commands
// always give the same bytes.
func newDocsCmd(s *streams) *cobra.Command {
	return &cobra.Command{
		Use:    "docs DIR",
		Short:  "Write the command reference as markdown pages into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := gendocs.Write(cmd.Root(), args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(s.Out, "wrote the command reference to %s\n", args[0])
			return err
		},
	}
}
