//go:build linux

package capture

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// epilogueProg spends its time in epi after epi popped its saved rbp: the
// CFI there says the caller's CFA is rsp+8 and, as GCC's epilogues do,
// still says rbp is saved at CFA-16, below the stack pointer. outer,
// which calls epi, keeps a frame pointer (its CFA is rbp+16), and main's
// call of outer, which never returns, is main's last instruction, so its
// return address lies past main's end.
const epilogueProg = `
#include <stdio.h>
__asm__(
"	.text\n"
"	.globl epi\n"
"	.type epi, @function\n"
"epi:\n"
"	.cfi_startproc\n"
"	pushq %rbp\n"
"	.cfi_def_cfa_offset 16\n"
"	.cfi_offset %rbp, -16\n"
"	movq %rsp, %rbp\n"
"	.cfi_def_cfa_register %rbp\n"
"	popq %rbp\n"
"	.cfi_def_cfa %rsp, 8\n"
"	movl $20000, %ecx\n"
"1:	decl %ecx\n"
"	jnz 1b\n"
"	ret\n"
"	.cfi_endproc\n"
"	.size epi, .-epi\n");
void epi(void);
__attribute__((noinline, noreturn)) void outer(void) {
	for (;;) {
		epi();
		__asm__ volatile("" ::: "memory");
	}
}
int main(void) {
	printf("ready\n");
	fflush(stdout);
	outer();
}
`

// TestStackCopyEpilogue: samples taken in an epilogue after the pop of
// rbp keep their whole stack, main → outer → epi under a thread root,
// with the BPF sampler's defaults: its copy keeps the bytes of SP's page
// below SP, where the popped rbp still is, and a return address past the
// end of its caller (main's) is looked up inside the call. perf's DWARF
// unwinder, whose copy starts at SP, stops at outer in such samples
// (docs/recording.md, "Stacks perf's unwinder cuts"); the test holds it
// to that so that the docs are changed when perf changes.
func TestStackCopyEpilogue(t *testing.T) {
	requireBPF(t)
	requirePerf(t)
	dir := t.TempDir()
	writeSources(t, dir, map[string]string{"epi.c": epilogueProg})
	gccRun(t, dir, []string{"-O2", "-fno-omit-frame-pointer", "-o", "epi", "epi.c"})
	prog := startReady(t, filepath.Join(dir, "epi"))
	inEpi := func(f []string) bool { return len(f) > 0 && f[len(f)-1] == "epi" }
	whole := func(f []string) bool {
		i := slices.Index(f, "main")
		return i >= 1 && isThreadRoot(f[0]) && slices.Equal(f[i:], []string{"main", "outer", "epi"})
	}
	count := func(res *Result) (all, ok int64, other []string) {
		for _, s := range res.Profile.Stacks {
			if !inEpi(s.Frames[1:]) {
				continue
			}
			all += s.Value
			if whole(s.Frames[1:]) {
				ok += s.Value
			} else if len(other) < 5 {
				other = append(other, s.Key())
			}
		}
		return all, ok, other
	}

	res := sampleFor(t, NewBPF(), prog.Process.Pid, Options{FrequencyHz: 499}, 1500*time.Millisecond)
	all, ok, other := count(res)
	t.Logf("bpf: %d of %d samples in epi (of %d) whole; unwind %+v", ok, all, res.Samples, res.Unwind)
	if all < 100 {
		t.Fatalf("bpf: %d samples in epi, want at least 100 to judge", all)
	}
	if ok < 99*all/100 {
		t.Errorf("bpf: %d of %d samples in epi have the whole stack main;outer;epi under a thread root, want 99%%; others: %q", ok, all, other)
	}

	res = sampleFor(t, NewPerf(), prog.Process.Pid, Options{FrequencyHz: 499, CallGraph: "dwarf"}, 1500*time.Millisecond)
	all, ok, other = count(res)
	t.Logf("perf dwarf: %d of %d samples in epi (of %d) whole; others: %q", ok, all, res.Samples, other)
	cut := 0
	for _, s := range res.Profile.Stacks {
		if strings.HasSuffix(s.Key(), ";outer;epi") && !slices.Contains(s.Frames, "main") {
			cut += int(s.Value)
		}
	}
	if all < 100 || cut < 90*int(all)/100 {
		t.Errorf("perf dwarf: %d of %d samples in epi stop at outer, want at least 90%%: if perf now unwinds epilogues, docs/recording.md (\"Stacks perf's unwinder cuts\") and TestRecordMariaDB's perf rate are to be changed", cut, all)
	}
}
