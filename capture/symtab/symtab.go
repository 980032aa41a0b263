// Package symtab turns raw user and kernel addresses, as a BPF sampler
// collects them, into the frames perf script prints for the same process:
// the same symbol names (demangled without parameter lists, aliases chosen
// as perf 6.1 chooses them), the same offsets and the same dso names, so
// that fold.ParsePerfScript folds a BPF capture and a perf capture into the
// same stacks.
//
// Every parser works on bytes or readers ([ParseMaps], [ParseKallsyms],
// [ParseELF]); only [NewProcess], [Process.Refresh] and [LoadKernel] read
// /proc.
package symtab

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNoKernelSymbols is returned by ParseKallsyms when every address is
// zero: the kernel hides them from unprivileged readers (kptr_restrict).
var ErrNoKernelSymbols = errors.New("kernel symbol addresses are hidden (all zero): run as root or set sysctl kernel.kptr_restrict=0")

// ErrMalformed is wrapped by parse errors of /proc text.
var ErrMalformed = errors.New("malformed line")

// Frame is what perf script prints for an address: the symbol with its
// offset and the dso.
type Frame struct {
	// Sym is the symbol name, demangled as perf prints it (no parameter
	// lists); "" when the address has no symbol.
	Sym string
	// Offset is the address's distance from the symbol's start.
	Offset uint64
	// DSO is the object: a path as /proc/PID/maps shows it (with
	// " (deleted)" when the file was removed), "[vdso]", "[heap]",
	// "//anon" for anonymous memory, "[kernel.kallsyms]", "[module]" for a
	// kernel module, "[unknown]" for an address outside every mapping.
	DSO string
	// PerfAddr is the address perf script prints for this frame: for a
	// user-space object the mapping-relative address (addr - start +
	// file offset), for the kernel the address itself.
	PerfAddr uint64
}

// PerfLine renders the frame as a perf script callchain line,
// "\t<addr> <sym>+0x<off> (<dso>)" with the address right-aligned in 16
// columns and "[unknown]" for an unknown symbol or dso, without the
// trailing newline. fold.ParsePerfScript folds it exactly like perf's own
// line. perf prints f.PerfAddr; any address may be passed.
func (f Frame) PerfLine(addr uint64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\t%16x ", addr)
	if f.Sym == "" {
		b.WriteString("[unknown]")
	} else {
		fmt.Fprintf(&b, "%s+0x%x", f.Sym, f.Offset)
	}
	dso := f.DSO
	if dso == "" {
		dso = "[unknown]"
	}
	b.WriteString(" (")
	b.WriteString(dso)
	b.WriteString(")")
	return b.String()
}
