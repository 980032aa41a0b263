// Package unwind walks user stacks of x86-64 Linux processes from a copy of
// the stack, as perf --call-graph dwarf does, so that a stack is whole even
// where code was built without frame pointers (glibc is).
//
// A Table is the call frame information (CFI) of one ELF object, read from
// its .eh_frame (or .debug_frame) with delve's pkg/dwarf/frame: FDEs sorted
// by address, the rules of a pc cached, and delve's panics on malformed CFI
// turned into errors. An Unwinder walks from the registers (IP, SP, BP) and
// a window of the user stack: each frame by the CFI of its object where the
// object has an FDE for the pc, by the frame pointer where it has none
// (JIT code, objects without unwind tables), until the thread's root
// (DW_CFA_undefined rip: clone3, clone, _start), a zero return address, the
// end of the window, a CFA that does not grow, or a depth. Each frame says
// how it was unwound (cfi, fp, none) and the walk says how it ended, which
// is what completeness figures need.
//
// Where the inputs come from: the BPF sampler hands over, per sample, the
// user registers and a copy of the stack from the stack pointer up to the
// end of its mapping (or a page cap); capture/symtab knows the mappings of
// the process, which gives the Lookup from a pc to its object's Table and
// load bias. This package reads neither /proc nor the process: it works on
// plain data, builds on every system, and is tested from files.
//
// What it does not do: it does not name frames (capture/symtab does), it
// knows x86-64 only (DWARF registers rsp, rbp, rip; other registers are
// not copied by the sampler, so rules needing them end the walk with
// EndBadCFA), it does not use .eh_frame_hdr (every FDE is parsed once, tens
// of milliseconds for a large server binary), and it does not compile
// tables for unwinding in the kernel. delve's DW_CFA_val_offset does not
// scale by the data alignment factor; no object checked uses it.
package unwind
