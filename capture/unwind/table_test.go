package unwind

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// regNames are readelf's names of the x86-64 DWARF registers.
var regNames = map[uint64]string{0: "rax", 1: "rdx", 2: "rcx", 3: "rbx", 4: "rsi", 5: "rdi", 6: "rbp", 7: "rsp",
	8: "r8", 9: "r9", 10: "r10", 11: "r11", 12: "r12", 13: "r13", 14: "r14", 15: "r15", 16: "ra"}

// readelfCFA and readelfReg print a rule as readelf --debug-dump=frames-interp does.
func readelfCFA(r Rule) string {
	switch r.Kind {
	case RegOffset:
		return fmt.Sprintf("%s%+d", regNames[r.Reg], r.Offset)
	case Expression:
		return "exp"
	}
	return fmt.Sprintf("kind%d", r.Kind)
}

func readelfReg(r Rule) string {
	switch r.Kind {
	case Undefined:
		return "u"
	case SameValue:
		return "s"
	case Offset:
		return fmt.Sprintf("c%+d", r.Offset)
	case ValOffset:
		return fmt.Sprintf("v%+d", r.Offset)
	case Register: // readelf prints the DWARF number here
		return "r" + strconv.FormatUint(r.Reg, 10)
	case Expression:
		return "exp"
	case ValExpression:
		return "vexp"
	}
	return fmt.Sprintf("kind%d", r.Kind)
}

var parenRe = regexp.MustCompile(` \([a-z0-9]+\)`)

// readelfRow is one row of readelf's interpreted frame table.
type readelfRow struct {
	begin, loc   uint64
	cfa, ra, rbp string
}

// readelfRows runs readelf --debug-dump=frames-interp on path and returns
// the rows of its FDEs (not of its CIEs), with the CFA, ra and rbp columns
// ("u" for a column the FDE never names, as readelf leaves it).
func readelfRows(t *testing.T, path string) []readelfRow {
	t.Helper()
	if _, err := exec.LookPath("readelf"); err != nil {
		t.Skip("readelf not found: it is the reference for the CFI rows")
	}
	var stderr bytes.Buffer
	cmd := exec.Command("readelf", "--debug-dump=frames-interp", path)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		// readelf (binutils 2.40) exits 1 on Debian's libc.so.6 without a
		// word on stderr, yet prints the whole table: 23,757 rows for
		// glibc 2.36, as many as a separate run of the design memo's
		// check counted. The rows it printed are compared.
		t.Logf("readelf %s: %v: %s", path, err, bytes.TrimSpace(stderr.Bytes()))
		if len(out) == 0 {
			t.Fatalf("readelf %s printed nothing", path)
		}
	}
	var (
		rows  []readelfRow
		inFDE bool
		begin uint64
		end   uint64
		cols  []string
	)
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(parenRe.ReplaceAllString(line, ""))
		switch {
		case strings.Contains(line, " FDE cie="):
			inFDE, cols = true, nil
			for _, f := range fields {
				if pc, ok := strings.CutPrefix(f, "pc="); ok {
					lo, hi, _ := strings.Cut(pc, "..")
					begin, _ = strconv.ParseUint(lo, 16, 64)
					end, _ = strconv.ParseUint(hi, 16, 64)
				}
			}
		case strings.Contains(line, " CIE") || strings.Contains(line, "ZERO terminator"):
			inFDE = false
		case inFDE && len(fields) > 1 && fields[0] == "LOC":
			cols = fields[2:]
		case inFDE && cols != nil && len(fields) == len(cols)+2:
			loc, err := strconv.ParseUint(fields[0], 16, 64)
			if err != nil || loc >= end {
				// readelf also prints a row the program advances to at the
				// FDE's end (the linker's PLT FDE, sized for a longer .plt):
				// it applies to no pc of the FDE.
				continue
			}
			r := readelfRow{begin: begin, loc: loc, cfa: fields[1], ra: "u", rbp: "u"}
			for i, c := range cols {
				switch c {
				case "ra":
					r.ra = fields[2+i]
				case "rbp":
					r.rbp = fields[2+i]
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// checkReadelf compares every row readelf prints for path with Table.RowAt
// at that row's location: the FDE's begin, the CFA, ra and rbp.
func checkReadelf(t *testing.T, path string) {
	rows := readelfRows(t, path)
	tab, err := FromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatalf("readelf printed no rows for %s", path)
	}
	bad := 0
	for _, want := range rows {
		row, err := tab.RowAt(want.loc)
		var got readelfRow
		if err == nil {
			got = readelfRow{begin: row.Begin, loc: want.loc, cfa: readelfCFA(row.CFA), ra: readelfReg(row.RA), rbp: readelfReg(row.BP)}
		}
		if err != nil || got != want {
			if bad++; bad <= 10 {
				t.Errorf("%s: RowAt(%#x) = %+v, %v; readelf says %+v", filepath.Base(path), want.loc, got, err, want)
			}
		}
	}
	t.Logf("%s: %d FDEs, %d readelf rows compared, %d differ", path, tab.Len(), len(rows), bad)
	if bad > 0 {
		t.Errorf("%s: %d of %d rows differ from readelf", path, bad, len(rows))
	}
}

// TestReadelf compares the table with readelf's interpretation of the same
// CFI, row by row: the C library (all of its rows, about 24,000 for glibc
// 2.36) and the test-built program and shared library.
func TestReadelf(t *testing.T) {
	t.Run("libc", func(t *testing.T) {
		const libc = "/lib/x86_64-linux-gnu/libc.so.6"
		if _, err := os.Stat(libc); err != nil {
			t.Skipf("%s: %v", libc, err)
		}
		checkReadelf(t, libc)
	})
	t.Run("fixture", func(t *testing.T) {
		fx := buildFixture(t, "cfi")
		checkReadelf(t, filepath.Join(fx.dir, "prog"))
		checkReadelf(t, filepath.Join(fx.dir, "libnofp.so"))
	})
}
