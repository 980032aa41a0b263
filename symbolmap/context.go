package symbolmap

import (
	"fmt"
	"strings"
)

// context is the caller or callee condition of an elide or rename rule.
// It is looked for among the named frames of the same stack, on the
// normalised names (before comm, elide and rename): see Resolver.Stack.
type context struct {
	callee    bool // below the frame (towards the leaf); false: above it
	m         matcher
	depth     int // how many named frames are looked at; 0: all of them
	line, col int
}

func (c *context) side() string {
	if c.callee {
		return "callee"
	}
	return "caller"
}

// String is the condition as --explain and map check show it:
// `callee glob "Sql_cmd_update::*" (depth 2)`.
func (c *context) String() string {
	pats := make([]string, len(c.m.pats))
	for i, p := range c.m.pats {
		pats[i] = p.String()
	}
	d := "any depth"
	if c.depth > 0 {
		d = fmt.Sprintf("depth %d", c.depth)
	}
	return fmt.Sprintf("%s %s (%s)", c.side(), strings.Join(pats, ", "), d)
}

// IsUnresolvedFrame reports whether a frame is one the profiler could not
// name, which context conditions look through: "[unknown]", an object's
// name in brackets ("[mariadbd]", "[libc.so.6]", as stackcollapse prints
// them) or a bare hexadecimal address ("0x7f3a0c2b1e40").
func IsUnresolvedFrame(name string) bool {
	if len(name) >= 2 && name[0] == '[' && name[len(name)-1] == ']' {
		return true
	}
	if len(name) < 3 || name[0] != '0' || name[1] != 'x' && name[1] != 'X' {
		return false
	}
	for i := 2; i < len(name); i++ {
		if !isHex(name[i]) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// find looks for the condition around frame i of a resolved stack (vs[0]
// the thread name, leaf last) and returns the name that satisfied it.
// Frame 0 is never a caller; unresolved frames are skipped and do not
// count towards the depth.
func (c *context) find(vs []resolved, i int) (string, bool) {
	step := -1
	if c.callee {
		step = 1
	}
	seen := 0
	for j := i + step; j >= 1 && j < len(vs); j += step {
		if vs[j].unres {
			continue
		}
		if _, ok := c.m.match(vs[j].norm); ok {
			return vs[j].norm, true
		}
		seen++
		if c.depth > 0 && seen == c.depth {
			break
		}
	}
	return "", false
}

// holds checks both conditions of r around frame i and returns how it
// held, for --explain: `callee "Sql_cmd_update::execute_inner" matches
// glob "Sql_cmd_update::*" (depth 2)`. A rule without conditions holds
// with "".
func (r *rule) holds(vs []resolved, i int) (string, bool) {
	var why []string
	for _, c := range []*context{r.caller, r.callee} {
		if c == nil {
			continue
		}
		name, ok := c.find(vs, i)
		if !ok {
			return "", false
		}
		pt, _ := c.m.match(name)
		d := "any depth"
		if c.depth > 0 {
			d = fmt.Sprintf("depth %d", c.depth)
		}
		why = append(why, fmt.Sprintf("%s %q matches %s (%s)", c.side(), name, pt, d))
	}
	return strings.Join(why, " and "), true
}
