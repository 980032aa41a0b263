package main

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestHelpFiles: every visible command but version has a description and
// examples from its own help file, and every help file is some command's.
func TestHelpFiles(t *testing.T) {
	files, err := fs.Glob(helpFiles, "help/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	unused := make(map[string]bool)
	for _, f := range files {
		unused[f] = true
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.Hidden && c.Name() != "version" {
			name := strings.TrimPrefix(strings.TrimPrefix(c.CommandPath(), "flamediff"), " ")
			if name == "" {
				name = "flamediff"
			}
			long, example := help.Text(name)
			if c.Long != long || c.Example != example || long == "" || example == "" {
				t.Errorf("flamediff %s: Long %q, Example %q; want the non-empty texts of its help file", name, c.Long, c.Example)
			}
			delete(unused, "help/"+strings.ReplaceAll(name, " ", "_")+".txt")
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&streams{}))
	for f := range unused {
		t.Errorf("%s is the help of no command", f)
	}
}
