package main

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
	goldenfile "github.com/flamediff/flamediff/internal/golden"
)

// update rewrites golden files: go test ./cmd/flamediff -run Golden -update
var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// runsDir is the repository's run directories (real captures).
const runsDir = "../../testdata/runs"

// unwindDir holds run directories whose run.json records stack
// completeness and unwinding (testdata/README.md says how they were made).
const unwindDir = "../../testdata/unwind"

// mapFile is the shipped MariaDB symbol map.
const mapFile = "../../examples/symbolmaps/mariadb.yaml"

// needParse skips tests that read real profiles through package input while
// fold.Parse is still a stub.
func needParse(t *testing.T) {
	t.Helper()
	_, err := fold.Parse(strings.NewReader("t;a 1\n"), fold.ParseOptions{Format: fold.FormatFolded})
	if err != nil && strings.Contains(err.Error(), "not implemented") {
		t.Skipf("fold.Parse is not implemented yet (%v): golden and end-to-end tests on testdata/runs need it", err)
	}
}

// golden compares got with testdata/NAME, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update, "go test ./cmd/flamediff -update")
}

// runCLI runs flamediff with args and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), code
}

// readFolded is a tiny folded-stack reader ("a;b;c 12" per line), independent
// of fold.Parse, used to cross-check totals.
func readFolded(t *testing.T, path string) *fold.Profile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := &fold.Profile{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " ")
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		p.Stacks = append(p.Stacks, fold.Stack{Frames: strings.Split(line[:i], ";"), Value: v})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}
