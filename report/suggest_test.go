package report

import (
	"reflect"
	"testing"

	"github.com/flamediff/flamediff/symbolmap/suggest"
)

func TestSuggestions(t *testing.T) {
	rename := suggest.Proposal{Kind: suggest.Rename, Score: 0.5, Side: suggest.Target, Names: []string{"g"}, Shares: []float64{40}, From: []string{"g"}, To: "f", ToShare: 41}
	elide := suggest.Proposal{Kind: suggest.Elide, Score: 0.9, Side: suggest.Target, Names: []string{"w"}, Shares: []float64{20}, From: []string{"w"}}
	opts := suggest.Options{MinShare: 1}
	tests := []struct {
		name string
		s    suggest.Suggestions
		top  int
		want Section
	}{
		{"best first, numbered as found",
			suggest.Suggestions{BaseLabel: "a", TargetLabel: "b", Proposals: []suggest.Proposal{rename, elide}, Before: 2, Options: opts}, 5,
			Section{
				Title:   "Suggested map rules, a vs b (top 2 of 2; all, as YAML: flamediff map suggest BASE TARGET)",
				Columns: []Column{NumColumn("#"), NumColumn("score"), TextColumn("rule"), TextColumn("evidence")},
				Rows: [][]Cell{
					{Text("2"), Text("0.90"), Text("elide w"), Text("b w 20.00% is an extra frame; a calls its callees directly")},
					{Text("1"), Text("0.50"), Text("rename g → f"), Text("b g 40.00% is a f 41.00%")},
				},
				Notes: []string{"2 functions held 1.00% or more of the samples in one profile only; 0 are left unpaired once all the proposed rules are applied."},
			}},
		{"cut at top",
			suggest.Suggestions{BaseLabel: "a", TargetLabel: "b", Proposals: []suggest.Proposal{rename, elide}, Unpaired: []suggest.OneSided{{Name: "x", Share: 3}}, Before: 3, Options: opts}, 1,
			Section{
				Title:   "Suggested map rules, a vs b (top 1 of 2; all, as YAML: flamediff map suggest BASE TARGET)",
				Columns: []Column{NumColumn("#"), NumColumn("score"), TextColumn("rule"), TextColumn("evidence")},
				Rows:    [][]Cell{{Text("2"), Text("0.90"), Text("elide w"), Text("b w 20.00% is an extra frame; a calls its callees directly")}},
				Notes:   []string{"3 functions held 1.00% or more of the samples in one profile only; 1 is left unpaired once all the proposed rules are applied."},
			}},
		{"none: the unpaired functions",
			suggest.Suggestions{BaseLabel: "a", TargetLabel: "b", Unpaired: []suggest.OneSided{{Name: "x", Side: suggest.Base, Share: 3}, {Name: "y", Side: suggest.Target, Share: 2.5}}, Before: 2, Options: opts}, 5,
			Section{
				Title:   "No map rule to suggest, a vs b: these functions hold 1.00% or more in one profile only",
				Columns: []Column{TextColumn("function"), TextColumn("only in"), NumColumn("incl %")},
				Rows:    [][]Cell{{Text("x"), Text("a"), Text("3.00")}, {Text("y"), Text("b"), Text("2.50")}},
			}},
	}
	for _, tt := range tests {
		if got := Suggestions(&tt.s, tt.top); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Suggestions() =\n%#v\nwant\n%#v", tt.name, got, tt.want)
		}
	}
}
