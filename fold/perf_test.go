package fold

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// The expected values of the regex emulations below were obtained by
// running the Perl regular expressions quoted in perf.go on the same lines.

// nilOr renders an optional capture: "<nil>" when the group did not participate.
func nilOr(b []byte) string {
	if b == nil {
		return "<nil>"
	}
	return string(b)
}

func TestMatchHeader(t *testing.T) {
	const none = "<nil>"
	tests := []struct {
		line           string
		ok             bool
		comm, pid, tid string
	}{
		{"mariadbd 12480  6594.735928:    2004008 cpu-clock:ppp: ", true, "mariadbd", "12480", none},
		{"Web Content 42 123.4: 1 cycles:", true, "Web Content", "42", none},
		{"V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:", true, "V8 WorkerThread", "24636", "25607"},
		{"java 123/456 [001] 1.0: 10 cycles:", true, "java", "123", "456"},
		{"my thread 123/0 1.0: cpu-clock:", true, "my thread", "123", "0"},
		{"ab\t99\t1.0: 5 cpu-clock:", true, "ab", "99", none},
		// .+? takes at least one byte after \S, even a space.
		{"a  12 x", true, "a ", "12", none},
		// "/" with no digits after it: $3 does not participate.
		{"ab 12/ x", true, "ab", "12", none},
		{"ab 12//34 x", true, "ab", "12", "34"},
		// A pid that is not followed by a space makes the comm longer.
		{"ab 12/x 7 ", true, "ab 12/x", "7", none},
		{"ab 12/34x 56 ", true, "ab 12/34x", "56", none},
		{"ab 12 ", true, "ab", "12", none},
		{"ab 12345678901234567890 1.0:", true, "ab", "12345678901234567890", none},
		{"a 1 x", false, "", "", ""},
		{"ab 12", false, "", "", ""}, // needs \s+ after the number
		{" ab 12 ", false, "", "", ""},
		{"x", false, "", "", ""},
		{"", false, "", "", ""},
		{"\t          79c841 Item_equal::add_key_fields+0xa1 (/opt/m/mariadbd)", false, "", "", ""},
	}
	for _, tt := range tests {
		comm, pid, tid, ok := matchHeader([]byte(tt.line))
		if ok != tt.ok {
			t.Errorf("matchHeader(%q) ok = %v, want %v", tt.line, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		if string(comm) != tt.comm || string(pid) != tt.pid || nilOr(tid) != tt.tid {
			t.Errorf("matchHeader(%q) = %q, %q, %s, want %q, %q, %s", tt.line, comm, pid, nilOr(tid), tt.comm, tt.pid, tt.tid)
		}
	}
}

func TestMatchEvent(t *testing.T) {
	const none = "<nil>"
	tests := []struct {
		line          string
		ok            bool
		period, event string
	}{
		{"mariadbd 12480  6594.735928:    2004008 cpu-clock:ppp: ", true, "2004008", "cpu-clock:ppp"},
		{"a 1 1.0: cycles:", true, none, "cycles"},
		{"a 1 1.0: 0 cycles:", true, "0", "cycles"},
		{"a 1 1.0: 00 cycles:", true, "00", "cycles"},
		{"a 1 1.0: 007 cycles:", true, "007", "cycles"},
		{"a 1 1.0: 5 cycles:  \t", true, "5", "cycles"},
		{"a 1: 10  raw_syscalls:sys_enter:", true, "10", "raw_syscalls:sys_enter"},
		{"x 1 1.0:  3   sched:sched_switch:", true, "3", "sched:sched_switch"},
		{": x:", true, none, "x"},
		{"a 1 1.0:cycles:", false, "", ""},   // \s+ before the event
		{"a 1 1.0: 5 cycles", false, "", ""}, // event ends with ':'
		{"a 1 1.0: 5 cycles: extra", false, "", ""},
		{"a 1 1.0 5 cycles:", false, "", ""},     // no ':' before the period
		{"a 1 1.0: 12ab cycles:", false, "", ""}, // period is digits only
		{":x:", false, "", ""},
		{" x:", false, "", ""},
		{"", false, "", ""},
	}
	for _, tt := range tests {
		period, event, ok := matchEvent([]byte(tt.line))
		if ok != tt.ok {
			t.Errorf("matchEvent(%q) ok = %v, want %v", tt.line, ok, tt.ok)
			continue
		}
		if ok && (nilOr(period) != tt.period || string(event) != tt.event) {
			t.Errorf("matchEvent(%q) = %s, %q, want %s, %q", tt.line, nilOr(period), event, tt.period, tt.event)
		}
	}
}

func TestMatchStackLine(t *testing.T) {
	tests := []struct {
		line        string
		ok          bool
		pc, fn, mod string
	}{
		{"\t          79c841 Item_equal::add_key_fields+0xa1 (/opt/m/mariadbd)", true, "79c841", "Item_equal::add_key_fields+0xa1", "/opt/m/mariadbd"},
		{"\tffffffff8226e079 _raw_spin_unlock_irqrestore+0x19 ([kernel.kallsyms])", true, "ffffffff8226e079", "_raw_spin_unlock_irqrestore+0x19", "[kernel.kallsyms]"},
		{"\t  7f00 [unknown] ([unknown])", true, "7f00", "[unknown]", "[unknown]"},
		// Greedy (.+): the last " (" wins, so a "(deleted)" dso splits there.
		{"\t  7f00 foo (/usr/lib/libfoo.so (deleted))", true, "7f00", "foo (/usr/lib/libfoo.so", "deleted)"},
		{"\t  7f00 (anonymous namespace)::bar(int) (/x)", true, "7f00", "(anonymous namespace)::bar(int)", "/x"},
		{"\t  7f00 net/http.(*Client).Do+0x10 (/bin/app)", true, "7f00", "net/http.(*Client).Do+0x10", "/bin/app"},
		{"\t  7f00 foo (/my dir/lib.so)", true, "7f00", "foo", "/my dir/lib.so"},
		{"\t7f00 a->b->c (/x)", true, "7f00", "a->b->c", "/x"},
		{"\t7f00 foo ) (bar)", true, "7f00", "foo )", "bar"},
		{"7f00 foo (x)", true, "7f00", "foo", "x"},
		// Backtracking into \w+ when nothing is left for (.+).
		{"  abc ()", true, "ab", "c", ""},
		{"  abc x ()", true, "abc", "x", ""},
		{"  abc  ()", true, "abc", " ", ""},
		{"abcd ()", true, "abc", "d", ""},
		{"ab ()", true, "a", "b", ""},
		{"  7f00 foo", false, "", "", ""},
		{"  ( x (y)", false, "", "", ""},
		{"a ()", false, "", "", ""},
		{"\t7f00 foo(x)", false, "", "", ""},
		{"", false, "", "", ""},
	}
	for _, tt := range tests {
		line := []byte(tt.line)
		pc, s, r, p, ok := matchStackLine(line)
		if ok != tt.ok {
			t.Errorf("matchStackLine(%q) ok = %v, want %v", tt.line, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		if fn, mod := string(line[s:r]), string(line[r+2:p]); string(pc) != tt.pc || fn != tt.fn || mod != tt.mod {
			t.Errorf("matchStackLine(%q) = %q, %q, %q, want %q, %q, %q", tt.line, pc, fn, mod, tt.pc, tt.fn, tt.mod)
		}
	}
}

func TestStripOffset(t *testing.T) {
	tests := []struct{ in, want string }{
		{"foo+0xa1", "foo"},
		{"foo+0xdeadbeef", "foo"},
		{"foo+0x1+0x2", "foo+0x1"},
		{"+0xff", ""},
		{"foo", "foo"},
		{"foo+0x", "foo+0x"},     // needs a hex digit
		{"foo+0xA1", "foo+0xA1"}, // lower-case hex only
		{"foo+0x1g", "foo+0x1g"},
		{"foo+0x12 ", "foo+0x12 "}, // anchored at the end
		{"a+0x1b+0xz", "a+0x1b+0xz"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := string(stripOffset([]byte(tt.in))); got != tt.want {
			t.Errorf("stripOffset(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitArrows(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"a", []string{"a"}},
		{"a->b", []string{"a", "b"}},
		{"a->b->", []string{"a", "b"}}, // trailing empty fields dropped
		{"a->b->->", []string{"a", "b"}},
		{"->a", []string{"", "a"}}, // leading ones kept
		{"a->->b", []string{"a", "", "b"}},
		{"a-->b", []string{"a-", "b"}},
		{"", nil},
		{"->", nil},
	}
	for _, tt := range tests {
		got := splitArrows(tt.in)
		if len(got) != len(tt.want) || (len(got) > 0 && strings.Join(got, "|") != strings.Join(tt.want, "|")) {
			t.Errorf("splitArrows(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTidyGeneric(t *testing.T) {
	tests := []struct{ in, want string }{
		{"foo(int)", "foo"},
		{"foo", "foo"},
		{"a;b", "a:b"},
		{"(anonymous namespace)::bar(int)", "(anonymous namespace)::bar"},
		{"ns::(anonymous namespace)::f()", "ns::(anonymous namespace)::f"},
		{"(anonymous namespace)", "(anonymous namespace)"},
		{"(anonymous namespace", ""},
		// Go method names keep their parentheses.
		{"net/http.(*Client).Do", "net/http.(*Client).Do"},
		{"main.(*T).m.func1", "main.(*T).m.func1"},
		{"a.(b).", "a.(b)."},
		{"a.().", "a.()."},
		{"f(x).(y).z", "f(x).(y).z"},
		{"a.(b)c.d", "a."}, // ".(" without a later ")." is not a Go method
		{"x.(y", "x."},
		{"foo (/usr/lib", "foo "},
		{`RegExp:[&<>"']`, "RegExp:[&<>]"},
		{`say "hi"(x)`, "say hi"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := tidyGeneric(tt.in); got != tt.want {
			t.Errorf("tidyGeneric(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestIsJITMap(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"/tmp/perf-123.map", true},
		{"/tmp/perf-12.mapx", true},
		{"x/tmp/perf-1.map", true},
		{"/tmp/perf-/tmp/perf-7.map", true},
		{"/tmp/perf-.map", false},
		{"/tmp/perf-12a.map", false},
		{"/tmp/perf-1Xmap", false},
		{"/tmp/perf-/tmp/perf-.map", false},
		{"[kernel.kallsyms]", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := isJITMap(tt.in); got != tt.want {
			t.Errorf("isJITMap(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// foldPerf parses perf script text with the given options and returns the
// folded output, failing the test on error.
func foldPerf(t *testing.T, in string, opts PerfOptions, workers int) (*Profile, string) {
	t.Helper()
	p, err := parsePerf(strings.NewReader(in), opts, true, workers)
	if err != nil {
		t.Fatalf("parsePerf(%q, %+v) error: %v", in, opts, err)
	}
	return p, folded(t, p)
}

func TestParsePerfScript(t *testing.T) {
	const (
		hdr  = "mariadbd 12480  6594.735928:    2004008 cpu-clock:ppp: \n"
		leaf = "\t          79c841 Item_equal::add_key_fields+0xa1 (/opt/m/mariadbd)\n"
		unk  = "\t          79cc59 [unknown] (/opt/m/mariadbd)\n"
		root = "\t           891f5 start_thread+0x305 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	)
	tests := []struct {
		name    string
		in      string
		opts    PerfOptions
		want    string
		unit    string
		samples int64
	}{
		{"real sample", hdr + leaf + unk + root + "\n", PerfOptions{},
			"mariadbd;start_thread;[mariadbd];Item_equal::add_key_fields 2004008\n", UnitPeriod, 1},
		{"same stack summed", hdr + leaf + "\n" + hdr + leaf + "\n", PerfOptions{},
			"mariadbd;Item_equal::add_key_fields 4008016\n", UnitPeriod, 2},
		{"trailing sample without blank line dropped", hdr + leaf + "\n" + hdr + root, PerfOptions{},
			"mariadbd;Item_equal::add_key_fields 2004008\n", UnitPeriod, 1},
		{"header only", hdr + "\n", PerfOptions{}, "mariadbd 2004008\n", UnitPeriod, 1},
		{"comm with spaces", "Web Content 42 1.0: 1 cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{}, "Web_Content;foo 1\n", UnitPeriod, 1},
		{"no period counts 1", "a1 1 1.0: cycles:\n\t7f00 foo (/x)\n\na1 1 2.0: cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{}, "a1;foo 2\n", UnitSamples, 2},
		{"no event counts 1", "a1 1 1.0:\n\t7f00 foo (/x)\n\n", PerfOptions{}, "a1;foo 1\n", UnitSamples, 1},
		{"period 0 counts 1", "a1 1 1.0: 0 cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{}, "a1;foo 1\n", UnitSamples, 1},
		{"period 00 counts 0", "a1 1 1.0: 00 cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{}, "a1;foo 0\n", UnitPeriod, 1},
		{"period 007 counts 7", "a1 1 1.0: 007 cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{}, "a1;foo 7\n", UnitPeriod, 1},
		{"pid without tid, --pid", "java 456 1.0: cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{PID: true}, "java-?;foo 1\n", UnitSamples, 1},
		{"pid without tid, --tid", "java 456 1.0: cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{TID: true}, "java-?/456;foo 1\n", UnitSamples, 1},
		{"pid/tid, --pid", "java 123/456 1.0: cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{PID: true}, "java-123;foo 1\n", UnitSamples, 1},
		{"pid/tid, --tid", "java 123/456 1.0: cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{TID: true}, "java-123/456;foo 1\n", UnitSamples, 1},
		{"pid/0 is pid-less, --tid", "my thread 123/0 1.0: cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{TID: true}, "my_thread-?/123;foo 1\n", UnitSamples, 1},
		{"pid/00 is a tid (Perl truth), --tid", "a1 123/00 1.0: cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{TID: true}, "a1-123/00;foo 1\n", UnitSamples, 1},
		{"pid/tid without flags", "a1 123/456 1.0: cycles:\n\t7f00 foo (/x)\n\n", PerfOptions{}, "a1;foo 1\n", UnitSamples, 1},
		{"inline frames", "a1 1 1.0: cycles:\n\t1 leaf (/x)\n\t2 a->b->c_[i] (/x)\n\t3 root (/x)\n\n", PerfOptions{},
			"a1;root;a;b_[i];c_[i];leaf 1\n", UnitSamples, 1},
		{"unknown with dso", "a1 1 1.0: cycles:\n\t7f00 [unknown] (/usr/lib/libc.so.6)\n\n", PerfOptions{}, "a1;[libc.so.6] 1\n", UnitSamples, 1},
		{"unknown without dso", "a1 1 1.0: cycles:\n\t7f00 [unknown] ([unknown])\n\n", PerfOptions{}, "a1;[unknown] 1\n", UnitSamples, 1},
		{"unknown with dso, --addrs", "a1 1 1.0: cycles:\n\t7f00 [unknown] (/usr/lib/libc.so.6)\n\t7f01 [unknown] (/usr/lib/libc.so.6)\n\n", PerfOptions{Addrs: true},
			"a1;[libc.so.6 <7f01>];[libc.so.6 <7f00>] 1\n", UnitSamples, 1},
		{"unknown without dso, --addrs", "a1 1 1.0: cycles:\n\t7f00 [unknown] ([unknown])\n\n", PerfOptions{Addrs: true}, "a1;[unknown <7f00>] 1\n", UnitSamples, 1},
		{"deleted dso", "a1 1 1.0: cycles:\n\t7f00 foo+0x10 (/usr/lib/libfoo.so (deleted))\n\t7f01 bar+0x10 (/usr/lib/libfoo.so)\n\n", PerfOptions{},
			"a1;bar;foo+0x10  1\n", UnitSamples, 1},
		{"anonymous namespace", "a1 1 1.0: cycles:\n\t7f00 ns::(anonymous namespace)::f(int)+0x5 (/x)\n\n", PerfOptions{}, "a1;ns::(anonymous namespace)::f 1\n", UnitSamples, 1},
		{"leading paren is a process name, skipped", "a1 1 1.0: cycles:\n\t7f00 (anonymous namespace)::f(int)+0x5 (/x)\n\t7f01 g (/x)\n\n", PerfOptions{}, "a1;g 1\n", UnitSamples, 1},
		{"go method", "app 1 1.0: cycles:\n\t7f00 net/http.(*Client).Do+0x10 (/bin/app)\n\n", PerfOptions{}, "app;net/http.(*Client).Do 1\n", UnitSamples, 1},
		{"semicolons and quotes", "a1 1 1.0: cycles:\n\t7f00 RegExp:[&<>\"';] (/tmp/perf-7.map)\n\n", PerfOptions{}, "a1;RegExp:[&<>:] 1\n", UnitSamples, 1},
		{"--kernel", "a1 1 1.0: cycles:\n\tffff1 k1+0x19 ([kernel.kallsyms])\n\tffff2 k2 (/boot/vmlinux)\n\tffff3 [unknown] ([unknown])\n\t7f00 u1 (/x)\n\n", PerfOptions{Kernel: true},
			"a1;u1;[unknown];k2_[k];k1_[k] 1\n", UnitSamples, 1},
		{"--jit", "a1 1 1.0: cycles:\n\t7f00 LFoo;.bar (/tmp/perf-123.map)\n\t7f01 baz_[j] (/tmp/perf-123.map)\n\t7f02 k ([kernel.kallsyms])\n\n", PerfOptions{JIT: true},
			"a1;k;baz_[j];LFoo:.bar_[j] 1\n", UnitSamples, 1},
		{"--all", "a1 1 1.0: cycles:\n\t7f00 j (/tmp/perf-1.map)\n\t7f02 k ([kernel.kallsyms])\n\n", PerfOptions{All: true}, "a1;k_[k];j_[j] 1\n", UnitSamples, 1},
		{"java tidy", "java 1 1.0: cycles:\n\t7f00 Lorg/mozilla/Foo;.call(Lorg/X;)V (/tmp/perf-1.map)\n\t7f01 Lnoslash (/x)\n\n", PerfOptions{},
			"java;Lnoslash;org/mozilla/Foo:.call 1\n", UnitSamples, 1},
		{"comments and orphan stack lines ignored", "# header\n\t7f00 orphan (/x)\n\na1 1 1.0: cycles:\n# comment inside\n\t7f00 foo (/x)\n\n", PerfOptions{}, "a1;foo 1\n", UnitSamples, 1},
		{"two headers without a blank line", "a1 1 1.0: 5 cycles:\n\t7f00 foo (/x)\nb1 1 1.0: 7 cycles:\n\t7f00 bar (/x)\n\n", PerfOptions{}, "b1;bar;foo 7\n", UnitPeriod, 1},
		{"sorted in byte order", "b1 1 1.0: cycles:\n\t7f00 x (/x)\n\nB1 1 1.0: cycles:\n\t7f00 x (/x)\n\na1 1 1.0: cycles:\n\t7f00 x (/x)\n\n", PerfOptions{},
			"B1;x 1\na1;x 1\nb1;x 1\n", UnitSamples, 3},
		{"empty input", "", PerfOptions{}, "", UnitSamples, 0},
	}
	for _, tt := range tests {
		for _, workers := range []int{1, 2} {
			p, got := foldPerf(t, tt.in, tt.opts, workers)
			if got != tt.want {
				t.Errorf("%s (workers=%d): ParsePerfScript(%q, %+v) = %q, want %q", tt.name, workers, tt.in, tt.opts, got, tt.want)
			}
			if p.Unit != tt.unit || p.Samples != tt.samples {
				t.Errorf("%s (workers=%d): Unit, Samples = %q, %d, want %q, %d", tt.name, workers, p.Unit, p.Samples, tt.unit, tt.samples)
			}
			if p.Skipped != 0 {
				t.Errorf("%s (workers=%d): Skipped = %d (%s), want 0", tt.name, workers, p.Skipped, p.SkippedFirst)
			}
		}
	}
}

func TestParsePerfScriptEvents(t *testing.T) {
	in := "a1 1 1.0: 10 cycles:\n\t7f00 c1 (/x)\n\n" +
		"a1 1 2.0: 20 instructions:\n\t7f00 i1 (/x)\n\n" +
		"a1 1 3.0: 30 cycles:\n\t7f00 c2 (/x)\n\n"
	tests := []struct {
		filter   string
		want     string
		event    string
		filtered bool
	}{
		{"", "a1;c1 10\na1;c2 30\n", "cycles", true},
		{"cycles", "a1;c1 10\na1;c2 30\n", "cycles", true},
		{"instructions", "a1;i1 20\n", "instructions", true},
		{"nope", "", "nope", true},
	}
	for _, tt := range tests {
		for _, workers := range []int{1, 2} {
			p, got := foldPerf(t, in, PerfOptions{EventFilter: tt.filter}, workers)
			if got != tt.want || p.Event != tt.event || p.FilteredEvents != tt.filtered {
				t.Errorf("ParsePerfScript(EventFilter=%q, workers=%d) = %q, Event %q, FilteredEvents %v, want %q, %q, %v",
					tt.filter, workers, got, p.Event, p.FilteredEvents, tt.want, tt.event, tt.filtered)
			}
		}
	}
	// One event only: nothing is filtered.
	p, _ := foldPerf(t, "a1 1 1.0: 10 cycles:\n\t7f00 c1 (/x)\n\n", PerfOptions{}, 1)
	if p.FilteredEvents || p.Event != "cycles" {
		t.Errorf("single event: Event %q, FilteredEvents %v, want \"cycles\", false", p.Event, p.FilteredEvents)
	}
	// A filtered header does not start a sample: its stack lines go to the
	// previous one when no blank line separates them (as in Perl).
	_, got := foldPerf(t, "a1 1 1.0: 1 cycles:\n\t7f00 c1 (/x)\na1 1 2.0: 2 instructions:\n\t7f00 i1 (/x)\n\n", PerfOptions{}, 1)
	if want := "a1;i1;c1 1\n"; got != want {
		t.Errorf("filtered header inside a sample: got %q, want %q", got, want)
	}
}

func TestParsePerfScriptErrors(t *testing.T) {
	const good = "a1 1 1.0: 1 cycles:\n\t7f00 foo (/x)\n\n"
	in := good + "this is not perf\n" + good + "nor this\n"

	// Strict: the first bad line, numbered.
	for _, workers := range []int{1, 2} {
		_, err := parsePerf(strings.NewReader(in), PerfOptions{}, true, workers)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("strict parsePerf(workers=%d) error = %v, want a *ParseError", workers, err)
		}
		if pe.Line != 4 || pe.Text != "this is not perf" || !errors.Is(err, ErrSyntax) {
			t.Errorf("strict parsePerf(workers=%d) error = %#v, want line 4 %q wrapping ErrSyntax", workers, pe, "this is not perf")
		}
		if !strings.Contains(err.Error(), "line 4") {
			t.Errorf("strict error %q does not name line 4", err)
		}
	}

	// Not strict: counted, the first one described.
	for _, workers := range []int{1, 2} {
		p, err := parsePerf(strings.NewReader(in), PerfOptions{}, false, workers)
		if err != nil {
			t.Fatalf("parsePerf(workers=%d) error = %v, want nil", workers, err)
		}
		if p.Skipped != 2 || !strings.Contains(p.SkippedFirst, "line 4") || !strings.Contains(p.SkippedFirst, "this is not perf") {
			t.Errorf("parsePerf(workers=%d) Skipped, SkippedFirst = %d, %q, want 2 and line 4", workers, p.Skipped, p.SkippedFirst)
		}
		if got, want := folded(t, p), "a1;foo 2\n"; got != want {
			t.Errorf("parsePerf(workers=%d) with garbage = %q, want %q", workers, got, want)
		}
	}

	// Only garbage: an error naming the first line, even when not strict.
	for _, strict := range []bool{false, true} {
		_, err := ParsePerfScript(strings.NewReader("\nhello\nworld\n"), PerfOptions{}, strict)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("ParsePerfScript(garbage, strict=%v) error = %v, want a *ParseError for line 2", strict, err)
		}
	}

	// A period that does not fit in 64 bits is an unrecognised line.
	_, err := ParsePerfScript(strings.NewReader("a1 1 1.0: 99999999999999999999 cycles:\n\t7f00 foo (/x)\n\n"), PerfOptions{}, true)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 {
		t.Errorf("ParsePerfScript(huge period, strict) error = %v, want a *ParseError for line 1", err)
	}
}

// failReader returns data, then err.
type failReader struct {
	data []byte
	err  error
}

func (f *failReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestParsePerfScriptReadError(t *testing.T) {
	boom := errors.New("boom")
	for _, workers := range []int{1, 2} {
		_, err := parsePerf(&failReader{data: []byte("a1 1 1.0: 1 cycles:\n\t7f00 foo (/x)\n\n"), err: boom}, PerfOptions{}, false, workers)
		if !errors.Is(err, boom) {
			t.Errorf("parsePerf(failing reader, workers=%d) error = %v, want %v", workers, err, boom)
		}
	}
}

// bigPerfInput repeats a real capture n times and inserts garbage lines at
// sample boundaries near the given byte offsets. It returns the input and
// the 1-based line numbers of the garbage lines.
func bigPerfInput(t *testing.T, capture []byte, n int, near []int) ([]byte, []int) {
	t.Helper()
	if !bytes.HasSuffix(capture, []byte("\n\n")) {
		t.Fatal("capture does not end with a blank line")
	}
	data := bytes.Repeat(capture, n)
	var out []byte
	var lines []int
	prev := 0
	for i, off := range near {
		cut := bytes.Index(data[off:], []byte("\n\n"))
		if cut < 0 {
			t.Fatalf("no sample boundary after offset %d", off)
		}
		cut += off + 2
		out = append(out, data[prev:cut]...)
		lines = append(lines, bytes.Count(out, []byte{'\n'})+1)
		out = fmt.Appendf(out, "garbage line %d\n", i)
		prev = cut
	}
	out = append(out, data[prev:]...)
	return out, lines
}

// The parallel path (several chunks, several workers) must give exactly
// what one state machine gives, including the first skipped line and the
// strict error line.
func TestParsePerfParallelMatchesSequential(t *testing.T) {
	capture := readGz(t, "../testdata/perf/mariadb-11.8-point-select.perf.script.gz")
	single, err := parsePerf(bytes.NewReader(capture), PerfOptions{}, true, 1)
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	if len(capture)*n < 2*chunkSize {
		t.Fatalf("capture too small (%d bytes) to make several chunks", len(capture))
	}
	cases := []struct {
		name string
		near []int
	}{
		{"garbage in first and later chunks", []int{100, chunkSize - 1000, chunkSize + 12345, len(capture)*n - 5000}},
		{"garbage only in later chunks", []int{chunkSize + 777, 2*chunkSize + 5}},
		{"no garbage", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in, lines := bigPerfInput(t, capture, n, c.near)
			p1, err := parsePerf(bytes.NewReader(in), PerfOptions{}, false, 1)
			if err != nil {
				t.Fatal(err)
			}
			p2, err := parsePerf(bytes.NewReader(in), PerfOptions{}, false, 2)
			if err != nil {
				t.Fatal(err)
			}
			if !sameStacks(p1.Stacks, p2.Stacks) {
				t.Errorf("workers=2 stacks differ from workers=1 (%d vs %d stacks)", len(p2.Stacks), len(p1.Stacks))
			}
			for _, p := range []*Profile{p1, p2} {
				if p.Skipped != len(lines) {
					t.Errorf("Skipped = %d, want %d", p.Skipped, len(lines))
				}
			}
			if p1.SkippedFirst != p2.SkippedFirst || p1.Samples != p2.Samples || p1.Unit != p2.Unit || p1.Event != p2.Event || p1.FilteredEvents != p2.FilteredEvents {
				t.Errorf("workers=1: %q %d %q %q %v; workers=2: %q %d %q %q %v",
					p1.SkippedFirst, p1.Samples, p1.Unit, p1.Event, p1.FilteredEvents,
					p2.SkippedFirst, p2.Samples, p2.Unit, p2.Event, p2.FilteredEvents)
			}
			if len(lines) > 0 {
				if want := fmt.Sprintf("line %d: %q", lines[0], "garbage line 0"); p2.SkippedFirst != want {
					t.Errorf("SkippedFirst = %q, want %q", p2.SkippedFirst, want)
				}
			}
			// n copies: every value and the sample count multiplied by n.
			if len(p2.Stacks) != len(single.Stacks) || p2.Samples != n*single.Samples {
				t.Fatalf("%d stacks, %d samples, want %d, %d", len(p2.Stacks), p2.Samples, len(single.Stacks), n*single.Samples)
			}
			for i, s := range p2.Stacks {
				if s.Key() != single.Stacks[i].Key() || s.Value != n*single.Stacks[i].Value {
					t.Fatalf("stack %d = %q %d, want %q %d", i, s.Key(), s.Value, single.Stacks[i].Key(), n*single.Stacks[i].Value)
				}
			}

			// Strict: the same first error line.
			_, err1 := parsePerf(bytes.NewReader(in), PerfOptions{}, true, 1)
			_, err2 := parsePerf(bytes.NewReader(in), PerfOptions{}, true, 2)
			if len(lines) == 0 {
				if err1 != nil || err2 != nil {
					t.Errorf("strict errors = %v, %v, want nil", err1, err2)
				}
				return
			}
			var pe1, pe2 *ParseError
			if !errors.As(err1, &pe1) || !errors.As(err2, &pe2) || pe1.Line != lines[0] || pe2.Line != lines[0] {
				t.Errorf("strict errors = %v, %v, want line %d from both", err1, err2, lines[0])
			}
		})
	}
}

// The running total and the control-byte check name the same line however
// the input is cut into chunks and whichever worker folds them: here the
// overflow and the NUL byte are in a later chunk than the first.
func TestParsePerfErrorsAcrossChunks(t *testing.T) {
	const sample = "a1 1 1.0: 4611686018427387904 cycles:\n\t7f00 foo (/x)\n\n" // 2^62, 3 lines
	n := 2*chunkSize/len(sample) + 1000
	big := strings.Repeat("a1 1 1.0: 1 cycles:\n\t7f00 foo (/x)\n\n", n)
	bigLines := 3 * n
	tests := []struct {
		name string
		in   string
		line int
		kind error
	}{
		// 2^62 + 2^62 is one more than an int64 holds: the second big
		// sample passes it.
		{"overflow in a later chunk", big + sample + sample, bigLines + 4, ErrOverflow},
		{"overflow across chunks", sample + big + sample, bigLines + 4, ErrOverflow},
		{"NUL in a later chunk", big + "a1 1 1.0: 1 cycles:\n\t7f00 f\x00o (/x)\n\n" + big, bigLines + 2, ErrBinaryText},
		{"NUL before an overflow", big + "\x00\n" + sample + sample, bigLines + 1, ErrBinaryText},
		{"overflow before a NUL", sample + sample + big + "\x00\n", 4, ErrOverflow},
	}
	for _, tt := range tests {
		for _, workers := range []int{1, 3} {
			for _, strict := range []bool{false, true} {
				_, err := parsePerf(strings.NewReader(tt.in), PerfOptions{}, strict, workers)
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line != tt.line || !errors.Is(err, tt.kind) {
					t.Errorf("%s: parsePerf(workers=%d, strict=%v) error = %v, want line %d wrapping %v", tt.name, workers, strict, err, tt.line, tt.kind)
				}
			}
		}
	}
}
