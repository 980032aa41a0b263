// Package rundir reads, writes and checks run directories, the unit of
// work flamediff records and reports on:
//
//	DIR/stacks.folded   the sampled stacks, folded (one stack and its count a line)
//	DIR/run.json        the run's metadata (fold.Meta): window, CPU, operations, sampler
//	DIR/profile.pb.gz   the same stacks as a pprof profile
//	DIR/workload.log    the workload's output, when record started one
//	DIR/offcpu.folded   with record --off-cpu: stacks at which threads left the CPU, in µs off it
//	DIR/offcpu-switches.folded  the same stacks in switches (leaf [voluntary] or [involuntary])
//	DIR/perf.data       perf's raw samples, with record --keep-raw
//
// A run that stopped early (Ctrl-C, a dying server, a failing workload)
// still has run.json, with "complete": false and the reason; it may have no
// stacks at all. Writes go through internal/atomicfile: each file is
// replaced whole or not at all, with the mode a new file gets under the
// umask.
//
// This package touches the file system; the parsers and the model it uses
// live in fold and never do.
package rundir
