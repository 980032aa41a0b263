package unwind

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The fixture of the memo's section 5.1: main (frame pointers) → a (no
// frame pointer, its own object file) → b (in a shared library built
// without frame pointers, which zeroes rbp before calling back, as glibc
// 2.36's __send leaves rbp holding a scratch value) → c (frame pointer, a
// callback) → leaf (frame pointer), which captures its registers and its
// stack and writes them with /proc/self/maps. The true stack is known from
// the source: leaf, c, b, a, main, then glibc's start code and _start.

const fixtureLib = `
volatile long nofp_sink;
__attribute__((noinline)) long b(long (*cb)(long), long n) {
	volatile char buf[64];
	for (int i = 0; i < 64; i++) buf[i] = (char)(n + i);
	/* rbp as a scratch register: a frame-pointer walk through here stops. */
	__asm__ volatile("xor %%ebp, %%ebp" ::: "rbp");
	long r = cb(n + buf[3]);
	nofp_sink += r;
	return r + 1;
}
`

const fixtureA = `
long b(long (*cb)(long), long n);
long c(long);
__attribute__((noinline)) long a(long n) {
	volatile long x[4] = {n, n + 1, n + 2, n + 3};
	long r = b(c, x[2]);
	return r + x[1];
}
`

const fixtureMain = `
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>

long a(long);
static const char *outdir;
volatile long sink;

static void write_file(const char *name, const void *p, size_t n) {
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", outdir, name);
	FILE *f = fopen(path, "w");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0) { perror(path); exit(2); }
}

__attribute__((noinline)) static void dump(unsigned long ip, unsigned long sp, unsigned long bp) {
	static char maps[1 << 20];
	FILE *f = fopen("/proc/self/maps", "r");
	size_t n = fread(maps, 1, sizeof maps - 1, f);
	fclose(f);
	maps[n] = 0;
	unsigned long end = 0;
	for (char *line = maps; line && *line; ) {
		char *nl = strchr(line, '\n');
		if (nl) *nl = 0;
		unsigned long lo, hi;
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) end = hi;
		if (nl) *nl = '\n';
		line = nl ? nl + 1 : 0;
	}
	if (end <= sp) { fprintf(stderr, "no [stack] above sp\n"); exit(2); }
	write_file("stack.bin", (const void *)sp, end - sp);
	write_file("maps.txt", maps, n);
	char regs[128];
	int m = snprintf(regs, sizeof regs, "%lx %lx %lx\n", ip, sp, bp);
	write_file("regs.txt", regs, (size_t)m);
}

__attribute__((noinline)) long leaf(long n) {
	unsigned long ip, sp, bp;
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
	dump(ip, sp, bp);
	return n * 2 + sink;
}

#ifdef VIA_SIGNAL
static volatile long sig_n;
__attribute__((noinline)) static void handler(int sig) { sink += leaf(sig_n + sig); }
__attribute__((noinline)) long c(long n) {
	sig_n = n;
	signal(SIGUSR1, handler);
	raise(SIGUSR1);
	return sink + 1;
}
#else
__attribute__((noinline)) long c(long n) {
	volatile long y = n;
	return leaf(y) + 1;
}
#endif

int main(int argc, char **argv) {
	outdir = argv[1];
	long r = a(argc);
	return r == 12345 ? 1 : 0;
}
`

// fixture is one run of the fixture program: its capture and the files
// that were mapped.
type fixture struct {
	dir   string
	regs  Regs
	stack Stack
	maps  []mapping
}

type mapping struct {
	start, end, off uint64
	path            string
}

// variants of the fixture: how main.c is compiled.
var fixtureVariants = map[string][]string{
	// Every function has CFI (gcc's default unwind tables).
	"cfi": nil,
	// main.c without unwind tables: leaf, c and main have frame pointers
	// only, so the walk mixes the two methods.
	"hybrid": {"-fno-asynchronous-unwind-tables", "-fno-unwind-tables"},
	// c raises a signal whose handler calls leaf: the walk goes through
	// glibc's __restore_rt (a signal frame, CFA by a DWARF expression).
	"signal": {"-DVIA_SIGNAL"},
}

// buildFixture compiles the variant in tb.TempDir(), runs it and reads
// its capture. It skips without gcc or off x86-64 Linux.
func buildFixture(tb testing.TB, variant string) *fixture {
	tb.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		tb.Skip("gcc not found: the fixture is built in the test")
	}
	if _, err := os.Stat("/proc/self/maps"); err != nil {
		tb.Skip("no /proc/self/maps: the fixture runs on Linux")
	}
	if out, err := exec.Command("gcc", "-dumpmachine").Output(); err != nil || !strings.HasPrefix(string(out), "x86_64") {
		tb.Skipf("gcc does not target x86-64 (%q, %v)", out, err)
	}
	dir := tb.TempDir()
	for name, src := range map[string]string{"libnofp.c": fixtureLib, "a.c": fixtureA, "main.c": fixtureMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	steps := [][]string{
		{"-O2", "-fomit-frame-pointer", "-shared", "-fPIC", "-o", "libnofp.so", "libnofp.c"},
		{"-O2", "-fomit-frame-pointer", "-c", "-o", "a.o", "a.c"},
		append(append([]string{"-O2", "-fno-omit-frame-pointer"}, fixtureVariants[variant]...), "-c", "-o", "main.o", "main.c"),
		{"-o", "prog", "main.o", "a.o", "-L.", "-lnofp", "-Wl,-rpath," + dir},
	}
	for _, args := range steps {
		cmd := exec.Command("gcc", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			tb.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		tb.Fatal(err)
	}
	if msg, err := exec.Command(filepath.Join(dir, "prog"), out).CombinedOutput(); err != nil {
		tb.Fatalf("run fixture: %v\n%s", err, msg)
	}
	fx := &fixture{dir: dir}
	regs, err := os.ReadFile(filepath.Join(out, "regs.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	f := strings.Fields(string(regs))
	if len(f) != 3 {
		tb.Fatalf("regs.txt: %q", regs)
	}
	for i, p := range []*uint64{&fx.regs.IP, &fx.regs.SP, &fx.regs.BP} {
		if *p, err = strconv.ParseUint(f[i], 16, 64); err != nil {
			tb.Fatal(err)
		}
	}
	if fx.stack.Bytes, err = os.ReadFile(filepath.Join(out, "stack.bin")); err != nil {
		tb.Fatal(err)
	}
	fx.stack.Base = fx.regs.SP
	maps, err := os.ReadFile(filepath.Join(out, "maps.txt"))
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[5], "/") {
			continue
		}
		var m mapping
		lo, hi, _ := strings.Cut(f[0], "-")
		m.start, _ = strconv.ParseUint(lo, 16, 64)
		m.end, _ = strconv.ParseUint(hi, 16, 64)
		m.off, _ = strconv.ParseUint(f[2], 16, 64)
		m.path = f[5]
		fx.maps = append(fx.maps, m)
	}
	return fx
}

// objects resolves runtime pcs of a fixture to tables and symbols, from the
// real ELF files named in its maps.
type objects struct {
	fx     *fixture
	mu     sync.Mutex
	tables map[string]*Table
	syms   map[string][]elf.Symbol
	bias   map[mapping]uint64
}

func newObjects(fx *fixture) *objects {
	return &objects{fx: fx, tables: map[string]*Table{}, syms: map[string][]elf.Symbol{}, bias: map[mapping]uint64{}}
}

func (o *objects) mappingOf(pc uint64) (mapping, bool) {
	for _, m := range o.fx.maps {
		if m.start <= pc && pc < m.end {
			return m, true
		}
	}
	return mapping{}, false
}

// loadBias is start - (the file address of the mapping's first byte), from
// the PT_LOAD segment holding the mapping's file offset.
func loadBias(tb testing.TB, m mapping) uint64 {
	f, err := elf.Open(m.path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Off&^(p.Align-1) <= m.off && m.off < p.Off+p.Filesz {
			return m.start - (p.Vaddr - p.Off + m.off)
		}
	}
	tb.Fatalf("%s: no PT_LOAD for offset %#x", m.path, m.off)
	return 0
}

func (o *objects) lookup(tb testing.TB) func(uint64) (Object, bool) {
	return func(pc uint64) (Object, bool) {
		m, ok := o.mappingOf(pc)
		if !ok {
			return Object{}, false
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		t, ok := o.tables[m.path]
		if !ok {
			var err error
			if t, err = FromFile(m.path); err != nil {
				tb.Logf("no CFI: %v", err)
				t = nil
			}
			o.tables[m.path] = t
		}
		b, ok := o.bias[m]
		if !ok {
			b = loadBias(tb, m)
			o.bias[m] = b
		}
		return Object{Table: t, Bias: b, Name: m.path}, true
	}
}

// symbolize names the frames from ELF symbols: .symtab, .dynsym, and for
// files without .symtab (libc) the debug file found by build id, if any.
// A return address is named by pc-1.
func (o *objects) symbolize(tb testing.TB, frames []Frame) []string {
	lookup := o.lookup(tb)
	var names []string
	for i, fr := range frames {
		obj, ok := lookup(fr.PC)
		if !ok {
			names = append(names, fmt.Sprintf("%#x", fr.PC))
			continue
		}
		addr := fr.PC - obj.Bias
		if i > 0 {
			addr--
		}
		names = append(names, o.symbolAt(tb, obj.Name, addr))
	}
	return names
}

func (o *objects) symbolAt(tb testing.TB, path string, addr uint64) string {
	syms, ok := o.syms[path]
	if !ok {
		syms = elfSymbols(tb, path)
		o.syms[path] = syms
	}
	for _, s := range syms {
		if s.Value <= addr && addr < s.Value+s.Size {
			return s.Name
		}
	}
	// A label without a size (glibc's __restore_rt): the pc itself, or the
	// return address one byte past a pc-1.
	for _, s := range syms {
		if s.Size == 0 && (s.Value == addr || s.Value == addr+1) {
			return s.Name
		}
	}
	return fmt.Sprintf("%s+%#x", filepath.Base(path), addr)
}

func elfSymbols(tb testing.TB, path string) []elf.Symbol {
	f, err := elf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var syms []elf.Symbol
	if s, err := f.Symbols(); err == nil {
		syms = append(syms, s...)
	} else if id := buildID(f); id != "" {
		if df, err := elf.Open(filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")); err == nil {
			s, _ := df.Symbols()
			syms = append(syms, s...)
			df.Close()
		}
	}
	ds, _ := f.DynamicSymbols()
	syms = append(syms, ds...)
	return slices.DeleteFunc(syms, func(s elf.Symbol) bool {
		return elf.ST_TYPE(s.Info) != elf.STT_FUNC
	})
}

func buildID(f *elf.File) string {
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return ""
	}
	d, err := s.Data()
	if err != nil || len(d) < 16 {
		return ""
	}
	namesz := f.ByteOrder.Uint32(d[0:])
	descsz := f.ByteOrder.Uint32(d[4:])
	start := 12 + (namesz+3)&^3
	if uint64(start)+uint64(descsz) > uint64(len(d)) {
		return ""
	}
	return hex.EncodeToString(d[start : start+descsz])
}

// libcStart are the names glibc's start code may have between main and
// _start (2.34+: __libc_start_call_main under __libc_start_main_impl,
// exported as __libc_start_main; older: __libc_start_main alone).
var libcStart = []string{"__libc_start_call_main", "__libc_start_main_impl", "__libc_start_main", "__libc_start_main_alias_2"}

func TestFixture(t *testing.T) {
	tests := []struct {
		variant string
		// want are the frames from the leaf up to main; after main come
		// glibc's start frames and _start, the root.
		want []string
		// methods of those frames: 'c' cfi, 'f' fp.
		methods string
	}{
		{"cfi", []string{"leaf", "c", "b", "a", "main"}, "ccccc"},
		{"hybrid", []string{"leaf", "c", "b", "a", "main"}, "ffccf"},
	}
	for _, tt := range tests {
		t.Run(tt.variant, func(t *testing.T) {
			fx := buildFixture(t, tt.variant)
			objs := newObjects(fx)
			u := &Unwinder{Lookup: objs.lookup(t)}
			frames, end := u.Unwind(nil, fx.regs, fx.stack)
			names := objs.symbolize(t, frames)
			t.Logf("%s: %v, end %v, methods %s", tt.variant, names, end, methodString(frames))
			checkFullStack(t, names, frames, end, tt.want, tt.methods)
			libnofp := frames[2].Object
			if filepath.Base(libnofp) != "libnofp.so" {
				t.Errorf("frame b's object = %q, want libnofp.so", libnofp)
			}
		})
	}
}

// checkFullStack checks want (with their methods) then libc start frames
// then _start, and that the walk ended at the root.
func checkFullStack(t *testing.T, names []string, frames []Frame, end End, want []string, methods string) {
	t.Helper()
	if end != EndRoot {
		t.Errorf("walk ended by %v, want %v", end, EndRoot)
	}
	if len(names) < len(want)+2 || !slices.Equal(names[:len(want)], want) {
		t.Fatalf("frames %v, want %v then glibc's start frames and _start", names, want)
	}
	if got := methodString(frames[:len(want)]); got != methods {
		t.Errorf("methods of %v = %s, want %s", want, got, methods)
	}
	tail := names[len(want):]
	if tail[len(tail)-1] != "_start" {
		t.Errorf("last frame %q, want _start (frames %v)", tail[len(tail)-1], names)
	}
	for i, name := range tail[:len(tail)-1] {
		fr := frames[len(want)+i]
		if filepath.Base(fr.Object) != "libc.so.6" {
			t.Errorf("frame %d %q in %q, want a glibc start frame in libc.so.6", len(want)+i, name, fr.Object)
		}
		if !strings.HasPrefix(name, "libc.so.6+") && !slices.Contains(libcStart, name) {
			t.Errorf("frame %d %q, want one of %v", len(want)+i, name, libcStart)
		}
	}
	for i, fr := range frames[len(want):] {
		if fr.Method != MethodCFI {
			t.Errorf("frame %d (%s) unwound by %v, want cfi", len(want)+i, names[len(want)+i], fr.Method)
		}
	}
}

func methodString(frames []Frame) string {
	var b strings.Builder
	for _, f := range frames {
		b.WriteByte(f.Method.String()[0])
	}
	return b.String()
}

// TestFixtureSignal walks out of a signal handler through glibc's
// __restore_rt, whose CFA and saved registers are DWARF expressions that
// read the signal frame, and on through the interrupted raise().
func TestFixtureSignal(t *testing.T) {
	fx := buildFixture(t, "signal")
	objs := newObjects(fx)
	u := &Unwinder{Lookup: objs.lookup(t)}
	frames, end := u.Unwind(nil, fx.regs, fx.stack)
	names := objs.symbolize(t, frames)
	t.Logf("signal: %v, end %v, methods %s", names, end, methodString(frames))
	if len(names) < 3 || names[0] != "leaf" || names[1] != "handler" {
		t.Fatalf("frames %v, want leaf, handler, the signal trampoline, …", names)
	}
	// The trampoline is a libc frame; without libc's debug symbols it has
	// no name, so find c and check what lies between.
	ci := slices.Index(names, "c")
	if ci < 0 {
		t.Fatalf("frames %v: no c after the signal frame", names)
	}
	for i := 2; i < ci; i++ {
		if filepath.Base(frames[i].Object) != "libc.so.6" {
			t.Errorf("frame %d %q in %q, want libc (trampoline, raise)", i, names[i], frames[i].Object)
		}
	}
	// With libc's symbols (libc6-dbg) the frame after the handler is the
	// trampoline; the pc after it is an interrupted one, not a return address.
	if names[2] != "__restore_rt" && !strings.HasPrefix(names[2], "libc.so.6+") {
		t.Errorf("frame 2 %q, want __restore_rt", names[2])
	}
	obj, _ := u.Lookup(frames[2].PC)
	if row, err := obj.Table.RowAt(frames[2].PC - obj.Bias - 1); err != nil || !row.Signal {
		t.Errorf("row of the trampoline %#x = %+v, %v; want a signal frame", frames[2].PC, row, err)
	}
	if ci <= 3 {
		t.Errorf("frames %v: nothing between the trampoline and c (raise's frames)", names)
	}
	checkFullStack(t, names[ci:], frames[ci:], end, []string{"c", "b", "a", "main"}, "cccc")
}

// TestFixtureFramePointerOnly shows what the CFI adds: on the same capture,
// a frame-pointer walk (as the kernel's) stops in b, which zeroed rbp, and
// never sees a or main or the root.
func TestFixtureFramePointerOnly(t *testing.T) {
	fx := buildFixture(t, "cfi")
	objs := newObjects(fx)
	u := &Unwinder{Lookup: objs.lookup(t), FramePointerOnly: true}
	frames, end := u.Unwind(nil, fx.regs, fx.stack)
	names := objs.symbolize(t, frames)
	t.Logf("frame pointers only: %v, end %v", names, end)
	// leaf's and c's frames chain through rbp to the return into b; b
	// zeroed rbp before calling c, so the chain ends there.
	if want := []string{"leaf", "c", "b"}; !slices.Equal(names, want) || end != EndNoTable {
		t.Errorf("frame-pointer walk = %v, %v; want %v, %v", names, end, want, EndNoTable)
	}
	if slices.Contains(names, "a") || slices.Contains(names, "main") || end == EndRoot {
		t.Errorf("frame-pointer walk %v reached a, main or the root: the fixture no longer shows what CFI adds", names)
	}
	for _, f := range frames {
		if f.Method == MethodCFI {
			t.Errorf("frame %#x unwound by cfi with FramePointerOnly", f.PC)
		}
	}
}

func BenchmarkUnwind(b *testing.B) {
	fx := buildFixture(b, "cfi")
	objs := newObjects(fx)
	u := &Unwinder{Lookup: objs.lookup(b)}
	frames, end := u.Unwind(nil, fx.regs, fx.stack)
	if end != EndRoot {
		b.Fatalf("walk ended by %v", end)
	}
	// A lookup as capture will have it: a sorted slice of mappings.
	type entry struct {
		start, end uint64
		obj        Object
	}
	var entries []entry
	for _, m := range fx.maps {
		obj, _ := u.Lookup(m.start)
		entries = append(entries, entry{m.start, m.end, obj})
	}
	u.Lookup = func(pc uint64) (Object, bool) {
		for i := range entries {
			if entries[i].start <= pc && pc < entries[i].end {
				return entries[i].obj, true
			}
		}
		return Object{}, false
	}
	buf := make([]Frame, 0, DefaultMaxDepth)
	// warm: the rows are cached, as for the pcs a profile keeps hitting.
	b.Run("warm", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = u.Unwind(buf[:0], fx.regs, fx.stack)
		}
		b.ReportMetric(float64(len(frames)), "frames/op")
	})
	// cold: every row established by delve again (the caches emptied).
	b.Run("cold", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, e := range entries {
				if e.obj.Table != nil {
					e.obj.Table.mu.Lock()
					clear(e.obj.Table.cache)
					e.obj.Table.mu.Unlock()
				}
			}
			buf, _ = u.Unwind(buf[:0], fx.regs, fx.stack)
		}
		b.ReportMetric(float64(len(frames)), "frames/op")
	})
}
