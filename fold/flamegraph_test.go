package fold

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFlameGraphCorpus folds FlameGraph's own test corpus (its test/*.txt
// perf script captures) as `flamediff fold` does, format detected, and
// compares the output with the expected outputs FlameGraph keeps in
// test/results (one per capture and option: --pid, --tid, --kernel, --jit,
// --all, --addrs). Where they differ, the checkout's stackcollapse-perf.pl
// is run: FlameGraph's own test.sh fails on some of its results, which
// predate a change to the script (Java names with --pid and --tid), and
// flamediff follows the script. With perl at hand, the flag sets
// test/results lacks (none, --event-filter, several at once) are compared
// with the script's output too.
//
// FlameGraph is not part of this repository; point FLAMEGRAPH_DIR at a
// checkout (github.com/brendangregg/FlameGraph):
//
//	FLAMEGRAPH_DIR=~/FlameGraph go test ./fold -run FlameGraphCorpus -v
func TestFlameGraphCorpus(t *testing.T) {
	dir := os.Getenv("FLAMEGRAPH_DIR")
	if dir == "" {
		t.Skip("FLAMEGRAPH_DIR is not set: point it at a FlameGraph checkout to fold its test corpus")
	}
	inputs, _ := filepath.Glob(filepath.Join(dir, "test", "*.txt"))
	if len(inputs) == 0 {
		t.Fatalf("no perf script captures in %s/test", dir)
	}
	script := filepath.Join(dir, "stackcollapse-perf.pl")
	perl := true
	if _, err := exec.LookPath("perl"); err != nil {
		perl = false
		t.Logf("no perl: outputs that differ from test/results cannot be checked against %s", script)
	}
	perlFold := func(t *testing.T, input string, flags []string) []byte {
		t.Helper()
		cmd := exec.Command("perl", append(append([]string{script}, flags...), input)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %v %s: %v", script, flags, input, err)
		}
		return out
	}
	var results, identical, stale, live, liveIdentical int
	for _, in := range inputs {
		data, err := os.ReadFile(in)
		if err != nil {
			t.Fatal(err)
		}
		base := strings.TrimSuffix(filepath.Base(in), ".txt")
		if got := detect(data); got != FormatPerf {
			t.Errorf("%s: detect = %q, want %q", base, got, FormatPerf)
		}
		fold := func(t *testing.T, flags []string) []byte {
			t.Helper()
			p, err := Parse(bytes.NewReader(data), ParseOptions{Perf: perfOptionsFromFlags(t, flags)})
			if err != nil {
				t.Fatalf("%s %v: Parse: %v", base, flags, err)
			}
			return []byte(folded(t, p))
		}
		for _, opt := range []string{"pid", "tid", "kernel", "jit", "all", "addrs"} {
			want, err := os.ReadFile(filepath.Join(dir, "test", "results", base+"-collapsed-"+opt+".txt"))
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			results++
			flags := []string{"--" + opt}
			got := fold(t, flags)
			if bytes.Equal(got, want) {
				identical++
				continue
			}
			if !perl {
				t.Errorf("%s %v differs from test/results:\n%s", base, flags, firstDiff(got, want))
				continue
			}
			if script := perlFold(t, in, flags); !bytes.Equal(got, script) {
				t.Errorf("%s %v differs from test/results and from stackcollapse-perf.pl:\n%s", base, flags, firstDiff(got, script))
				continue
			}
			stale++
			d, _, _ := strings.Cut(firstDiff(got, want), ":")
			t.Logf("%s %v: test/results is older than stackcollapse-perf.pl, whose output flamediff's equals (%s differs)", base, flags, d)
		}
		if !perl {
			continue
		}
		for _, flags := range [][]string{nil, {"--event-filter=cycles"}, {"--event-filter=cpu-clock"}, {"--tid", "--all", "--addrs"}, {"--pid", "--jit"}} {
			live++
			if got, want := fold(t, flags), perlFold(t, in, flags); !bytes.Equal(got, want) {
				t.Errorf("%s %v differs from stackcollapse-perf.pl:\n%s", base, flags, firstDiff(got, want))
				continue
			}
			liveIdentical++
		}
	}
	t.Logf("FlameGraph corpus: %d captures; %d outputs in test/results: %d identical, %d identical to the script where test/results is stale; %d more flag sets run through the script: %d identical",
		len(inputs), results, identical, stale, live, liveIdentical)
	if results == 0 {
		t.Errorf("no expected outputs in %s/test/results", dir)
	}
}
