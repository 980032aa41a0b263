package unwind

import (
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/go-delve/delve/pkg/dwarf/frame"
)

// DWARF register numbers of x86-64 (System V psABI, figure 3.36), the only
// architecture this package unwinds.
const (
	RegBP = 6  // rbp
	RegSP = 7  // rsp
	RegRA = 16 // the return address column (rip)
)

// ErrNoFDE is wrapped when no FDE of the table covers the pc.
var ErrNoFDE = errors.New("no FDE covers the pc")

// ErrNoCFI is wrapped when an ELF file has neither .eh_frame nor
// .debug_frame with contents.
var ErrNoCFI = errors.New("no .eh_frame or .debug_frame")

// Kind says how a register, or the CFA, is recovered in the caller's frame.
// The names are those of the DWARF 5 standard, section 6.4.1.
type Kind uint8

// The rules a row can give. The values follow delve's frame.Rule.
const (
	// Undefined: the register has no value in the caller. For the return
	// address this is the thread's root (DW_CFA_undefined rip, as clone3,
	// clone and _start say); for other registers "not said", which an
	// unwinder takes as unchanged.
	Undefined Kind = iota
	// SameValue: the register is unchanged.
	SameValue
	// Offset: the register is saved at the address CFA+Offset.
	Offset
	// ValOffset: the register's value is CFA+Offset.
	ValOffset
	// Register: the register's value is in register Reg.
	Register
	// Expression: the register is saved at the address Expr gives.
	Expression
	// ValExpression: the register's value is what Expr gives.
	ValExpression
	// RegOffset is the CFA's usual rule: the CFA is register Reg + Offset.
	RegOffset
	// Unsupported is a rule this package does not evaluate.
	Unsupported
)

// Rule is one column of a CFI row: how the CFA or one register is found.
type Rule struct {
	Kind   Kind
	Reg    uint64 // for Register and RegOffset
	Offset int64  // for Offset, ValOffset and RegOffset
	Expr   []byte // DWARF expression, for Expression and ValExpression (and a CFA given by DW_CFA_def_cfa_expression)
}

// Row is the CFI row at one pc: the rules that give the caller's frame.
// Addresses are the object's file (link-time) addresses.
type Row struct {
	// Begin and End are the range of the FDE that covers the pc.
	Begin, End uint64
	// Signal is true for a signal frame (the CIE's 'S' augmentation, glibc's
	// __restore_rt): its caller was interrupted, not calling, so the
	// caller's pc is looked up as it is, not pc-1.
	Signal bool
	// CFA is the canonical frame address: RegOffset or Expression.
	CFA Rule
	// RA is the rule of the return address, BP that of rbp.
	RA, BP Rule
}

// Table is the call frame information (CFI) of one ELF object: its FDEs,
// sorted by address, and a cache of the rows already asked for. Its methods
// are safe for concurrent use.
type Table struct {
	fdes    frame.FrameDescriptionEntries
	section string

	mu    sync.RWMutex
	cache map[uint64]cached
}

type cached struct {
	row Row
	err error
}

// maxCache bounds the row cache. A profile asks for a few thousand distinct
// pcs; past this many the cache starts again rather than grow.
const maxCache = 1 << 16

// FromELF reads the CFI of an x86-64 ELF object: its .eh_frame, or its
// .debug_frame when it has no .eh_frame with contents (a separate debug
// file, a binary built without unwind tables). It fails with an error
// wrapping ErrNoCFI when the object has neither.
func FromELF(r io.ReaderAt) (t *Table, err error) {
	defer func() {
		if p := recover(); p != nil { // debug/elf on hostile input
			t, err = nil, fmt.Errorf("malformed ELF: %v", p)
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return nil, fmt.Errorf("read ELF: %w", err)
	}
	if f.Class != elf.ELFCLASS64 || f.Machine != elf.EM_X86_64 {
		return nil, fmt.Errorf("ELF %v %v: %w", f.Class, f.Machine, errors.ErrUnsupported)
	}
	order := f.ByteOrder
	if s := f.Section(".eh_frame"); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
		data, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("read .eh_frame: %w", err)
		}
		return fromSection(data, order, s.Addr, true)
	}
	if s := f.Section(".debug_frame"); s != nil && s.Type != elf.SHT_NOBITS && s.Size > 0 {
		data, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("read .debug_frame: %w", err)
		}
		return fromSection(data, order, 0, false)
	}
	return nil, ErrNoCFI
}

// FromFile reads the CFI of the ELF file at path (see FromELF).
func FromFile(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := FromELF(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// fromSection parses a .eh_frame (addr: the section's address, for its
// pc-relative pointers) or a .debug_frame section.
func fromSection(data []byte, order binary.ByteOrder, addr uint64, eh bool) (t *Table, err error) {
	name := ".debug_frame"
	if eh {
		name = ".eh_frame"
		if addr == 0 {
			// delve takes address 0 to mean .debug_frame.
			return nil, fmt.Errorf("%s at address 0: %w", name, errors.ErrUnsupported)
		}
	} else {
		addr = 0
	}
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("parse %s: malformed CFI: %v", name, p)
		}
	}()
	fdes, err := frame.Parse(data, order, 0, 8, addr)
	if err != nil {
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	// An FDE whose range wraps past the end of the address space covers
	// nothing real; it would break the order FDEForPC relies on.
	fdes = slices.DeleteFunc(fdes, func(f *frame.FrameDescriptionEntry) bool { return f.End() < f.Begin() })
	// delve returns the FDEs in section order; FDEForPC binary-searches.
	// Append sorts them and drops duplicates, as delve's own reader does.
	fdes = frame.FrameDescriptionEntries(nil).Append(fdes)
	return &Table{fdes: fdes, section: name, cache: make(map[uint64]cached)}, nil
}

// Section names the section the table was read from.
func (t *Table) Section() string { return t.section }

// Len is the number of FDEs.
func (t *Table) Len() int { return len(t.fdes) }

// FDE returns the range of the i-th FDE in address order, 0 <= i < Len.
func (t *Table) FDE(i int) (begin, end uint64) {
	return t.fdes[i].Begin(), t.fdes[i].End()
}

// RowAt returns the CFI row in effect at pc, a file address of the object,
// exactly as given: the caller subtracts 1 from a return address. It fails
// with an error wrapping ErrNoFDE when no FDE covers pc, and with another
// error when the CFI is malformed. Results are cached, so asking for the
// same pc again costs a map lookup.
func (t *Table) RowAt(pc uint64) (Row, error) {
	t.mu.RLock()
	c, ok := t.cache[pc]
	t.mu.RUnlock()
	if ok {
		return c.row, c.err
	}
	row, err := t.establish(pc)
	t.mu.Lock()
	if len(t.cache) >= maxCache {
		clear(t.cache)
	}
	t.cache[pc] = cached{row, err}
	t.mu.Unlock()
	return row, err
}

func (t *Table) establish(pc uint64) (row Row, err error) {
	fde, err := t.fdes.FDEForPC(pc)
	if err != nil {
		return Row{}, fmt.Errorf("pc %#x: %w", pc, ErrNoFDE)
	}
	defer func() {
		if p := recover(); p != nil { // delve panics on truncated programs
			row, err = Row{}, fmt.Errorf("pc %#x: malformed CFI: %v", pc, p)
		}
	}()
	fc, err := fde.EstablishFrame(pc)
	if err != nil {
		return Row{}, fmt.Errorf("pc %#x: %w", pc, err)
	}
	row = Row{
		Begin:  fde.Begin(),
		End:    fde.End(),
		Signal: strings.Contains(fde.CIE.Augmentation, "S"),
		CFA:    rule(fc.CFA),
		RA:     rule(fc.Regs[fc.RetAddrReg]),
		BP:     rule(fc.Regs[RegBP]),
	}
	if fc.CFA.Rule == frame.RuleUndefined {
		row.CFA = Rule{Kind: Unsupported}
	}
	if row.RA.Kind == Undefined && !undefinedAt(fde.CIE.InitialInstructions, fde.Instructions, fde.CIE.CodeAlignmentFactor, fde.Begin(), pc, fc.RetAddrReg) {
		// delve's DW_CFA_restore looks up a map of initial rules it never
		// fills, so a restored column comes out undefined. For rbp and the
		// other callee-saved registers that is what the CIE says anyway;
		// for the return address it would read as the thread's root, so
		// restore the CIE's rule here: only a real DW_CFA_undefined ends
		// the stack.
		row.RA = cieRule(fde.CIE, fc.RetAddrReg)
	}
	return row, nil
}

// rule converts delve's rule. A missing map entry is delve's zero value,
// RuleUndefined, which is also what DWARF says of a column no rule names.
func rule(r frame.DWRule) Rule {
	switch r.Rule {
	case frame.RuleUndefined:
		return Rule{Kind: Undefined}
	case frame.RuleSameVal:
		return Rule{Kind: SameValue}
	case frame.RuleOffset:
		return Rule{Kind: Offset, Offset: r.Offset}
	case frame.RuleValOffset:
		return Rule{Kind: ValOffset, Offset: r.Offset}
	case frame.RuleRegister:
		return Rule{Kind: Register, Reg: r.Reg}
	case frame.RuleExpression:
		return Rule{Kind: Expression, Expr: r.Expression}
	case frame.RuleValExpression:
		return Rule{Kind: ValExpression, Expr: r.Expression}
	case frame.RuleCFA:
		return Rule{Kind: RegOffset, Reg: r.Reg, Offset: r.Offset}
	}
	return Rule{Kind: Unsupported}
}

// cieRule is the CIE's initial rule for reg: delve runs the CIE's initial
// instructions for an FDE without instructions of its own.
func cieRule(cie *frame.CommonInformationEntry, reg uint64) Rule {
	fc, err := (&frame.FrameDescriptionEntry{CIE: cie}).EstablishFrame(0)
	if err != nil {
		return Rule{Kind: Undefined}
	}
	return rule(fc.Regs[reg])
}
