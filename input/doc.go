// Package input loads what flamediff's commands are given: profile
// arguments (a profile file in any format fold reads, a run directory, or
// "-" for a reader the caller supplies), the symbol map file, and the map
// applied to the profiles with a label for each (Set). It also holds the
// rules every command follows for its arguments: an input is given once
// (Distinct), an output is never one of the inputs (CheckOutput), and a
// function asked for by name must be in a profile (Set.ResolveRoots).
//
// I/O stops at reading: this package opens the files it is named and
// reads the reader it is given for "-", and writes nothing. Warnings
// (skipped lines) go to a callback and map diagnostics are returned, for
// the caller to print. Messages name inputs, never command-line flags;
// errors a caller may want to word its own way are typed (RootError,
// RepeatedError).
package input
