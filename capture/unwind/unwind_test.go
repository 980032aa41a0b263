package unwind

import (
	"encoding/binary"
	"slices"
	"testing"
)

// debugFrame builds a .debug_frame section: one CIE (code alignment 1,
// data alignment -8, return address column 16, initial rules CFA=rsp+8 and
// ra at CFA-8, as GCC's x86-64 CIE) and one FDE per entry.
type fdeSpec struct {
	begin, size uint64
	prog        []byte
}

func debugFrame(fdes ...fdeSpec) []byte {
	le := binary.LittleEndian
	cie := []byte{0xff, 0xff, 0xff, 0xff, 1, 0, 1, 0x78, 16, 0x0c, RegSP, 8, 0x80 | RegRA, 1}
	for len(cie)%8 != 4 {
		cie = append(cie, 0) // DW_CFA_nop
	}
	out := le.AppendUint32(nil, uint32(len(cie)))
	out = append(out, cie...)
	for _, f := range fdes {
		body := le.AppendUint32(nil, 0) // CIE at offset 0
		body = le.AppendUint64(body, f.begin)
		body = le.AppendUint64(body, f.size)
		body = append(body, f.prog...)
		out = le.AppendUint32(out, uint32(len(body)))
		out = append(out, body...)
	}
	return out
}

// The call frame instructions the tests use.
const (
	cfaAdvance1      = 0x41 // DW_CFA_advance_loc 1
	cfaDefCFAOffset  = 0x0e // DW_CFA_def_cfa_offset ULEB
	cfaDefCFARegOff  = 0x0c // DW_CFA_def_cfa reg off
	cfaRestoreRA     = 0xc0 | RegRA
	cfaUndefined     = 0x07
	cfaOffsetBP      = 0x80 | RegBP // DW_CFA_offset rbp, ULEB factored offset
	cfaRememberState = 0x0a
)

// testTable is a synthetic object (bias 0):
//
//	[0x1000,0x1010) f: +0 CFA=rsp+8; +1 CFA=rsp+16, rbp at CFA-16; +2 ra
//	                restored to the CIE's rule; +3 ra undefined (a root)
//	[0x2000,0x2010) g: CFA=rsp+0 (bad: not above rsp)
//	[0x3000,0x3010) h: CFA=rcx+8 (a register the unwinder does not have)
//	[0x3800,0x3810) s: CFA=*(rsp+160), a DWARF expression (glibc's
//	                __restore_rt has this one)
func testTable(t *testing.T) *Table {
	t.Helper()
	sec := debugFrame(
		fdeSpec{0x1000, 0x10, []byte{
			cfaAdvance1, cfaDefCFAOffset, 16, cfaOffsetBP, 2,
			cfaAdvance1, cfaRestoreRA,
			cfaAdvance1, cfaUndefined, RegRA,
		}},
		fdeSpec{0x2000, 0x10, []byte{cfaDefCFAOffset, 0}},
		fdeSpec{0x3000, 0x10, []byte{cfaDefCFARegOff, 2, 8}},
		fdeSpec{0x3800, 0x10, []byte{0x0f, 4, 0x77, 0xa0, 0x01, 0x06}}, // DW_CFA_def_cfa_expression: DW_OP_breg7 160; DW_OP_deref
	)
	tab, err := fromSection(sec, binary.LittleEndian, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

func TestRowAt(t *testing.T) {
	tab := testTable(t)
	tests := []struct {
		pc   uint64
		want Row
	}{
		{0x1000, Row{Begin: 0x1000, End: 0x1010, CFA: Rule{Kind: RegOffset, Reg: RegSP, Offset: 8}, RA: Rule{Kind: Offset, Offset: -8}}},
		{0x1001, Row{Begin: 0x1000, End: 0x1010, CFA: Rule{Kind: RegOffset, Reg: RegSP, Offset: 16}, RA: Rule{Kind: Offset, Offset: -8}, BP: Rule{Kind: Offset, Offset: -16}}},
		// DW_CFA_restore rip: the CIE's rule, not delve's "undefined".
		{0x1002, Row{Begin: 0x1000, End: 0x1010, CFA: Rule{Kind: RegOffset, Reg: RegSP, Offset: 16}, RA: Rule{Kind: Offset, Offset: -8}, BP: Rule{Kind: Offset, Offset: -16}}},
		{0x100f, Row{Begin: 0x1000, End: 0x1010, CFA: Rule{Kind: RegOffset, Reg: RegSP, Offset: 16}, RA: Rule{Kind: Undefined}, BP: Rule{Kind: Offset, Offset: -16}}},
	}
	for _, tt := range tests {
		for range 2 { // the second time from the cache
			got, err := tab.RowAt(tt.pc)
			if err != nil || !rowEqual(got, tt.want) {
				t.Errorf("RowAt(%#x) = %+v, %v; want %+v", tt.pc, got, err, tt.want)
			}
		}
	}
	for _, pc := range []uint64{0xfff, 0x1010, 0x1fff, 0} {
		if _, err := tab.RowAt(pc); err == nil {
			t.Errorf("RowAt(%#x): no error, want ErrNoFDE", pc)
		}
	}
}

func rowEqual(a, b Row) bool {
	ruleEq := func(x, y Rule) bool {
		return x.Kind == y.Kind && x.Reg == y.Reg && x.Offset == y.Offset && slices.Equal(x.Expr, y.Expr)
	}
	return a.Begin == b.Begin && a.End == b.End && a.Signal == b.Signal &&
		ruleEq(a.CFA, b.CFA) && ruleEq(a.RA, b.RA) && ruleEq(a.BP, b.BP)
}

// stackBuilder lays out words at addresses from base.
type stackBuilder struct {
	base  uint64
	bytes []byte
}

func newStack(base uint64, words int) *stackBuilder {
	return &stackBuilder{base: base, bytes: make([]byte, 8*words)}
}

func (s *stackBuilder) put(addr, v uint64) *stackBuilder {
	binary.LittleEndian.PutUint64(s.bytes[addr-s.base:], v)
	return s
}

func (s *stackBuilder) stack() Stack { return Stack{Base: s.base, Bytes: s.bytes} }

func TestUnwind(t *testing.T) {
	const base = 0x7000
	tab := testTable(t)
	// Objects: [0x1000,0x4000) has the table (bias 0); [0x5000,0x6000) is
	// an object without CFI; anything else is no object.
	lookup := func(pc uint64) (Object, bool) {
		switch {
		case pc >= 0x1000 && pc < 0x4000:
			return Object{Table: tab, Name: "cfi.so"}, true
		case pc >= 0x5000 && pc < 0x6000:
			return Object{Name: "nocfi.so"}, true
		}
		return Object{}, false
	}
	tests := []struct {
		name    string
		regs    Regs
		stack   Stack
		max     int
		fpOnly  bool
		pcs     []uint64
		methods string
		end     End
	}{
		{
			// f at +1 (CFA=rsp+16, rbp saved at CFA-16) returns to a
			// no-CFI frame with a frame pointer, which returns to f at its
			// root row (+0xf, found as return address 0x1010 minus 1).
			name: "cfi, fp, then the root",
			regs: Regs{IP: 0x1001, SP: base, BP: 0xdead},
			stack: newStack(base, 8).
				put(base, base+0x10). // saved rbp: the fp frame
				put(base+8, 0x5004).  // return address into nocfi.so
				put(base+0x10, 0).    // the fp frame: saved rbp
				put(base+0x18, 0x1010).stack(),
			pcs: []uint64{0x1001, 0x5004, 0x1010}, methods: "cfc", end: EndRoot,
		},
		{
			name:  "frame pointers to a zero return address",
			regs:  Regs{IP: 0x5000, SP: base, BP: base},
			stack: newStack(base, 4).put(base, base+0x10).put(base+8, 0x5008).put(base+0x10, 0).put(base+0x18, 0).stack(),
			pcs:   []uint64{0x5000, 0x5008}, methods: "ff", end: EndZeroPC,
		},
		{
			name:  "frame pointer zero",
			regs:  Regs{IP: 0x5000, SP: base, BP: base},
			stack: newStack(base, 4).put(base, 0).put(base+8, 0x9000).stack(),
			pcs:   []uint64{0x5000, 0x9000}, methods: "fn", end: EndNoTable,
		},
		{
			name:  "frame pointer below the stack pointer",
			regs:  Regs{IP: 0x9000, SP: base + 8, BP: base},
			stack: newStack(base, 4).stack(),
			pcs:   []uint64{0x9000}, methods: "n", end: EndNoTable,
		},
		{
			name:  "frame pointer above the window",
			regs:  Regs{IP: 0x9000, SP: base, BP: base + 0x100},
			stack: newStack(base, 4).stack(),
			pcs:   []uint64{0x9000}, methods: "n", end: EndWindow,
		},
		{
			name:  "CFA above the window",
			regs:  Regs{IP: 0x1001, SP: base + 8},
			stack: newStack(base, 2).stack(),
			pcs:   []uint64{0x1001}, methods: "n", end: EndWindow,
		},
		{
			name:  "CFA not above the stack pointer",
			regs:  Regs{IP: 0x2000, SP: base},
			stack: newStack(base, 4).stack(),
			pcs:   []uint64{0x2000}, methods: "n", end: EndBadCFA,
		},
		{
			name:  "CFA in a register the sampler does not copy",
			regs:  Regs{IP: 0x3000, SP: base},
			stack: newStack(base, 4).stack(),
			pcs:   []uint64{0x3000}, methods: "n", end: EndBadCFA,
		},
		{
			// CFA read from the window at rsp+160; the return address at
			// CFA-8 by the CIE's rule; 0x9000 is in no object and rbp is 0.
			name:  "CFA expression",
			regs:  Regs{IP: 0x3800, SP: base},
			stack: newStack(base, 64).put(base+160, base+0x100).put(base+0xf8, 0x9000).stack(),
			pcs:   []uint64{0x3800, 0x9000}, methods: "cn", end: EndNoTable,
		},
		{
			name:  "CFA expression reading outside the window",
			regs:  Regs{IP: 0x3800, SP: base},
			stack: newStack(base, 8).stack(),
			pcs:   []uint64{0x3800}, methods: "n", end: EndWindow,
		},
		{
			name:  "depth",
			regs:  Regs{IP: 0x5000, SP: base, BP: base},
			stack: newStack(base, 8).put(base, base+0x10).put(base+8, 0x5001).put(base+0x10, base+0x20).put(base+0x18, 0x5002).stack(),
			max:   2, pcs: []uint64{0x5000, 0x5001}, methods: "ff", end: EndDepth,
		},
		{
			// The same first frame as the first case, by frame pointers:
			// f has no frame pointer, so rbp (0xdead) leads nowhere.
			name:   "frame pointers only",
			regs:   Regs{IP: 0x1001, SP: base, BP: 0xdead},
			stack:  newStack(base, 8).put(base, base+0x10).put(base+8, 0x5004).stack(),
			fpOnly: true,
			pcs:    []uint64{0x1001}, methods: "n", end: EndNoTable,
		},
		{
			name:  "zero pc",
			regs:  Regs{SP: base},
			stack: newStack(base, 1).stack(),
			end:   EndZeroPC,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // the cases share tab and its cache
			u := &Unwinder{Lookup: lookup, MaxDepth: tt.max, FramePointerOnly: tt.fpOnly}
			frames, end := u.Unwind(nil, tt.regs, tt.stack)
			var pcs []uint64
			for _, f := range frames {
				pcs = append(pcs, f.PC)
			}
			if !slices.Equal(pcs, tt.pcs) || methodString(frames) != tt.methods || end != tt.end {
				t.Errorf("Unwind = %#x %s %v; want %#x %s %v", pcs, methodString(frames), end, tt.pcs, tt.methods, tt.end)
			}
		})
	}
}

func TestUndefinedAt(t *testing.T) {
	tests := []struct {
		prog []byte
		pc   uint64
		want bool
	}{
		{[]byte{cfaUndefined, RegRA}, 0, true},
		{[]byte{cfaUndefined, RegBP}, 0, false},
		{[]byte{cfaAdvance1, cfaDefCFAOffset, 0x90, 0x01, cfaRememberState, cfaUndefined, RegRA}, 1, true},
		{[]byte{cfaAdvance1, cfaUndefined, RegRA}, 0, false}, // not yet at pc 0
		{[]byte{cfaUndefined, RegRA, cfaAdvance1, cfaRestoreRA}, 0, true},
		{[]byte{cfaUndefined, RegRA, cfaAdvance1, cfaRestoreRA}, 1, false},
		{[]byte{cfaRememberState, cfaUndefined, RegRA, cfaAdvance1, 0x0b}, 1, false}, // restore_state
		// An expression whose block holds the bytes of DW_CFA_undefined rip.
		{[]byte{0x10, RegBP, 2, cfaUndefined, RegRA}, 0, false},
		{[]byte{0x0f, 2, cfaUndefined, RegRA, cfaUndefined, RegRA}, 0, true},
		{[]byte{cfaUndefined}, 0, false},              // truncated
		{[]byte{0x3f, cfaUndefined, RegRA}, 0, false}, // unknown opcode: stop
	}
	for _, tt := range tests {
		if got := undefinedAt(nil, tt.prog, 1, 0, tt.pc, RegRA); got != tt.want {
			t.Errorf("undefinedAt(% x, pc %d) = %v, want %v", tt.prog, tt.pc, got, tt.want)
		}
	}
}
