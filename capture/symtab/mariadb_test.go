package symtab

import (
	"bufio"
	"compress/gzip"
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const (
	mariadbd = "/usr/sbin/mariadbd"
	// mariadbdBuildID is the build id of Debian bookworm's
	// mariadb-server-core 1:10.11.19-0+deb12u1 /usr/sbin/mariadbd, the
	// binary testdata/perf/mariadb-10.11-update-index.perf.script.gz was
	// captured from (read with readelf -n when this test was written).
	mariadbdBuildID = "439da8d94412de2c7eb3e2c5554bc0f31f438dc3"
	mariadbCapture  = "../../testdata/perf/mariadb-10.11-update-index.perf.script.gz"

	libc = "/usr/lib/x86_64-linux-gnu/libc.so.6"
	// libcBuildID is Debian bookworm's libc6 2.36-9+deb12u14 libc.so.6,
	// whose libc6-dbg debug file perf used for the 10.11 captures (every
	// libc frame of them resolves identically with it).
	libcBuildID = "93ac61ec5a8eb1396f9fbd350e3169a558528a40"
)

// mariadb1011Captures are the default-format perf script captures of
// Debian's MariaDB 10.11.19.
var mariadb1011Captures = []string{
	mariadbCapture,
	"../../testdata/perf/mariadb-10.11-point-select.perf.script.gz",
	"../../testdata/perf/mariadb-10.11-update-non-index.local.perf.script.gz",
}

// loadMappings maps each PT_LOAD of an ELF file at load base 0, as the
// kernel maps a PIE whose base is subtracted: perf script prints
// mapping-relative addresses (ip - start + pgoff) for user frames, so with
// base 0 the printed numbers are the process addresses.
func loadMappings(t *testing.T, path string) []Mapping {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var maps []Mapping
	for _, p := range f.Progs {
		if p.Type != elf.PT_LOAD {
			continue
		}
		start := p.Vaddr &^ 0xfff
		perms := "r"
		if p.Flags&elf.PF_W != 0 {
			perms += "w"
		} else {
			perms += "-"
		}
		if p.Flags&elf.PF_X != 0 {
			perms += "x"
		} else {
			perms += "-"
		}
		maps = append(maps, Mapping{
			Start: start, End: (p.Vaddr + p.Filesz + 0xfff) &^ 0xfff, Offset: p.Off &^ 0xfff,
			Perms: perms + "p", Dev: "fe:00", Inode: 1, Path: path,
		})
	}
	return maps
}

func openFile(path string) (io.ReaderAt, error) { return os.Open(path) }

// perfFrame is one callchain line of perf script text.
type perfFrame struct {
	addr uint64
	sym  string // "name+0xoff" or "[unknown]"
	dso  string
	line string
}

func readPerfFrames(t *testing.T, path, dso string) []perfFrame {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []perfFrame
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	suffix := " (" + dso + ")"
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "\t") || !strings.HasSuffix(line, suffix) {
			continue
		}
		rest := strings.TrimSpace(strings.TrimSuffix(line, suffix))
		a, sym, ok := strings.Cut(rest, " ")
		if !ok {
			t.Fatalf("bad frame line %q", line)
		}
		addr, err := strconv.ParseUint(a, 16, 64)
		if err != nil {
			t.Fatalf("bad frame line %q: %v", line, err)
		}
		out = append(out, perfFrame{addr: addr, sym: sym, dso: dso, line: line})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func perfSym(fr Frame) string {
	if fr.Sym == "" {
		return "[unknown]"
	}
	return fr.Sym + "+0x" + strconv.FormatUint(fr.Offset, 16)
}

// TestMariadbdMatchesPerf resolves every /usr/sbin/mariadbd frame of a
// real perf capture and compares with what perf printed.
func TestMariadbdMatchesPerf(t *testing.T) {
	f, err := os.Open(mariadbd)
	if err != nil {
		t.Skipf("%s not installed: %v", mariadbd, err)
	}
	obj, err := ParseELF(f, nil)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if obj.BuildID != mariadbdBuildID {
		t.Skipf("%s has build id %s, the capture was taken from %s", mariadbd, obj.BuildID, mariadbdBuildID)
	}
	p := NewProcessFromMaps(loadMappings(t, mariadbd), openFile)
	p.SetDebugRoot("") // as on the capture machine: no mariadb-server-core-dbgsym
	for _, capture := range mariadb1011Captures {
		t.Run(strings.TrimSuffix(filepath.Base(capture), ".perf.script.gz"), func(t *testing.T) {
			checkCapture(t, p, capture, mariadbd)
		})
	}
}

// TestLibcDebugFileMatchesPerf resolves the libc frames of the 10.11
// captures through libc6-dbg's debug file, found by build id, as perf did.
func TestLibcDebugFileMatchesPerf(t *testing.T) {
	f, err := os.Open(libc)
	if err != nil {
		t.Skipf("%s: %v", libc, err)
	}
	obj, err := ParseELF(f, nil)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if obj.BuildID != libcBuildID {
		t.Skipf("%s has build id %s, the captures were taken with %s", libc, obj.BuildID, libcBuildID)
	}
	dbg := filepath.Join(DefaultDebugRoot, ".build-id", libcBuildID[:2], libcBuildID[2:]+".debug")
	if _, err := os.Stat(dbg); err != nil {
		t.Skipf("libc6-dbg not installed (apt-get install libc6-dbg): %v", err)
	}
	p := NewProcessFromMaps(loadMappings(t, libc), openFile)
	for _, capture := range mariadb1011Captures {
		t.Run(strings.TrimSuffix(filepath.Base(capture), ".perf.script.gz"), func(t *testing.T) {
			checkCapture(t, p, capture, libc)
		})
	}
	if o, err := p.Object(0x30000); err != nil || o.Source != "debug .symtab" {
		t.Errorf("libc symbols from %v (%v), want the debug file", o, err)
	}
}

// checkCapture resolves every frame of dso in a capture and wants at
// least 99% to be what perf printed.
func checkCapture(t *testing.T, p *Process, capture, dso string) {
	t.Helper()
	frames := readPerfFrames(t, capture, dso)
	if len(frames) == 0 {
		t.Fatalf("no %s frames in %s", dso, capture)
	}
	bad := 0
	seen := map[string]bool{}
	for _, pf := range frames {
		fr := p.Resolve(pf.addr)
		got := perfSym(fr)
		if got == pf.sym && fr.DSO == pf.dso && fr.PerfAddr == pf.addr {
			// the whole line, as fold.ParsePerfScript will read it
			if l := fr.PerfLine(fr.PerfAddr); l != pf.line {
				t.Fatalf("PerfLine = %q, perf printed %q", l, pf.line)
			}
			continue
		}
		bad++
		key := pf.sym + "|" + got
		if !seen[key] {
			seen[key] = true
			t.Logf("%x: perf %s (%s) at %x, got %s (%s) at %x", pf.addr, pf.sym, pf.dso, pf.addr, got, fr.DSO, fr.PerfAddr)
		}
	}
	match := float64(len(frames)-bad) / float64(len(frames))
	t.Logf("%d of %d %s frames match perf (%.3f%%)", len(frames)-bad, len(frames), dso, 100*match)
	if match < 0.99 {
		t.Errorf("only %.3f%% of frames match perf, want >= 99%%", 100*match)
	}
}
