package symtab

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Kernel resolves kernel addresses with the symbols of /proc/kallsyms, as
// perf does when it has no vmlinux: text, weak, data and bss symbols, each
// ending where the next one starts, aliases chosen by perf's rules.
type Kernel struct {
	syms []symbol // name is "sym" or "sym\t[module]" until split
	mods []string // module of syms[i], "" for the kernel
}

// KernelDSO is the dso perf prints for kernel symbols.
const KernelDSO = "[kernel.kallsyms]"

// ParseKallsyms reads /proc/kallsyms text: "ffffffff81000000 T _stext"
// lines, module symbols ending in "\t[ext4]". When every address is zero
// (kptr_restrict hides them) it returns ErrNoKernelSymbols; a malformed
// line is an error wrapping ErrMalformed.
func ParseKallsyms(r io.Reader) (*Kernel, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	var syms []symbol
	n, lines, nonZero := 0, 0, false
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		lines++
		addrS, rest, ok := strings.Cut(line, " ")
		if !ok || len(rest) < 3 || rest[1] != ' ' {
			return nil, fmt.Errorf("kallsyms line %d %q: %w", n, line, ErrMalformed)
		}
		addr, err := strconv.ParseUint(addrS, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("kallsyms line %d %q: %w: bad address", n, line, ErrMalformed)
		}
		if addr != 0 {
			nonZero = true
		}
		typ, name := rest[0], rest[2:]
		if name == "" || name[0] == '\t' {
			return nil, fmt.Errorf("kallsyms line %d %q: %w: no name", n, line, ErrMalformed)
		}
		switch typ {
		case 'T', 't', 'W', 'w', 'D', 'd', 'B', 'b':
		default:
			continue
		}
		if name[0] == '$' { // ARM mapping symbols
			continue
		}
		bind := elf.STB_LOCAL
		switch {
		case typ == 'W':
			bind = elf.STB_WEAK
		case typ >= 'A' && typ <= 'Z':
			bind = elf.STB_GLOBAL
		}
		syms = append(syms, symbol{start: addr, end: addr, name: name, bind: bind})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kallsyms line %d: %w", n+1, err)
	}
	if lines == 0 {
		return nil, fmt.Errorf("kallsyms: no symbols: %w", ErrMalformed)
	}
	if !nonZero {
		return nil, ErrNoKernelSymbols
	}
	sort.SliceStable(syms, func(i, j int) bool { return syms[i].start < syms[j].start })
	fixupEnd(syms, true)
	syms = fixupDuplicate(syms)
	k := &Kernel{syms: syms, mods: make([]string, len(syms))}
	for i := range k.syms {
		if name, mod, ok := strings.Cut(k.syms[i].name, "\t"); ok {
			k.syms[i].name = name
			k.mods[i] = strings.TrimSpace(mod)
		}
	}
	return k, nil
}

// LoadKallsymsFile parses a kallsyms file.
func LoadKallsymsFile(path string) (*Kernel, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load kernel symbols: %w", err)
	}
	defer f.Close()
	k, err := ParseKallsyms(f)
	if err != nil {
		return nil, fmt.Errorf("load kernel symbols %s: %w", path, err)
	}
	return k, nil
}

// LoadKernel parses /proc/kallsyms. Without privileges the kernel shows
// zero addresses and the error wraps ErrNoKernelSymbols.
func LoadKernel() (*Kernel, error) { return LoadKallsymsFile("/proc/kallsyms") }

// Len is the number of symbols kept.
func (k *Kernel) Len() int { return len(k.syms) }

// Resolve returns the kernel frame of addr: DSO "[kernel.kallsyms]", or
// "[module]" (as perf names a module's dso, e.g. "[ext4]") for a module
// symbol; Sym "" when no symbol covers addr.
func (k *Kernel) Resolve(addr uint64) Frame {
	fr := Frame{DSO: KernelDSO, PerfAddr: addr}
	i := sort.Search(len(k.syms), func(i int) bool { return k.syms[i].start > addr }) - 1
	if i < 0 {
		return fr
	}
	s := k.syms[i]
	if addr >= s.end && addr != s.start {
		return fr
	}
	fr.Sym, fr.Offset = s.name, addr-s.start
	if k.mods[i] != "" {
		fr.DSO = k.mods[i]
	}
	return fr
}
