//go:build linux

package capture

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// deepProg's hot leaf runs under deepDepth+1 frames of deep, each with a
// 1 KiB local array: about 11.3 KiB of stack between leaf and main (the
// prologue is "sub $0x408,%rsp"), more than perf's default dwarf copy of
// 8192 bytes and less than DefaultDwarfStackBytes. Built with
// -fomit-frame-pointer, so a frame-pointer walk cannot reach main either.
// leaf says "ready" once the stack is deep, then spins.
const deepProg = `#include <unistd.h>
__attribute__((noinline)) static void leaf(void) {
	volatile unsigned long x = 0;
	if (write(1, "ready\n", 6) != 6) _exit(1);
	for (;;) x++;
}
__attribute__((noinline)) static int deep(int n) {
	volatile char pad[1024];
	pad[0] = (char)n;
	if (n > 0) deep(n - 1); else leaf();
	return pad[0] + pad[1023];
}
int main(void) { return deep(10); }
`

// startDeepProg builds deepProg with gcc and runs it until its stack is
// deep (it printed "ready").
func startDeepProg(t *testing.T) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	writeSources(t, dir, map[string]string{"deep.c": deepProg})
	gccRun(t, dir, []string{"-O1", "-fomit-frame-pointer", "-o", "deep", "deep.c"})
	return startReady(t, filepath.Join(dir, "deep"))
}

// TestPerfDwarfStackSize: the default dwarf copy (DefaultDwarfStackBytes)
// unwinds a stack deeper than perf's own default of 8192 bytes to main in
// every sample of its leaf, frame by frame, where a copy of 4096 bytes, and frame pointers,
// never reach main: the stack size is what made the difference. The truth
// is the program's own call chain, main → deep ×11 → leaf.
func TestPerfDwarfStackSize(t *testing.T) {
	requirePerf(t)
	prog := startDeepProg(t)
	wantChain := []string{"main"}
	for range 11 {
		wantChain = append(wantChain, "deep")
	}
	wantChain = append(wantChain, "leaf")
	for _, tt := range []struct {
		callGraph string
		minShare  float64 // of leaf's samples whose stack holds main
		maxShare  float64
	}{
		{"dwarf", 0.99, 1},
		{"dwarf,4096", 0, 0},
		{"fp", 0, 0},
	} {
		p := NewPerf().(*Perf)
		ctx := context.Background()
		work := t.TempDir()
		if err := p.Start(ctx, prog.Process.Pid, Options{FrequencyHz: 499, CallGraph: tt.callGraph, WorkDir: work, KeepRaw: true}); err != nil {
			t.Fatalf("%s: Start: %v", tt.callGraph, err)
		}
		time.Sleep(1500 * time.Millisecond)
		res, err := p.Stop(ctx)
		if err != nil {
			t.Fatalf("%s: Stop: %v", tt.callGraph, err)
		}
		checkNoPerfLeft(t, p)
		var leaf, reached int64
		for _, s := range res.Profile.Stacks {
			if s.Frames[len(s.Frames)-1] != "leaf" {
				continue
			}
			leaf += s.Value
			i := slices.Index(s.Frames, "main")
			if i < 0 {
				continue
			}
			reached += s.Value
			if chain := s.Frames[i:]; !slices.Equal(chain, wantChain) {
				t.Errorf("%s: stack %q: from main, want %q", tt.callGraph, s.Key(), wantChain)
			}
		}
		if fi, err := os.Stat(res.RawPath); err == nil && res.Samples > 0 {
			t.Logf("%s: %d samples, %d in leaf, %d reach main; perf.data %d bytes, %d per sample", tt.callGraph, res.Samples, leaf, reached, fi.Size(), fi.Size()/res.Samples)
		}
		// ~750 expected over 1.5 s of a busy CPU; fewer on a loaded machine.
		if leaf < 100 {
			t.Errorf("%s: %d samples in leaf (of %d), want at least 100 to judge", tt.callGraph, leaf, res.Samples)
			continue
		}
		if share := float64(reached) / float64(leaf); share < tt.minShare || share > tt.maxShare {
			t.Errorf("%s: %d of %d samples in leaf reach main (%.1f%%), want %.0f%% to %.0f%%", tt.callGraph, reached, leaf, 100*share, 100*tt.minShare, 100*tt.maxShare)
		}
	}
}
