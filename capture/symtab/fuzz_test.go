package symtab

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func FuzzParseMaps(f *testing.F) {
	for _, s := range []string{
		"55d8561c9000-55d8561cb000 r--p 00000000 fe:00 247026                     /usr/bin/cat\n",
		"5581e2a82000-5581e3408000 r-xp 00682000 08:01 1835121 /usr/sbin/mariadbd (deleted)\n",
		"7ffd3a5f4000-7ffd3a5f6000 r-xp 00000000 00:00 0                          [vdso]\n7f3a1c400000-7f3a1c421000 rw-p 00000000 00:00 0 \n",
		"7f3a1d000000-7f3a1d001000 r-xp 00001000 fe:00 42 /opt/my server/lib my.so\n\n",
		"2000-1000 r-xp 00000000 fe:00 1 /x",
		"",
	} {
		f.Add([]byte(s))
	}
	if data, err := os.ReadFile("/proc/self/maps"); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		maps, err := ParseMaps(data)
		if err != nil {
			if maps != nil || !errors.Is(err, ErrMalformed) {
				t.Fatalf("ParseMaps = %v, %v: want no mappings and ErrMalformed with an error", maps, err)
			}
			return
		}
		var b strings.Builder
		for _, m := range maps {
			if m.End < m.Start || len(m.Perms) != 4 {
				t.Fatalf("ParseMaps accepted %+v", m)
			}
			b.WriteString(m.String() + "\n")
		}
		again, err := ParseMaps([]byte(b.String()))
		if err != nil || len(again) != len(maps) || (len(maps) > 0 && !reflect.DeepEqual(again, maps)) {
			t.Fatalf("round trip of %q: %+v, %v, want %+v", b.String(), again, err, maps)
		}
	})
}

func FuzzParseKallsyms(f *testing.F) {
	f.Add([]byte(kallsymsText), uint64(0xffffffff81382889))
	f.Add([]byte("0000000000000000 T _stext\n"), uint64(0))
	f.Add([]byte("ffffffffc0a00000 t ext4_write_inode\t[ext4]\nffffffff81000000 T _stext\n"), uint64(0xffffffffc0a00001))
	f.Add([]byte("ffffffff81000000 T a\nffffffff81000000 W b\nffffffff81000000 t c\n"), uint64(0xffffffff81000000))
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		k, err := ParseKallsyms(bytes.NewReader(data))
		if (k == nil) == (err == nil) {
			t.Fatalf("ParseKallsyms = %v, %v: want exactly one of them", k, err)
		}
		if err != nil {
			return
		}
		fr := k.Resolve(addr)
		if fr.DSO == "" || fr.PerfAddr != addr || (fr.Sym == "" && fr.Offset != 0) {
			t.Fatalf("Resolve(%#x) = %+v", addr, fr)
		}
		if fr.Sym != "" {
			// the symbol came from the input, at addr - Offset
			if !bytes.Contains(data, []byte(fr.Sym)) || fr.Offset > addr {
				t.Fatalf("Resolve(%#x) = %+v: not from the input", addr, fr)
			}
		}
	})
}

// FuzzParseELF feeds mutated ELF images (the vdso of this process, when
// readable) to ParseELF: no panic, an object or an error, and lookups
// that stay inside the symbol found.
func FuzzParseELF(f *testing.F) {
	if maps, err := os.ReadFile("/proc/self/maps"); err == nil {
		if ms, err := ParseMaps(maps); err == nil {
			for _, m := range ms {
				if m.Path == "[vdso]" {
					if r, err := readMem("/proc/self/mem", m); err == nil {
						buf := make([]byte, m.End-m.Start)
						if _, err := r.ReadAt(buf, 0); err == nil {
							f.Add(buf, uint64(0x700))
						}
					}
				}
			}
		}
	}
	f.Add([]byte("\x7fELF\x02\x01\x01"), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, off uint64) {
		obj, err := ParseELF(bytes.NewReader(data), bytes.NewReader(data))
		if (obj == nil) == (err == nil) {
			t.Fatalf("ParseELF = %v, %v: want exactly one of them", obj, err)
		}
		if err != nil {
			return
		}
		if _, symOff, ok := obj.Lookup(off); ok && symOff > off {
			t.Fatalf("Lookup(%#x) offset %#x beyond the address", off, symOff)
		}
	})
}
