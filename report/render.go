package report

import (
	"fmt"
	"io"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap"
	"github.com/flamediff/flamediff/symbolmap/suggest"
)

// Side is where a report puts what its format has no place for: CSV holds
// rows only, so its warnings go to Warn and its tables of rewrites
// (Options.Explain) and of suggestions to W, as text tables. A command
// gives its standard error.
type Side struct {
	W    io.Writer
	Warn func(warning string)
}

// RenderProfile writes the report of one profile in o.Format (table,
// markdown, JSON or CSV) to w, and to side what CSV has no place for.
func RenderProfile(w io.Writer, side Side, sum *diff.Summary, expl *symbolmap.Explanation, o Options) error {
	switch o.Format {
	case FormatJSON:
		return WriteJSON(w, ProfileJSON(sum, expl, o))
	case FormatCSV:
		err := ProfileCSV(w, sum, o.Top)
		return side.csv(err, o, []Section{Rewrites("Rewrites", expl, FormatTable)})
	}
	return Write(w, o.Format, Profile(sum, expl, o))
}

// RenderDiff writes the report of a diff in o.Format to w, and to side
// what CSV has no place for. extra are sections added under the tables
// (diff --suggest's); JSON and CSV have no place for them, and they go to
// side first.
func RenderDiff(w io.Writer, side Side, r *diff.Result, expls []*symbolmap.Explanation, o Options, extra []Section) error {
	if (o.Format == FormatJSON || o.Format == FormatCSV) && len(extra) > 0 {
		if err := WriteText(side.W, &Document{Sections: extra}); err != nil {
			return err
		}
	}
	switch o.Format {
	case FormatJSON:
		return WriteJSON(w, DiffJSON(r, expls, o))
	case FormatCSV:
		err := DiffCSV(w, r, o.Top)
		return side.csv(err, o, DiffRewrites(r, expls, FormatTable))
	}
	d := Diff(r, expls, o)
	d.Sections = append(d.Sections, extra...)
	return Write(w, o.Format, d)
}

// csv says on side, after a CSV table was written (err is its error), the
// warnings and, with Explain, the rewrites.
func (s Side) csv(err error, o Options, rewrites []Section) error {
	for _, warning := range o.Warnings {
		s.Warn(warning)
	}
	if !o.Explain {
		return err
	}
	if err2 := WriteText(s.W, &Document{Sections: rewrites}); err == nil {
		err = err2
	}
	return err
}

// SuggestionSections are diff --suggest's sections: for each target with
// functions of a meaningful share in one profile only, its top proposals
// (Suggestions) or a note that there are none.
func SuggestionSections(sugs []*suggest.Suggestions, top int) []Section {
	var out []Section
	for _, s := range sugs {
		if s.Before > 0 {
			out = append(out, Suggestions(s, top))
		}
	}
	return out
}

// WriteApplied lists the rules that changed a profile (symbolmap's
// Map.Applied), with the share of the samples in the stacks they changed:
//
//	PROFILE (label "11.8"): 2 rules applied
//	  21.76%  rename -> "mysql_update" (m.yaml:104), callee glob "Sql_cmd_update::*" (depth 2)
func WriteApplied(w io.Writer, path, label string, uses []symbolmap.RuleUse) {
	if label == "" {
		label = "no label"
	} else {
		label = fmt.Sprintf("label %q", label)
	}
	if len(uses) == 0 {
		fmt.Fprintf(w, "%s (%s): no rule applied\n", path, label)
		return
	}
	fmt.Fprintf(w, "%s (%s): %s applied\n", path, label, names.Plural(len(uses), "rule"))
	for _, u := range uses {
		line := u.Rule
		if u.Context != "" {
			line += ", " + u.Context
		}
		if u.Labels != "" {
			line += ", labels " + u.Labels
		}
		fmt.Fprintf(w, "  %6.2f%%  %s\n", 100*float64(u.Value)/float64(max(u.Total, 1)), line)
	}
}
