package suggest

import (
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/internal/names"
)

// evidenceShown is how many callers, callees or edges a comment lists.
const evidenceShown = 4

// YAML returns the proposals as symbol map YAML: a header comment, the
// elide rules, the rename rules (split proposals are rename rules with
// several names), each list best first (BestFirst) and each rule preceded
// by comments with its number in the order found and its evidence, and the
// unpaired functions as comments. With complete, it starts with
// "version: 1", so that the text is a map of its own; without, it is a
// fragment to merge into a map's elide and rename lists (MergeYAML).
// The text is deterministic.
func (s *Suggestions) YAML(complete bool) []byte {
	var b strings.Builder
	o := s.Options
	fmt.Fprintf(&b, "# Rules proposed by flamediff map suggest: %s (base) vs %s.\n", orNone(s.BaseLabel), orNone(s.TargetLabel))
	fmt.Fprintf(&b, "# %s with at least %.2f%% of the samples %s in one profile only", names.Plural(s.Before, "function"), o.MinShare, were(s.Before))
	if o.Root != "" {
		fmt.Fprintf(&b, " (under %s)", o.Root)
	}
	fmt.Fprintf(&b, ";\n# %s scoring at least %.2f", names.Plural(len(s.Proposals), "proposal"), o.MinScore)
	if len(s.Proposals) > 1 {
		b.WriteString(": elide rules, then rename rules, each best first (#N: order found)")
	}
	b.WriteString(".\n")
	b.WriteString("# Shares are inclusive, in percent of each profile's samples, written base | target.\n")
	if complete {
		b.WriteString("version: 1\n")
	}
	if el := s.rules(true); el != "" {
		b.WriteString("\nelide:\n" + el)
	}
	if rn := s.rules(false); rn != "" {
		b.WriteString("\nrename:\n" + rn)
	}
	if len(s.Proposals) == 0 {
		b.WriteString("\n# No proposal.\n")
	}
	if len(s.Unpaired) > 0 {
		fmt.Fprintf(&b, "\n# Not paired: %s with at least %.2f%% in one profile only (new or gone code,\n# or renames without enough evidence):\n", names.Plural(len(s.Unpaired), "function"), o.MinShare)
		for _, u := range s.Unpaired {
			what := "gone"
			if u.Side == Target {
				what = "new"
			}
			fmt.Fprintf(&b, "#   %-5s only in %s: %s %.2f%%", what, orNone(s.Label(u.Side)), u.Name, u.Share)
			if o.Root != "" {
				fmt.Fprintf(&b, " (%.2f%% of %s)", u.RootShare, o.Root)
			}
			b.WriteString("\n")
		}
	}
	return []byte(b.String())
}

// rules returns the elide rules (elide) or the rename rules, commented,
// as the items of a list indented by two spaces, in BestFirst order. The
// order within a list changes nothing: no two proposals rewrite the same
// symbol of the same profile.
func (s *Suggestions) rules(elide bool) string {
	var b strings.Builder
	for _, i := range s.BestFirst() {
		if (s.Proposals[i].Kind == Elide) == elide {
			s.writeRule(&b, i)
		}
	}
	return b.String()
}

// were returns "was" or "were" to go with n things.
func were(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}

func orNone(label string) string {
	if label == "" {
		return "(no label)"
	}
	return label
}

// Summary returns the proposal's one-line description, as the comment
// above its rule starts: "rename, score 0.87: 11.8 Sql_cmd_dml::execute
// 21.76% is 10.11 mysql_update 23.68%".
func (s *Suggestions) Summary(i int) string {
	p := s.Proposals[i]
	return fmt.Sprintf("%s, score %.2f: %s", p.Kind, p.Score, s.Describe(i))
}

// Describe returns what proposal i asserts, with the shares:
// "11.8 Sql_cmd_dml::execute 21.76% is 10.11 mysql_update 23.68%".
func (s *Suggestions) Describe(i int) string {
	p := s.Proposals[i]
	me, other := orNone(s.Label(p.Side)), orNone(s.Label(p.Side.other()))
	var names []string
	for j, n := range p.Names {
		names = append(names, fmt.Sprintf("%s %.2f%%", n, p.Shares[j]))
	}
	switch p.Kind {
	case Elide:
		return fmt.Sprintf("%s %s is an extra frame; %s calls its callees directly", me, names[0], other)
	case Split:
		return fmt.Sprintf("%s %s together are %s %s %.2f%%", me, strings.Join(names, " + "), other, p.To, p.ToShare)
	}
	return fmt.Sprintf("%s %s is %s %s %.2f%%", me, names[0], other, p.To, p.ToShare)
}

func (s *Suggestions) writeRule(b *strings.Builder, i int) {
	p := s.Proposals[i]
	fmt.Fprintf(b, "  # #%d %s\n", i+1, s.Summary(i))
	ev := func(what string, es []Evidence) {
		if len(es) == 0 {
			return
		}
		var parts []string
		for j, e := range es {
			if j == evidenceShown {
				parts = append(parts, fmt.Sprintf("+%d more", len(es)-j))
				break
			}
			parts = append(parts, fmt.Sprintf("%s %.2f%% | %.2f%%", e.Name, e.Base, e.Target))
		}
		fmt.Fprintf(b, "  #   %s: %s\n", what, strings.Join(parts, ", "))
	}
	if p.Kind == Elide {
		for j, e := range p.Edges {
			if j == evidenceShown {
				fmt.Fprintf(b, "  #   (+%s)\n", names.Plural(len(p.Edges)-j, "more call"))
				break
			}
			fmt.Fprintf(b, "  #   %s → %s: %.2f%% through it in %s, %.2f%% direct in %s\n",
				e.Caller, e.Callee, e.Via, orNone(s.Label(p.Side)), e.Direct, orNone(s.Label(p.Side.other())))
		}
	} else {
		ev("shared callers", p.Callers)
		ev("shared callees", p.Callees)
		if len(p.Callers) == 0 {
			b.WriteString("  #   no shared caller\n")
		}
		if len(p.Callees) == 0 {
			b.WriteString("  #   no shared callee\n")
		}
		fmt.Fprintf(b, "  - to: %s\n", yamlScalar(p.To))
	}
	from := make([]string, len(p.From))
	for j, f := range p.From {
		from[j] = yamlScalar(f)
	}
	key := "- from"
	if p.Kind != Elide {
		key = "  from"
	}
	fmt.Fprintf(b, "  %s: [%s]\n", key, strings.Join(from, ", "))
	if p.Label != "" {
		fmt.Fprintf(b, "    labels: [%s]\n", yamlScalar(globEscape(p.Label)))
	}
}

// yamlScalar writes name as a YAML scalar: plain when it is a simple
// identifier starting with a letter or '_' (C++ names with "::" and "~"
// included), double-quoted otherwise.
func yamlScalar(name string) string {
	plain := name != ""
	for i, r := range name {
		ok := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' ||
			i > 0 && (r >= '0' && r <= '9' || r == '.' || r == ':' || r == '~')
		if !ok {
			plain = false
			break
		}
	}
	if plain && !strings.HasSuffix(name, ":") && !reservedScalar[strings.ToLower(name)] {
		return name
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range name {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// reservedScalar are plain words YAML reads as something else than a string.
var reservedScalar = map[string]bool{"true": true, "false": true, "yes": true, "no": true,
	"on": true, "off": true, "null": true, "y": true, "n": true, "~": true}

// globEscape escapes the characters globs treat specially, so that a label
// matches itself only.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '*' || r == '?' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
