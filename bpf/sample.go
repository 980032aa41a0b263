package bpf

import (
	"fmt"
	"strings"
)

// StackCopy says which samples the program sends to user space with a copy
// of the user stack (see "Stack copies" in the package documentation).
type StackCopy int

const (
	// StackCopyNever copies no stack: every sample is aggregated in the
	// kernel with its frame-pointer stack (the default).
	StackCopyNever StackCopy = iota
	// StackCopyAuto copies the samples whose leaf is in a range without
	// frame pointers, or whose frame-pointer walk does not end in a root
	// range (Profiler.SetRanges); the others are aggregated in the kernel.
	StackCopyAuto
	// StackCopyAlways copies every sample.
	StackCopyAlways
)

var stackCopyNames = []string{"never", "auto", "always"}

// String returns "never", "auto" or "always".
func (s StackCopy) String() string {
	if s < 0 || int(s) >= len(stackCopyNames) {
		return fmt.Sprintf("StackCopy(%d)", int(s))
	}
	return stackCopyNames[s]
}

// ParseStackCopy parses "never", "auto" or "always".
func ParseStackCopy(s string) (StackCopy, error) {
	for i, name := range stackCopyNames {
		if s == name {
			return StackCopy(i), nil
		}
	}
	return 0, fmt.Errorf("bpf: stack copy %q: want %s", s, strings.Join(stackCopyNames, ", "))
}

// MaxStackPages is the most pages of PageSize bytes a sample's stack copy
// holds (a sample must fit a 32 KiB per-CPU buffer), and the default of
// Options.StackPages.
const MaxStackPages = 7

// PageSize is the unit of stack copies: the stack is read a page at a time.
const PageSize = 4096

// DefaultRingBufferBytes is the size of the ring buffer that carries
// copied samples to user space when Options.RingBufferBytes is 0: about
// 2 s of samples at 99 Hz on 32 CPUs with 12 KB stacks.
const DefaultRingBufferBytes = 16 << 20

// MaxRanges is the most ranges of each kind Profiler.SetRanges accepts.
const MaxRanges = 32

// CFA says how a CFIRule finds the canonical frame address (the caller's
// stack pointer).
type CFA uint32

// The CFA rules Options.OffCPUCFI follows (the values are the BPF
// program's).
const (
	CFASP          CFA = 1 // rsp + CFAOffset
	CFABP          CFA = 2 // rbp + CFAOffset
	CFARoot        CFA = 3 // no caller: the thread's root (DW_CFA_undefined rip)
	CFAUnsupported CFA = 4 // a rule the walk cannot follow: it stops there
)

// CFIRule is the CFI row of one pc reduced to what the off-CPU walk needs
// (Options.OffCPUCFI) on x86-64: the CFA, the return address at CFA-8, and
// rbp saved at CFA+BPOffset when BPSaved, else unchanged.
type CFIRule struct {
	CFA       CFA
	CFAOffset int32
	BPSaved   bool
	BPOffset  int32
}

// Range is a range of user addresses [Start, End).
type Range struct {
	Start, End uint64
}

// Regs are the user registers of a sample: instruction pointer, stack
// pointer and frame pointer (x86-64 rip, rsp, rbp).
type Regs struct {
	IP, SP, BP uint64
}

// SampleFlags say how a copied sample was taken and why it was copied.
type SampleFlags uint32

const (
	// SampleKernelMode means the sample was taken in kernel mode: Regs are
	// the task's user registers saved on entry to the kernel.
	SampleKernelMode SampleFlags = 1 << iota
	// SampleWindowFull means every page of the window was copied and the stack
	// goes on above it, so an unwinder may run out of stack before the
	// root.
	SampleWindowFull
	// SampleLeafNoFP means (StackCopyAuto) the leaf IP is in a range without
	// frame pointers.
	SampleLeafNoFP
	// SampleNoRoot means (StackCopyAuto) the frame-pointer walk is empty or its
	// last address is in no root range.
	SampleNoRoot
)

// RawSample is one copied sample as the program sent it. Its slices are
// reused by Profiler.ReadSamples: they are valid until the callback returns.
type RawSample struct {
	PID, TID uint32 // thread group id and thread id
	Comm     string // the thread's name when sampled
	Regs     Regs
	Flags    SampleFlags
	// Weight is how many samples the record stands for: 1, or more for
	// a weighted sample (per-CPU events with Options.SwitchFix).
	Weight uint32
	// Stack is the copy of the user stack from StackBase, the start of
	// SP's page, upwards: Stack[i] is the byte at address StackBase+i. The
	// bytes below SP are kept: a function's epilogue that has popped a
	// register finds it there (its CFI still says it is saved at an
	// address that is now below SP; docs/recording.md, "Stacks perf's
	// unwinder cuts"). It ends at the end of the thread's stack mapping,
	// at the first page that could not be read, or after
	// Options.StackPages pages, and is empty when not even SP's page could
	// be read.
	Stack     []byte
	StackBase uint64
	// User is the kernel's frame-pointer walk of the user stack, leaf
	// first, as Count.User holds it (for comparison).
	User []uint64
	// Kernel is the kernel stack, leaf first; empty unless
	// Options.Kernel, and for samples taken in user mode.
	Kernel []uint64
}
