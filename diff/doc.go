// Package diff computes the figures a CPU regression report quotes from
// fold.Profiles: function shares (inclusive and self), subtree breakdowns,
// subsystem shares, stack completeness, CPU per operation and the
// difference between a base profile and one or more targets, with the
// change in CPU per operation attributed to subsystems.
//
// Every function here is a pure function of its arguments: no files, no
// terminals, no clock. Results are deterministic (ties are broken by name)
// so that they can be golden-tested; rendering is the caller's job.
//
// Definitions used throughout:
//
//   - A profile's total is the sum of its stack values (samples, or sample
//     periods). Percentages are of that total; a profile whose total is 0
//     gives 0% everywhere.
//   - Frames[0] of a stack is the thread name and is not a function unless
//     an option says so.
//   - Inclusive value of a function: the value of the stacks that contain
//     it, each stack counted once however often the function recurses in
//     it. Self value: the value of the stacks whose leaf frame it is.
//   - CPU µs per operation of a share s (a fraction of the total) is
//     s × CPU seconds × 1e6 / operations, from the run metadata.
package diff
