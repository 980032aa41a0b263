package gendocs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// tree is a small command tree: tool, tool sub, tool sub leaf.
func tree() *cobra.Command {
	root := &cobra.Command{Use: "tool", Short: "A tool"}
	sub := &cobra.Command{Use: "sub", Short: "A subcommand", Run: func(*cobra.Command, []string) {}}
	sub.Flags().Bool("flag", false, "a flag")
	sub.AddCommand(&cobra.Command{Use: "leaf ARG", Short: "A leaf", Run: func(*cobra.Command, []string) {}})
	root.AddCommand(sub)
	return root
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	if err := Write(tree(), dir); err != nil {
		t.Fatal(err)
	}
	// A stale page of the tool is removed; another file is kept.
	for name, text := range map[string]string{"tool_gone.md": "old", "README.md": "mine"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(tree(), dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if want := []string{"README.md", "tool.md", "tool_sub.md", "tool_sub_leaf.md"}; !slices.Equal(got, want) {
		t.Errorf("pages = %q, want %q", got, want)
	}
	page, err := os.ReadFile(filepath.Join(dir, "tool_sub.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## tool sub", "A subcommand", "--flag", "a flag", "[tool sub leaf](tool_sub_leaf.md)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("tool_sub.md lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(string(page), "Auto generated") {
		t.Errorf("tool_sub.md has the date footer:\n%s", page)
	}
}

func TestWriteNotADirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(tree(), file); err == nil || !strings.HasPrefix(err.Error(), "command reference") {
		t.Errorf("Write(into a file) = %v, want a command reference error", err)
	}
}
