package symtab

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// Mapping is one line of /proc/PID/maps.
type Mapping struct {
	Start, End uint64
	Offset     uint64 // file offset of Start
	Perms      string // "r-xp"
	Dev        string // "fd:01"
	Inode      uint64
	// Path is the file, a pseudo name such as "[vdso]", "[heap]",
	// "[anon:name]", or "" for anonymous memory; without " (deleted)".
	Path string
	// Deleted is set when the kernel marked the file " (deleted)".
	Deleted bool
}

const deletedSuffix = " (deleted)"

// String formats m as a /proc/PID/maps line (single spaces, no padding);
// ParseMaps reads it back to m.
func (m Mapping) String() string {
	s := fmt.Sprintf("%x-%x %s %08x %s %d", m.Start, m.End, m.Perms, m.Offset, m.Dev, m.Inode)
	if m.Path != "" || m.Deleted {
		s += " " + m.Path
		if m.Deleted {
			s += deletedSuffix
		}
	}
	return s
}

// Contains reports whether addr is in [Start, End).
func (m Mapping) Contains(addr uint64) bool { return addr >= m.Start && addr < m.End }

// Exec reports whether the mapping is executable.
func (m Mapping) Exec() bool { return len(m.Perms) >= 3 && m.Perms[2] == 'x' }

// DSO is the name perf gives the mapping's object: the path (with
// " (deleted)" when deleted), or "//anon" for anonymous memory.
func (m Mapping) DSO() string {
	switch {
	case m.Deleted:
		return m.Path + deletedSuffix
	case m.Path == "":
		return "//anon"
	}
	return m.Path
}

// ParseMaps parses the text of /proc/PID/maps. Paths may contain spaces;
// " (deleted)" is stripped into Deleted; anonymous mappings have Path "".
// Blank lines are ignored. An error names the first bad line and wraps
// ErrMalformed.
func ParseMaps(data []byte) ([]Mapping, error) {
	var out []Mapping
	n := 0
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		n++
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		m, err := parseMapsLine(string(line))
		if err != nil {
			return nil, fmt.Errorf("maps line %d %q: %w", n, line, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// nextField returns the first space-separated field of s and the rest
// after the single space that ends it.
func nextField(s string) (field, rest string, ok bool) {
	i := strings.IndexByte(s, ' ')
	if i <= 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

func parseMapsLine(s string) (Mapping, error) {
	var m Mapping
	bad := func(what string) (Mapping, error) {
		return Mapping{}, fmt.Errorf("%w: bad %s", ErrMalformed, what)
	}
	s = strings.TrimLeft(s, " \t")
	rng, s, ok := nextField(s)
	if !ok {
		return bad("address range")
	}
	lo, hi, ok := strings.Cut(rng, "-")
	if !ok {
		return bad("address range")
	}
	var err error
	if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
		return bad("start address")
	}
	if m.End, err = strconv.ParseUint(hi, 16, 64); err != nil || m.End < m.Start {
		return bad("end address")
	}
	if m.Perms, s, ok = nextField(s); !ok || len(m.Perms) != 4 {
		return bad("permissions")
	}
	off, s, ok := nextField(s)
	if !ok {
		return bad("offset")
	}
	if m.Offset, err = strconv.ParseUint(off, 16, 64); err != nil {
		return bad("offset")
	}
	if m.Dev, s, ok = nextField(s); !ok || !validDev(m.Dev) {
		return bad("device")
	}
	ino, path, ok := nextField(s)
	if !ok { // no path at all: "... 00:00 0"
		ino, path = s, ""
	}
	if m.Inode, err = strconv.ParseUint(ino, 10, 64); err != nil {
		return bad("inode")
	}
	path = strings.TrimLeft(path, " \t")
	if strings.HasSuffix(path, deletedSuffix) {
		m.Deleted = true
		path = path[:len(path)-len(deletedSuffix)]
	}
	m.Path = path
	return m, nil
}

// validDev accepts "major:minor" in hex.
func validDev(s string) bool {
	a, b, ok := strings.Cut(s, ":")
	if !ok || a == "" || b == "" {
		return false
	}
	for _, c := range a + b {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}
