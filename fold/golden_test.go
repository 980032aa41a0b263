package fold

import (
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The compatibility goldens are what stackcollapse-perf.pl (FlameGraph)
// prints for the same input and flags. The Perl script is not part of this
// repository; to regenerate the goldens, or to compare against the script
// live, point STACKCOLLAPSE_PL at a copy:
//
//	STACKCOLLAPSE_PL=~/FlameGraph/stackcollapse-perf.pl go test ./fold -run Golden -update
var update = flag.Bool("update", false, "rewrite golden files (needs STACKCOLLAPSE_PL for the compatibility goldens)")

// compatFlags are the stackcollapse-perf.pl flag sets checked on the real
// captures; the file-name tag is the flags without dashes.
var compatFlags = [][]string{
	nil,
	{"--pid"},
	{"--tid"},
	{"--kernel"},
	{"--jit"},
	{"--all"},
	{"--addrs"},
	{"--event-filter=cpu-clock:ppp"},
	{"--tid", "--all", "--addrs"},
}

func perfOptionsFromFlags(t testing.TB, flags []string) PerfOptions {
	var o PerfOptions
	for _, f := range flags {
		switch {
		case f == "--pid":
			o.PID = true
		case f == "--tid":
			o.TID = true
		case f == "--kernel":
			o.Kernel = true
		case f == "--jit":
			o.JIT = true
		case f == "--all":
			o.All = true
		case f == "--addrs":
			o.Addrs = true
		case strings.HasPrefix(f, "--event-filter="):
			o.EventFilter = strings.TrimPrefix(f, "--event-filter=")
		default:
			t.Fatalf("unknown flag %q", f)
		}
	}
	return o
}

func flagTag(flags []string) string {
	if len(flags) == 0 {
		return "default"
	}
	s := strings.Join(flags, "")
	s = strings.ReplaceAll(s, "--", "-")
	s = strings.NewReplacer("=", "_", ":", "_").Replace(s)
	return strings.TrimPrefix(s, "-")
}

// runPerl runs the reference script, or returns nil when it is not available.
func runPerl(t *testing.T, input []byte, flags []string) []byte {
	t.Helper()
	script := os.Getenv("STACKCOLLAPSE_PL")
	if script == "" {
		return nil
	}
	cmd := exec.Command("perl", append([]string{script}, flags...)...)
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", script, flags, err, stderr.String())
	}
	return out
}

func foldBytes(t *testing.T, input []byte, flags []string, workers int) []byte {
	t.Helper()
	p, err := parsePerf(bytes.NewReader(input), perfOptionsFromFlags(t, flags), false, workers)
	if err != nil {
		t.Fatalf("parsePerf(%v): %v", flags, err)
	}
	var buf bytes.Buffer
	if err := WriteFolded(&buf, p); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkCompat compares flamediff's fold of input with the golden file (and
// with the live Perl script when STACKCOLLAPSE_PL is set).
func checkCompat(t *testing.T, input []byte, flags []string, golden string) {
	t.Helper()
	if perl := runPerl(t, input, flags); perl != nil {
		if *update {
			if err := os.WriteFile(golden, perl, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range []int{1, 2} {
			if got := foldBytes(t, input, flags, w); !bytes.Equal(got, perl) {
				t.Errorf("%s %v (workers=%d): differs from stackcollapse-perf.pl:\n%s", golden, flags, w, firstDiff(got, perl))
			}
		}
	} else if *update {
		t.Fatalf("-update needs STACKCOLLAPSE_PL (path of stackcollapse-perf.pl): the goldens are its output")
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("golden: %v (regenerate with STACKCOLLAPSE_PL=... go test ./fold -run Golden -update)", err)
	}
	for _, w := range []int{1, 2} {
		if got := foldBytes(t, input, flags, w); !bytes.Equal(got, want) {
			t.Errorf("fold %v (workers=%d) differs from %s:\n%s", flags, w, golden, firstDiff(got, want))
		}
	}
}

func firstDiff(got, want []byte) string {
	gl := strings.Split(string(got), "\n")
	wl := strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n  got:  %q\n  want: %q", i+1, g, w)
		}
	}
	return "(same lines, different bytes)"
}

func gunzipFile(t testing.TB, path string) []byte {
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
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestGoldenCaptures: every real capture, default flags, against the
// goldens in testdata/golden (what `stackcollapse-perf.pl` printed).
func TestGoldenCaptures(t *testing.T) {
	caps, _ := filepath.Glob("../testdata/perf/*.perf.script.gz")
	if len(caps) == 0 {
		t.Fatal("no captures in ../testdata/perf")
	}
	for _, c := range caps {
		name := strings.TrimSuffix(filepath.Base(c), ".perf.script.gz")
		t.Run(name, func(t *testing.T) {
			checkCompat(t, gunzipFile(t, c), nil, filepath.Join("../testdata/golden", name+".stackcollapse.folded"))
		})
	}
}

// TestGoldenFlags: every stackcollapse-perf.pl flag flamediff supports, on
// two real captures (one per thread-naming style: 10.11 names every thread
// mariadbd, 11.8 names them).
func TestGoldenFlags(t *testing.T) {
	for _, name := range []string{"mariadb-10.11-update-index", "mariadb-11.8-point-select", "mariadb-10.11-update-non-index.local-fields"} {
		input := gunzipFile(t, filepath.Join("../testdata/perf", name+".perf.script.gz"))
		for _, flags := range compatFlags[1:] {
			t.Run(name+"/"+flagTag(flags), func(t *testing.T) {
				checkCompat(t, input, flags, filepath.Join("../testdata/compat", name+"."+flagTag(flags)+".folded"))
			})
		}
	}
}

// edgeFlags are the flag sets an edge case may have goldens for.
var edgeFlags = append(compatFlags[:len(compatFlags):len(compatFlags)], []string{"--event-filter=cycles"})

// TestGoldenEdgeCases: generated perf script text full of the corner cases
// of the Perl script's regular expressions (thread names with spaces and
// digits, pid/tid forms, periods 0, 00 and 007, mixed events, inlined
// frames, Java and Go names, quotes, semicolons, "(deleted)" and spaces in
// dso paths, JIT maps, garbage and comment lines, CRLF, a last sample
// without its blank line; edge-notime-*: sample headers without a
// timestamp, stack lines without indentation), folded with every flag set.
// Each input is checked with every flag set of edgeFlags it has a golden
// for; edge-N.perf, which have one, with the flags numbered after it.
// Detection, too, must take each input as perf script.
func TestGoldenEdgeCases(t *testing.T) {
	inputs, _ := filepath.Glob("../testdata/compat/edge-*.perf")
	if len(inputs) == 0 {
		t.Fatal("no edge cases in ../testdata/compat")
	}
	for i, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := detect(data); got != FormatPerf {
			t.Errorf("detect(%s) = %q, want %q", in, got, FormatPerf)
		}
		base := strings.TrimSuffix(in, ".perf")
		var sets [][]string
		for _, flags := range edgeFlags {
			if _, err := os.Stat(base + "." + flagTag(flags) + ".folded"); err == nil {
				sets = append(sets, flags)
			}
		}
		if len(sets) == 0 {
			sets = [][]string{compatFlags[i%len(compatFlags)]}
		}
		for _, flags := range sets {
			t.Run(filepath.Base(base)+"/"+flagTag(flags), func(t *testing.T) {
				checkCompat(t, data, flags, base+"."+flagTag(flags)+".folded")
			})
		}
	}
}
