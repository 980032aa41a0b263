package symtab

import (
	"bytes"
	"debug/elf"
	"io"
	"os"
	"reflect"
	"runtime"
	"testing"
)

// TestMappedSelf: the test binary (non-PIE, as go test links it on
// linux/amd64) has bias 0, and the vdso, which the kernel links at address
// 0, has its mapping's start as bias; FindSymbols places
// __vdso_clock_gettime where the vdso's own ELF dynamic symbols say,
// read with debug/elf from the process's memory.
func TestMappedSelf(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs /proc on linux/amd64")
	}
	p, err := NewProcess("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ef, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	typ := ef.Type
	ef.Close()
	pc := uint64(reflect.ValueOf(resolveMe).Pointer())
	mp, ok := p.Mapped(pc)
	if !ok {
		t.Fatalf("Mapped(resolveMe) found nothing")
	}
	if mp.DSO != exe || mp.Key == "" || !mp.Mapping.Contains(pc) {
		t.Errorf("Mapped(resolveMe) = %+v, want %s with a key and its mapping", mp, exe)
	}
	if typ == elf.ET_EXEC && mp.Bias != 0 {
		t.Errorf("Mapped(resolveMe).Bias = %#x in a non-PIE executable, want 0", mp.Bias)
	}
	if _, ok := p.Mapped(0x10); ok {
		t.Errorf("Mapped(0x10) found an object")
	}
	r, err := p.Open(mp)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if f, err := elf.NewFile(r); err != nil || f.Type != typ {
		t.Errorf("Open gave %v, %v: want the executable's ELF", f, err)
	}
	if c, ok := r.(interface{ Close() error }); ok {
		_ = c.Close()
	}

	var vdso Mapping
	for _, m := range p.Mappings() {
		if m.Path == "[vdso]" {
			vdso = m
		}
	}
	if vdso.Path == "" {
		t.Skip("no [vdso] mapping")
	}
	mem, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	img := make([]byte, vdso.End-vdso.Start)
	if _, err := mem.ReadAt(img, int64(vdso.Start)); err != nil {
		t.Fatal(err)
	}
	vf, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := vf.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var want elf.Symbol
	for _, s := range syms {
		if s.Name == "__vdso_clock_gettime" {
			want = s
		}
	}
	if want.Name == "" {
		t.Skip("no __vdso_clock_gettime in the vdso")
	}
	got := p.FindSymbols([]string{"__vdso_clock_gettime", "no_such_function"})
	if len(got) != 1 || got[0].DSO != "[vdso]" || got[0].Start != vdso.Start+want.Value || got[0].End != got[0].Start+want.Size {
		t.Errorf("FindSymbols(__vdso_clock_gettime) = %+v, want [vdso] at %#x, %d bytes", got, vdso.Start+want.Value, want.Size)
	}
	if mp, ok := p.Mapped(vdso.Start + want.Value); !ok || mp.Bias != vdso.Start || mp.DSO != "[vdso]" {
		t.Errorf("Mapped(__vdso_clock_gettime) = %+v, %v; want bias %#x (the vdso is linked at 0)", mp, ok, vdso.Start)
	}
}

// Preload reads every executable mapping's object once, so that resolving
// an address afterwards opens no file.
func TestPreload(t *testing.T) {
	s := buildSymtest(t)
	opens := 0
	counting := func(path string) (io.ReaderAt, error) {
		opens++
		return openFile(path)
	}
	p := NewProcessFromMaps(loadMappings(t, s.pie), counting)
	p.SetDebugRoot("")
	p.Preload()
	if opens == 0 {
		t.Fatal("Preload opened no file")
	}
	after := opens
	vals := symbolValues(t, s.pie)
	for mangled, want := range wantNames {
		if fr := p.Resolve(vals[mangled] + 2); fr.Sym != want {
			t.Errorf("Resolve(%s+2) = %q, want %q", mangled, fr.Sym, want)
		}
	}
	if _, ok := p.Mapped(vals["main"]); !ok {
		t.Errorf("Mapped(main) found nothing")
	}
	if opens != after {
		t.Errorf("resolving after Preload opened %d files, want none", opens-after)
	}
}
