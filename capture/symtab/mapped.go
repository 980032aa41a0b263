package symtab

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Mapped is the object mapped at an address, as an unwinder needs it: the
// name perf gives it, what identifies its file, and the load bias that
// turns a runtime address into the ELF file's virtual address (the
// address its .eh_frame speaks of).
type Mapped struct {
	// DSO is the object as perf names it (Mapping.DSO, without
	// " (deleted)").
	DSO string
	// Key identifies the file (device and inode, or the pseudo path of
	// [vdso]): two mappings with one Key map one file.
	Key string
	// Bias is the runtime address minus the ELF virtual address.
	Bias uint64
	// BuildID is the file's GNU build id in hex, "" when it has none.
	BuildID string
	// Mapping is the mapping the address is in.
	Mapping Mapping
}

// Mapped returns the object mapped at the user address addr: false for an
// address outside every mapping, in anonymous memory, or in a file whose
// ELF headers cannot be read.
func (p *Process) Mapped(addr uint64) (Mapped, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	m, ok := p.findMapping(addr)
	if !ok {
		return Mapped{}, false
	}
	obj := p.object(m)
	if obj == nil {
		return Mapped{}, false
	}
	off := addr - m.Start + m.Offset
	vaddr, ok := obj.OffsetToVaddr(off)
	if !ok {
		return Mapped{}, false
	}
	e := p.objs[keyOf(m)] // object made it
	if e.key == "" {
		k := keyOf(m)
		e.key = fmt.Sprintf("%s:%d:%s", k.dev, k.inode, k.path)
	}
	return Mapped{
		DSO:     m.Path,
		Key:     e.key,
		Bias:    addr - vaddr,
		BuildID: obj.BuildID,
		Mapping: m,
	}, true
}

// Open opens the ELF file of mp's mapping again (through
// procRoot/PID/map_files, as NewProcess does), for reading its unwind
// tables; the caller closes what it returns when it is an io.Closer.
func (p *Process) Open(mp Mapped) (io.ReaderAt, error) {
	return p.open(mp.Mapping)
}

// DebugFile returns the path of the separate debug file of the build id
// in the debug roots (<root>/.build-id/xx/yyyy.debug), "" when there is
// none.
func (p *Process) DebugFile(buildID string) string {
	if len(buildID) <= 2 {
		return ""
	}
	p.mu.Lock()
	roots := append([]string(nil), p.debugRoots...)
	p.mu.Unlock()
	for _, root := range roots {
		path := filepath.Join(root, ".build-id", buildID[:2], buildID[2:]+".debug")
		if _, err := os.Stat(path); err == nil {
			return path
		}
	}
	return ""
}

// SymbolRange is where a named function lies in the process: runtime
// addresses [Start, End) in the mapping of DSO.
type SymbolRange struct {
	Name       string
	DSO        string
	Start, End uint64
}

// FindSymbols returns the runtime ranges of the functions named in names
// (as Resolve names them) in the current executable mappings, sorted by
// Start. A function that is in no executable mapping, or whose object has
// no symbols, is left out.
func (p *Process) FindSymbols(names []string) []SymbolRange {
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []SymbolRange
	for _, m := range p.cur {
		if !m.Exec() {
			continue
		}
		obj := p.object(m)
		if obj == nil {
			continue
		}
		lo, hi := m.Offset, m.Offset+(m.End-m.Start)
		for _, s := range obj.syms {
			if !want[s.name] || s.end <= lo || s.start >= hi {
				continue
			}
			start, end := max(s.start, lo), min(s.end, hi)
			out = append(out, SymbolRange{Name: s.name, DSO: m.Path, Start: start - m.Offset + m.Start, End: end - m.Offset + m.Start})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

// Preload reads now the objects of the process's executable mappings
// (their symbols, as symbolisation needs them), so that the first Mapped
// or Resolve of each does not: a sampler that unwinds while it samples
// calls it before sampling starts, and reading a large server binary's
// symbols (a third of a second for mariadbd, demangling included) is not
// spent in the sampled window, on the machine being measured.
func (p *Process) Preload() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.cur {
		if m.Exec() {
			p.object(m)
		}
	}
}
