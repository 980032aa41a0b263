package cli

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
)

// testCmd is a command with two enum flags and three exclusive ones; ran
// says whether its RunE was reached.
func testCmd(ran *bool) *cobra.Command {
	var format, by string
	cmd := &cobra.Command{Use: "t", RunE: func(cmd *cobra.Command, _ []string) error {
		if err := Exclusive(cmd, "a", "b", "c"); err != nil {
			return err
		}
		*ran = true
		return nil
	}}
	EnumFlag(cmd, &format, "format", "table", "", "table", "json", "csv", "markdown")
	EnumFlag(cmd, &by, "by", "self", "", "self", "subtree")
	cmd.Flags().Bool("a", false, "")
	cmd.Flags().String("b", "", "")
	cmd.Flags().Int("c", 0, "")
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return cmd
}

func TestEnumAndExclusiveFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" for no error
	}{
		{nil, ""},
		{[]string{"--format", "json", "--by", "subtree"}, ""},
		{[]string{"--format", "md"}, `--format "md": want table, json, csv or markdown`},
		{[]string{"--format", "JSON"}, `--format "JSON": want table, json, csv or markdown`},
		{[]string{"--by", ""}, `--by "": want self or subtree`},
		{[]string{"--a", "--c", "0"}, "give one of --a, --b and --c"},
		{[]string{"--b", "x"}, ""},
		{[]string{"--a", "--b", "x", "--c", "1"}, "give one of --a, --b and --c"},
	}
	for _, tt := range tests {
		ran := false
		cmd := testCmd(&ran)
		cmd.SetArgs(tt.args)
		err := cmd.Execute()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%v: %v, want no error", tt.args, err)
		case tt.want == "" && !ran:
			t.Errorf("%v: the command did not run", tt.args)
		case tt.want != "" && (err == nil || !errors.Is(err, ErrUsage) || err.Error() != "usage: "+tt.want):
			t.Errorf("%v: error %v, want the usage error %q", tt.args, err, tt.want)
		case tt.want != "" && ran && tt.want[0] == '-':
			t.Errorf("%v: the command ran with a bad value", tt.args)
		}
	}
}

func TestEnumCompletion(t *testing.T) {
	ran := false
	cmd := testCmd(&ran)
	f, ok := cmd.GetFlagCompletionFunc("by")
	if !ok {
		t.Fatal("--by has no completion")
	}
	got, _ := f(cmd, nil, "")
	if len(got) != 2 || got[0] != "self" || got[1] != "subtree" {
		t.Errorf("--by completes %v, want [self subtree]", got)
	}
}

func TestCheckNewDir(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	file := filepath.Join(dir, "file")
	if err := os.Mkdir(full, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{file, filepath.Join(full, "x")} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct{ dir, want string }{
		{filepath.Join(dir, "absent"), ""},
		{file, "usage: --out " + file + " exists and is not a directory"},
		{full, "usage: --out " + full + " is not empty: choose a new directory so that no earlier run is overwritten"},
	}
	for _, tt := range tests {
		err := CheckNewDir("--out", tt.dir, "run")
		if got := ""; err != nil {
			got = err.Error()
			if got != tt.want {
				t.Errorf("CheckNewDir(%s) = %q, want %q", tt.dir, got, tt.want)
			}
		} else if tt.want != "" {
			t.Errorf("CheckNewDir(%s) = nil, want %q", tt.dir, tt.want)
		}
	}
}

func TestLists(t *testing.T) {
	for _, tt := range []struct {
		in      []string
		or, and string
	}{
		{nil, "", ""},
		{[]string{"a"}, "a", "a"},
		{[]string{"a", "b"}, "a or b", "a and b"},
		{[]string{"a", "b", "c"}, "a, b or c", "a, b and c"},
	} {
		if got := OrList(tt.in); got != tt.or {
			t.Errorf("OrList(%v) = %q, want %q", tt.in, got, tt.or)
		}
		if got := AndList(tt.in); got != tt.and {
			t.Errorf("AndList(%v) = %q, want %q", tt.in, got, tt.and)
		}
	}
}
