// Package workload measures the throughput side of a profiling run: the
// benchmark command that drives the server (usually sysbench), its report,
// the server's own status counters, and the server process's CPU time,
// context switches and I/O from /proc.
//
// Parsers take bytes or an io.Reader and never touch the system
// (ParseStat, ParseStatus, ParseIO, ParseSysbench); ReadProc, Start and
// OpenServer are the thin layers that do. ReadProc and Start are Linux
// only: elsewhere they return an error wrapping errors.ErrUnsupported.
//
// A typical run:
//
//	run, _ := workload.Start(ctx, sysbenchArgs, os.Stderr)
//	before, _ := workload.ReadProc("/proc", serverPID)
//	c0, _ := srv.Counters(ctx, "Questions")
//	time.Sleep(window) // sampling happens here
//	after, _ := workload.ReadProc("/proc", serverPID)
//	c1, _ := srv.Counters(ctx, "Questions")
//	w := workload.Diff(before, after)
//	_ = run.Wait()
//	report, _ := workload.ParseSysbench(bytes.NewReader(run.Output()))
package workload
