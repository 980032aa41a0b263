package unwind

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"testing"
)

// ehFrame builds a .eh_frame section at address addr: one CIE "zR" with
// pc-relative 4-byte pointers (GCC's), and one FDE per entry.
func ehFrame(addr uint64, fdes ...fdeSpec) []byte {
	le := binary.LittleEndian
	cie := []byte{0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, RegSP, 8, 0x80 | RegRA, 1}
	for len(cie)%8 != 4 {
		cie = append(cie, 0)
	}
	out := le.AppendUint32(nil, uint32(len(cie)))
	out = append(out, cie...)
	for _, f := range fdes {
		start := len(out)
		body := le.AppendUint32(nil, uint32(start+4)) // back to the CIE at 0
		pcField := addr + uint64(start) + 8
		body = le.AppendUint32(body, uint32(int32(int64(f.begin)-int64(pcField))))
		body = le.AppendUint32(body, uint32(f.size))
		body = append(body, 0) // augmentation data length
		body = append(body, f.prog...)
		for (len(body)+4)%8 != 0 {
			body = append(body, 0)
		}
		out = le.AppendUint32(out, uint32(len(body)))
		out = append(out, body...)
	}
	return le.AppendUint32(out, 0) // the zero terminator
}

// minimalELF wraps a section in an x86-64 ELF file with no segments: the
// header, the section's bytes, .shstrtab and three section headers.
func minimalELF(name string, data []byte, addr uint64) []byte {
	le := binary.LittleEndian
	shstr := append([]byte{0}, []byte(name+"\x00.shstrtab\x00")...)
	dataOff := uint64(64)
	strOff := dataOff + uint64(len(data))
	shOff := (strOff + uint64(len(shstr)) + 7) &^ 7
	out := make([]byte, 64)
	copy(out, []byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), 1})
	le.PutUint16(out[16:], uint16(elf.ET_DYN))
	le.PutUint16(out[18:], uint16(elf.EM_X86_64))
	le.PutUint32(out[20:], 1)
	le.PutUint64(out[40:], shOff)
	le.PutUint16(out[52:], 64) // e_ehsize
	le.PutUint16(out[58:], 64) // e_shentsize
	le.PutUint16(out[60:], 3)  // e_shnum
	le.PutUint16(out[62:], 2)  // e_shstrndx
	out = append(out, data...)
	out = append(out, shstr...)
	for uint64(len(out)) < shOff {
		out = append(out, 0)
	}
	sh := func(nameOff uint32, typ elf.SectionType, flags elf.SectionFlag, addr, off, size uint64) {
		b := make([]byte, 64)
		le.PutUint32(b[0:], nameOff)
		le.PutUint32(b[4:], uint32(typ))
		le.PutUint64(b[8:], uint64(flags))
		le.PutUint64(b[16:], addr)
		le.PutUint64(b[24:], off)
		le.PutUint64(b[32:], size)
		le.PutUint64(b[48:], 1)
		out = append(out, b...)
	}
	sh(0, elf.SHT_NULL, 0, 0, 0, 0)
	sh(1, elf.SHT_PROGBITS, elf.SHF_ALLOC, addr, dataOff, uint64(len(data)))
	sh(uint32(len(name)+2), elf.SHT_STRTAB, 0, 0, strOff, uint64(len(shstr)))
	return out
}

// testFDEs are the programs of testTable, at addresses an .eh_frame at
// 0x400 can point to.
var testFDEs = []fdeSpec{
	{0x1000, 0x10, []byte{cfaAdvance1, cfaDefCFAOffset, 16, cfaOffsetBP, 2, cfaAdvance1, cfaRestoreRA, cfaAdvance1, cfaUndefined, RegRA}},
	{0x2000, 0x10, []byte{cfaDefCFAOffset, 0}},
	// A CFA expression (glibc's signal frame): *(rsp+160).
	{0x3000, 0x10, []byte{0x0f, 4, 0x77, 0xa0, 0x01, 0x06}},
}

func TestMinimalELF(t *testing.T) {
	for _, tt := range []struct {
		section string
		data    []byte
		addr    uint64
	}{
		{".eh_frame", ehFrame(0x400, testFDEs...), 0x400},
		{".debug_frame", debugFrame(testFDEs...), 0},
	} {
		tab, err := FromELF(bytes.NewReader(minimalELF(tt.section, tt.data, tt.addr)))
		if err != nil {
			t.Fatalf("%s: %v", tt.section, err)
		}
		if tab.Section() != tt.section || tab.Len() != 3 {
			t.Errorf("%s: table of %s with %d FDEs, want 3", tt.section, tab.Section(), tab.Len())
		}
		row, err := tab.RowAt(0x1001)
		want := Row{Begin: 0x1000, End: 0x1010, CFA: Rule{Kind: RegOffset, Reg: RegSP, Offset: 16}, RA: Rule{Kind: Offset, Offset: -8}, BP: Rule{Kind: Offset, Offset: -16}}
		if err != nil || !rowEqual(row, want) {
			t.Errorf("%s: RowAt(0x1001) = %+v, %v; want %+v", tt.section, row, err, want)
		}
	}
	if _, err := FromELF(bytes.NewReader(minimalELF(".text", []byte{0xc3}, 0x1000))); err == nil {
		t.Errorf("FromELF of an object without CFI: no error")
	}
}

// checkTable asks a table for rows and walks a stack made of data with it:
// neither may panic, and a row must lie in its FDE.
func checkTable(t *testing.T, tab *Table, data []byte) {
	u := &Unwinder{Lookup: func(uint64) (Object, bool) { return Object{Table: tab}, true }, MaxDepth: 16}
	for i := 0; i < tab.Len() && i < 32; i++ {
		begin, end := tab.FDE(i)
		for _, pc := range []uint64{begin, begin + 1, (begin + end) / 2, end - 1} {
			row, err := tab.RowAt(pc)
			if err == nil && (pc < row.Begin || pc >= row.End) {
				t.Fatalf("RowAt(%#x) = FDE [%#x,%#x)", pc, row.Begin, row.End)
			}
			u.Unwind(nil, Regs{IP: pc, SP: 0x1000, BP: 0x1008}, Stack{Base: 0x1000, Bytes: data})
		}
	}
}

func FuzzFromELF(f *testing.F) {
	f.Add(minimalELF(".eh_frame", ehFrame(0x400, testFDEs...), 0x400))
	f.Add(minimalELF(".debug_frame", debugFrame(testFDEs...), 0))
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tab, err := FromELF(bytes.NewReader(data))
		if (tab == nil) == (err == nil) {
			t.Fatalf("FromELF = %v, %v: want a table or an error", tab, err)
		}
		if tab != nil {
			checkTable(t, tab, data)
		}
	})
}

func FuzzEHFrame(f *testing.F) {
	f.Add(ehFrame(0x400, testFDEs...), uint64(0x400), false)
	f.Add(debugFrame(testFDEs...), uint64(0), true)
	if lf, err := elf.Open("/lib/x86_64-linux-gnu/libc.so.6"); err == nil {
		if s := lf.Section(".eh_frame"); s != nil {
			if data, err := s.Data(); err == nil {
				f.Add(data[:min(len(data), 4096)], s.Addr, false)
			}
		}
		lf.Close()
	} else if !os.IsNotExist(err) {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, addr uint64, debug bool) {
		tab, err := fromSection(data, binary.LittleEndian, addr, !debug)
		if (tab == nil) == (err == nil) {
			t.Fatalf("fromSection = %v, %v: want a table or an error", tab, err)
		}
		if tab != nil {
			checkTable(t, tab, data)
		}
	})
}
