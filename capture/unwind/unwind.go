package unwind

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-delve/delve/pkg/dwarf/op"
)

// Regs are the user registers a walk starts from.
type Regs struct {
	IP, SP, BP uint64
}

// Stack is a copy of the user stack: Bytes were read from the addresses
// [Base, Base+len(Bytes)). A sampler copies from the stack pointer (or the
// page below it) towards the end of the stack mapping.
type Stack struct {
	Base  uint64
	Bytes []byte
}

// word reads the little-endian word at addr, false when it is not all in
// the window.
func (s Stack) word(addr uint64) (uint64, bool) {
	if addr < s.Base || len(s.Bytes) < 8 {
		return 0, false
	}
	off := addr - s.Base
	if off > uint64(len(s.Bytes))-8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(s.Bytes[off:]), true
}

// Object is what a Lookup says of a pc: the CFI of the object mapped
// there, the object's load bias (runtime address - file address), and a
// name carried into the frames (the object's path, say).
type Object struct {
	Table *Table // nil: the object has no CFI (no .eh_frame, JIT code)
	Bias  uint64
	Name  string
}

// Method says how a frame was unwound, that is, how its caller was found.
type Method uint8

// The methods, as run.json will count them per object.
const (
	// MethodNone: the walk ended at this frame without finding its caller
	// (see End), or the depth ran out.
	MethodNone Method = iota
	// MethodCFI: the object's CFI gave the caller, or said this frame is
	// the thread's root.
	MethodCFI
	// MethodFP: the frame pointer gave the caller (no FDE for the pc, or
	// Unwinder.FramePointerOnly).
	MethodFP
)

func (m Method) String() string {
	switch m {
	case MethodCFI:
		return "cfi"
	case MethodFP:
		return "fp"
	}
	return "none"
}

// Frame is one frame of a walk. PC is the interrupted pc for the first
// frame and for the caller of a signal frame, and a return address
// otherwise (as perf and the kernel's frame-pointer walk give them).
type Frame struct {
	PC     uint64
	Object string // Object.Name of the pc's object, "" when Lookup knew none
	Method Method
}

// End says how a walk ended.
type End uint8

// The ways a walk ends.
const (
	// EndRoot: the CFI says the last frame has no return address
	// (DW_CFA_undefined rip): the thread's root, clone3, clone or _start.
	EndRoot End = iota + 1 // the zero End is no ending, so a forgotten one shows
	// EndZeroPC: the next return address is 0. A frame-pointer chain that
	// ends at a thread's root usually ends so.
	EndZeroPC
	// EndWindow: the next frame lies above the copied window: the CFA, a
	// saved register, or the frame pointer's frame is not in Stack.
	EndWindow
	// EndNoTable: the pc has no CFI (no object, no table, no FDE covering
	// it, or FramePointerOnly) and its frame pointer does not lead to a
	// caller: zero, below the stack pointer or misaligned.
	EndNoTable
	// EndBadCFA: the CFI gives a CFA not above the stack pointer, or a rule
	// this package cannot evaluate (a CFA register other than rsp and rbp,
	// a failing expression, a return address "same value").
	EndBadCFA
	// EndDepth: the walk reached Unwinder.MaxDepth frames.
	EndDepth
)

func (e End) String() string {
	switch e {
	case EndRoot:
		return "root"
	case EndZeroPC:
		return "zero pc"
	case EndWindow:
		return "window end"
	case EndNoTable:
		return "no table"
	case EndBadCFA:
		return "bad CFA"
	case EndDepth:
		return "depth"
	}
	return fmt.Sprintf("End(%d)", uint8(e))
}

// DefaultMaxDepth is the depth used when Unwinder.MaxDepth is 0: the
// kernel's default perf_event_max_stack.
const DefaultMaxDepth = 127

// Unwinder walks user stacks. Its fields are read, never written, by
// Unwind, so one Unwinder serves concurrent walks when Lookup does.
type Unwinder struct {
	// Lookup gives the object mapped at a runtime pc; false when none is
	// (the walk then tries the frame pointer).
	Lookup func(pc uint64) (Object, bool)
	// MaxDepth bounds the frames of one walk; 0 means DefaultMaxDepth.
	MaxDepth int
	// FramePointerOnly ignores the CFI: every frame is unwound by its frame
	// pointer, as the kernel's bpf_get_stack does. For comparisons.
	FramePointerOnly bool
}

// Unwind walks the stack from regs through the window stack and appends
// the frames to dst, innermost first; it returns dst and how the walk
// ended. The first frame is regs.IP (unless it is 0: EndZeroPC with no
// frame).
//
// Each frame is unwound with the CFI of its object when the object has an
// FDE for the pc (pc-1 for a return address, so that a call at the end of
// a function finds its own FDE), and with the frame pointer otherwise
// (CFA = rbp+16, return address at rbp+8, caller's rbp at rbp). The walk
// stops at the thread's root, a zero return address, the end of the
// window, a CFA that does not grow or lies outside the window, or the
// depth. Unwind reads nothing but stack and the tables; it allocates only
// to evaluate DWARF expressions (PLT entries, signal frames).
func (u *Unwinder) Unwind(dst []Frame, regs Regs, stack Stack) ([]Frame, End) {
	maxDepth := u.MaxDepth
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	pc, sp, bp := regs.IP, regs.SP, regs.BP
	exact := true // the first pc was interrupted, not a return address
	for n := 0; ; n++ {
		if pc == 0 {
			return dst, EndZeroPC
		}
		if n == maxDepth {
			return dst, EndDepth
		}
		var obj Object
		var found bool
		if u.Lookup != nil {
			obj, found = u.Lookup(pc)
		}
		dst = append(dst, Frame{PC: pc, Object: obj.Name})
		cur := &dst[len(dst)-1]

		if found && obj.Table != nil && !u.FramePointerOnly {
			look := pc - obj.Bias
			if !exact {
				look--
			}
			row, err := obj.Table.RowAt(look)
			if err == nil {
				next, end, ok := stepCFI(row, pc, sp, bp, stack)
				if !ok {
					if end == EndRoot {
						cur.Method = MethodCFI
					}
					return dst, end
				}
				cur.Method = MethodCFI
				pc, sp, bp = next.IP, next.SP, next.BP
				exact = row.Signal
				continue
			}
			// No FDE (or a malformed one): the frame pointer.
		}

		// Frame pointer: the frame is {saved rbp, return address} at rbp.
		if bp == 0 || bp < sp || bp&7 != 0 {
			return dst, EndNoTable
		}
		savedBP, ok1 := stack.word(bp)
		ra, ok2 := stack.word(bp + 8)
		if !ok1 || !ok2 {
			if bp < stack.Base {
				return dst, EndNoTable
			}
			return dst, EndWindow
		}
		cur.Method = MethodFP
		pc, sp, bp = ra, bp+16, savedBP
		exact = false
	}
}

// stepCFI applies one CFI row to the frame (pc, sp, bp). ok is false when
// the walk ends, with end saying why.
func stepCFI(row Row, pc, sp, bp uint64, stack Stack) (next Regs, end End, ok bool) {
	var cfa uint64
	switch row.CFA.Kind {
	case RegOffset:
		switch row.CFA.Reg {
		case RegSP:
			cfa = sp + uint64(row.CFA.Offset)
		case RegBP:
			cfa = bp + uint64(row.CFA.Offset)
		default:
			return Regs{}, EndBadCFA, false
		}
	case Expression:
		v, err := eval(row.CFA.Expr, false, 0, pc, sp, bp, stack)
		if err != nil {
			return Regs{}, endOf(err), false
		}
		cfa = v
	default:
		return Regs{}, EndBadCFA, false
	}
	if cfa <= sp || cfa < stack.Base {
		return Regs{}, EndBadCFA, false
	}
	if row.RA.Kind == Undefined {
		return Regs{}, EndRoot, false
	}
	ra, end, ok := recoverReg(row.RA, cfa, pc, sp, bp, stack)
	if !ok {
		if end == EndNoTable { // "same value" or undefined: no caller
			end = EndBadCFA
		}
		return Regs{}, end, false
	}
	newBP, end, ok := recoverReg(row.BP, cfa, pc, sp, bp, stack)
	if !ok {
		if end != EndNoTable {
			return Regs{}, end, false
		}
		newBP = bp // undefined or same value: unchanged
	}
	return Regs{IP: ra, SP: cfa, BP: newBP}, 0, true
}

// recoverReg gives the caller's value of a register by rule r. ok is false
// with EndNoTable for "unchanged" (Undefined, SameValue), and with another
// end when the value cannot be had.
func recoverReg(r Rule, cfa, pc, sp, bp uint64, stack Stack) (uint64, End, bool) {
	switch r.Kind {
	case Undefined, SameValue:
		return 0, EndNoTable, false
	case Offset:
		v, ok := stack.word(cfa + uint64(r.Offset))
		if !ok {
			return 0, EndWindow, false
		}
		return v, 0, true
	case ValOffset:
		return cfa + uint64(r.Offset), 0, true
	case Register:
		switch r.Reg {
		case RegSP:
			return sp, 0, true
		case RegBP:
			return bp, 0, true
		case RegRA:
			return pc, 0, true
		}
		return 0, EndBadCFA, false
	case Expression, ValExpression:
		v, err := eval(r.Expr, true, cfa, pc, sp, bp, stack)
		if err != nil {
			return 0, endOf(err), false
		}
		if r.Kind == ValExpression {
			return v, 0, true
		}
		w, ok := stack.word(v)
		if !ok {
			return 0, EndWindow, false
		}
		return w, 0, true
	}
	return 0, EndBadCFA, false
}

// errOutside is returned by eval when the expression reads memory outside
// the window.
var errOutside = errors.New("read outside the stack window")

func endOf(err error) End {
	if errors.Is(err, errOutside) {
		return EndWindow
	}
	return EndBadCFA
}

// eval runs a DWARF expression with rsp, rbp and rip known and memory read
// from the window. For a register rule (pushCFA) the CFA is pushed first,
// as DWARF 5 section 6.4.2.3 says.
func eval(expr []byte, pushCFA bool, cfa, pc, sp, bp uint64, stack Stack) (v uint64, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = 0, fmt.Errorf("DWARF expression: %v", p)
		}
	}()
	regs := make([]*op.DwarfRegister, RegRA+1)
	regs[RegSP] = &op.DwarfRegister{Uint64Val: sp}
	regs[RegBP] = &op.DwarfRegister{Uint64Val: bp}
	regs[RegRA] = &op.DwarfRegister{Uint64Val: pc}
	dr := op.NewDwarfRegisters(0, regs, binary.LittleEndian, RegRA, RegSP, RegBP, 0)
	dr.CFA = int64(cfa)
	prog := expr
	if pushCFA {
		prog = append([]byte{byte(op.DW_OP_call_frame_cfa)}, expr...)
	}
	read := func(buf []byte, addr uint64) (int, error) {
		if addr < stack.Base || addr-stack.Base > uint64(len(stack.Bytes)) ||
			uint64(len(buf)) > uint64(len(stack.Bytes))-(addr-stack.Base) {
			return 0, errOutside
		}
		return copy(buf, stack.Bytes[addr-stack.Base:]), nil
	}
	r, pieces, err := op.ExecuteStackProgram(*dr, prog, 8, read)
	if err != nil {
		return 0, fmt.Errorf("DWARF expression: %w", err)
	}
	if pieces != nil {
		return 0, errors.New("DWARF expression: a location in pieces")
	}
	return uint64(r), nil
}
