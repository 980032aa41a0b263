package symbolmap

import (
	"sort"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// active are the rules that apply to profiles of one label.
type active struct {
	comm, elide, rename []*rule
}

func (m *Map) active(label string) active {
	pick := func(rs []*rule) []*rule {
		var out []*rule
		for _, r := range rs {
			if r.labels == nil || matchLabel(r.labels, label) {
				out = append(out, r)
			}
		}
		return out
	}
	return active{comm: pick(m.comm), elide: pick(m.elide), rename: pick(m.rename)}
}

// resolved is what the map makes of one distinct name.
type resolved struct {
	name  string
	keep  bool
	rule  string // "" when the name is unchanged
	norm  string // the normalised name, which context conditions look at
	unres bool   // norm is an unresolved frame (IsUnresolvedFrame)
	ctx   bool   // a rule with a context condition matches norm: Stack decides
	by    *rule  // the comm, elide or rename rule that changed it; nil none
	// For the stack-level glibc_cancel pass, of the normalised name:
	rank int8 // cancelRank, or -1 (frame 0, switch off)
	wrap int8 // wrapKind
}

// cancelRule is how --explain names the frames glibc_cancel drops.
const cancelRule = "normalize (glibc_cancel)"

// Resolver maps the frames of the profiles of one label, one frame at a
// time, as Apply does (Dropped gives the stack-level pass); it caches what it made of each distinct name
// (profiles have about 1e5 stacks but a few thousand distinct names). It
// is not safe for concurrent use: make one per goroutine.
type Resolver struct {
	m      *Map
	a      active
	frame0 map[string]resolved
	frames map[string]resolved
	vs     []resolved // one stack's frames, reused
	drop   []bool     // what Dropped returns, reused
	out    []MappedFrame
}

// Resolver returns a Resolver for profiles labelled label: the rules
// limited to other labels are left out once, here.
func (m *Map) Resolver(label string) *Resolver {
	return &Resolver{m: m, a: m.active(label), frame0: map[string]resolved{}, frames: map[string]resolved{}}
}

// Frame returns what the map makes of frame i of a stack (0 is the thread
// name) named name: the mapped name, and keep false when the frame is
// elided. It maps the frame alone: the stack-level glibc_cancel
// normalisation is Dropped's, and rules with a caller or callee condition
// are taken as not holding (Stack applies them).
func (r *Resolver) Frame(i int, name string) (mapped string, keep bool) {
	v := r.resolve(i, name)
	return v.name, v.keep
}

// MappedFrame is what the map makes of one frame of a stack.
type MappedFrame struct {
	Name string // the mapped name ("" when not kept)
	Keep bool   // false: elided, or dropped by glibc_cancel
	Rule string // the rules that changed it, as --explain says them; "" none
}

// Stack maps one whole stack (frames[0] the thread name, leaf last) as
// Apply does: every frame through normalize, comm, elide and rename, the
// rules with a caller or callee condition decided by the frames around it,
// then the stack-level glibc_cancel pass. The slice is reused by the next
// call.
func (r *Resolver) Stack(frames []string) []MappedFrame {
	vs := r.resolveStack(frames)
	drop := r.drops(vs)
	r.out = r.out[:0]
	for i, v := range vs {
		if drop != nil && drop[i] {
			v = resolved{keep: false, rule: cancelRule}
		}
		name := v.name
		if !v.keep {
			name = ""
		}
		r.out = append(r.out, MappedFrame{Name: name, Keep: v.keep, Rule: v.rule})
	}
	return r.out
}

// Dropped reports which frames of one stack (frames[0] the thread name,
// leaf last, as in fold.Stack) the map's stack-level normalisation drops:
// glibc's cancellation frames under a syscall wrapper (the glibc_cancel
// switch of the normalize section). It returns nil when it drops none,
// else a slice as long as frames, true at the frames to leave out
// whatever Frame says of them. The slice is reused by the next call.
func (r *Resolver) Dropped(frames []string) []bool {
	return r.drops(r.resolveStack(frames))
}

// resolveStack resolves every frame of a stack into r.vs, the rules with
// context conditions included.
func (r *Resolver) resolveStack(frames []string) []resolved {
	r.vs = r.vs[:0]
	ctx := false
	for i, name := range frames {
		v := r.resolve(i, name)
		ctx = ctx || v.ctx
		r.vs = append(r.vs, v)
	}
	if ctx {
		for i, v := range r.vs {
			if v.ctx {
				r.vs[i] = r.resolveContext(r.vs, i, frames[i])
			}
		}
	}
	return r.vs
}

// resolveContext maps frame i of a stack whose name some context rule
// matches: the rules in order, each with context conditions checked
// against the stack's normalised frames (vs), the first matching rule
// whose conditions hold winning. Only norm and unres of the other frames
// are read, which this does not change.
func (r *Resolver) resolveContext(vs []resolved, i int, orig string) resolved {
	v := vs[i]
	name := v.norm
	var steps []string
	if name != orig {
		steps = append(steps, "normalize")
	}
	var by *rule
	desc := func(ru *rule, why string) string {
		d := ru.describe(r.m.file)
		if why != "" {
			d += " when " + why
		}
		return d
	}
	for _, ru := range r.a.elide {
		if _, ok := ru.m.match(name); !ok {
			continue
		}
		if why, ok := ru.holds(vs, i); ok {
			v.name, v.keep, v.rule, v.by = "", false, strings.Join(append(steps, desc(ru, why)), " + "), ru
			return v
		}
	}
	for _, ru := range r.a.rename {
		pt, ok := ru.m.match(name)
		if !ok {
			continue
		}
		why, ok := ru.holds(vs, i)
		if !ok {
			continue
		}
		if to := expand(ru, pt, name); to != name {
			name = to
			steps = append(steps, desc(ru, why))
			by = ru
		}
		break
	}
	v.name, v.keep, v.rule, v.by = name, true, strings.Join(steps, " + "), by
	return v
}

// drops runs the stack-level pass on a resolved stack: nil when it drops
// nothing.
func (r *Resolver) drops(vs []resolved) []bool {
	if !r.m.normalize.GlibcCancel {
		return nil
	}
	has := false
	for _, v := range vs {
		if v.rank >= 0 {
			has = true
			break
		}
	}
	if !has {
		return nil
	}
	if cap(r.drop) < len(vs) {
		r.drop = make([]bool, len(vs))
	}
	r.drop = r.drop[:len(vs)]
	clear(r.drop)
	if !cancelDrops(vs, r.drop) {
		return nil
	}
	return r.drop
}

func (r *Resolver) resolve(i int, name string) resolved {
	cache := r.frames
	if i == 0 {
		cache = r.frame0
	}
	if v, ok := cache[name]; ok {
		return v
	}
	var v resolved
	if i == 0 {
		v = r.resolveComm(name)
	} else {
		v = r.resolveFrame(name)
	}
	cache[name] = v
	return v
}

func (r *Resolver) resolveComm(name string) resolved {
	for _, ru := range r.a.comm {
		if pt, ok := ru.m.match(name); ok {
			to := expand(ru, pt, name)
			if to == name {
				break
			}
			return resolved{name: to, keep: true, rule: ru.describe(r.m.file), rank: -1, norm: name, by: ru}
		}
	}
	return resolved{name: name, keep: true, rank: -1, norm: name}
}

func (r *Resolver) resolveFrame(orig string) resolved {
	var steps []string
	name := r.m.normalize.apply(orig)
	if name != orig {
		steps = append(steps, "normalize")
	}
	rank := int8(-1)
	if r.m.normalize.GlibcCancel {
		rank = cancelRank(name)
	}
	wrap := wrapKind(name)
	norm, unres := name, IsUnresolvedFrame(name)
	// Rules with context conditions are skipped here (the result is what
	// the frame becomes when none of their conditions holds) and mark the
	// name for resolveContext.
	ctx := false
	var by *rule
	for _, ru := range r.a.elide {
		if _, ok := ru.m.match(name); ok {
			if ru.hasContext() {
				ctx = true
				continue
			}
			return resolved{name: "", keep: false, rule: strings.Join(append(steps, ru.describe(r.m.file)), " + "), rank: rank, wrap: wrap, norm: norm, unres: unres, ctx: ctx, by: ru}
		}
	}
	for _, ru := range r.a.rename {
		if pt, ok := ru.m.match(name); ok {
			if ru.hasContext() {
				ctx = true
				continue
			}
			if to := expand(ru, pt, name); to != name {
				name = to
				steps = append(steps, ru.describe(r.m.file))
				by = ru
			}
			break
		}
	}
	return resolved{name: name, keep: true, rule: strings.Join(steps, " + "), rank: rank, wrap: wrap, norm: norm, unres: unres, ctx: ctx, by: by}
}

// expand returns the rule's target for name matched by pt: "to" with $1..
// expanded for regular expressions, "to" as written otherwise.
func expand(r *rule, pt *pattern, name string) string {
	if pt.kind != patRegexp || !strings.Contains(r.to, "$") {
		return r.to
	}
	idx := pt.re.FindStringSubmatchIndex(name)
	out := string(pt.re.ExpandString(nil, r.to, name, idx))
	if out == "" {
		return name // an empty canonical name would lose the frame; keep it
	}
	return out
}

// Apply returns a new profile with the map applied (p is not modified):
// every frame as Resolver.Frame maps it, less the frames
// Resolver.Dropped drops (explained as "normalize (glibc_cancel)").
// The profile's label (p.Label()) selects label-limited rules. Stacks that
// become identical are merged and the result is sorted, as
// fold.Profile.Normalize leaves it. The Explanation says which rule turned
// which original symbol into which name, with the total value of the stacks
// where that happened (a stack is counted once per rewrite even when the
// symbol occurs in it several times).
func (m *Map) Apply(p *fold.Profile) (*fold.Profile, *Explanation) {
	r := m.Resolver(p.Label())
	type key struct{ orig, result, rule string }
	vals := map[key]int64{}
	q := *p
	q.Stacks = make([]fold.Stack, 0, len(p.Stacks))
	var seen []key
	for _, s := range p.Stacks {
		fr := make([]string, 0, len(s.Frames))
		seen = seen[:0]
		vs := r.resolveStack(s.Frames)
		drop := r.drops(vs)
		for i, name := range s.Frames {
			v := vs[i]
			if drop != nil && drop[i] {
				v = resolved{keep: false, rule: cancelRule}
			}
			if v.keep {
				fr = append(fr, v.name)
			}
			if v.rule == "" {
				continue
			}
			k := key{name, v.name, v.rule}
			dup := false
			for _, x := range seen {
				if x == k {
					dup = true
					break
				}
			}
			if !dup {
				seen = append(seen, k)
				vals[k] += s.Value
			}
		}
		q.Stacks = append(q.Stacks, fold.Stack{Frames: fr, Value: s.Value})
	}
	q.Normalize()
	ex := &Explanation{Rewrites: make([]Rewrite, 0, len(vals))}
	for k, v := range vals {
		ex.Rewrites = append(ex.Rewrites, Rewrite{Original: k.orig, Result: k.result, Rule: k.rule, Value: v})
	}
	sort.Slice(ex.Rewrites, func(i, j int) bool {
		a, b := ex.Rewrites[i], ex.Rewrites[j]
		if a.Value != b.Value {
			return a.Value > b.Value
		}
		if a.Original != b.Original {
			return a.Original < b.Original
		}
		return a.Rule < b.Rule
	})
	return &q, ex
}

// MapName returns what the map makes of one frame of a profile labelled
// label: i is the frame index (0 is the thread name). keep is false when
// the frame is elided. It makes a new Resolver at each call: to map many
// frames, use one Resolver.
func (m *Map) MapName(label string, i int, name string) (mapped string, keep bool) {
	return m.Resolver(label).Frame(i, name)
}
