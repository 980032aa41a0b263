package report

import (
	"reflect"
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/symbolmap"
)

// TestDiffRewrites: one section per profile, titled by its label, and the
// same sections Diff shows with Explain.
func TestDiffRewrites(t *testing.T) {
	r, err := diff.Compute(handProfile(nil), []*fold.Profile{handProfile(nil)}, diff.Options{IsThreadRoot: isRoot, Labels: []string{"v1", "v2"}})
	if err != nil {
		t.Fatal(err)
	}
	expls := []*symbolmap.Explanation{
		{Rewrites: []symbolmap.Rewrite{{Original: "mysql_update_x", Result: "mysql_update", Rule: "rename", Value: 10}}},
		nil,
	}
	got := DiffRewrites(r, expls, FormatTable)
	if len(got) != 2 || got[0].Title != "Rewrites in v1" || got[1].Title != "Rewrites in v2" ||
		len(got[0].Rows) != 1 || len(got[1].Rows) != 0 || len(got[1].Notes) != 1 {
		t.Fatalf("DiffRewrites = %+v; want v1's rewrite and a note that v2 had none", got)
	}
	d := Diff(r, expls, Options{Format: FormatTable, Explain: true})
	if !reflect.DeepEqual(d.Sections[len(d.Sections)-2:], got) {
		t.Errorf("Diff with Explain ends with %+v; want the sections of DiffRewrites", d.Sections[len(d.Sections)-2:])
	}
}
