// Package gendocs writes a command reference from a cobra command tree:
// one markdown page per command, generated from the commands' own help
// texts and flags (cobra/doc), without the date footer, so that the same
// commands always give the same bytes and the committed pages can be
// checked against the code.
package gendocs

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// Write replaces the pages of root's command tree in dir, creating dir if
// need be: the pages of root's commands already there (NAME*.md, NAME
// root's name), including those of commands that no longer exist, are
// removed first; other files are left alone. It turns off the "Auto
// generated" footer of every command in the tree.
func Write(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("command reference: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, root.Name()+"*.md"))
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
