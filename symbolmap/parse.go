package symbolmap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/internal/textdist"
	"github.com/flamediff/flamediff/internal/yamlpos"
)

// FormatVersion is the map format this package reads (the top-level
// "version" key).
const FormatVersion = 1

// rule is one comm, elide or rename rule.
type rule struct {
	kind      string // "comm", "elide", "rename"
	to        string // comm and rename; may hold $1.. for re patterns
	m         matcher
	labels    []*pattern // nil: every profile
	caller    *context   // nil: any caller
	callee    *context   // nil: any callees
	line, col int        // position of the rule (its first key)
	toLine    int
	toCol     int
}

// describe names the rule in explanations and diagnostics.
func (r *rule) describe(file string) string {
	if r.kind == "elide" {
		return fmt.Sprintf("elide (%s:%d)", file, r.line)
	}
	return fmt.Sprintf("%s -> %q (%s:%d)", r.kind, r.to, file, r.line)
}

// hasContext reports whether the rule looks at the frames around the one
// it matches.
func (r *rule) hasContext() bool { return r.caller != nil || r.callee != nil }

// contextText is the rule's caller and callee conditions, "" when none.
func (r *rule) contextText() string {
	var s []string
	for _, c := range []*context{r.caller, r.callee} {
		if c != nil {
			s = append(s, c.String())
		}
	}
	return strings.Join(s, " and ")
}

func (r *rule) labelsText() string {
	s := make([]string, len(r.labels))
	for i, l := range r.labels {
		s[i] = l.text
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// subsystem is one entry of the subsystems list.
type subsystem struct {
	name      string
	m         matcher
	line, col int
}

// parser collects diagnostics while walking the YAML tree.
type parser struct {
	file  string
	diags []Diagnostic
	m     *Map
}

func (p *parser) errorf(n *yaml.Node, hint, format string, a ...any) {
	p.add(Error, n.Line, n.Column, hint, format, a...)
}

func (p *parser) warnf(n *yaml.Node, hint, format string, a ...any) {
	p.add(Warning, n.Line, n.Column, hint, format, a...)
}

func (p *parser) add(sev Severity, line, col int, hint, format string, a ...any) {
	p.diags = append(p.diags, Diagnostic{Severity: sev, File: p.file, Line: line, Column: col,
		Msg: fmt.Sprintf(format, a...), Hint: hint})
}

func parse(data []byte, name string) (*Map, []Diagnostic, error) {
	p := &parser{file: name, m: newMap(name)}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	err := dec.Decode(&doc)
	switch {
	case errors.Is(err, io.EOF):
		p.add(Error, 1, 1, "a map starts with \"version: 1\"; see examples/symbolmaps/", "empty symbol map")
	case err != nil:
		// yaml.v3 reports most syntax errors at the line before the
		// construct they break; Locate finds the line of the problem.
		pr := yamlpos.Locate(data, err)
		hint := pr.Fix
		if hint == "" {
			hint = "check indentation and quoting; patterns with ':', '*', '[' or '{' need quotes"
		}
		p.add(Error, pr.Line, pr.Column, hint, "YAML syntax: %s", pr.Msg)
	default:
		var more yaml.Node
		if err := dec.Decode(&more); err == nil {
			p.errorf(&more, "remove the \"---\" separator and everything after it", "a map file holds one YAML document; found another")
		}
		p.top(&doc)
	}
	sort.SliceStable(p.diags, func(i, j int) bool {
		a, b := p.diags[i], p.diags[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	nerr := 0
	var first *Diagnostic
	for i := range p.diags {
		if p.diags[i].Severity == Error {
			if first == nil {
				first = &p.diags[i]
			}
			nerr++
		}
	}
	if nerr > 0 {
		return nil, p.diags, fmt.Errorf("symbol map %s: %w: %s, first at line %d: %s",
			name, ErrInvalid, names.Plural(nerr, "error"), first.Line, first.Msg)
	}
	return p.m, p.diags, nil
}

var topKeys = []string{"version", "normalize", "thread_roots", "comm", "elide", "rename", "subsystems"}

func (p *parser) top(doc *yaml.Node) {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			p.add(Error, 1, 1, "a map starts with \"version: 1\"", "empty symbol map")
			return
		}
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		p.errorf(root, "a map starts with \"version: 1\"", "empty symbol map")
		return
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "the top level is a mapping: version, normalize, thread_roots, comm, elide, rename, subsystems", "expected a mapping of sections, found %s", kindName(root))
		return
	}
	keys := p.mapping(root, topKeys, "top level")
	if v, ok := keys["version"]; ok {
		n, err := strconv.Atoi(v.Value)
		switch {
		case v.Kind != yaml.ScalarNode || err != nil:
			p.errorf(v, "write \"version: 1\"", "version must be an integer, found %s", kindName(v))
		case n > FormatVersion:
			p.errorf(v, "upgrade flamediff, or rewrite the map for version 1", "version %d is newer than this flamediff understands (%d)", n, FormatVersion)
		case n < 1:
			p.errorf(v, "write \"version: 1\"", "version %d does not exist", n)
		}
	} else {
		p.add(Warning, root.Line, root.Column, "add \"version: 1\" as the first line", "no version key; reading the map as version %d", FormatVersion)
	}
	if n, ok := keys["normalize"]; ok {
		p.normalize(n)
	}
	if n, ok := keys["thread_roots"]; ok {
		p.threadRoots(n)
	}
	if n, ok := keys["comm"]; ok {
		p.m.comm = p.rules(n, "comm")
	}
	if n, ok := keys["elide"]; ok {
		p.m.elide = p.rules(n, "elide")
	}
	if n, ok := keys["rename"]; ok {
		p.m.rename = p.rules(n, "rename")
	}
	if n, ok := keys["subsystems"]; ok {
		p.subsystems(n)
	}
	p.crossChecks()
}

// mapping checks that n's keys are known and unique and returns their values.
func (p *parser) mapping(n *yaml.Node, known []string, where string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, "keys are plain words such as "+quoteList(known), "%s: key must be a plain word, found %s", where, kindName(k))
			continue
		}
		if prev, dup := first[k.Value]; dup {
			p.errorf(k, fmt.Sprintf("merge it with the one on line %d", prev.Line), "%s: key %q repeated", where, k.Value)
			continue
		}
		first[k.Value] = k
		if !contains(known, k.Value) {
			hint := "known keys: " + quoteList(known)
			if s := closest(k.Value, known); s != "" {
				hint = fmt.Sprintf("did you mean %q?", s)
			}
			p.errorf(k, hint, "%s: unknown key %q", where, k.Value)
			continue
		}
		out[k.Value] = v
	}
	return out
}

var normalizeKeys = []string{"symbol_versions", "clone_suffixes", "glibc_aliases", "glibc_cancel"}

func (p *parser) normalize(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "write e.g. \"normalize: {clone_suffixes: false}\"", "normalize must be a mapping of switches, found %s", kindName(n))
		return
	}
	keys := p.mapping(n, normalizeKeys, "normalize")
	for _, k := range normalizeKeys {
		v, ok := keys[k]
		if !ok {
			continue
		}
		var b bool
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
			p.errorf(v, "write true or false", "normalize.%s must be true or false, found %s", k, kindName(v))
			continue
		}
		switch k {
		case "symbol_versions":
			p.m.normalize.SymbolVersions = b
		case "clone_suffixes":
			p.m.normalize.CloneSuffixes = b
		case "glibc_aliases":
			p.m.normalize.GlibcAliases = b
		case "glibc_cancel":
			p.m.normalize.GlibcCancel = b
		}
	}
}

var threadRootKeys = []string{"replace_defaults", "from", "glob", "re"}

func (p *parser) threadRoots(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, "write e.g. \"thread_roots: {from: [handle_one_connection]}\"", "thread_roots must be a mapping (replace_defaults, from, glob, re), found %s", kindName(n))
		return
	}
	keys := p.mapping(n, threadRootKeys, "thread_roots")
	if v, ok := keys["replace_defaults"]; ok {
		var b bool
		if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || v.Decode(&b) != nil {
			p.errorf(v, "write true or false", "thread_roots.replace_defaults must be true or false, found %s", kindName(v))
		}
		p.m.rootsRepl = b
	}
	p.patterns(keys, &p.m.roots, "thread_roots")
	if p.m.rootsRepl && p.m.roots.count() == 0 {
		p.errorf(n, "list the roots in from/glob/re, or drop replace_defaults", "thread_roots: replace_defaults is true but no roots are given: no stack would be complete")
	}
}

// patterns reads the from, glob and re lists of a mapping into m.
func (p *parser) patterns(keys map[string]*yaml.Node, m *matcher, where string) {
	for _, kind := range []patKind{patExact, patGlob, patRegexp} {
		v, ok := keys[kind.key()]
		if !ok {
			continue
		}
		for _, s := range p.stringList(v, where+"."+kind.key()) {
			pat := &pattern{kind: kind, text: s.Value, line: s.Line, col: s.Column}
			var err error
			switch kind {
			case patGlob:
				pat.re, err = compileGlob(s.Value)
				if err != nil {
					p.errorf(s, "escape a literal backslash as \\\\", "%s: bad glob %q: %v", where, s.Value, err)
					continue
				}
				if !strings.ContainsAny(s.Value, "*?\\") {
					p.warnf(s, "move it to from:", "%s: glob %q has no wildcard; it matches one exact name", where, s.Value)
				}
			case patRegexp:
				pat.re, err = compileRegexp(s.Value)
				if err != nil {
					p.errorf(s, "Go RE2 syntax: https://pkg.go.dev/regexp/syntax; quote the pattern in single quotes", "%s: bad regular expression %q: %s", where, s.Value, reErr(err))
					continue
				}
			}
			m.add(pat)
		}
	}
}

func reErr(err error) string {
	s := err.Error()
	return strings.TrimPrefix(s, "error parsing regexp: ")
}

// stringList reads a YAML sequence of non-empty strings.
func (p *parser) stringList(n *yaml.Node, where string) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, fmt.Sprintf("write a list, e.g. %s: [name] or one item per line starting with \"- \"", lastPart(where)), "%s must be a list, found %s", where, kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.warnf(n, "remove the key or add entries", "%s is an empty list", where)
		return nil
	}
	var out []*yaml.Node
	seen := map[string]*yaml.Node{}
	for _, s := range n.Content {
		if s.Kind != yaml.ScalarNode || s.Tag == "!!null" {
			p.errorf(s, "quote the name", "%s: entries must be strings, found %s", where, kindName(s))
			continue
		}
		if s.Value == "" {
			p.errorf(s, "remove the entry", "%s: empty name", where)
			continue
		}
		if strings.TrimSpace(s.Value) != s.Value {
			p.warnf(s, "symbol names have no leading or trailing spaces; remove them", "%s: %q has leading or trailing spaces", where, s.Value)
		}
		if prev, dup := seen[s.Value]; dup {
			p.warnf(s, fmt.Sprintf("remove it; first on line %d", prev.Line), "%s: %q listed twice", where, s.Value)
			continue
		}
		seen[s.Value] = s
		out = append(out, s)
	}
	return out
}

var ruleKeys = map[string][]string{
	"comm":   {"to", "from", "glob", "re", "labels"},
	"elide":  {"from", "glob", "re", "labels", "caller", "callee"},
	"rename": {"to", "from", "glob", "re", "labels", "caller", "callee"},
}

var contextKeys = []string{"from", "glob", "re", "depth"}

// context reads a caller or callee condition: a mapping of from, glob, re
// and depth (a positive integer or "any"; 1 when absent).
func (p *parser) context(n *yaml.Node, where string) (*context, bool) {
	if n.Kind != yaml.MappingNode {
		p.errorf(n, fmt.Sprintf("write e.g. %s: {glob: [\"Sql_cmd_update::*\"], depth: 2}", lastPart(where)), "%s must be a mapping (from, glob, re, depth), found %s", where, kindName(n))
		return nil, false
	}
	keys := p.mapping(n, contextKeys, where)
	c := &context{depth: 1, line: n.Line, col: n.Column}
	ok := true
	if d, has := keys["depth"]; has {
		v, err := strconv.Atoi(d.Value)
		switch {
		case d.Kind == yaml.ScalarNode && d.Value == "any":
			c.depth = 0
		case d.Kind != yaml.ScalarNode || err != nil || v < 1:
			p.errorf(d, "write a number of named frames (1: the nearest) or any", "%s.depth must be a positive integer or \"any\", found %s", where, kindName(d))
			ok = false
		default:
			c.depth = v
		}
	}
	before := len(p.diags)
	p.patterns(keys, &c.m, where)
	for _, d := range p.diags[before:] {
		ok = ok && d.Severity != Error
	}
	if _, hasAny := firstKey(keys, "from", "glob", "re"); !hasAny {
		p.errorf(n, "give the names to look for in from:, glob: or re:", "%s has no from, glob or re: it would match no frame", where)
		ok = false
	}
	return c, ok
}

var dollarRef = regexp.MustCompile(`\$(\{[^}]*\}|[A-Za-z0-9_]+)`)

func (p *parser) rules(n *yaml.Node, kind string) []*rule {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, fmt.Sprintf("write a list of rules, each starting with \"- \": %s: [{...}]", kind), "%s must be a list of rules, found %s", kind, kindName(n))
		return nil
	}
	if len(n.Content) == 0 {
		p.warnf(n, "remove the section or add rules", "%s is an empty list", kind)
		return nil
	}
	var out []*rule
	for i, rn := range n.Content {
		where := fmt.Sprintf("%s[%d]", kind, i)
		if rn.Kind != yaml.MappingNode {
			p.errorf(rn, "a rule is a mapping: - {to: NAME, from: [...]}", "%s must be a mapping, found %s", where, kindName(rn))
			continue
		}
		keys := p.mapping(rn, ruleKeys[kind], where)
		r := &rule{kind: kind, line: rn.Line, col: rn.Column}
		bad := false
		if kind != "elide" {
			t, ok := keys["to"]
			switch {
			case !ok:
				p.errorf(rn, "add \"to: CANONICAL_NAME\"", "%s has no \"to\"", where)
				bad = true
			case t.Kind != yaml.ScalarNode || t.Value == "":
				p.errorf(t, "write the canonical name, e.g. to: mysql_update", "%s: \"to\" must be a non-empty name", where)
				bad = true
			default:
				r.to, r.toLine, r.toCol = t.Value, t.Line, t.Column
			}
		}
		before := len(p.diags)
		p.patterns(keys, &r.m, where)
		patErrs := false
		for _, d := range p.diags[before:] {
			patErrs = patErrs || d.Severity == Error
		}
		if _, hasAny := firstKey(keys, "from", "glob", "re"); !hasAny {
			p.errorf(rn, "give the names to match in from:, glob: or re:", "%s matches nothing: it has no from, glob or re", where)
			bad = true
		}
		if l, ok := keys["labels"]; ok {
			var ls []*yaml.Node
			if l.Kind == yaml.SequenceNode && len(l.Content) == 0 {
				// An empty label list would make the rule apply to no
				// profile, which is never meant.
				p.errorf(l, "omit labels to apply the rule to every profile", "%s.labels is empty: the rule would apply to no profile", where)
				bad = true
			} else {
				ls = p.stringList(l, where+".labels")
			}
			for _, s := range ls {
				re, err := compileGlob(s.Value)
				if err != nil {
					p.errorf(s, "labels are globs such as \"11.*\"", "%s.labels: bad glob %q: %v", where, s.Value, err)
					continue
				}
				r.labels = append(r.labels, &pattern{kind: patGlob, text: s.Value, re: re, line: s.Line, col: s.Column})
			}
		}
		for _, side := range []string{"caller", "callee"} {
			cn, has := keys[side]
			if !has {
				continue
			}
			c, ok := p.context(cn, where+"."+side)
			if !ok {
				bad = true
				continue
			}
			c.callee = side == "callee"
			if c.callee {
				r.callee = c
			} else {
				r.caller = c
			}
		}
		if r.to != "" && !patErrs {
			p.checkRefs(r, keys["to"], where)
		}
		if !bad {
			out = append(out, r)
		}
	}
	return out
}

// checkRefs checks $1, ${name} references in "to" against the rule's
// regular expressions: only re patterns have groups, and each group
// referenced must exist in every re pattern of the rule.
func (p *parser) checkRefs(r *rule, to *yaml.Node, where string) {
	refs := dollarRef.FindAllStringSubmatch(r.to, -1)
	if len(refs) == 0 {
		return
	}
	var res []*pattern
	other := false
	for _, pt := range r.m.pats {
		if pt.kind == patRegexp {
			res = append(res, pt)
		} else {
			other = true
		}
	}
	if len(res) == 0 || other {
		p.errorf(to, "put patterns with groups in their own rule with only re:, or write $$ for a literal $", "%s: \"to\" refers to %s but only re patterns have groups, and this rule also has from/glob entries or no re", where, refs[0][0])
		return
	}
	for _, pt := range res {
		for _, ref := range refs {
			g := strings.Trim(ref[1], "{}")
			if n, err := strconv.Atoi(g); err == nil {
				if n > pt.re.NumSubexp() {
					p.errorf(to, fmt.Sprintf("the pattern on line %d has %s", pt.line, names.Plural(pt.re.NumSubexp(), "group")), "%s: \"to\" refers to $%d but re %q has no group %d", where, n, pt.text, n)
				}
			} else if pt.re.SubexpIndex(g) < 0 {
				p.errorf(to, "name a group with (?P<name>...)", "%s: \"to\" refers to ${%s} but re %q has no group of that name", where, g, pt.text)
			}
		}
	}
}

var subsystemKeys = []string{"name", "from", "glob", "re"}

func (p *parser) subsystems(n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		p.errorf(n, "write a list: subsystems: [{name: commit, from: [trans_commit_stmt]}]", "subsystems must be a list, found %s", kindName(n))
		return
	}
	if len(n.Content) == 0 {
		p.warnf(n, "remove the section or add subsystems", "subsystems is an empty list")
		return
	}
	seen := map[string]*subsystem{}
	for i, sn := range n.Content {
		where := fmt.Sprintf("subsystems[%d]", i)
		if sn.Kind != yaml.MappingNode {
			p.errorf(sn, "a subsystem is a mapping: - {name: commit, from: [trans_commit_stmt]}", "%s must be a mapping, found %s", where, kindName(sn))
			continue
		}
		keys := p.mapping(sn, subsystemKeys, where)
		s := &subsystem{line: sn.Line, col: sn.Column}
		nm, ok := keys["name"]
		switch {
		case !ok:
			p.errorf(sn, "add \"name: LABEL\"", "%s has no name", where)
			continue
		case nm.Kind != yaml.ScalarNode || strings.TrimSpace(nm.Value) == "":
			p.errorf(nm, "write a short label such as commit", "%s: name must be a non-empty word", where)
			continue
		case strings.EqualFold(nm.Value, OtherSubsystem):
			p.errorf(nm, "\"other\" is where unmatched stacks go; choose another name", "%s: subsystem name %q is reserved", where, nm.Value)
			continue
		}
		s.name = nm.Value
		where = fmt.Sprintf("subsystem %q", s.name)
		if prev, dup := seen[s.name]; dup {
			p.errorf(nm, fmt.Sprintf("merge its patterns into the one on line %d", prev.line), "%s defined twice", where)
			continue
		}
		p.patterns(keys, &s.m, where)
		if _, hasAny := firstKey(keys, "from", "glob", "re"); !hasAny {
			p.errorf(sn, "give its root functions in from:, glob: or re:", "%s has no from, glob or re: no stack would belong to it", where)
			continue
		}
		seen[s.name] = s
		p.m.subsys = append(p.m.subsys, s)
	}
}

// crossChecks finds rules that can never fire because of earlier ones.
func (p *parser) crossChecks() {
	// An exact name elided (without labels) never reaches rename.
	elided := map[string]*pattern{}
	for _, r := range p.m.elide {
		if r.labels != nil || r.hasContext() {
			continue
		}
		for _, pt := range r.m.pats {
			if pt.kind == patExact {
				elided[pt.text] = pt
			}
		}
	}
	claimed := map[string]*pattern{}
	type key struct{ to, labels string }
	targets := map[key]*rule{}
	for _, r := range p.m.rename {
		for _, pt := range r.m.pats {
			if pt.kind != patExact {
				continue
			}
			if e, ok := elided[pt.text]; ok {
				p.add(Warning, pt.line, pt.col, fmt.Sprintf("elide runs before rename; remove one of them (elided on line %d)", e.line), "rename: %q is elided, so this rename never applies", pt.text)
			}
			if r.labels == nil && !r.hasContext() {
				if prev, ok := claimed[pt.text]; ok {
					p.add(Warning, pt.line, pt.col, fmt.Sprintf("the first matching rule wins; remove it here or there (line %d)", prev.line), "rename: %q is already renamed by an earlier rule", pt.text)
				} else {
					claimed[pt.text] = pt
				}
			}
		}
		k := key{r.to, r.labelsText() + r.contextText()}
		if strings.Contains(r.to, "$") {
			continue
		}
		if prev, ok := targets[k]; ok {
			p.add(Warning, r.toLine, r.toCol, fmt.Sprintf("merge its patterns into the rule on line %d", prev.line), "rename: canonical name %q is already the target of the rule on line %d with the same labels", r.to, prev.line)
		} else {
			targets[k] = r
		}
	}
}

func firstKey(keys map[string]*yaml.Node, names ...string) (string, bool) {
	for _, n := range names {
		if _, ok := keys[n]; ok {
			return n, true
		}
	}
	return "", false
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func quoteList(list []string) string {
	return strings.Join(list, ", ")
}

func lastPart(where string) string {
	if i := strings.LastIndexByte(where, '.'); i >= 0 {
		return where[i+1:]
	}
	return where
}

// closest returns the known word nearest to s when it is a plausible typo
// (at most 2 edits away).
func closest(s string, known []string) string {
	return textdist.Closest(s, known, 2)
}
