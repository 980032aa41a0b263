package main

import (
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap"
)

// labelHelp is --label's help: one flag per profile, in argument order,
// because paths may hold any character ("=" included) and a label is
// usually a version that the map's labels: globs select on.
const labelHelp = "label the profiles, one --label per profile argument in their order " +
	"(e.g. diff --label 10.11 --label 11.8 before.perf after.perf); an empty `LABEL` ('') keeps " +
	"a profile's own (run.json's). Map rules limited with labels: apply to the profiles whose label matches"

// checkLabels is the usage error of a --label count that does not match
// the profile arguments.
func checkLabels(labels, profiles []string) error {
	if len(labels) == 0 || len(labels) == len(profiles) {
		return nil
	}
	return cli.UsageError("%s for %s: give one --label per profile, in the order of the profiles ('' keeps a profile's own label)", names.Plural(len(labels), "--label"), names.Plural(len(profiles), "profile"))
}

// warnUnlabelled says once on stderr, when profiles have no label and the
// map has rules limited by labels, which rules those profiles did not get
// and how to give labels: without it a map written for labelled run
// directories silently does nothing to plain files.
func warnUnlabelled(s *streams, m *symbolmap.Map, args []string, ps []*fold.Profile) {
	skipped := m.SkippedByLabel("")
	if len(skipped) == 0 {
		return
	}
	var unlabelled []string
	for i, p := range ps {
		if p.Label() == "" {
			unlabelled = append(unlabelled, input.Label(p, args[i]))
		}
	}
	if len(unlabelled) == 0 {
		return
	}
	have := "has no label"
	if len(unlabelled) > 1 {
		have = "have no label"
	}
	rules := make([]string, len(skipped))
	for i, r := range skipped {
		rules[i] = r.Rule + " labels " + r.Labels
	}
	fmt.Fprintf(s.ErrOut, "flamediff: warning: %s %s, so %s of %s limited by labels did not apply: %s; give each profile a label with --label, in the order of the profiles (e.g. --label 10.11 --label 11.8)\n",
		strings.Join(unlabelled, ", "), have, names.Plural(len(skipped), "rule"), m.File(), strings.Join(rules, "; "))
}
