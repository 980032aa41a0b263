package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
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
			if err := writeCommandDocs(cmd.Root(), args[0]); err != nil {
				return err
			}
			_, err := fmt.Fprintf(s.Out, "wrote the command reference to %s\n", args[0])
			return err
		},
	}
}

// writeCommandDocs replaces the pages of root's command tree in dir: the
// pages of commands that no longer exist (flamediff*.md) are removed first.
func writeCommandDocs(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("command reference: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "flamediff*.md"))
	if err != nil {
		return fmt.Errorf("command reference: %w", err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("command reference: %w", err)
		}
	}
	disableAutoGenTag(root)
	if err := doc.GenMarkdownTree(root, dir); err != nil {
		return fmt.Errorf("command reference %s: %w", dir, err)
	}
	return nil
}

// disableAutoGenTag drops the "Auto generated on DATE" footer from every page.
func disableAutoGenTag(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, sub := range c.Commands() {
		disableAutoGenTag(sub)
	}
}
