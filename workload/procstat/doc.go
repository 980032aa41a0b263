// Package procstat is the /proc accounting of one process: a Snapshot of
// its CPU time (utime and stime of /proc/PID/stat), the context switches
// of its threads (/proc/PID/task/TID/status) and its I/O (/proc/PID/io),
// and the Window between two snapshots (Diff): what the server did during
// a profiling window, to set beside the samples and the operations.
//
// The parsers take bytes and never touch the system (ParseStat,
// ParseStatus, ParseIO); Read is the thin layer that does, from a proc
// file system mounted anywhere (tests read a copied tree). Read is Linux
// only: elsewhere it returns an error wrapping errors.ErrUnsupported.
//
//	before, _ := procstat.Read("/proc", serverPID)
//	time.Sleep(window) // sampling happens here
//	after, _ := procstat.Read("/proc", serverPID)
//	w := procstat.Diff(before, after) // w.CPU(), w.Voluntary, w.ReadKB...
package procstat
