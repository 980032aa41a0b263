package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/capture/symtab"
)

// fpStack returns a stack window from sp with a frame-pointer chain: at
// each bp, the caller's bp and the return address (links[i] = {bp, ra}).
func fpStack(sp uint64, size int, links [][2]uint64) []byte {
	b := make([]byte, size)
	for _, l := range links {
		off := l[0] - sp
		binary.LittleEndian.PutUint64(b[off:], l[1])
	}
	return b
}

// TestCopyUnwinderSplice: a walk that runs out of window continues with
// the kernel's frame-pointer walk from its last frame when the kernel has
// that frame, and keeps what it found otherwise; walks that end at a zero
// return address are not spliced; equal stacks add up, a weighted sample
// (per-CPU events with the switch fix) with its weight; the frames are
// counted per object and method.
func TestCopyUnwinderSplice(t *testing.T) {
	const sp = 0x7ff000
	// No mappings: every frame is unwound by its frame pointer.
	c := newCopyUnwinder(symtab.NewProcessFromMaps(nil, func(string) (io.ReaderAt, error) { return nil, io.EOF }))
	c.refreshed = c.refreshed.AddDate(1000, 0, 0) // no Refresh
	// bp sp+16 -> {caller bp sp+32, ra 0x2000}; sp+32 -> {sp+4096 (outside), ra 0x3000}.
	window := fpStack(sp, 64, [][2]uint64{{sp + 16, sp + 32}, {sp + 24, 0x2000}, {sp + 32, sp + 4096}, {sp + 40, 0x3000}})
	zeroEnd := fpStack(sp, 64, [][2]uint64{{sp + 16, sp + 32}, {sp + 24, 0x2000}, {sp + 32, 0}, {sp + 40, 0}})
	regs := bpf.Regs{IP: 0x1000, SP: sp, BP: sp + 16}
	samples := []bpf.RawSample{
		{PID: 1, TID: 2, Comm: "t", Regs: regs, Stack: window, StackBase: sp, User: []uint64{0x1000, 0x3000, 0x4000, 0x5000}},
		{PID: 1, TID: 2, Comm: "t", Regs: regs, Stack: window, StackBase: sp, User: []uint64{0x1000, 0x3000, 0x4000, 0x5000}, Weight: 3},
		{PID: 1, TID: 2, Comm: "t", Regs: regs, Stack: window, StackBase: sp, User: []uint64{0x1000, 0x9000}},
		{PID: 1, TID: 2, Comm: "t", Regs: regs, Stack: zeroEnd, StackBase: sp, User: []uint64{0x1000, 0x2000, 0x6000}},
		// No IP to start from: the kernel's walk is kept.
		{PID: 1, TID: 3, Comm: "t", Regs: bpf.Regs{SP: sp}, Stack: zeroEnd, StackBase: sp, User: []uint64{0x7000, 0x8000}, Kernel: []uint64{0xffff0001}},
	}
	for _, s := range samples {
		// The reader reuses its slices: add must copy.
		s.User = slices.Clone(s.User)
		if err := c.add(s); err != nil {
			t.Fatal(err)
		}
		clear(s.User)
	}
	got := c.result()
	want := []bpf.Count{
		{PID: 1, TID: 2, Comm: "t", User: []uint64{0x1000, 0x2000, 0x3000, 0x4000, 0x5000}, Samples: 4},
		{PID: 1, TID: 2, Comm: "t", User: []uint64{0x1000, 0x2000, 0x3000}, Samples: 1},
		{PID: 1, TID: 2, Comm: "t", User: []uint64{0x1000, 0x2000}, Samples: 1},
		{PID: 1, TID: 3, Comm: "t", User: []uint64{0x7000, 0x8000}, Kernel: []uint64{0xffff0001}, Samples: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	for i := range want {
		if g, w := got[i], want[i]; g.PID != w.PID || g.TID != w.TID || g.Comm != w.Comm || !slices.Equal(g.User, w.User) || !slices.Equal(g.Kernel, w.Kernel) || g.Samples != w.Samples {
			t.Errorf("count %d = %+v, want %+v", i, g, w)
		}
	}
	if c.spliced != 3 || c.copied != 5 {
		t.Errorf("spliced %d, copied %d; want 3, 5", c.spliced, c.copied)
	}
	u := c.summary("always", 4096)
	if u.Method != "cfi+fp" || u.StackCopy != "always" || u.WindowBytes != 4096 || u.CopiedSamples != 5 ||
		u.Ends["window"] != 3 || u.Ends["zero_pc"] != 2 || len(u.Ends) != 2 {
		t.Errorf("summary %+v, want cfi+fp, always, 4096 bytes, 5 copies, 3 window ends and 2 zero pcs", u)
	}
	// Frames: 2×5 + 3 + 2 + 2 = 17, all in no known object; the last frame
	// of the stacks that end in a window or in the kernel's walk found
	// nothing further (3 spliced, 1 not); the walk that read a zero return
	// address found its end by frame pointer.
	if len(u.Objects) != 1 || u.Objects[0].Object != "[unknown]" || u.Objects[0].Frames != 17 || u.Objects[0].None != 4 || u.Objects[0].FP != 13 || u.Objects[0].CFI != 0 {
		t.Errorf("objects %+v, want [unknown]: 17 frames, 13 fp, 4 none", u.Objects)
	}
	// The walk that was not spliced stopped in [unknown] at the window's end.
	if want := "walks stopped here before a thread root: 1 at window end"; len(u.Objects) == 1 && u.Objects[0].Note != want {
		t.Errorf("note %q, want %q", u.Objects[0].Note, want)
	}
}

// TestCopyUnwinderRanges: of a running sleep(1), the text of libc.so.6
// (built without frame pointers: 2.5% of glibc 2.36's FDEs keep the CFA
// on rbp, per readelf) is a no-frame-pointer range, as /proc/PID/maps
// places it, and every root range is in an executable mapping.
func TestCopyUnwinderRanges(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("needs /proc on linux/amd64")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("no sleep to look at: %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// sleep has mapped libc once it sleeps; wait for the mapping.
	var libc []bpf.Range
	var maps []byte
	for range 100 {
		var err error
		if maps, err = os.ReadFile(fmt.Sprintf("/proc/%d/maps", cmd.Process.Pid)); err != nil {
			t.Fatal(err)
		}
		libc = libc[:0]
		for _, line := range strings.Split(string(maps), "\n") {
			f := strings.Fields(line)
			if len(f) == 6 && strings.HasSuffix(f[5], "/libc.so.6") && f[1] == "r-xp" {
				var r bpf.Range
				if _, err := fmt.Sscanf(f[0], "%x-%x", &r.Start, &r.End); err != nil {
					t.Fatal(err)
				}
				libc = append(libc, r)
			}
		}
		if len(libc) > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(libc) != 1 {
		t.Skipf("sleep maps no single libc.so.6 text: %s", maps)
	}
	syms, err := symtab.NewProcess("/proc", cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	defer syms.Close()
	c := newCopyUnwinder(syms)
	noFP, roots, notes := c.ranges(ThreadRootSymbols)
	if !slices.Contains(noFP, libc[0]) {
		t.Errorf("no-frame-pointer ranges %x lack libc.so.6's text %x (notes %q)", noFP, libc[0], notes)
	}
	t.Logf("%d no-frame-pointer ranges, %d root ranges, notes %q", len(noFP), len(roots), notes)
	for _, r := range roots {
		mp, ok := syms.Mapped(r.Start)
		if !ok || !mp.Mapping.Exec() || r.End > mp.Mapping.End {
			t.Errorf("root range %x: in %+v, want inside an executable mapping", r, mp)
		}
	}
}
