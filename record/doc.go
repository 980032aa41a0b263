// Package record runs one recording session: it finds the server process
// to sample, chooses the sampler (BPF or perf), starts the workload and
// waits out its warmup, samples a window, measures the same window from
// /proc (CPU, context switches, storage I/O) and from the server's status
// counters (operations), checks the samples against the CPU the process
// was accounted, and writes the run directory (package rundir):
// stacks.folded, profile.pb.gz, run.json and workload.log.
//
// Run is the whole session; Config holds plain values (no streams, no
// command-line syntax). Run never prints: it reports its progress as
// Status values through a callback, and returns the run's metadata in a
// Result, so that `flamediff record` and `flamediff bench` word and print
// them as they choose.
//
// Whatever ends the session (a cancelled context, the server dying, the
// workload failing), what was sampled is written, marked incomplete with
// the reason, and no sampler or workload process is left running. Run is
// Linux only (capture and workload are); elsewhere it fails with an error
// wrapping errors.ErrUnsupported.
package record
