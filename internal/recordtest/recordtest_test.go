package recordtest

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadRun(t *testing.T) {
	m, stacks := ReadRun(t, filepath.Join("..", "..", "testdata", "runs", "mariadb-11.8-point-select"))
	if m.Label != "11.8" || m.QPS == 0 || !strings.Contains(stacks, "mysqld_stmt_execute") {
		t.Errorf("ReadRun(11.8 point-select) = label %q, qps %v, %d bytes of stacks; want 11.8, its QPS and its stacks", m.Label, m.QPS, len(stacks))
	}
}

func TestBurner(t *testing.T) {
	cmd := Burner(t)
	if err := syscall.Kill(cmd.Process.Pid, 0); err != nil {
		t.Errorf("the burner (pid %d) does not run: %v", cmd.Process.Pid, err)
	}
	NoPerfLeft(t, cmd.Process.Pid) // nothing sampled it
}
