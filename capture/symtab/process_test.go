package symtab

import (
	"debug/elf"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// fakeProc is a /proc tree for one process in a temporary directory.
type fakeProc struct {
	root string
	pid  int
	dir  string
}

func newFakeProc(t *testing.T) fakeProc {
	t.Helper()
	root := t.TempDir()
	fp := fakeProc{root: root, pid: 4242, dir: filepath.Join(root, "4242")}
	for _, d := range []string{"root/usr/lib", "map_files"} {
		if err := os.MkdirAll(filepath.Join(fp.dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return fp
}

func (fp fakeProc) writeMaps(t *testing.T, maps []Mapping) {
	t.Helper()
	var b strings.Builder
	for _, m := range maps {
		b.WriteString(m.String() + "\n")
	}
	if err := os.WriteFile(filepath.Join(fp.dir, "maps"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) uint64 {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(to)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no inode numbers on this system")
	}
	return st.Ino
}

// textMapping maps the executable PT_LOAD of path at base.
func textMapping(t *testing.T, path, mapsPath string, inode, base uint64) (Mapping, *elf.ProgHeader) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Flags&elf.PF_X != 0 {
			ph := p.ProgHeader
			return Mapping{Start: base + p.Vaddr&^0xfff, End: base + (p.Vaddr+p.Filesz+0xfff)&^0xfff, Offset: p.Off &^ 0xfff,
				Perms: "r-xp", Dev: "fe:00", Inode: inode, Path: mapsPath}, &ph
		}
	}
	t.Fatalf("no executable segment in %s", path)
	return Mapping{}, nil
}

func TestProcessFakeProc(t *testing.T) {
	s := buildSymtest(t)
	vals := symbolValues(t, s.lib)
	const libPath = "/usr/lib/libsymtest.so"
	const base = 0x7f0000000000

	tests := []struct {
		name  string
		setup func(t *testing.T, fp fakeProc) Mapping
		want  string // symbol of lib_exported+4, "" for unknown
	}{
		{"through root", func(t *testing.T, fp fakeProc) Mapping {
			ino := copyFile(t, s.lib, filepath.Join(fp.dir, "root", libPath))
			m, _ := textMapping(t, s.lib, libPath, ino, base)
			return m
		}, "lib_exported"},
		{"replaced on disk", func(t *testing.T, fp fakeProc) Mapping {
			ino := copyFile(t, s.lib, filepath.Join(fp.dir, "root", libPath))
			m, _ := textMapping(t, s.lib, libPath, ino+1, base)
			return m
		}, ""},
		{"deleted without map_files", func(t *testing.T, fp fakeProc) Mapping {
			ino := copyFile(t, s.lib, filepath.Join(fp.dir, "root", libPath))
			m, _ := textMapping(t, s.lib, libPath, ino, base)
			m.Deleted = true
			return m
		}, ""},
		{"deleted through map_files", func(t *testing.T, fp fakeProc) Mapping {
			m, _ := textMapping(t, s.lib, libPath, 7, base)
			m.Deleted = true
			copyFile(t, s.lib, filepath.Join(fp.dir, "map_files", fmt.Sprintf("%x-%x", m.Start, m.End)))
			return m
		}, "lib_exported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fp := newFakeProc(t)
			m := tt.setup(t, fp)
			fp.writeMaps(t, []Mapping{m})
			p, err := NewProcess(fp.root, fp.pid)
			if err != nil {
				t.Fatal(err)
			}
			p.SetDebugRoot("")
			_, ph := textMapping(t, s.lib, libPath, 0, base)
			addr := m.Start + (vals["lib_exported"] - ph.Vaddr&^0xfff) + 4
			fr := p.Resolve(addr)
			if fr.Sym != tt.want || fr.DSO != m.DSO() {
				t.Errorf("Resolve(lib_exported+4) = %+v, want Sym %q DSO %q", fr, tt.want, m.DSO())
			}
		})
	}
}

// TestProcessRefreshKeepsOldMappings: after a library is unmapped, its
// addresses still resolve; a new mapping at the same place wins.
func TestProcessRefreshKeepsOldMappings(t *testing.T) {
	s := buildSymtest(t)
	fp := newFakeProc(t)
	const libPath = "/usr/lib/libsymtest.so"
	ino := copyFile(t, s.lib, filepath.Join(fp.dir, "root", libPath))
	m, ph := textMapping(t, s.lib, libPath, ino, 0x7f0000000000)
	fp.writeMaps(t, []Mapping{m})
	p, err := NewProcess(fp.root, fp.pid)
	if err != nil {
		t.Fatal(err)
	}
	addr := m.Start + symbolValues(t, s.lib)["lib_exported"] - ph.Vaddr&^0xfff
	if fr := p.Resolve(addr); fr.Sym != "lib_exported" {
		t.Fatalf("Resolve before dlclose = %+v", fr)
	}
	fp.writeMaps(t, nil)
	if err := p.Refresh(); err != nil {
		t.Fatal(err)
	}
	if len(p.Mappings()) != 0 {
		t.Errorf("Mappings after Refresh = %v, want none", p.Mappings())
	}
	if fr := p.Resolve(addr); fr.Sym != "lib_exported" {
		t.Errorf("Resolve after dlclose = %+v, want lib_exported from the old mapping", fr)
	}
	anon := Mapping{Start: m.Start, End: m.End, Perms: "rw-p", Dev: "00:00"}
	fp.writeMaps(t, []Mapping{anon})
	if err := p.Refresh(); err != nil {
		t.Fatal(err)
	}
	if fr := p.Resolve(addr); fr.Sym != "" || fr.DSO != "//anon" {
		t.Errorf("Resolve after the range was reused = %+v, want anonymous memory", fr)
	}
	if fr := p.Resolve(0x10); fr != (Frame{DSO: "[unknown]", PerfAddr: 0x10}) {
		t.Errorf("Resolve(unmapped) = %+v", fr)
	}
	os.Remove(filepath.Join(fp.dir, "maps"))
	if err := p.Refresh(); err == nil {
		t.Error("Refresh without a maps file: no error")
	}
}

//go:noinline
func resolveMe() int { return runtime.NumGoroutine() }

// TestProcessSelf resolves a function of this test binary and the vdso
// through the real /proc.
func TestProcessSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	p, err := NewProcess("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	pc := reflect.ValueOf(resolveMe).Pointer()
	fr := p.Resolve(uint64(pc) + 1)
	want, wantOff := runtime.FuncForPC(pc).Name(), uint64(1)
	exe, err := p.Object(uint64(pc))
	if err != nil {
		t.Fatal(err)
	}
	if exe.Source != ".symtab" { // go test links without .symtab (-race: with a small .dynsym)
		want, wantOff = fr.Sym, fr.Offset
	}
	if exe, _ := os.Executable(); fr.Sym != want || fr.Offset != wantOff || fr.DSO != exe {
		t.Errorf("Resolve(resolveMe+1) = %+v, want %q+%#x in %s", fr, want, wantOff, exe)
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
	obj, err := p.Object(vdso.Start)
	if err != nil {
		t.Skipf("vdso unreadable: %v", err)
	}
	if obj.Len() == 0 {
		t.Fatal("vdso has no symbols")
	}
	// perf prints __vdso_clock_gettime: the global name beats the weak
	// clock_gettime.
	for _, s := range obj.symbolsByStart() {
		if s.name == "__vdso_clock_gettime" {
			fr := p.Resolve(vdso.Start + s.start - vdso.Offset + 3)
			if fr.Sym != "__vdso_clock_gettime" || fr.Offset != 3 || fr.DSO != "[vdso]" {
				t.Errorf("Resolve(__vdso_clock_gettime+3) = %+v", fr)
			}
			return
		}
	}
	t.Errorf("no __vdso_clock_gettime in the vdso: %v", obj.symbolsByStart())
}

func TestProcessConcurrent(t *testing.T) {
	s := buildSymtest(t)
	maps := append(loadMappings(t, s.pie), Mapping{Start: 0x10000000, End: 0x10001000, Perms: "rw-p", Path: "[heap]"})
	p := NewProcessFromMaps(maps, openFile)
	vals := symbolValues(t, s.pie)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if fr := p.Resolve(vals["main"]); fr.Sym != "main" {
					t.Errorf("Resolve(main) = %+v", fr)
					return
				}
				p.Resolve(0x10000010)
			}
		}()
	}
	wg.Wait()
}

func TestProcessOpenError(t *testing.T) {
	m := Mapping{Start: 0x1000, End: 0x2000, Perms: "r-xp", Dev: "fe:00", Inode: 9, Path: "/missing.so"}
	p := NewProcessFromMaps([]Mapping{m}, func(string) (io.ReaderAt, error) { return nil, os.ErrNotExist })
	if fr := p.Resolve(0x1010); fr != (Frame{DSO: "/missing.so", PerfAddr: 0x10}) {
		t.Errorf("Resolve in an unreadable file = %+v", fr)
	}
	if _, err := p.Object(0x1010); err == nil {
		t.Error("Object of an unreadable file: no error")
	}
}

// TestProcessPinsFiles: a file opened when its mapping was first seen
// still resolves after it disappears from /proc (the process exited) and
// from disk.
func TestProcessPinsFiles(t *testing.T) {
	s := buildSymtest(t)
	vals := symbolValues(t, s.lib)
	const libPath = "/usr/lib/libsymtest.so"
	const base = 0x7f0000000000
	fp := newFakeProc(t)
	m, ph := textMapping(t, s.lib, libPath, 7, base)
	m.Deleted = true
	mf := filepath.Join(fp.dir, "map_files", fmt.Sprintf("%x-%x", m.Start, m.End))
	copyFile(t, s.lib, mf)
	fp.writeMaps(t, []Mapping{m})
	p, err := NewProcess(fp.root, fp.pid)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.SetDebugRoot("")
	if err := os.RemoveAll(fp.dir); err != nil {
		t.Fatal(err)
	}
	if err := p.Refresh(); err == nil {
		t.Error("Refresh of an exited process: no error")
	}
	addr := m.Start + (vals["lib_exported"] - ph.Vaddr&^0xfff) + 4
	if fr := p.Resolve(addr); fr.Sym != "lib_exported" {
		t.Errorf("Resolve after the process and file are gone = %+v, want lib_exported", fr)
	}
	notes := strings.Join(p.Notes(), "\n")
	if !strings.Contains(notes, libPath+" was deleted or replaced on disk") || !strings.Contains(notes, "read from the mapped file") {
		t.Errorf("Notes = %q, want the deleted library named", notes)
	}
}

func TestProcessNotes(t *testing.T) {
	s := buildSymtest(t)
	const base = 0x7f0000000000
	fp := newFakeProc(t)
	exeA, exeB := filepath.Join(fp.root, "a"), filepath.Join(fp.root, "b")
	copyFile(t, s.pie, exeA)
	copyFile(t, s.pie, exeB)
	if err := os.Symlink(exeA, filepath.Join(fp.dir, "exe")); err != nil {
		t.Fatal(err)
	}
	// Replaced on disk and not in map_files: unresolvable.
	ino := copyFile(t, s.lib, filepath.Join(fp.dir, "root", "/usr/lib/libsymtest.so"))
	m, _ := textMapping(t, s.lib, "/usr/lib/libsymtest.so", ino+1, base)
	fp.writeMaps(t, []Mapping{m})
	p, err := NewProcess(fp.root, fp.pid)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if n := p.Notes(); len(n) != 0 {
		t.Errorf("Notes before anything happened = %q, want none", n)
	}
	p.Resolve(m.Start + 16)
	p.Resolve(m.Start + 32)
	notes := p.Notes()
	if len(notes) != 1 || !strings.Contains(notes[0], "frames in /usr/lib/libsymtest.so stay unresolved") || !strings.Contains(notes[0], "replaced on disk") {
		t.Errorf("Notes after resolving in a replaced file = %q, want one note naming it", notes)
	}
	// An exec: /proc/PID/exe now points to another file.
	if err := os.Remove(filepath.Join(fp.dir, "exe")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(exeB, filepath.Join(fp.dir, "exe")); err != nil {
		t.Fatal(err)
	}
	if err := p.Refresh(); err != nil {
		t.Fatal(err)
	}
	notes = p.Notes()
	if len(notes) != 2 || !strings.Contains(notes[1], "exec'd "+exeB) || !strings.Contains(notes[1], "ran "+exeA) {
		t.Errorf("Notes after an exec = %q, want it named with both programs", notes)
	}
}
