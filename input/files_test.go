package input

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestDistinct(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.folded", "a 1\n")
	b := write(t, dir, "b.folded", "a 1\n")
	link := filepath.Join(dir, "link.folded")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct {
		name string
		args []string
		want string // the error, "" for none
	}{
		{"none", nil, ""},
		{"different", []string{a, b, "-"}, ""},
		{"missing files are for the reader", []string{missing, missing + "2"}, ""},
		{"stdin twice", []string{"-", a, "-"}, "standard input (-) is given twice; it can be read once"},
		{"same name", []string{a, b, a}, a + " is given twice; give each input once"},
		{"same file", []string{a, link}, a + " and " + link + " are the same file; give each input once"},
	} {
		err := Distinct(tc.args...)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: Distinct(%q) = %v, want nil", tc.name, tc.args, err)
			}
			continue
		}
		var re *RepeatedError
		if !errors.As(err, &re) || err.Error() != tc.want {
			t.Errorf("%s: Distinct(%q) = %v, want a *RepeatedError %q", tc.name, tc.args, err, tc.want)
		}
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Dir(write(t, dir, "run/stacks.folded", "a 1\n"))
	for _, tc := range []struct {
		arg  string
		want []string
	}{
		{"", nil},
		{"-", nil},
		{"x.folded", []string{"x.folded"}},
		{run, []string{filepath.Join(run, "stacks.folded"), filepath.Join(run, "run.json"), filepath.Join(run, "offcpu.folded"), filepath.Join(run, "offcpu-switches.folded")}},
	} {
		if got := Files(tc.arg); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Files(%q) = %q, want %q", tc.arg, got, tc.want)
		}
	}
}

func TestCheckOutput(t *testing.T) {
	dir := t.TempDir()
	in := write(t, dir, "in.folded", "a 1\n")
	m := write(t, dir, "m.yaml", "version: 1\n")
	run := filepath.Dir(write(t, dir, "run/stacks.folded", "a 1\n"))
	for _, tc := range []struct {
		name, path string
		inputs     []string
		stdout     bool   // nil output: standard output
		err        string // the error contains this, "" for none
	}{
		{name: "stdout", path: "", inputs: []string{in}, stdout: true},
		{name: "dash", path: "-", inputs: []string{in}, stdout: true},
		{name: "a new file", path: filepath.Join(dir, "out.txt"), inputs: []string{in, m, "-"}},
		{name: "the input", path: in, inputs: []string{m, in}, err: in + ": output is one of the inputs"},
		{name: "the map", path: m, inputs: []string{"", m, in}, err: "output is one of the inputs"},
		{name: "a run directory's file", path: filepath.Join(run, "stacks.folded"), inputs: []string{run}, err: "output is one of the inputs"},
		{name: "a directory", path: dir, err: dir + ": is a directory"},
		{name: "no directory", path: filepath.Join(dir, "no", "out"), err: "directory " + filepath.Join(dir, "no") + " does not exist"},
	} {
		o, err := CheckOutput(tc.path, tc.inputs...)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.HasPrefix(err.Error(), "-o") {
				t.Errorf("%s: CheckOutput(%s) = %v, want an error with %q that names no flag", tc.name, tc.path, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: CheckOutput(%s): %v", tc.name, tc.path, err)
		case (o == nil) != tc.stdout:
			t.Errorf("%s: CheckOutput(%s) = %v, want standard output: %v", tc.name, tc.path, o, tc.stdout)
		}
	}
}
