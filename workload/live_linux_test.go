//go:build linux

package workload

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/workload/procstat"
)

// TestLiveServer runs against a private MariaDB (see internal/mariadbtest);
// it is skipped without root, mariadbd or sysbench.
func TestLiveServer(t *testing.T) {
	db := mariadbtest.Start(t, mariadbtest.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := OpenServer(ctx, SocketDSN(db.Socket, "root", ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})

	t.Run("Version", func(t *testing.T) {
		v, err := srv.Version(ctx)
		if err != nil || !strings.Contains(v, "MariaDB") {
			t.Errorf("Version() = %q, %v, want a MariaDB version", v, err)
		}
	})

	t.Run("Counters", func(t *testing.T) {
		before, err := srv.Counters(ctx, "Questions", "com_select", "Uptime")
		if err != nil {
			t.Fatal(err)
		}
		if len(before) != 3 {
			t.Fatalf("Counters() = %v, want 3 values keyed as asked", before)
		}
		other := db.DB(t)
		for range 10 {
			if _, err := other.Exec("SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		after, err := srv.Counters(ctx, "Questions", "com_select", "Uptime")
		if err != nil {
			t.Fatal(err)
		}
		// Ten SELECTs, plus our own SHOW STATUS.
		if d := after["Questions"] - before["Questions"]; d < 11 {
			t.Errorf("Questions went from %d to %d, want at least 11 more", before["Questions"], after["Questions"])
		}
		if d := after["com_select"] - before["com_select"]; d < 10 {
			t.Errorf("com_select went from %d to %d, want at least 10 more", before["com_select"], after["com_select"])
		}
	})

	t.Run("all counters", func(t *testing.T) {
		all, err := srv.Counters(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := all["Questions"]; !ok || len(all) < 100 {
			t.Errorf("Counters() = %d values, want hundreds with Questions", len(all))
		}
	})

	t.Run("unknown counter", func(t *testing.T) {
		got, err := srv.Counters(ctx, "Questions", "Questoins")
		if !errors.Is(err, ErrUnknownCounter) || got != nil {
			t.Fatalf("Counters(Questoins) = %v, %v, want ErrUnknownCounter", got, err)
		}
		if !strings.Contains(err.Error(), `"Questoins"`) || !strings.Contains(err.Error(), "similar: Questions") {
			t.Errorf("Counters(Questoins) error = %q, want the name and a suggestion", err)
		}
	})

	t.Run("not an integer", func(t *testing.T) {
		_, err := srv.Counters(ctx, "Innodb_buffer_pool_dump_status")
		if err == nil || !strings.Contains(err.Error(), "not an integer") {
			t.Errorf("Counters(Innodb_buffer_pool_dump_status) error = %v, want not an integer", err)
		}
	})

	// What flamediff record does: run sysbench, take a window of the
	// server's process figures and counters, parse sysbench's report.
	t.Run("sysbench window", func(t *testing.T) {
		db.Prepare(t, "oltp_point_select", 2000)
		var log bytes.Buffer
		run, err := Start(ctx, db.Sysbench(t, "oltp_point_select", "--threads=2", "--time=3", "--percentile=99", "run"), &log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = run.Stop(time.Second) })
		time.Sleep(500 * time.Millisecond)
		c0, err := srv.Counters(ctx, "Questions")
		if err != nil {
			t.Fatal(err)
		}
		p0, err := procstat.Read("/proc", db.PID)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		p1, err := procstat.Read("/proc", db.PID)
		if err != nil {
			t.Fatal(err)
		}
		c1, err := srv.Counters(ctx, "Questions")
		if err != nil {
			t.Fatal(err)
		}
		if err := run.Wait(); err != nil {
			t.Fatalf("sysbench: %v", err)
		}
		w := procstat.Diff(p0, p1)
		ops := c1["Questions"] - c0["Questions"]
		t.Logf("window %+v; %d questions; threads %d", w, ops, p1.Threads)
		if w.Seconds < 0.9 || w.CPU() <= 0 || w.Voluntary == 0 || ops < 100 || p1.Threads < 2 || !p1.IOAvailable {
			t.Errorf("window %+v with %d questions and snapshot %+v: want CPU, switches and queries", w, ops, p1)
		}
		rep, err := ParseSysbench(bytes.NewReader(run.Output()))
		if err != nil {
			t.Fatalf("ParseSysbench: %v\n%s", err, run.Output())
		}
		if rep.Threads != 2 || rep.Percentile != 99 || rep.Transactions == 0 || rep.Reads != rep.Queries || rep.TotalTime < 2.9 {
			t.Errorf("ParseSysbench = %+v, want 2 threads, 99th percentile, reads only, 3 s", rep)
		}
		if !bytes.Equal(log.Bytes(), run.Output()) {
			t.Errorf("the log differs from Output()")
		}
	})
}
