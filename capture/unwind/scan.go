package unwind

import "encoding/binary"

// undefinedAt reports whether, at pc, the last rule the call frame
// programs give column reg is DW_CFA_undefined: the CIE's initial
// instructions, then the FDE's up to pc, as delve runs them (an
// instruction is run while its location is at or below pc), with
// DW_CFA_remember_state and DW_CFA_restore_state. It decodes only what it
// needs (DWARF 5, section 6.4.2, and the GNU extensions GCC emits); it
// stops, reporting what it has, at an opcode it does not know or at the end
// of a truncated program.
func undefinedAt(cieProg, fdeProg []byte, codeAlign, begin, pc, reg uint64) bool {
	s := cfaScan{reg: reg, loc: begin, pc: pc, codeAlign: codeAlign}
	s.run(cieProg, false)
	s.run(fdeProg, true)
	return s.undef
}

type cfaScan struct {
	reg, loc, pc, codeAlign uint64
	undef                   bool
	stack                   []bool
}

func (s *cfaScan) run(prog []byte, advance bool) {
	p := cfaProg{b: prog}
	for p.ok() && (!advance || s.pc >= s.loc) {
		op := p.byte()
		switch op >> 6 {
		case 1: // advance_loc
			s.loc += uint64(op&0x3f) * s.codeAlign
			continue
		case 2: // offset: ULEB128 offset
			p.leb()
			s.set(uint64(op&0x3f), false)
			continue
		case 3: // restore
			s.set(uint64(op&0x3f), false)
			continue
		}
		switch op {
		case 0x00: // nop
		case 0x0a: // remember_state
			s.stack = append(s.stack, s.undef)
		case 0x0b: // restore_state
			if n := len(s.stack); n > 0 {
				s.undef, s.stack = s.stack[n-1], s.stack[:n-1]
			}
		case 0x01: // set_loc: an address (8 bytes, as delve reads it)
			if b := p.take(8); b != nil {
				s.loc = binary.LittleEndian.Uint64(b)
			}
		case 0x02: // advance_loc1
			if b := p.take(1); b != nil {
				s.loc += uint64(b[0]) * s.codeAlign
			}
		case 0x03: // advance_loc2
			if b := p.take(2); b != nil {
				s.loc += uint64(binary.LittleEndian.Uint16(b)) * s.codeAlign
			}
		case 0x04: // advance_loc4
			if b := p.take(4); b != nil {
				s.loc += uint64(binary.LittleEndian.Uint32(b)) * s.codeAlign
			}
		case 0x07: // undefined
			s.set(p.leb(), true)
		case 0x06, 0x08: // restore_extended, same_value: a register
			s.set(p.leb(), false)
		case 0x0d, 0x0e, 0x13, 0x2e: // CFA rules, GNU_args_size: one LEB128
			p.leb()
		case 0x0c, 0x12: // def_cfa, def_cfa_sf: two LEB128
			p.leb()
			p.leb()
		case 0x05, 0x09, 0x11, 0x14, 0x15, 0x2f: // a register, then a LEB128
			r := p.leb()
			p.leb()
			s.set(r, false)
		case 0x0f: // def_cfa_expression: block
			p.take(p.leb())
		case 0x10, 0x16: // expression, val_expression: register, block
			r := p.leb()
			p.take(p.leb())
			s.set(r, false)
		default:
			return
		}
	}
}

func (s *cfaScan) set(reg uint64, undef bool) {
	if reg == s.reg {
		s.undef = undef
	}
}

// cfaProg reads a call frame program; past its end every read gives
// nothing and ok turns false.
type cfaProg struct {
	b   []byte
	bad bool
}

func (p *cfaProg) ok() bool { return !p.bad && len(p.b) > 0 }

func (p *cfaProg) byte() byte {
	if b := p.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (p *cfaProg) take(n uint64) []byte {
	if p.bad || n > uint64(len(p.b)) {
		p.bad, p.b = true, nil
		return nil
	}
	b := p.b[:n]
	p.b = p.b[n:]
	return b
}

// leb reads an unsigned or signed LEB128 number; the value is only used
// for register numbers, which are unsigned.
func (p *cfaProg) leb() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := p.byte()
		if p.bad {
			return 0
		}
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v
		}
	}
}
