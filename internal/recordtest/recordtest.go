// Package recordtest holds the helpers of the tests that record a real
// process (package record's, the record and bench commands', the lab's):
// a skip unless a sampler can run here, a process that burns CPU, a check
// that no perf process is left behind, and a reader of a run directory
// that does not go through package rundir, so that the run directory is
// checked by other code than the code that wrote it.
package recordtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/fold"
)

// RequireSampler skips the test unless it runs as root and sampler
// ("perf" or "bpf") can sample another process here.
func RequireSampler(t testing.TB, sampler string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("recording another process needs root")
	}
	check := capture.CheckPerf
	if sampler == "bpf" {
		check = capture.CheckBPF
	}
	if err := check(); err != nil {
		t.Skipf("the %s sampler cannot run here: %v", sampler, err)
	}
}

// Burner starts a process that burns CPU until the test ends.
func Burner(t testing.TB) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// NoPerfLeft fails the test when a perf process sampling pid still runs.
func NoPerfLeft(t testing.TB, pid int) {
	t.Helper()
	ps, err := capture.FindProcesses("/proc", "perf")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if strings.Contains(strings.Join(p.Cmdline, " "), "-p "+strconv.Itoa(pid)) {
			t.Errorf("perf process %d still runs: %q", p.PID, p.Cmdline)
		}
	}
}

// ReadRun returns the run metadata (run.json) and the folded stacks
// (stacks.folded, "" when absent) of run directory dir; it fails the test
// when run.json cannot be read or parsed.
func ReadRun(t testing.TB, dir string) (*fold.Meta, string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, fold.MetaFile))
	if err != nil {
		t.Fatalf("run directory: %v", err)
	}
	defer f.Close()
	m, err := fold.ParseMeta(f)
	if err != nil {
		t.Fatal(err)
	}
	stacks, _ := os.ReadFile(filepath.Join(dir, fold.StacksFile))
	return m, string(stacks)
}
