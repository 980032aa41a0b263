package suggest

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/symbolmap"
)

// TestMergeYAML merges proposals into maps of different shapes: the
// result parses, has the new rules, keeps the old ones, and (block-style
// lists) keeps every line of the original file in order.
func TestMergeYAML(t *testing.T) {
	ps := [2]*fold.Profile{readRun(t, "mariadb-10.11-update-index", "10.11"), readRun(t, "mariadb-11.8-update-index", "11.8")}
	hand, err := os.ReadFile("../../examples/symbolmaps/mariadb.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// A wrong existing rule: Sql_cmd_dml::execute renamed to "stmt". The
	// proposal renames "stmt" back, naming the original symbol, and must
	// win over the existing rule.
	wrong := "version: 1\nrename:\n- to: stmt\n  from: [Sql_cmd_dml::execute]\n"
	tests := []struct {
		name      string
		src       string
		keepLines bool
		// noMap: the proposals are made without the map (the hand map
		// leaves nothing to propose), so the result is not checked
		// against Compute's unpaired list.
		noMap bool
	}{
		{"no map", "", false, false},
		{"hand map", string(hand), true, true},
		{"flow style", "version: 1\nelide: [{from: [x_never]}]\nrename: [{to: a, from: [b_never]}]\n", false, false},
		{"no sections", "version: 1\n# just a comment\n", true, false},
		{"items at column 0", wrong, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m *symbolmap.Map
			if tt.src != "" {
				var err error
				if m, _, err = symbolmap.Parse(strings.NewReader(tt.src), "old.yaml"); err != nil {
					t.Fatal(err)
				}
			}
			sm := m
			if tt.noMap {
				sm = nil
			}
			s, err := Compute(sm, ps[0], ps[1], Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Proposals) == 0 {
				t.Fatal("nothing to merge")
			}
			out, err := s.MergeYAML([]byte(tt.src), "old.yaml")
			if err != nil {
				t.Fatalf("MergeYAML: %v\n%s", err, out)
			}
			merged, _, err := symbolmap.Parse(bytes.NewReader(out), "new.yaml")
			if err != nil {
				t.Fatalf("merged map does not parse: %v\n%s", err, out)
			}
			var nEl, nRn int
			for _, p := range s.Proposals {
				if p.Kind == Elide {
					nEl++
				} else {
					nRn++
				}
			}
			old := symbolmap.Stats{}
			if m != nil {
				old = m.Stats()
			}
			if st := merged.Stats(); st.Elide != old.Elide+nEl || st.Rename != old.Rename+nRn {
				t.Errorf("merged map has %d elide and %d rename rules, want %d and %d", st.Elide, st.Rename, old.Elide+nEl, old.Rename+nRn)
			}
			if tt.keepLines {
				rest := strings.Split(string(out), "\n")
				for _, l := range strings.Split(tt.src, "\n") {
					i := slices.Index(rest, l)
					if i < 0 {
						t.Fatalf("line %q of the original map is missing or out of order in the merged map:\n%s", l, out)
					}
					rest = rest[i+1:]
				}
			}
			if tt.noMap {
				return
			}
			// The merged map aligns what the suggestions aligned.
			mp := [2]*fold.Profile{}
			mp[0], _ = merged.Apply(ps[0])
			mp[1], _ = merged.Apply(ps[1])
			left := oneSidedUnder(mp, "", s.Options.MinShare)
			if !sameKeys(left, unpairedSet(s)) {
				t.Errorf("after the merged map, one-sided = %v; Compute said %v", left, unpairedSet(s))
			}
		})
	}
	// The wrong rule's symbol now maps to mysql_update in 11.8.
	m, _, _ := symbolmap.Parse(strings.NewReader(wrong), "old.yaml")
	s, _ := Compute(m, ps[0], ps[1], Options{})
	out, err := s.MergeYAML([]byte(wrong), "old.yaml")
	if err != nil {
		t.Fatal(err)
	}
	merged, _, err := symbolmap.Parse(bytes.NewReader(out), "new.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := merged.MapName("11.8", 1, "Sql_cmd_dml::execute"); got != "mysql_update" {
		t.Errorf("merged map makes Sql_cmd_dml::execute %q, want mysql_update (the new rule first)\n%s", got, out)
	}
}

func TestMergeYAMLInvalid(t *testing.T) {
	base := profile("1", "t;main;f;x 10")
	target := profile("2", "t;main;g;x 10")
	s, err := Compute(nil, base, target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Proposals) != 1 {
		t.Fatalf("want one proposal (g -> f), got %d", len(s.Proposals))
	}
	for _, src := range []string{"version: 1\nrenam: []\n", "- a\n- b\n", "version: [\n"} {
		if _, err := s.MergeYAML([]byte(src), "bad.yaml"); !errors.Is(err, symbolmap.ErrInvalid) {
			t.Errorf("MergeYAML(%q) = %v, want an error wrapping ErrInvalid", src, err)
		}
	}
}
