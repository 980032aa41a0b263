package lab

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/flamediff/flamediff/internal/mariadbtest"
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
