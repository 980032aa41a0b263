package input

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/symbolmap"
)

// Set is what a command that reports on profiles reads: its profile
// arguments as read and with the symbol map applied, which rule rewrote
// what in each, and a label for each. The slices are parallel to Args.
type Set struct {
	Map  *symbolmap.Map
	Args []string
	// Raw are the profiles as read (Read); Profiles the same with the map
	// applied and their names cleaned (Apply).
	Raw          []*fold.Profile
	Profiles     []*fold.Profile
	Explanations []*symbolmap.Explanation
	// Labels name the profiles (Label).
	Labels []string
}

// ReadSet reads args in order (Read), gives them the labels given
// (Relabel: nil or one per argument) and applies m to each (Apply), whose
// label-limited rules see those labels. ctx is checked before each
// argument.
func ReadSet(ctx context.Context, load LoadFunc, m *symbolmap.Map, args, labels []string, opts fold.ParseOptions) (*Set, error) {
	raw, err := Read(ctx, load, args, opts)
	if err != nil {
		return nil, err
	}
	if err := Relabel(raw, labels); err != nil {
		return nil, err
	}
	s := &Set{Map: m, Args: args, Raw: raw}
	for i, p := range raw {
		mp, expl := Apply(m, p)
		s.Profiles = append(s.Profiles, mp)
		s.Explanations = append(s.Explanations, expl)
		s.Labels = append(s.Labels, Label(mp, args[i]))
	}
	return s, nil
}

// Relabel gives ps[i] the label labels[i], as --label gives them: the
// label label-limited map rules select on and tables show. An empty label
// keeps the profile's own (run.json's, or a pprof file's comment). labels
// is nil or has one entry per profile; any other length is an error. The
// profiles relabelled are replaced by shallow copies with their own
// metadata: the ones given, and their metadata, are left as they are.
func Relabel(ps []*fold.Profile, labels []string) error {
	if labels == nil {
		return nil
	}
	if len(labels) != len(ps) {
		return fmt.Errorf("%s for %s: give one per profile, in the order of the profiles (an empty one keeps a profile's own)",
			names.Plural(len(labels), "label"), names.Plural(len(ps), "profile"))
	}
	for i, l := range labels {
		if l == "" {
			continue
		}
		meta := fold.Meta{}
		if ps[i].Meta != nil {
			meta = *ps[i].Meta
		}
		meta.Label = l
		q := *ps[i]
		q.Meta = &meta
		ps[i] = &q
	}
	return nil
}

// LabelBaseTarget tells a base and a target apart when their labels are
// equal (the same run twice, two files of one name): " (base)" and
// " (target)" are added, as a graph of the two shows them.
func (s *Set) LabelBaseTarget() {
	if len(s.Labels) == 2 && s.Labels[0] == s.Labels[1] {
		s.Labels[0] += " (base)"
		s.Labels[1] += " (target)"
	}
}

// DiffOptions returns o with what the set decides: the map's part
// (MapOptions) and the labels.
func (s *Set) DiffOptions(o diff.Options) diff.Options {
	o = MapOptions(s.Map, o)
	o.Labels = s.Labels
	return o
}

// Apply applies the map to a raw profile, which is left as it is: the
// mapped profile, keeping the raw one's metadata, its names cleaned
// (CleanNames), and which rule rewrote what.
func Apply(m *symbolmap.Map, p *fold.Profile) (*fold.Profile, *symbolmap.Explanation) {
	mp, expl := m.Apply(p)
	if mp.Meta == nil && p.Meta != nil {
		mp.Meta = p.Meta
	}
	return CleanNames(mp), expl
}

// CleanNames replaces invalid UTF-8 in frame names by U+FFFD (names.Clean),
// once, so that every output made from the profile (tables, markdown, CSV,
// JSON, SVG, HTML) shows the same name. It returns p itself when every
// name is valid. Folded and pprof output keep the input's bytes: they are
// written from profiles not cleaned.
func CleanNames(p *fold.Profile) *fold.Profile {
	dirty := false
	for _, s := range p.Stacks {
		for _, f := range s.Frames {
			if !utf8.ValidString(f) {
				dirty = true
				break
			}
		}
	}
	if !dirty {
		return p
	}
	return p.MapFrames(func(_ int, name string) (string, bool) { return names.Clean(name), true })
}

// MapOptions returns o with what the map decides: the thread roots and,
// when the map has subsystems, the subsystem of each stack.
func MapOptions(m *symbolmap.Map, o diff.Options) diff.Options {
	o.IsThreadRoot = m.IsThreadRoot
	if m.HasSubsystems() {
		o.Classify = m.Subsystem
		o.SubsystemNames = m.Subsystems()
	}
	return o
}
