// Package workload measures the throughput side of a profiling run: the
// benchmark command that drives the server (usually sysbench), its report
// and the server's own status counters. The server process's CPU time,
// context switches and I/O from /proc are package procstat's.
//
// Parsers take bytes or an io.Reader and never touch the system
// (ParseSysbench); Start and OpenServer are the thin layers that do.
// Start is Linux only: elsewhere it returns an error wrapping
// errors.ErrUnsupported.
//
// A typical run:
//
//	run, _ := workload.Start(ctx, sysbenchArgs, os.Stderr)
//	before, _ := procstat.Read("/proc", serverPID)
//	c0, _ := srv.Counters(ctx, "Questions")
//	time.Sleep(window) // sampling happens here
//	after, _ := procstat.Read("/proc", serverPID)
//	c1, _ := srv.Counters(ctx, "Questions")
//	w := procstat.Diff(before, after)
//	_ = run.Wait()
//	report, _ := workload.ParseSysbench(bytes.NewReader(run.Output()))
package workload
