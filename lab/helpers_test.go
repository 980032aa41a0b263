package lab

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/record"
)

// skipOrFail skips the test with reason, or fails it when
// MARIADBTEST_REQUIRE is set (as CI sets it).
func skipOrFail(t *testing.T, reason string) {
	t.Helper()
	if os.Getenv(mariadbtest.RequireEnv) != "" {
		t.Fatalf("%s (and %s is set)", reason, mariadbtest.RequireEnv)
	}
	t.Skip(reason)
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		skipOrFail(t, "lab: needs root (the integration tests run apt-get and mariadbd as root)")
	}
}

func requireTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		skipOrFail(t, "lab: "+name+" not on PATH (apt-get install mariadb-server sysbench)")
	}
	return p
}

// logWriter sends progress lines to the test log.
type logWriter struct{ t *testing.T }

func (w *logWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Logf("%s", p)
	return len(p), nil
}

// startServer starts b in a fresh work directory under /tmp (short enough
// for the socket), stopped and removed when the test ends.
func startServer(t *testing.T, ctx context.Context, b *Binary, pool string) *Server {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "flamediff-lab-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv, err := StartServer(ctx, b, ServerConfig{Dir: dir, BufferPool: pool, Log: &logWriter{t: t}})
	if err != nil {
		t.Fatalf("StartServer(%s): %v", b.Mariadbd, err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return srv
}

// benchDir returns a new directory under /tmp for a bench's output: removed
// when the test passes, kept and named in the log when it fails.
func benchDir(t *testing.T, prefix string) string {
	t.Helper()
	out, err := os.MkdirTemp("/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("bench directory kept in %s", out)
			return
		}
		os.RemoveAll(out)
	})
	return out
}

// runCells runs cfg through Run with opts (one repeat unless opts says;
// the log into t) within timeout, logs how long it took, and stops the
// test unless every server ran and the matrix has cells cells.
func runCells(t *testing.T, cfg *Config, opts RunOptions, timeout time.Duration, cells int) *Result {
	t.Helper()
	if opts.Repeat == 0 {
		opts.Repeat = 1
	}
	if opts.Log == nil {
		opts.Log = &logWriter{t: t}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Logf("matrix of %d cells in %s, load %s", len(res.Runs), time.Since(start).Round(time.Second), loadavg())
	if len(res.Failed) > 0 {
		t.Fatalf("servers failed: %+v", res.Failed)
	}
	if len(res.Runs) != cells {
		t.Fatalf("Run measured %d cells, want %d: %+v", len(res.Runs), cells, res.Runs)
	}
	return res
}

// recordRun is RunOptions.Record as the bench command wires it.
func recordRun(ctx context.Context, c record.Config) (*record.Result, error) {
	return record.Run(ctx, c, nil)
}
