package report

import (
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap/suggest"
)

// Suggestions returns the section diff --suggest shows for one target:
// the top best-scoring proposals of s (numbered in the order found, as
// map suggest numbers them) with their evidence, or, when there is none,
// the functions left unpaired. s's labels name the profiles.
func Suggestions(s *suggest.Suggestions, top int) Section {
	sec := Section{
		Title: fmt.Sprintf("Suggested map rules, %s vs %s (top %d of %d; all, as YAML: flamediff map suggest BASE TARGET)",
			s.BaseLabel, s.TargetLabel, min(top, len(s.Proposals)), len(s.Proposals)),
		Columns: []Column{NumColumn("#"), NumColumn("score"), TextColumn("rule"), TextColumn("evidence")},
		Notes: []string{fmt.Sprintf("%s held %.2f%% or more of the samples in one profile only; %d %s left unpaired once all the proposed rules are applied.",
			names.Plural(s.Before, "function"), s.Options.MinShare, len(s.Unpaired), isAre(len(s.Unpaired)))},
	}
	for k, j := range s.BestFirst() {
		if k == top {
			break
		}
		sec.AddRow(fmt.Sprint(j+1), F2(s.Proposals[j].Score), ruleText(s.Proposals[j]), s.Describe(j))
	}
	if len(sec.Rows) > 0 {
		return sec
	}
	sec = Section{
		Title:   fmt.Sprintf("No map rule to suggest, %s vs %s: these functions hold %.2f%% or more in one profile only", s.BaseLabel, s.TargetLabel, s.Options.MinShare),
		Columns: []Column{TextColumn("function"), TextColumn("only in"), NumColumn("incl %")},
	}
	for _, u := range s.Unpaired {
		sec.AddRow(u.Name, s.Label(u.Side), F2(u.Share))
	}
	return sec
}

// ruleText is a proposal's rule on one line: "rename Sql_cmd_dml::execute → mysql_update".
func ruleText(p suggest.Proposal) string {
	if p.Kind == suggest.Elide {
		return "elide " + strings.Join(p.From, ", ")
	}
	return fmt.Sprintf("rename %s → %s", strings.Join(p.From, ", "), p.To)
}

// isAre is the verb for a count: "is" for 1, "are" otherwise.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}
