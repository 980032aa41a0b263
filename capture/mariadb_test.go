//go:build linux

package capture_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/internal/mariadbtest"
)

// TestPerfMariaDB samples a private MariaDB server under sysbench
// oltp_update_index and looks for the server's command loop in the stacks.
func TestPerfMariaDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MariaDB server and runs sysbench")
	}
	if os.Geteuid() != 0 {
		t.Skip("sampling tests need root")
	}
	if err := capture.CheckPerf(); err != nil {
		t.Skipf("perf not usable: %v", err)
	}
	srv := mariadbtest.Start(t, mariadbtest.Options{})
	srv.Prepare(t, "oltp_update_index", 1000)
	args := srv.Sysbench(t, "oltp_update_index", "--time=4", "--threads=2", "run")
	bench := exec.Command(args[0], args[1:]...)
	var out strings.Builder
	bench.Stdout, bench.Stderr = &out, &out
	if err := bench.Start(); err != nil {
		t.Fatal(err)
	}
	defer bench.Wait()
	defer bench.Process.Kill()

	ctx := context.Background()
	s := capture.NewPerf()
	if err := s.Start(ctx, srv.PID, capture.Options{FrequencyHz: 499}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	time.Sleep(2 * time.Second)
	res, err := s.Stop(ctx)
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if err := bench.Wait(); err != nil {
		t.Errorf("sysbench: %v\n%s", err, out.String())
	}
	t.Logf("%d samples, %d stacks, warnings %q", res.Samples, len(res.Profile.Stacks), res.Warnings)
	found := map[string]int64{}
	for _, st := range res.Profile.Stacks {
		for _, f := range st.Frames[1:] {
			if f == "do_command" || f == "mysqld_stmt_execute" || f == "dispatch_command" {
				found[f] += st.Value
			}
		}
	}
	if found["do_command"] == 0 && found["mysqld_stmt_execute"] == 0 {
		t.Errorf("neither do_command nor mysqld_stmt_execute in %d stacks (found %v)", len(res.Profile.Stacks), found)
	}
	t.Logf("samples under: %v", found)
}
