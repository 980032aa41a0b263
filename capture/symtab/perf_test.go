package symtab

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// procAddr turns the mapping-relative address perf prints (a file offset)
// back into the process address under maps.
func procAddr(maps []Mapping, off uint64) (uint64, bool) {
	for _, m := range maps {
		if off >= m.Offset && off < m.Offset+(m.End-m.Start) && m.Exec() {
			return off - m.Offset + m.Start, true
		}
	}
	return 0, false
}

// TestSymtestMatchesPerf runs the binaries of buildSymtest under perf
// record and checks that every frame perf script prints for them is
// what Process.Resolve returns. It needs root and perf.
func TestSymtestMatchesPerf(t *testing.T) {
	if testing.Short() {
		t.Skip("runs perf record")
	}
	if os.Geteuid() != 0 {
		t.Skip("perf record of a child needs root here")
	}
	perf, err := exec.LookPath("perf")
	if err != nil {
		t.Skipf("perf not installed: %v", err)
	}
	s := buildSymtest(t)
	for _, bin := range []string{s.pie, s.nopie} {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			data := bin + ".perf.data"
			if out, err := exec.Command(perf, "record", "-q", "-o", data, "-F", "4999", "-g", "--", bin, "20000000").CombinedOutput(); err != nil {
				t.Skipf("perf record: %v\n%s", err, out)
			}
			out, err := exec.Command(perf, "script", "-i", data).Output()
			if err != nil {
				t.Fatalf("perf script: %v", err)
			}
			procs := map[string]*Process{}
			maps := map[string][]Mapping{}
			for _, path := range []string{bin, s.lib} {
				maps[path] = loadMappings(t, path)
				procs[path] = NewProcessFromMaps(maps[path], openFile)
				procs[path].SetDebugRoot("")
			}
			n, bad, labels, plt := 0, 0, 0, 0
			seen := map[string]bool{}
			for _, line := range strings.Split(string(out), "\n") {
				if !strings.HasPrefix(line, "\t") {
					continue
				}
				i := strings.LastIndex(line, " (")
				if i < 0 || !strings.HasSuffix(line, ")") {
					continue
				}
				dso := line[i+2 : len(line)-1]
				p, ok := procs[dso]
				if !ok {
					continue
				}
				a, sym, _ := strings.Cut(strings.TrimSpace(line[:i]), " ")
				off, err := strconv.ParseUint(a, 16, 64)
				if err != nil {
					t.Fatalf("bad perf line %q", line)
				}
				addr, ok := procAddr(maps[dso], off)
				if !ok {
					t.Fatalf("perf address %#x outside the text of %s", off, dso)
				}
				n++
				fr := p.Resolve(addr)
				if strings.HasPrefix(sym, "asm_labelled_inner+") && fr.Sym == "asm_labelled" {
					// A label inside a sized function: perf prints either,
					// as its symbol tree falls; Resolve names the function
					// (dropInnerLabels).
					labels++
					continue
				}
				if strings.HasPrefix(sym, "_init+") && strings.HasSuffix(fr.Sym, "@plt") && bin == s.nopie {
					// perf 6.1 synthesizes no PLT symbols for this
					// non-PIE binary and prints the stub as _init+off;
					// Resolve names it (mariadbd is PIE, where both do).
					plt++
					continue
				}
				if got := perfSym(fr); got != sym || fr.DSO != dso || fr.PerfAddr != off {
					bad++
					if !seen[sym] {
						seen[sym] = true
						t.Errorf("perf printed %s, Resolve(%#x) = %q+%#x (%s) at %#x", strings.TrimSpace(line), addr, fr.Sym, fr.Offset, fr.DSO, fr.PerfAddr)
					}
				}
			}
			if n < 100 {
				t.Fatalf("only %d frames of %s in perf script output", n, bin)
			}
			t.Logf("%d of %d frames match perf (and %d inside asm_labelled that perf named after its inner label, %d PLT stubs perf printed as _init)", n-bad-labels-plt, n, labels, plt)
		})
	}
}
