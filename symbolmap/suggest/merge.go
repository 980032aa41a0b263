package suggest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/flamediff/flamediff/symbolmap"
)

// MergeYAML returns the map src (the text of a map file; empty for none)
// with the proposals' rules added: the elide rules at the end of its elide
// list, the rename rules at the front of its rename list, so that they win
// over the map's own rules for the same symbols (the first matching rule
// wins, and an original symbol the map renamed is named in From). The
// sections are created when missing. The map is re-encoded, comments
// kept, with two-space indentation; name is used in errors. The result is
// parsed again: an error wrapping symbolmap.ErrInvalid means the merged
// map is not valid (src was not, or a rule conflicts), and nothing should
// be written.
func (s *Suggestions) MergeYAML(src []byte, name string) ([]byte, error) {
	if len(bytes.TrimSpace(src)) == 0 {
		out := s.YAML(true)
		return out, checkMerged(out, name)
	}
	if len(s.Proposals) == 0 {
		return src, checkMerged(src, name)
	}
	// Insert the rules as text where the map's own block lists are, so
	// that the rest of the file stays as written; re-encode otherwise.
	if out, ok := mergeText(src, s.rules(true), s.rules(false)); ok && checkMerged(out, name) == nil {
		return out, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, fmt.Errorf("symbol map %s: %w: %w", name, symbolmap.ErrInvalid, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("symbol map %s: %w: the top level is not a mapping", name, symbolmap.ErrInvalid)
	}
	var frag yaml.Node
	if err := yaml.Unmarshal(s.YAML(false), &frag); err != nil {
		return nil, fmt.Errorf("suggest: rules do not parse: %w", err) // a bug
	}
	root := doc.Content[0]
	if len(frag.Content) == 1 && frag.Content[0].Kind == yaml.MappingNode {
		fm := frag.Content[0]
		for i := 0; i+1 < len(fm.Content); i += 2 {
			key, items := fm.Content[i].Value, fm.Content[i+1]
			if items.Kind != yaml.SequenceNode {
				continue
			}
			mergeSection(root, fm.Content[i], items, key == "rename")
		}
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("symbol map %s: %w", name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("symbol map %s: %w", name, err)
	}
	out := b.Bytes()
	return out, checkMerged(out, name)
}

// mergeText inserts the elide items at the end of src's block-style elide
// list and the rename items at the front of its rename list, adding the
// sections at the end when missing. ok is false when a section is written
// in a form it does not handle (flow style, a scalar).
func mergeText(src []byte, elide, rename string) ([]byte, bool) {
	lines := strings.SplitAfter(string(src), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n := len(lines); n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += "\n"
	}
	for _, sec := range []struct {
		key, items string
		front      bool
	}{{"elide", elide, false}, {"rename", rename, true}} {
		if sec.items == "" {
			continue
		}
		k := -1
		for i, l := range lines {
			if rest, ok := strings.CutPrefix(l, sec.key+":"); ok {
				if t := strings.TrimSpace(rest); t != "" && !strings.HasPrefix(t, "#") {
					return nil, false // flow style or a scalar
				}
				k = i
				break
			}
		}
		if k < 0 {
			lines = append(lines, "\n", sec.key+":\n", sec.items)
			continue
		}
		end := len(lines) // the next top-level key
		for i := k + 1; i < len(lines); i++ {
			if c := lines[i][0]; c != ' ' && c != '\t' && c != '#' && c != '-' && c != '\n' && c != '\r' {
				end = i
				break
			}
		}
		indent := "  "
		for _, l := range lines[k+1 : end] {
			if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "- ") {
				indent = l[:len(l)-len(t)]
				break
			}
		}
		items := sec.items
		if indent != "  " {
			var b strings.Builder
			for _, l := range strings.SplitAfter(items, "\n") {
				b.WriteString(indent + strings.TrimPrefix(l, "  "))
			}
			items = strings.TrimSuffix(b.String(), indent)
		}
		at := k + 1
		if !sec.front {
			// After the section's last item line, before the blank lines
			// and comments that lead to the next key.
			at = k + 1
			for i := k + 1; i < end; i++ {
				if c := lines[i][0]; c == ' ' || c == '\t' || c == '-' {
					if strings.TrimSpace(lines[i]) != "" {
						at = i + 1
					}
				}
			}
		}
		lines = append(lines[:at], append([]string{items}, lines[at:]...)...)
	}
	return []byte(strings.Join(lines, "")), true
}

// mergeSection adds items to the list under key in root (front or back),
// or adds the key with the items when root lacks it or holds no list there.
func mergeSection(root, key, items *yaml.Node, front bool) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != key.Value {
			continue
		}
		list := root.Content[i+1]
		if list.Kind != yaml.SequenceNode {
			root.Content[i+1] = items
			return
		}
		list.Style &^= yaml.FlowStyle // comments need block style
		if front {
			list.Content = append(append([]*yaml.Node(nil), items.Content...), list.Content...)
		} else {
			list.Content = append(list.Content, items.Content...)
		}
		return
	}
	root.Content = append(root.Content, key, items)
}

func checkMerged(out []byte, name string) error {
	if _, _, err := symbolmap.Parse(bytes.NewReader(out), name); err != nil {
		if errors.Is(err, symbolmap.ErrInvalid) {
			return err
		}
		return fmt.Errorf("symbol map %s: %w", name, err)
	}
	return nil
}
