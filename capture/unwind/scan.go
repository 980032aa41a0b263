package unwind

// hasUndefined reports whether the call frame program prog contains
// DW_CFA_undefined for reg. It decodes only the operand lengths (DWARF 5,
// section 6.4.2, and the GNU extensions GCC emits); it stops, reporting
// false, at an opcode it does not know or at the end of a truncated
// program.
func hasUndefined(prog []byte, reg uint64) bool {
	p := cfaProg{b: prog}
	for p.ok() {
		op := p.byte()
		switch op >> 6 {
		case 1, 3: // advance_loc, restore: operand in the opcode
			continue
		case 2: // offset: ULEB128 offset
			p.leb()
			continue
		}
		switch op {
		case 0x00, 0x0a, 0x0b: // nop, remember_state, restore_state
		case 0x01: // set_loc: an address (8 bytes: delve's reading)
			p.skip(8)
		case 0x02: // advance_loc1
			p.skip(1)
		case 0x03: // advance_loc2
			p.skip(2)
		case 0x04: // advance_loc4
			p.skip(4)
		case 0x07: // undefined
			if p.leb() == reg && !p.bad {
				return true
			}
		case 0x06, 0x08, 0x0d, 0x0e, 0x13, 0x2e: // one LEB128 operand
			p.leb()
		case 0x05, 0x09, 0x0c, 0x11, 0x12, 0x14, 0x15, 0x2f: // two LEB128 operands
			p.leb()
			p.leb()
		case 0x0f: // def_cfa_expression: block
			p.skip(p.leb())
		case 0x10, 0x16: // expression, val_expression: register, block
			p.leb()
			p.skip(p.leb())
		default:
			return false
		}
	}
	return false
}

// cfaProg reads a call frame program; past its end every read gives 0 and
// ok turns false.
type cfaProg struct {
	b   []byte
	bad bool
}

func (p *cfaProg) ok() bool { return !p.bad && len(p.b) > 0 }

func (p *cfaProg) byte() byte {
	if len(p.b) == 0 {
		p.bad = true
		return 0
	}
	c := p.b[0]
	p.b = p.b[1:]
	return c
}

func (p *cfaProg) skip(n uint64) {
	if n > uint64(len(p.b)) {
		p.bad = true
		p.b = nil
		return
	}
	p.b = p.b[n:]
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
