package symtab

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/ianlancetaylor/demangle"
)

// Object is the symbol table of one ELF file, built as perf 6.1 builds it
// (util/symbol-elf.c): symbols are kept in file-offset space, so a
// mapping-relative address (addr - mapping start + mapping offset) is
// looked up directly, as perf's map_ip does.
type Object struct {
	// BuildID is the hex GNU build id, "" when the file has none.
	BuildID string
	// Source says where the symbols came from: ".symtab", ".dynsym",
	// "debug .symtab" (a separate debug file), or "" when there are none.
	Source string
	loads  []elf.ProgHeader
	syms   []symbol // sorted by start
}

type symbol struct {
	start, end uint64 // file-offset space, end exclusive
	name       string // demangled
	bind       elf.SymBind
}

// ErrNotELF is wrapped when the bytes are not an ELF file.
var ErrNotELF = errors.New("not an ELF file")

// ParseELF reads the symbols of an ELF file: its .symtab, else its .dynsym,
// plus "name@plt" entries for the PLT, as perf does. debug, when not nil, is
// a separate debug file (/usr/lib/debug/.build-id/...): its .symtab is used
// instead when its build id matches. Addresses are mapped through r's
// PT_LOAD program headers.
func ParseELF(r io.ReaderAt, debug io.ReaderAt) (obj *Object, err error) {
	defer func() {
		// debug/elf is robust, but a corrupt file must never take the
		// sampler down.
		if p := recover(); p != nil {
			obj, err = nil, fmt.Errorf("parse elf: %w: %v", ErrNotELF, p)
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("parse elf: %w: %w", ErrNotELF, err)
	}
	o := &Object{BuildID: BuildID(f)}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			o.loads = append(o.loads, p.ProgHeader)
		}
	}
	symFile, source := f, ""
	syms, serr := f.Symbols()
	if serr == nil && len(syms) > 0 {
		source = ".symtab"
	}
	if debug != nil {
		if df, err := elf.NewFile(debug); err == nil {
			if o.BuildID != "" && BuildID(df) == o.BuildID {
				if ds, err := df.Symbols(); err == nil && len(ds) > 0 {
					symFile, syms, source = df, ds, "debug .symtab"
				}
			}
		}
	}
	if source == "" {
		if ds, err := f.DynamicSymbols(); err == nil && len(ds) > 0 {
			syms, source = ds, ".dynsym"
		}
	}
	o.Source = source
	o.syms = o.loadSymbols(symFile, syms)
	o.syms = append(o.syms, pltSymbols(f)...)
	sort.SliceStable(o.syms, func(i, j int) bool { return o.syms[i].start < o.syms[j].start })
	return o, nil
}

// loadSymbols keeps the symbols perf keeps (functions, objects, and
// untyped labels in text sections), moves them to file-offset space, fixes
// zero sizes and drops aliases.
func (o *Object) loadSymbols(f *elf.File, syms []elf.Symbol) []symbol {
	out := make([]symbol, 0, len(syms))
	for _, s := range syms {
		if s.Name == "" || s.Section == elf.SHN_UNDEF {
			continue
		}
		typ := elf.ST_TYPE(s.Info)
		switch typ {
		case elf.STT_FUNC, elf.STT_GNU_IFUNC, elf.STT_OBJECT:
		case elf.STT_NOTYPE: // a label: only in a text section
			if s.Section == elf.SHN_ABS || int(s.Section) >= len(f.Sections) ||
				!strings.Contains(f.Sections[s.Section].Name, "text") {
				continue
			}
		default:
			continue
		}
		start, ok := o.vaddrToOffset(s.Value)
		if !ok {
			continue
		}
		out = append(out, symbol{start: start, end: start + s.Size, name: demangleName(s.Name), bind: elf.ST_BIND(s.Info)})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	out = dropInnerLabels(out)
	fixupEnd(out, false)
	return fixupDuplicate(out)
}

// dropInnerLabels drops zero-sized symbols (labels) that lie inside a sized
// symbol, such as glibc 2.41's __syscall_cancel_arch_end inside
// __syscall_cancel_arch: an address after the label belongs to the
// function. perf keeps such labels and, as both then contain the address,
// prints whichever its symbol tree reaches first (__syscall_cancel_arch for
// that libc); the function is the stable answer. s is sorted by start.
func dropInnerLabels(s []symbol) []symbol {
	out := s[:0]
	var coverStart, coverEnd uint64 // the sized symbol reaching furthest so far
	for _, sym := range s {
		if sym.end == sym.start && sym.start > coverStart && sym.start < coverEnd {
			continue
		}
		if sym.end > coverEnd {
			coverStart, coverEnd = sym.start, sym.end
		}
		out = append(out, sym)
	}
	return out
}

// vaddrToOffset maps a virtual address to a file offset through the
// PT_LOAD segment containing it (perf's elf_read_program_header).
func (o *Object) vaddrToOffset(v uint64) (uint64, bool) {
	for _, p := range o.loads {
		if v >= p.Vaddr && v < p.Vaddr+p.Memsz {
			return v - p.Vaddr + p.Off, true
		}
	}
	return 0, false
}

// OffsetToVaddr maps a file offset to the ELF virtual address through the
// PT_LOAD segment whose file image contains it.
func (o *Object) OffsetToVaddr(off uint64) (uint64, bool) {
	for _, p := range o.loads {
		if off >= p.Off && off < p.Off+p.Filesz {
			return off - p.Off + p.Vaddr, true
		}
	}
	return 0, false
}

// Lookup returns the symbol containing the file offset off (a
// mapping-relative address) and off's distance from its start.
func (o *Object) Lookup(off uint64) (name string, symOff uint64, ok bool) {
	i := sort.Search(len(o.syms), func(i int) bool { return o.syms[i].start > off }) - 1
	if i < 0 {
		return "", 0, false
	}
	s := o.syms[i]
	// perf's symbols__find: end is exclusive, but a zero-sized symbol
	// matches its own start.
	if off < s.end || off == s.start {
		return s.name, off - s.start, true
	}
	return "", 0, false
}

// Len is the number of symbols.
func (o *Object) Len() int { return len(o.syms) }

// fixupEnd gives zero-sized symbols the next symbol's start as end, and the
// last one the end of the page after its start (perf's symbols__fixup_end).
// For kallsyms, a zero-sized symbol followed by one of a different kind
// (kernel vs module, told by '[' in the name) ends at the next page.
func fixupEnd(s []symbol, kallsyms bool) {
	for i := 1; i < len(s); i++ {
		prev, curr := &s[i-1], &s[i]
		if prev.end == prev.start {
			if kallsyms && strings.Contains(prev.name, "[") != strings.Contains(curr.name, "[") {
				prev.end = roundUp(prev.end+4096, 4096)
			} else {
				prev.end = curr.start
			}
		}
	}
	if n := len(s); n > 0 && s[n-1].end == s[n-1].start {
		s[n-1].end = roundUp(s[n-1].start, 4096) + 4096
	}
}

func roundUp(x, to uint64) uint64 { return (x + to - 1) / to * to }

// fixupDuplicate keeps one symbol per start address, chosen as perf's
// symbols__fixup_duplicate and choose_best_symbol do: non-zero size, then
// not weak, then global, then fewer leading underscores, then the longer
// name, then the first in table order.
func fixupDuplicate(s []symbol) []symbol {
	if len(s) < 2 {
		return s
	}
	out := s[:1]
	for _, next := range s[1:] {
		curr := &out[len(out)-1]
		if curr.start != next.start {
			out = append(out, next)
			continue
		}
		if !chooseFirst(*curr, next) {
			*curr = next
		}
	}
	return out
}

func chooseFirst(a, b symbol) bool {
	la, lb := a.end-a.start, b.end-b.start
	if lb == 0 && la > 0 {
		return true
	} else if la == 0 && lb > 0 {
		return false
	}
	wa, wb := a.bind == elf.STB_WEAK, b.bind == elf.STB_WEAK
	if wb && !wa {
		return true
	} else if wa && !wb {
		return false
	}
	ga, gb := a.bind == elf.STB_GLOBAL, b.bind == elf.STB_GLOBAL
	if ga && !gb {
		return true
	} else if gb && !ga {
		return false
	}
	ua, ub := leadingUnderscores(a.name), leadingUnderscores(b.name)
	if ub > ua {
		return true
	} else if ua > ub {
		return false
	}
	return len(a.name) >= len(b.name)
}

func leadingUnderscores(s string) int {
	n := 0
	for n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// demangleName demangles C++ (and Rust v0) names as perf 6.1 prints them:
// libiberty's cplus_demangle without DMGL_PARAMS, so no parameter lists,
// no return types of template functions, no clone suffixes and the short
// forms of std:: substitutions. Other names are returned unchanged.
func demangleName(name string) string {
	if !strings.HasPrefix(name, "_Z") && !strings.HasPrefix(name, "_R") && !strings.HasPrefix(name, "_GLOBAL_") {
		return name
	}
	d, err := demangle.ToString(name, demangle.NoParams)
	if err != nil {
		return name
	}
	return d
}

// pltSymbols synthesizes "name@plt" symbols for the PLT entries, as perf
// 6.1's dso__synthesize_plt_symbols does on x86: entries of .plt's
// sh_entsize after a header of the same size, one per .rela.plt
// relocation, in file-offset space.
func pltSymbols(f *elf.File) []symbol {
	rel := f.Section(".rela.plt")
	if rel == nil {
		rel = f.Section(".rel.plt")
	}
	plt := f.Section(".plt")
	dynsym := f.SectionByType(elf.SHT_DYNSYM)
	if rel == nil || plt == nil || dynsym == nil || plt.Entsize == 0 || rel.Entsize == 0 ||
		int(rel.Link) >= len(f.Sections) || f.Sections[rel.Link] != dynsym {
		return nil
	}
	data, err := rel.Data()
	if err != nil {
		return nil
	}
	dsyms, err := f.DynamicSymbols()
	if err != nil {
		return nil
	}
	var out []symbol
	off := plt.Offset + plt.Entsize
	for len(data) >= int(rel.Entsize) {
		ent := data[:rel.Entsize]
		data = data[rel.Entsize:]
		var idx uint64
		switch {
		case f.Class == elf.ELFCLASS64 && len(ent) >= 16:
			idx = f.ByteOrder.Uint64(ent[8:16]) >> 32
		case f.Class == elf.ELFCLASS32 && len(ent) >= 8:
			idx = uint64(f.ByteOrder.Uint32(ent[4:8]) >> 8)
		default:
			return out
		}
		name := ""
		if idx >= 1 && idx <= uint64(len(dsyms)) {
			name = dsyms[idx-1].Name // DynamicSymbols skips index 0
		}
		out = append(out, symbol{start: off, end: off + plt.Entsize, name: demangleName(name) + "@plt", bind: elf.STB_GLOBAL})
		off += plt.Entsize
	}
	return out
}

// BuildID returns the hex GNU build id from the .note.gnu.build-id
// section or any PT_NOTE segment; "" when it has none.
func BuildID(f *elf.File) string {
	if s := f.Section(".note.gnu.build-id"); s != nil && s.Type == elf.SHT_NOTE {
		if d, err := s.Data(); err == nil {
			if id := noteBuildID(d, f.ByteOrder); id != "" {
				return id
			}
		}
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_NOTE || p.Filesz > 1<<20 {
			continue
		}
		d := make([]byte, p.Filesz)
		if _, err := p.ReadAt(d, 0); err != nil {
			continue
		}
		if id := noteBuildID(d, f.ByteOrder); id != "" {
			return id
		}
	}
	return ""
}

const ntGNUBuildID = 3 // NT_GNU_BUILD_ID

// noteBuildID finds the NT_GNU_BUILD_ID note in a run of ELF notes.
func noteBuildID(d []byte, bo binary.ByteOrder) string {
	align4 := func(n uint64) uint64 { return (n + 3) &^ 3 }
	for len(d) >= 12 {
		namesz, descsz, typ := uint64(bo.Uint32(d)), uint64(bo.Uint32(d[4:])), bo.Uint32(d[8:])
		d = d[12:]
		if align4(namesz) > uint64(len(d)) {
			return ""
		}
		name := d[:namesz]
		d = d[align4(namesz):]
		if align4(descsz) > uint64(len(d)) && descsz > uint64(len(d)) {
			return ""
		}
		desc := d[:descsz]
		if typ == ntGNUBuildID && bytes.Equal(bytes.TrimRight(name, "\x00"), []byte("GNU")) {
			return hex.EncodeToString(desc)
		}
		if align4(descsz) > uint64(len(d)) {
			return ""
		}
		d = d[align4(descsz):]
	}
	return ""
}

// symbolsByStart is for tests: the symbols as (start, name) in order.
func (o *Object) symbolsByStart() []symbol { return slices.Clone(o.syms) }
