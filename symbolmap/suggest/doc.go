// Package suggest proposes symbol map rules from two profiles: the
// functions that hold a meaningful share of one profile and are absent
// from the other are paired by where they sit in the call tree (their
// callers and callees present in both), as renames, elided wrappers or
// splits, each with a score and its evidence. Compute is the algorithm;
// Suggestions.YAML writes the proposals as a commented symbol map (or a
// fragment of one) and Suggestions.MergeYAML adds them to the text of an
// existing map.
//
// The files follow the steps: stats.go prepares the profiles (the map
// applied through symbolmap.Resolver, names interned) and counts each
// function's callers, callees and calls; score.go scores a pair of
// functions; candidates.go finds the best rename, split or elide
// candidate; proposal.go turns an accepted candidate into a Proposal with
// its evidence; yaml.go and merge.go write the result.
//
// The package does no I/O: profiles and maps come in as values, map text
// as bytes, and YAML goes out as bytes. It imports symbolmap (for the map
// and its parser, to check merged maps); symbolmap does not import it.
package suggest
