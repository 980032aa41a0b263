package symtab

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// symtestLib is a shared object the test program links against.
const symtestLib = `
volatile unsigned long lib_sink;
static __attribute__((noipa)) void lib_static(long n) { for (long i = 0; i < n; i++) lib_sink += i * 3; }
namespace lib { struct Codec { __attribute__((noipa)) void decode(long n); }; }
void lib::Codec::decode(long n) { for (long i = 0; i < n; i++) lib_sink += i * 5; }
extern "C" __attribute__((noipa)) void lib_exported(long n) {
	for (long i = 0; i < n; i++) lib_sink += i;
	lib_static(n);
	lib::Codec c; c.decode(n);
}
`

// symtestProgram has the shapes of C++ names perf must print: namespaces,
// anonymous namespaces, static functions, templates, ABI tags, operators,
// lambdas, aliases and an assembly function without a size. Each function
// spins for argv[1] iterations so that perf can sample all of them.
const symtestProgram = `
#include <string>
#include <cstdlib>
volatile unsigned long sink;
#define SPIN for (long i = 0; i < n; i++) sink += i * __LINE__
#define noinline noipa
extern "C" void lib_exported(long n);
extern "C" __attribute__((noinline)) void c_function(long n) { SPIN; }
extern "C" void c_function_weak_alias(long) __attribute__((weak, alias("c_function")));
extern "C" void c_function_long_global_alias(long) __attribute__((alias("c_function")));
static __attribute__((noinline)) void static_helper(long n) { SPIN; }
namespace {
__attribute__((noinline)) void anon_helper(long n) { SPIN; }
struct AnonType { __attribute__((noinline)) void run(long n) { SPIN; } };
}
namespace outer { namespace inner {
struct Widget { __attribute__((noinline)) void compute(long n); __attribute__((noinline)) static int make(long n); };
void Widget::compute(long n) { SPIN; }
int Widget::make(long n) { SPIN; return 1; }
template <typename T> __attribute__((noinline)) T tmpl_add(T a, long n) { SPIN; return a + 1; }
template <typename T> __attribute__((noinline)) int tmpl_name(const T &a, long n) { SPIN; return a.size(); }
template <typename T, int N> struct Box { __attribute__((noinline)) T get(long n) const { SPIN; return N; } };
}}
__attribute__((noinline)) std::string make_string(long n) { SPIN; return std::string("x"); }
struct Vec { long x; __attribute__((noinline)) Vec operator+(const Vec &o) const; };
Vec Vec::operator+(const Vec &o) const { long n = o.x; SPIN; return Vec{x + 1}; }
__attribute__((noinline)) void run_lambda(long n) {
	auto f = [](long n) __attribute__((noinline)) { SPIN; };
	f(n);
}
asm(".text\n.type asm_nosize,@function\nasm_nosize:\n"
    "  mov %rdi, %rcx\n1: dec %rcx\n  jnz 1b\n  ret\n");
extern "C" void asm_nosize(long n);
asm(".text\n.type asm_labelled,@function\nasm_labelled:\n"
    "  mov %rdi, %rcx\nasm_labelled_inner:\n1: dec %rcx\n  jnz 1b\n  ret\n.size asm_labelled, .-asm_labelled\n");
extern "C" void asm_labelled(long n);
int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 1;
	c_function(n);
	static_helper(n);
	anon_helper(n);
	AnonType{}.run(n);
	outer::inner::Widget w; w.compute(n);
	outer::inner::Widget::make(n);
	outer::inner::tmpl_add<long>(1, n);
	outer::inner::tmpl_name(std::string("ab"), n);
	outer::inner::Box<int, 3>{}.get(n);
	make_string(n);
	Vec a{1}, b{n}; a + b;
	run_lambda(n);
	asm_nosize(n * 4);
	asm_labelled(n * 4);
	lib_exported(n);
	return 0;
}
`

// wantNames maps the mangled (.symtab) names of symtestProgram and
// symtestLib to what perf 6.1 prints (checked with perf record/script on
// the binaries built here: TestSymtestMatchesPerf).
var wantNames = map[string]string{
	"c_function":                         "c_function_long_global_alias", // global beats weak, then the longer name
	"_ZL13static_helperl":                "static_helper",
	"_ZN12_GLOBAL__N_111anon_helperEl":   "(anonymous namespace)::anon_helper",
	"_ZN12_GLOBAL__N_18AnonType3runEl":   "(anonymous namespace)::AnonType::run",
	"_ZN5outer5inner6Widget7computeEl":   "outer::inner::Widget::compute",
	"_ZN5outer5inner6Widget4makeEl":      "outer::inner::Widget::make",
	"_ZN5outer5inner8tmpl_addIlEET_S2_l": "outer::inner::tmpl_add<long>",
	"_ZNK5outer5inner3BoxIiLi3EE3getEl":  "outer::inner::Box<int, 3>::get",
	"_Z11make_stringB5cxx11l":            "make_string[abi:cxx11]",
	"_ZNK3VecplERKS_":                    "Vec::operator+",
	"_ZZ10run_lambdalENKUllE_clEl":       "run_lambda(long)::{lambda(long)#1}::operator()",
	"asm_nosize":                         "asm_nosize",
	"_ZN5outer5inner9tmpl_nameINSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEEiRKT_l": "outer::inner::tmpl_name<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >",
}

// wantLibNames are symtestLib's names, as wantNames.
var wantLibNames = map[string]string{
	"lib_exported":           "lib_exported",
	"_ZL10lib_staticl":       "lib_static",
	"_ZN3lib5Codec6decodeEl": "lib::Codec::decode",
}

// symtest is a set of binaries built from symtestProgram.
type symtest struct {
	dir, lib, pie, nopie, stripped string
}

func buildSymtest(t *testing.T) symtest {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skipf("g++ not installed: %v", err)
	}
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	s := symtest{dir: dir, lib: filepath.Join(dir, "libsymtest.so"), pie: filepath.Join(dir, "symtest-pie"),
		nopie: filepath.Join(dir, "symtest-nopie"), stripped: filepath.Join(dir, "symtest-stripped")}
	lib, prog := write("lib.cc", symtestLib), write("main.cc", symtestProgram)
	flags := []string{"-O2", "-fno-omit-frame-pointer", "-Wl,--build-id"}
	run(append([]string{"g++", "-shared", "-fPIC", "-o", s.lib, lib}, flags...)...)
	link := []string{"-L" + dir, "-lsymtest", "-Wl,-rpath," + dir}
	run(append(append([]string{"g++", "-fPIE", "-pie", "-o", s.pie, prog}, flags...), link...)...)
	run(append(append([]string{"g++", "-fno-PIE", "-no-pie", "-o", s.nopie, prog}, flags...), link...)...)
	run(append(append([]string{"g++", "-fPIE", "-pie", "-rdynamic", "-o", s.stripped, prog}, flags...), link...)...)
	run("strip", s.stripped)
	return s
}

// symbolValues reads the .symtab of an ELF file: name -> value.
func symbolValues(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, s := range syms {
		if s.Section == elf.SHN_UNDEF {
			continue
		}
		out[s.Name] = s.Value
	}
	return out
}

// TestDropInnerLabels: a label inside a sized function is dropped (the
// function keeps its addresses); labels at a function's start, between
// functions or inside an unsized one stay.
func TestDropInnerLabels(t *testing.T) {
	in := []symbol{
		{start: 0x100, end: 0x100, name: "fn_start_label"},
		{start: 0x100, end: 0x130, name: "fn"},
		{start: 0x12e, end: 0x12e, name: "fn_end_label"},
		{start: 0x140, end: 0x140, name: "between"},
		{start: 0x150, end: 0x150, name: "unsized"},
		{start: 0x158, end: 0x158, name: "after_unsized"},
	}
	var got []string
	for _, s := range dropInnerLabels(in) {
		got = append(got, s.name)
	}
	if want := "fn_start_label fn between unsized after_unsized"; strings.Join(got, " ") != want {
		t.Errorf("dropInnerLabels kept %q, want %q", got, want)
	}
}

func TestResolveBuiltBinaries(t *testing.T) {
	s := buildSymtest(t)
	for _, bin := range []string{s.pie, s.nopie, s.lib} {
		want := wantNames
		if bin == s.lib {
			want = wantLibNames
		}
		t.Run(filepath.Base(bin), func(t *testing.T) {
			vals := symbolValues(t, bin)
			p := NewProcessFromMaps(loadMappings(t, bin), openFile)
			p.SetDebugRoot("")
			for mangled, want := range want {
				v, ok := vals[mangled]
				if !ok {
					t.Errorf("%s not in the .symtab of %s", mangled, bin)
					continue
				}
				fr := p.Resolve(v + 2)
				if fr.Sym != want || fr.Offset != 2 || fr.DSO != bin {
					t.Errorf("Resolve(%s+2) = %q+%#x (%s), want %q+0x2 (%s)", mangled, fr.Sym, fr.Offset, fr.DSO, want, bin)
				}
			}
			// Past the label inside asm_labelled: still asm_labelled, as
			// glibc 2.41's __syscall_cancel_arch past its _end label.
			if inner, ok := vals["asm_labelled_inner"]; ok {
				if fr := p.Resolve(inner + 1); fr.Sym != "asm_labelled" || fr.Offset != inner+1-vals["asm_labelled"] {
					t.Errorf("Resolve(asm_labelled_inner+1) = %q+%#x, want asm_labelled+%#x", fr.Sym, fr.Offset, inner+1-vals["asm_labelled"])
				}
			} else if bin != s.lib {
				t.Errorf("asm_labelled_inner not in the .symtab of %s", bin)
			}
		})
	}
}

// TestResolveStrippedAndDebugFile: a stripped -rdynamic binary resolves
// exported names from .dynsym only (static ones are unknown, as in
// Debian's mariadbd); with its symbols in a debug file under a debug root
// (by build id) everything resolves again.
func TestResolveStrippedAndDebugFile(t *testing.T) {
	s := buildSymtest(t)
	f, err := os.Open(s.stripped)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := ParseELF(f, nil)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if obj.Source != ".dynsym" || len(obj.BuildID) != 40 {
		t.Fatalf("stripped binary: source %q build id %q, want .dynsym and a sha1 build id", obj.Source, obj.BuildID)
	}
	// The debug file: the unstripped PIE's symbols, renamed to the
	// stripped binary's build id (same code, same layout).
	debugRoot := filepath.Join(s.dir, "debug")
	dbgDir := filepath.Join(debugRoot, ".build-id", obj.BuildID[:2])
	if err := os.MkdirAll(dbgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	dbg := filepath.Join(dbgDir, obj.BuildID[2:]+".debug")
	// The debug file comes from the stripped binary's unstripped twin:
	// the same link, so the same code, layout and build id.
	full := filepath.Join(s.dir, "symtest-full")
	out, err := exec.Command("g++", "-fPIE", "-pie", "-rdynamic", "-O2", "-fno-omit-frame-pointer", "-Wl,--build-id",
		"-o", full, filepath.Join(s.dir, "main.cc"), "-L"+s.dir, "-lsymtest", "-Wl,-rpath,"+s.dir).CombinedOutput()
	if err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	if out, err := exec.Command("objcopy", "--only-keep-debug", full, dbg).CombinedOutput(); err != nil {
		t.Fatalf("objcopy: %v\n%s", err, out)
	}
	fullVals := symbolValues(t, full)

	tests := []struct {
		name      string
		debugRoot string
		mangled   string
		want      string
		added     string // AddDebugRoot after SetDebugRoot(debugRoot)
	}{
		{"exported from dynsym", "", "_ZN5outer5inner6Widget7computeEl", "outer::inner::Widget::compute", ""},
		{"static unknown without debug file", "", "_ZL13static_helperl", "", ""},
		{"anonymous namespace unknown without debug file", "", "_ZN12_GLOBAL__N_111anon_helperEl", "", ""},
		{"static from debug file", debugRoot, "_ZL13static_helperl", "static_helper", ""},
		{"anonymous namespace from debug file", debugRoot, "_ZN12_GLOBAL__N_111anon_helperEl", "(anonymous namespace)::anon_helper", ""},
		{"missing debug root", filepath.Join(s.dir, "nowhere"), "_ZL13static_helperl", "", ""},
		{"added debug root before a missing one", filepath.Join(s.dir, "nowhere"), "_ZL13static_helperl", "static_helper", debugRoot},
		{"missing root added before the right one", debugRoot, "_ZL13static_helperl", "static_helper", filepath.Join(s.dir, "nowhere")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewProcessFromMaps(loadMappings(t, s.stripped), openFile)
			p.SetDebugRoot(tt.debugRoot)
			if tt.added != "" {
				p.AddDebugRoot(tt.added)
			}
			v, ok := fullVals[tt.mangled]
			if !ok {
				t.Fatalf("%s not in %s", tt.mangled, full)
			}
			fr := p.Resolve(v + 1)
			if fr.Sym != tt.want {
				t.Errorf("Resolve(%s+1) with debug root %q = %q, want %q", tt.mangled, tt.debugRoot, fr.Sym, tt.want)
			}
		})
	}
}

func TestDemangleName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"_ZN18Prepared_statement7executeEP6Stringb", "Prepared_statement::execute"},
		{"_ZN5tpool19thread_pool_generic11worker_mainEPNS_11worker_dataE", "tpool::thread_pool_generic::worker_main"},
		{"_ZN10SQL_SELECTD2Ev", "SQL_SELECT::~SQL_SELECT"},
		{"_ZNSs4sizeEv", "std::string::size"},                                                                 // short form, as libiberty without DMGL_VERBOSE
		{"_ZNSsC1Ev", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::basic_string"}, // long form before a constructor
		{"_Z3fooSs", "foo"},
		{"_Z3maxIiET_S0_S0_", "max<int>"},
		{"_ZN3foo3barEv.cold", "foo::bar"},
		{"_ZN12_GLOBAL__N_14funcEv", "(anonymous namespace)::func"},
		{"start_thread", "start_thread"},
		{"__libc_recv", "__libc_recv"},
		{"_Znotmangled(", "_Znotmangled("},
	}
	for _, tt := range tests {
		if got := demangleName(tt.in); got != tt.want {
			t.Errorf("demangleName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestChooseAlias(t *testing.T) {
	sym := func(name string, size uint64, bind elf.SymBind) symbol {
		return symbol{start: 0x100, end: 0x100 + size, name: name, bind: bind}
	}
	tests := []struct {
		name string
		syms []symbol
		want string
	}{
		{"sized beats zero size", []symbol{sym("a_long_name", 0, elf.STB_GLOBAL), sym("b", 8, elf.STB_LOCAL)}, "b"},
		{"global beats weak", []symbol{sym("recv", 8, elf.STB_WEAK), sym("__libc_recv", 8, elf.STB_GLOBAL)}, "__libc_recv"},
		{"global beats local", []symbol{sym("x_local", 8, elf.STB_LOCAL), sym("x", 8, elf.STB_GLOBAL)}, "x"},
		{"local beats weak", []symbol{sym("w", 8, elf.STB_WEAK), sym("l", 8, elf.STB_LOCAL)}, "l"},
		{"fewer underscores", []symbol{sym("__memset", 8, elf.STB_GLOBAL), sym("memset", 8, elf.STB_GLOBAL)}, "memset"},
		{"longer name", []symbol{sym("__recv", 8, elf.STB_GLOBAL), sym("__libc_recv", 8, elf.STB_GLOBAL)}, "__libc_recv"},
		{"first of equals", []symbol{sym("abc", 8, elf.STB_GLOBAL), sym("xyz", 8, elf.STB_GLOBAL)}, "abc"},
	}
	for _, tt := range tests {
		got := fixupDuplicate(append([]symbol(nil), tt.syms...))
		if len(got) != 1 || got[0].name != tt.want {
			t.Errorf("%s: fixupDuplicate kept %v, want %q", tt.name, got, tt.want)
		}
	}
}

func TestPerfLine(t *testing.T) {
	tests := []struct {
		f    Frame
		addr uint64
		want string
	}{
		{Frame{Sym: "ha_commit_trans", Offset: 0x79b, DSO: "/usr/sbin/mariadbd"}, 0xa7b40b, "\t          a7b40b ha_commit_trans+0x79b (/usr/sbin/mariadbd)"},
		{Frame{DSO: "/usr/sbin/mariadbd"}, 0xd5d5d5, "\t          d5d5d5 [unknown] (/usr/sbin/mariadbd)"},
		{Frame{Sym: "_raw_spin_unlock_irqrestore", Offset: 0x19, DSO: KernelDSO}, 0xffffffff8226e079, "\tffffffff8226e079 _raw_spin_unlock_irqrestore+0x19 ([kernel.kallsyms])"},
		{Frame{}, 0x10, "\t              10 [unknown] ([unknown])"},
	}
	for _, tt := range tests {
		if got := tt.f.PerfLine(tt.addr); got != tt.want {
			t.Errorf("%+v.PerfLine(%#x) = %q, want %q", tt.f, tt.addr, got, tt.want)
		}
	}
}
