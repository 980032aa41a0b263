package main

import (
	"bytes"
	"strings"
	"testing"
)

// runArgs runs flamediff with args and empty stdin.
func runArgs(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, _ := runArgs(args...)
		if code != exitOK || !strings.HasPrefix(out, "flamediff ") || !strings.Contains(out, "go1.") {
			t.Errorf("flamediff %v: exit %d, stdout %q; want the version with the Go version", args, code, out)
		}
	}
}

// TestUsageErrorNamesCommand: a usage error points at the command's own help.
func TestUsageErrorNamesCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "a"}, "run 'flamediff diff --help' for usage"},
		{[]string{"report", "--format", "yaml", "a"}, "run 'flamediff report --help' for usage"},
		{[]string{"map", "suggest", "a"}, "run 'flamediff map suggest --help' for usage"},
		{[]string{"svg", "--no-such-flag", "a"}, "run 'flamediff svg --help' for usage"},
		{[]string{"nope"}, "run 'flamediff --help' for usage"},
	} {
		code, _, errOut := runArgs(tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("flamediff %v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	// "1 argument", not "1 arguments".
	_, _, errOut := runArgs("diff", "a")
	if !strings.Contains(errOut, "got 1 argument\n") {
		t.Errorf("flamediff diff a: stderr %q, want \"got 1 argument\"", errOut)
	}
}

// TestCompletion: shell completion offers the values of enum flags.
func TestCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"report", "--format", ""}, []string{"table", "json", "csv", "markdown"}},
		{[]string{"diff", "--format", ""}, []string{"table", "json", "csv", "markdown"}},
		{[]string{"fold", "--format", ""}, []string{"folded", "pprof"}},
		{[]string{"report", "--input-format", ""}, []string{"auto", "perf", "folded", "pprof"}},
		{[]string{"svg", "--colors", ""}, []string{"hot", "mem", "io", "subsystem"}},
		{[]string{"svg", "--color-by", ""}, []string{"subtree", "self"}},
		{[]string{"html", "--normalize", ""}, []string{"auto", "share", "per-op"}},
		{[]string{"record", "--sampler", ""}, []string{"perf", "bpf", "auto", "none"}},
	} {
		code, out, errOut := runArgs(append([]string{"__complete"}, tc.args...)...)
		if code != exitOK {
			t.Fatalf("__complete %v: exit %d, %s", tc.args, code, errOut)
		}
		var got []string
		for _, l := range strings.Split(out, "\n") {
			if l != "" && !strings.HasPrefix(l, ":") {
				got = append(got, l)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("completion of %v = %q, want %q", tc.args, got, tc.want)
		}
	}
}
