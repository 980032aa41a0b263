package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets the test binary act as the flamediff command, so that the
// scripts under testdata/script run "flamediff ..." as a user types it.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"flamediff": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the end-to-end scripts in testdata/script/*.txtar.
//
// Each script sees:
//
//	$FIXTURES  the repository's testdata/ (perf/, golden/, runs/), absolute
//	$EXAMPLES  the repository's examples/ (symbolmaps/), absolute
//	$WORK/truncated.perf.script.gz  the first half of a real gzipped capture
//	$WORK/garbage.bin               binary bytes that are no known format
//
// and one extra command:
//
//	exitcode N prog args...  run prog, and fail unless it exits with status N
//
// With -update, cmp against a file in the script's archive rewrites that
// file (go test ./cmd/flamediff -run TestScripts -update).
func TestScripts(t *testing.T) {
	fixtures, err := filepath.Abs(filepath.Join("..", "..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Abs(filepath.Join("..", "..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	capture, err := os.ReadFile(filepath.Join(fixtures, "perf", "mariadb-10.11-update-index.perf.script.gz"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(env *testscript.Env) error {
			env.Setenv("FIXTURES", fixtures)
			env.Setenv("EXAMPLES", examples)
			// testscript archives hold text only: make the binary inputs here.
			if err := os.WriteFile(filepath.Join(env.WorkDir, "truncated.perf.script.gz"), capture[:len(capture)/2], 0o644); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(env.WorkDir, "garbage.bin"), garbage(4096), 0o644)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
		},
	})
}

// garbage returns n deterministic bytes that are neither text, gzip nor a
// protocol buffer.
func garbage(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(0xff - i*7)
	}
	return b
}

// cmdExitCode is "exitcode N prog args...": it runs prog like exec (stdout
// and stderr are then checked with stdout and stderr) and checks the exit
// status is exactly N, so that scripts tell errors (1) from usage errors (2).
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N prog [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad status %q: %v", args[0], err)
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}
