package symbolmap

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// explained formats a mapped profile and its explanation as the cancel
// goldens hold them: the folded stacks, then one line per rewrite.
func explained(t *testing.T, m *Map, path string) string {
	t.Helper()
	mp, ex := m.Apply(readFolded(t, path, ""))
	var b strings.Builder
	b.WriteString(folded(mp))
	b.WriteString("# rewrites: value original -> result (rule)\n")
	for _, r := range ex.Rewrites {
		res := r.Result
		if res == "" {
			res = "(elided)"
		}
		fmt.Fprintf(&b, "# %d %s -> %s (%s)\n", r.Value, r.Original, res, r.Rule)
	}
	return b.String()
}

// TestGlibcCancelGolden maps the stacks of testdata/cancel (the shapes of
// glibc 2.36, 2.41 and 2.43, and 2.41 chains without their wrapper) with
// the default map and compares stacks and rewrites with the .golden files
// (go test -update rewrites them).
func TestGlibcCancelGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/cancel/*.folded")
	if err != nil || len(files) < 4 {
		t.Fatalf("cancel fixtures: %v, %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			got := explained(t, Default(), f)
			golden := strings.TrimSuffix(f, ".folded") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if got != string(want) {
				t.Errorf("Default().Apply(%s) =\n%s\nwant\n%s", f, got, want)
			}
			// Whatever the golden says: no name is invented, and the
			// total is kept; the chains of kept.folded are all kept.
			in := readFolded(t, f, "")
			if filepath.Base(f) == "kept.folded" {
				off, _ := mustParse(t, "version: 1\nnormalize: {glibc_cancel: false}\n").Apply(in)
				if on, _ := Default().Apply(in); folded(on) != folded(off) {
					t.Errorf("%s: glibc_cancel dropped frames:\n%s\nwithout it:\n%s", f, folded(on), folded(off))
				}
			}
			mp, _ := Default().Apply(in)
			if mp.Total() != in.Total() {
				t.Errorf("Apply changed the total: %d, was %d", mp.Total(), in.Total())
			}
			orig := map[string]bool{}
			for _, s := range in.Stacks {
				for _, fr := range s.Frames {
					orig[NormalizeName(fr)] = true
				}
			}
			for _, s := range mp.Stacks {
				for _, fr := range s.Frames[1:] {
					if !orig[fr] {
						t.Errorf("mapped frame %q is in no input stack", fr)
					}
				}
			}
		})
	}
}

// TestGlibcCancelSameAcrossVersions: the same syscalls, sampled in glibc
// 2.36 (the wrapper makes the syscall), 2.41 and 2.43 (wrapper ->
// __syscall_cancel -> __internal_syscall_cancel -> __syscall_cancel_arch,
// the last possibly named by its _start/_end labels), give the same folded
// lines once mapped; with glibc_cancel off, 2.41 and 2.43 keep their chains
// and differ from 2.36.
func TestGlibcCancelSameAcrossVersions(t *testing.T) {
	off := mustParse(t, "version: 1\nnormalize: {glibc_cancel: false}\n")
	mapped := map[string]string{}
	raw := map[string]string{}
	for _, v := range []string{"2.36", "2.41", "2.43"} {
		p := readFolded(t, "testdata/cancel/glibc-"+v+".folded", "")
		mp, _ := Default().Apply(p)
		mapped[v] = folded(mp)
		op, _ := off.Apply(p)
		raw[v] = folded(op)
	}
	for _, v := range []string{"2.41", "2.43"} {
		if mapped[v] != mapped["2.36"] {
			t.Errorf("glibc %s mapped =\n%s\nglibc 2.36 mapped =\n%s", v, mapped[v], mapped["2.36"])
		}
		if raw[v] == raw["2.36"] {
			t.Errorf("glibc %s with glibc_cancel off equals 2.36: the fixture shows no chain", v)
		}
		if !strings.Contains(raw[v], "__internal_syscall_cancel") {
			t.Errorf("glibc %s with glibc_cancel off lost its chain:\n%s", v, raw[v])
		}
	}
	// 2.36 has no chain: the switch changes nothing there.
	if raw["2.36"] != mapped["2.36"] {
		t.Errorf("glibc 2.36: glibc_cancel changed a stack without a chain:\n%s\nwas\n%s", mapped["2.36"], raw["2.36"])
	}
	// The leaves are the wrappers, as in 2.36.
	for _, leaf := range []string{";vio_write;__send 30", ";fdatasync 15", ";__libc_pwrite 10", ";__futex_abstimed_wait_common 8", ";__clock_nanosleep 2",
		";vio_write;__send;entry_SYSCALL_64_after_hwframe_[k];"} {
		if !strings.Contains(mapped["2.41"], leaf) {
			t.Errorf("glibc 2.41 mapped has no %q:\n%s", leaf, mapped["2.41"])
		}
	}
}

// TestGlibcCancelRule: which chains are dropped, which kept, with the
// switch on and off, and with the map's own rules.
func TestGlibcCancelRule(t *testing.T) {
	const chain = "__syscall_cancel;__internal_syscall_cancel;__syscall_cancel_arch"
	tests := []struct {
		name string
		m    string // "" for the default map
		in   string
		want string
	}{
		{"wrapper above the chain", "", "t;vio_write;__send;" + chain + " 1", "t;vio_write;__send 1"},
		{"sample in __syscall_cancel, under a known wrapper", "", "t;f;__send;__syscall_cancel 1", "t;f;__send 1"},
		{"sample in __syscall_cancel, under another alias of a wrapper", "", "t;f;pwrite64;__syscall_cancel 1", "t;f;pwrite64 1"},
		{"sample in __internal_syscall_cancel", "", "t;f;__send;__syscall_cancel;__internal_syscall_cancel 1", "t;f;__send 1"},
		{"futex wait calls __internal_syscall_cancel", "", "t;__futex_abstimed_wait_common;__internal_syscall_cancel;__syscall_cancel_arch 1", "t;__futex_abstimed_wait_common 1"},
		{"futex wait, sample in __internal_syscall_cancel", "", "t;f;__futex_abstimed_wait_common;__internal_syscall_cancel 1", "t;f;__futex_abstimed_wait_common 1"},
		{"clock_nanosleep, sample in __internal_syscall_cancel", "", "t;f;clock_nanosleep@@GLIBC_2.17;__internal_syscall_cancel 1", "t;f;clock_nanosleep 1"},
		{"end label", "", "t;f;__send;__syscall_cancel;__internal_syscall_cancel;__syscall_cancel_arch_end 1", "t;f;__send 1"},
		{"a skipped middle frame", "", "t;f;__send;__syscall_cancel;__syscall_cancel_arch 1", "t;f;__send 1"},
		{"kernel frames below stay", "", "t;f;__send;" + chain + ";do_syscall_64_[k];__sys_sendto_[k] 1", "t;f;__send;do_syscall_64_[k];__sys_sendto_[k] 1"},
		{"versioned wrapper", "", "t;f;send@@GLIBC_2.2.5;" + chain + " 1", "t;f;send 1"},
		{"glibc alias in the chain", "", "t;f;__send;__GI___syscall_cancel;__internal_syscall_cancel;__syscall_cancel_arch 1", "t;f;__send 1"},
		{"two chains in one stack", "", "t;__send;" + chain + ";sig_handler;__libc_pwrite;" + chain + " 1", "t;__send;sig_handler;__libc_pwrite 1"},
		// Kept: no wrapper, or not known to be one.
		{"unknown above", "", "t;f;[unknown];" + chain + " 1", "t;f;[unknown];" + chain + " 1"},
		{"unresolved dso above", "", "t;f;[libc.so.6];" + chain + " 1", "t;f;[libc.so.6];" + chain + " 1"},
		{"thread name above", "", "t;" + chain + " 1", "t;" + chain + " 1"},
		{"kernel frame above", "", "t;f_[k];" + chain + " 1", "t;f_[k];" + chain + " 1"},
		{"frame-pointer walk: __syscall_cancel_arch alone", "", "t;net_real_write;__syscall_cancel_arch 1", "t;net_real_write;__syscall_cancel_arch 1"},
		{"frame-pointer walk: __internal_syscall_cancel alone", "", "t;net_real_write;__internal_syscall_cancel 1", "t;net_real_write;__internal_syscall_cancel 1"},
		{"frame-pointer walk: __syscall_cancel alone", "", "t;net_real_write;__syscall_cancel 1", "t;net_real_write;__syscall_cancel 1"},
		{"__syscall_cancel alone under a function that does not call it", "", "t;f;__futex_abstimed_wait_common;__syscall_cancel 1", "t;f;__futex_abstimed_wait_common;__syscall_cancel 1"},
		{"__internal_syscall_cancel alone under a wrapper that does not call it", "", "t;f;__send;__internal_syscall_cancel 1", "t;f;__send;__internal_syscall_cancel 1"},
		{"chain starts at __syscall_cancel_arch under the wrapper", "", "t;f;__send;__syscall_cancel_arch 1", "t;f;__send;__syscall_cancel_arch 1"},
		{"out of order", "", "t;f;__send;__syscall_cancel_arch;__internal_syscall_cancel 1", "t;f;__send;__syscall_cancel_arch;__internal_syscall_cancel 1"},
		{"lone frame in the middle", "", "t;f;__send;__syscall_cancel_arch;g 1", "t;f;__send;__syscall_cancel_arch;g 1"},
		// The switch, and the map's rules.
		{"switch off", "version: 1\nnormalize: {glibc_cancel: false}\n", "t;f;__send;" + chain + " 1", "t;f;__send;" + chain + " 1"},
		{"other switches off leave it on", "version: 1\nnormalize: {symbol_versions: false, clone_suffixes: false, glibc_aliases: false}\n", "t;f;__send;" + chain + " 1", "t;f;__send 1"},
		{"elided wrapper still counts as on the stack", "version: 1\nelide:\n  - from: [__send]\n", "t;vio_write;__send;" + chain + " 1", "t;vio_write 1"},
		{"renamed wrapper", "version: 1\nrename:\n  - to: send\n    from: [__send]\n", "t;vio_write;__send;" + chain + " 1", "t;vio_write;send 1"},
		{"an elide rule on the chain applies when it is kept", "version: 1\nelide:\n  - glob: ['__syscall_cancel*']\n", "t;net_real_write;__syscall_cancel_arch 1", "t;net_real_write 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := Default()
			if tt.m != "" {
				m = mustParse(t, tt.m)
			}
			got, _ := m.Apply(profile("", tt.in))
			if g := strings.TrimSuffix(folded(got), "\n"); g != tt.want {
				t.Errorf("Apply(%q) = %q, want %q", tt.in, g, tt.want)
			}
			// Resolver.Dropped says the same, frame by frame.
			fr := strings.Split(tt.in[:strings.LastIndexByte(tt.in, ' ')], ";")
			r := m.Resolver("")
			drop := r.Dropped(fr)
			var kept []string
			for i, f := range fr {
				if drop != nil && drop[i] {
					continue
				}
				if name, keep := r.Frame(i, f); keep {
					kept = append(kept, name)
				}
			}
			if g := strings.Join(kept, ";") + " 1"; g != tt.want {
				t.Errorf("Dropped and Frame on %q give %q, want %q", tt.in, g, tt.want)
			}
		})
	}
}

// TestGlibcCancelExplain: --explain names the normalisation that dropped
// each frame, once per stack, with the stack's value.
func TestGlibcCancelExplain(t *testing.T) {
	p := profile("", "t;f;__send;__syscall_cancel;__internal_syscall_cancel;__syscall_cancel_arch 5",
		"t;g;__libc_pwrite;__syscall_cancel;__internal_syscall_cancel 2", "t;net_real_write;__syscall_cancel_arch 7")
	_, ex := Default().Apply(p)
	var got []string
	for _, r := range ex.Rewrites {
		got = append(got, fmt.Sprintf("%s>%s %s %d", r.Original, r.Result, r.Rule, r.Value))
	}
	want := []string{
		"__internal_syscall_cancel> normalize (glibc_cancel) 7",
		"__syscall_cancel> normalize (glibc_cancel) 7",
		"__syscall_cancel_arch> normalize (glibc_cancel) 5",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rewrites =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestGlibcCancelDocumented: docs/symbolmap.md names the switch and every
// frame it drops, so that the reference cannot drift from the code.
func TestGlibcCancelDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/symbolmap.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	if !strings.Contains(doc, "glibc_cancel: true}  # defaults") {
		t.Errorf("docs/symbolmap.md does not show glibc_cancel among the defaults")
	}
	for _, s := range append([]string{"glibc_cancel", "normalize (glibc_cancel)", "normalize: {glibc_cancel: false}"}, GlibcCancelFrames...) {
		if !strings.Contains(doc, "`"+s+"`") {
			t.Errorf("docs/symbolmap.md does not mention `%s`", s)
		}
	}
	for _, name := range GlibcCancelFrames {
		if cancelRank(name) < 0 {
			t.Errorf("GlibcCancelFrames lists %q, which cancelRank does not know", name)
		}
	}
}

// userPath returns the user-space frames of a stack below start_thread
// (the thread roots differ between glibc versions: clone3 and __clone3),
// or "" when the stack does not reach start_thread.
func userPath(frames []string) string {
	for i, f := range frames {
		if f == "start_thread" {
			var out []string
			for _, g := range frames[i+1:] {
				if !strings.HasSuffix(g, "_[k]") {
					out = append(out, g)
				}
			}
			return strings.Join(out, ";")
		}
	}
	return ""
}

// leafSelf returns the value of the stacks whose last user frame is
// name, over the total.
func leafSelf(stacks map[string]int64, total int64, name string) float64 {
	var v int64
	for path, n := range stacks {
		if path == name || strings.HasSuffix(path, ";"+name) {
			v += n
		}
	}
	return float64(v) / float64(total)
}

// TestGlibcCancelReal maps real stacks of the same program
// (testdata/cancel/real/prog.c: a thread calling send, recv, pwrite and
// fdatasync through one function each) sampled by perf --call-graph dwarf
// under glibc 2.36 and under trixie's glibc 2.41 with its libc6-dbg
// symbols (testdata/README.md). The truth is the program's source and
// perf's own unwinding: each syscall's leaf is the wrapper under the
// function that calls it, as 2.36 shows it. Once mapped, every 2.41 stack
// that had cancellation frames ends as a 2.36 stack ends, and no chain
// frame is left; without the normalisation none of them does.
func TestGlibcCancelReal(t *testing.T) {
	off := mustParse(t, "version: 1\nnormalize: {glibc_cancel: false}\n")
	paths := func(m *Map, v string) (map[string]int64, int64) {
		p := readFolded(t, "testdata/cancel/real/glibc-"+v+".folded", "")
		mp, _ := m.Apply(p)
		out := map[string]int64{}
		for _, s := range mp.Stacks {
			if up := userPath(s.Frames); up != "" {
				out[up] += s.Value
			}
		}
		return out, mp.Total()
	}
	ref, _ := paths(Default(), "2.36")
	want := map[string]bool{
		"worker;net_write;__send": true, "worker;net_read;__libc_recv": true,
		"worker;log_write;__libc_pwrite": true, "worker;log_sync;fdatasync": true,
	}
	for w := range want {
		if ref[w] == 0 {
			t.Errorf("glibc 2.36 has no stack %q: the fixture is not what the test expects", w)
		}
	}
	on, total := paths(Default(), "2.41")
	raw, _ := paths(off, "2.41")
	chained := 0
	for path := range raw {
		if !strings.Contains(path, "_cancel") {
			continue
		}
		chained++
		if ref[path] != 0 {
			t.Errorf("without glibc_cancel, 2.41's %q is in 2.36", path)
		}
	}
	if chained < 4 {
		t.Errorf("2.41 has %d user paths with cancellation frames, want the chains of the four syscalls", chained)
	}
	for path, v := range on {
		if strings.Contains(path, "_cancel") {
			t.Errorf("2.41 mapped %q (%d) still has a cancellation frame", path, v)
		}
		if strings.HasPrefix(path, "worker;") && strings.Count(path, ";") == 2 && !want[path] {
			t.Errorf("2.41 mapped %q: not a syscall path of the program", path)
		}
	}
	for w := range want {
		if on[w] == 0 {
			t.Errorf("2.41 mapped has no %q", w)
		}
	}
	// The figures: the self share of the leaves, before and after.
	for _, name := range []string{"__syscall_cancel_arch", "__internal_syscall_cancel", "__syscall_cancel", "__send", "__libc_recv", "__libc_pwrite", "fdatasync"} {
		t.Logf("glibc 2.41 user self share of %-26s glibc_cancel off %5.1f%%, on %5.1f%%; glibc 2.36 %5.1f%%",
			name, 100*leafSelf(raw, total, name), 100*leafSelf(on, total, name), 100*leafSelf(ref, sum(ref), name))
	}
	if leafSelf(raw, total, "__syscall_cancel_arch") == 0 || leafSelf(on, total, "__syscall_cancel_arch") != 0 {
		t.Errorf("__syscall_cancel_arch self share: off %.3f, on %.3f; want > 0, then 0",
			leafSelf(raw, total, "__syscall_cancel_arch"), leafSelf(on, total, "__syscall_cancel_arch"))
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// FuzzGlibcCancel: on any stack, the stack pass drops only chain frames,
// keeps the order of the rest, and Apply and Dropped agree.
func FuzzGlibcCancel(f *testing.F) {
	f.Add("t;f;__send;__syscall_cancel;__internal_syscall_cancel;__syscall_cancel_arch")
	f.Add("t;[unknown];__syscall_cancel;__internal_syscall_cancel;__syscall_cancel_arch_end;x_[k]")
	f.Add("t;__futex_abstimed_wait_common;__internal_syscall_cancel;__syscall_cancel;__syscall_cancel_arch")
	f.Add("__syscall_cancel;__syscall_cancel;__send;__syscall_cancel")
	f.Fuzz(func(t *testing.T, stack string) {
		fr := strings.Split(stack, ";")
		for _, x := range fr {
			if x == "" || strings.ContainsAny(x, " \n") {
				return // not a folded stack
			}
		}
		r := Default().Resolver("")
		drop := r.Dropped(fr)
		if drop != nil && len(drop) != len(fr) {
			t.Fatalf("Dropped(%q) has %d entries, want %d", stack, len(drop), len(fr))
		}
		var kept []string
		for i, x := range fr {
			if drop != nil && drop[i] {
				if i == 0 || cancelRank(NormalizeName(x)) < 0 {
					t.Fatalf("Dropped(%q) drops frame %d %q, not a chain frame", stack, i, x)
				}
				continue
			}
			name, _ := r.Frame(i, x)
			kept = append(kept, name)
		}
		mp, _ := Default().Apply(profile("", stack+" 1"))
		if len(mp.Stacks) != 1 || strings.Join(mp.Stacks[0].Frames, ";") != strings.Join(kept, ";") {
			t.Fatalf("Apply(%q) = %v, Dropped and Frame give %q", stack, mp.Stacks, kept)
		}
	})
}
