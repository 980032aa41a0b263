package fold

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", FormatFolded},
		{"perf header", "mariadbd 12480  6594.735928:    2004008 cpu-clock:ppp: \n", FormatPerf},
		{"perf stack line first", "\t          79c841 foo+0xa1 (/opt/m/mariadbd)\n", FormatPerf},
		{"perf after comments", "# ========\n# captured on: x\n#\nmariadbd 1 1.0: cycles:\n", FormatPerf},
		{"folded", "a;b;c 12\n", FormatFolded},
		{"folded crlf", "a;b;c 12\r\n", FormatFolded},
		{"folded negative (a diff)", "a;b -3\n", FormatFolded},
		{"folded with spaces", "Web Content;foo bar 1\n", FormatFolded},
		{"prose", "hello world\nthis is text\n", ""},
		{"blank lines only", "\n\n\n", FormatFolded},  // an empty profile: no samples
		{"comments only", "# a\n# b\n", FormatFolded}, // as a perf script header alone
		{"binary", "\x00\x01\x02", "binary"},
		{"control byte in the first line", "a;b 1\x01\n", "binary"},
		{"pprof starts with a newline", "\n\x04\x08\x01\x10\x02", "binary"},
		// Text, then a control byte: the lines before it decide; the
		// parser names the line.
		{"control byte after a folded line", "a;b 1\n\x01", FormatFolded},
		{"NUL after a perf header", "java 1 1.0: cycles:\n\t7f00 f (/x)\n\x00\n", FormatPerf},
		{"NUL after prose", "hello world\nx\x00y\n", ""},
		// Sample headers without a timestamp (older perf, perf script -F).
		{"perf header without time", "java 19983 cycles:\n", FormatPerf},
		{"perf header without time, pid/tid", "java 19983/19984 cycles:\n", FormatPerf},
		{"perf header without time, period", "java 19983 10000 cycles:\n", FormatPerf},
		{"perf header without time, cpu and period", "V8 Worker 19983/19984 [001] 10000 cpu-clock:ppp: \n", FormatPerf},
		{"perf header without time, unindented stack", "java 19983 cycles:\nffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n", FormatPerf},
		{"prose ending in a colon", "Chapter 12 has notes:\n", ""},
		// A folded line may start with a space and look like a stack line,
		// but it ends in its count.
		{"folded, frame with a leading space", " foo (x) 3\n", FormatFolded},
		// Lines longer than the read buffer.
		{"folded, 70 KB first line", strings.Repeat("std::vector<int>::f;", 3500) + "leaf 12\n", FormatFolded},
		{"perf, 70 KB stack line", "a1 1 1.0: 1 cycles:\n\t7f00 " + strings.Repeat("t<int>::", 9000) + "f (/x)\n\n", FormatPerf},
		{"perf without time, 70 KB comm", strings.Repeat("c", 70000) + " 1 cycles:\n", FormatPerf},
	}
	for _, tt := range tests {
		if got := detect([]byte(tt.in)); got != tt.want {
			t.Errorf("%s: detect(%q) = %q, want %q", tt.name, shorten(tt.in), got, tt.want)
		}
	}
}

// Detection reads whole lines, however long, and gives the parser every
// byte it read.
func TestParseLongLines(t *testing.T) {
	long := strings.Repeat("std::basic_string<char, std::char_traits<char>>::f;", 1400) // 70 KB
	longSym := strings.Repeat("t<int>::", 9000) + "f"
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"folded, 70 KB first line", long + "leaf 12\nx 3\n", long + "leaf 12\nx 3\n"},
		{"folded, 70 KB first line then 200 short ones", long + "leaf 12\n" + strings.Repeat("x 1\n", 200), long + "leaf 12\nx 200\n"},
		{"perf, 70 KB first stack line", "a1 1 1.0: 5 cycles:\n\t7f00 " + longSym + "+0x1 (/x)\n\t7f01 main (/x)\n\n",
			"a1;main;" + longSym + " 5\n"},
		{"perf without time, 70 KB first stack line", "java 19983 cycles:\n\t7f00 " + longSym + " (/x)\n\n", "java;" + longSym + " 1\n"},
	}
	for _, tt := range tests {
		for _, in := range [][]byte{[]byte(tt.in), gz(t, []byte(tt.in))} {
			p, err := Parse(bytes.NewReader(in), ParseOptions{Strict: true})
			if err != nil {
				t.Errorf("%s: Parse error: %v", tt.name, err)
				continue
			}
			if got := folded(t, p); got != tt.want {
				t.Errorf("%s: Parse = %q, want %q", tt.name, shorten(got), shorten(tt.want))
			}
		}
	}
}

// A NUL or another control byte in text input is an error naming its line,
// for every way of reading text; binary data (pprof) stays pprof.
func TestParseControlBytes(t *testing.T) {
	perfSample := "a1 1 1.0: 1 cycles:\n\t7f00 foo (/x)\n\n" // 3 lines
	far := strings.Repeat(perfSample, 30000)                 // 1 MB: past the read buffer and detection
	tests := []struct {
		name   string
		in     string
		format string
		want   string
	}{
		{"folded, NUL in line 3", "a;b 1\nc 2\nd\x00e 3\n", "", `line 3: a NUL byte (\x00) in text input: is this a binary file?`},
		{"folded, ESC in line 2", "a;b 1\n\x1b[31mc 2\n", "", `line 2: a control byte (\x1b) in text input: is this a binary file?`},
		{"folded, NUL far away", strings.Repeat("a;b 1\n", 200000) + "\x00\n", "", `line 200001: a NUL byte (\x00) in text input: is this a binary file?`},
		{"folded named, NUL in line 1", "a\x00;b 1\n", FormatFolded, `line 1: a NUL byte (\x00) in text input: is this a binary file?`},
		{"perf, NUL in a stack line", "a1 1 1.0: 1 cycles:\n\t7f00 fo\x00o (/x)\n\n", "", `line 2: a NUL byte (\x00) in text input: is this a binary file?`},
		{"perf, NUL far away", far + "a1 1 1.0: 1 cycles:\n\x00\n", "", "line 90002: a NUL byte (\\x00) in text input: is this a binary file?"},
		{"perf named, NUL in a header", "a1 1\x00 1.0: 1 cycles:\n\n", FormatPerf, `line 1: a NUL byte (\x00) in text input: is this a binary file?`},
		{"folded, NUL in line 1", "a;b\x00 1\nc 2\n", "", `line 1: a NUL byte (\x00) in text input: is this a binary file?`},
		{"perf, control byte in the first header", "a1 1 1.0: 1 cyc\x01les:\n\t7f00 foo (/x)\n\n", "", `line 1: a control byte (\x01) in text input: is this a binary file?`},
		{"prose, NUL in line 2", "Dear reader,\nthis\x00is not a profile.\n", "", `line 2: a NUL byte (\x00) in text input: is this a binary file?`},
	}
	for _, tt := range tests {
		for _, strict := range []bool{false, true} {
			_, err := Parse(strings.NewReader(tt.in), ParseOptions{Format: tt.format, Strict: strict})
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrBinaryText) || err.Error() != strings.ReplaceAll(tt.want, `\\`, `\`) {
				t.Errorf("%s: Parse(strict=%v) error = %v, want %s (a *ParseError wrapping ErrBinaryText)", tt.name, strict, err, tt.want)
			}
		}
	}
}

// Counts that add up to more than an int64 holds are an error, whatever
// the format, with the line where the text parsers see it.
func TestParseTotalOverflow(t *testing.T) {
	const max = "9223372036854775807"
	hdr := func(period string) string { return "a1 1 1.0: " + period + " cycles:\n\t7f00 foo (/x)\n\n" }
	tests := []struct {
		name string
		in   string
		line int
	}{
		{"folded, two stacks", "a;b " + max + "\nc " + max + "\n", 2},
		{"folded, one stack twice", "a;b " + max + "\n\na;b 1\n", 3},
		{"folded, many small counts", "a 9223372036854775000\nb 800\nc 8\n", 3},
		{"perf, two samples", hdr(max) + hdr(max), 4},
		{"perf, third sample", hdr("9223372036854775000") + hdr("800") + hdr("8"), 7},
	}
	want := "the counts add up to more than 9223372036854775807 (the largest total flamediff can hold)"
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.in), ParseOptions{})
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, ErrOverflow) || pe.Line != tt.line || pe.Msg != want {
			t.Errorf("%s: Parse error = %v, want line %d: %s (a *ParseError wrapping ErrOverflow)", tt.name, err, tt.line, want)
		}
	}
	// Counts that fit exactly are fine.
	p, err := Parse(strings.NewReader("a 9223372036854775000\nb 807\n"), ParseOptions{})
	if err != nil || p.Total() != math.MaxInt64 {
		t.Errorf("Parse(total = MaxInt64) = %v, %v, want a total of %d", p, err, int64(math.MaxInt64))
	}
	// pprof: two samples of MaxInt64.
	pp := writePprof(t, &Profile{Stacks: []Stack{st(math.MaxInt64, "a"), st(math.MaxInt64, "b")}})
	if _, err := Parse(bytes.NewReader(pp), ParseOptions{}); !errors.Is(err, ErrOverflow) || !strings.Contains(err.Error(), "sample 2: "+want) {
		t.Errorf("Parse(pprof with a total beyond int64) error = %v, want one wrapping ErrOverflow naming sample 2", err)
	}
}

func rawPprof(t *testing.T, p *Profile) []byte {
	t.Helper()
	pp, err := profile.Parse(bytes.NewReader(writePprof(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := pp.WriteUncompressed(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestParseFormats(t *testing.T) {
	perfText := readGz(t, "../testdata/perf/mariadb-10.5-point-select.perf.script.gz")
	want, err := ParsePerfScript(bytes.NewReader(perfText), PerfOptions{}, true)
	if err != nil {
		t.Fatal(err)
	}
	foldedText := []byte(folded(t, want))
	pprofGz := writePprof(t, want)
	pprofRaw := rawPprof(t, want)
	if bytes.HasPrefix(pprofRaw, []byte{0x1f, 0x8b}) {
		t.Fatal("WriteUncompressed output is gzipped")
	}
	tests := []struct {
		name   string
		in     []byte
		format string
		unit   string
	}{
		{"perf", perfText, "", UnitPeriod},
		{"perf auto", perfText, FormatAuto, UnitPeriod},
		{"perf gzipped", gz(t, perfText), "", UnitPeriod},
		{"folded", foldedText, "", UnitSamples},
		{"folded gzipped", gz(t, foldedText), "", UnitSamples},
		{"pprof (gzipped)", pprofGz, "", UnitPeriod},
		{"pprof uncompressed", pprofRaw, "", UnitPeriod},
		{"pprof gzipped twice", gz(t, pprofGz), "", UnitPeriod},
		{"explicit perf", perfText, FormatPerf, UnitPeriod},
		{"explicit perf gzipped", gz(t, perfText), FormatPerf, UnitPeriod},
		{"explicit folded", foldedText, FormatFolded, UnitSamples},
		{"explicit pprof", pprofGz, FormatPprof, UnitPeriod},
		{"explicit pprof uncompressed", pprofRaw, FormatPprof, UnitPeriod},
	}
	for _, tt := range tests {
		p, err := Parse(bytes.NewReader(tt.in), ParseOptions{Format: tt.format, Strict: true})
		if err != nil {
			t.Errorf("%s: Parse(format %q) error: %v", tt.name, tt.format, err)
			continue
		}
		if !sameStacks(p.Stacks, want.Stacks) || p.Unit != tt.unit {
			t.Errorf("%s: Parse(format %q) = %d stacks, unit %q, want the capture's %d stacks, unit %q", tt.name, tt.format, len(p.Stacks), p.Unit, len(want.Stacks), tt.unit)
		}
	}
}

func TestParseOptionsPassedOn(t *testing.T) {
	in := "java 123/456 1.0: 1 cycles:\n\t7f00 foo (/x)\n\nnonsense\n"
	p, err := Parse(strings.NewReader(in), ParseOptions{Perf: PerfOptions{TID: true}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := folded(t, p), "java-123/456;foo 1\n"; got != want || p.Skipped != 1 {
		t.Errorf("Parse(--tid) = %q, Skipped %d, want %q, 1", got, p.Skipped, want)
	}
	_, err = Parse(strings.NewReader(in), ParseOptions{Strict: true})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 4 {
		t.Errorf("Parse(strict) error = %v, want a *ParseError at line 4", err)
	}
	_, err = Parse(strings.NewReader("a;b 1\nnocount\n"), ParseOptions{Strict: true})
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Errorf("Parse(folded, strict) error = %v, want a *ParseError at line 2", err)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, in := range [][]byte{nil, gz(t, nil)} {
		p, err := Parse(bytes.NewReader(in), ParseOptions{})
		if err != nil {
			t.Errorf("Parse(%q) error: %v", in, err)
			continue
		}
		if len(p.Stacks) != 0 || p.Total() != 0 {
			t.Errorf("Parse(%q) = %v, want an empty profile", in, p.Stacks)
		}
	}
}

func TestParseErrors(t *testing.T) {
	perfGz := gz(t, readGz(t, "../testdata/perf/mariadb-10.5-point-select.perf.script.gz"))
	foldedGz := gz(t, []byte("a;b 1\nc;d 2\n"))
	truncated := []struct {
		name string
		in   []byte
	}{
		{"magic only", perfGz[:2]},
		{"inside the header", perfGz[:6]},
		{"after the header", perfGz[:12]},
		{"in the middle", perfGz[:len(perfGz)/2]},
		{"no trailer", perfGz[:len(perfGz)-8]},
		{"last byte missing", perfGz[:len(perfGz)-1]},
		{"small folded, no trailer", foldedGz[:len(foldedGz)-8]},
		{"small folded, half", foldedGz[:len(foldedGz)/2]},
	}
	for _, tt := range truncated {
		for _, format := range []string{"", FormatPerf} {
			_, err := Parse(bytes.NewReader(tt.in), ParseOptions{Format: format})
			if !errors.Is(err, ErrTruncated) {
				t.Errorf("Parse(truncated gzip: %s, format %q) error = %v, want one wrapping ErrTruncated", tt.name, format, err)
			}
		}
	}

	unknown := []struct {
		name string
		in   []byte
		opts ParseOptions
	}{
		{"binary garbage", []byte("\x00\x01\x02 this is not a profile \xff\xfe"), ParseOptions{}},
		{"gzipped binary garbage", gz(t, []byte("\x00\x01\x02 this is not a profile \xff\xfe")), ParseOptions{}},
		{"prose", []byte("Dear reader,\nthis is not a profile.\n"), ParseOptions{}},
		{"unknown format name", []byte("a;b 1\n"), ParseOptions{Format: "json"}},
	}
	for _, tt := range unknown {
		_, err := Parse(bytes.NewReader(tt.in), tt.opts)
		if !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("Parse(%s) error = %v, want one wrapping ErrUnknownFormat", tt.name, err)
		}
	}

	// Read errors come through.
	boom := errors.New("boom")
	if _, err := Parse(&failReader{data: []byte("a;b 1\n"), err: boom}, ParseOptions{}); !errors.Is(err, boom) {
		t.Errorf("Parse(failing reader) error = %v, want %v", err, boom)
	}
	// Explicit perf on folded text: nothing understood, an error with a line.
	_, err := Parse(strings.NewReader("a;b 1\n"), ParseOptions{Format: FormatPerf})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 1 {
		t.Errorf("Parse(folded text as perf) error = %v, want a *ParseError at line 1", err)
	}
}

func TestParseErrorMessage(t *testing.T) {
	long := strings.Repeat("x", 200)
	tests := []struct {
		e    *ParseError
		want string
	}{
		{&ParseError{Msg: "bad"}, "bad"},
		{&ParseError{Line: 3, Msg: "bad"}, "line 3: bad"},
		{&ParseError{Line: 3, Text: "abc", Msg: "bad"}, `line 3: bad: "abc"`},
		{&ParseError{Line: 1, Text: long, Msg: "bad"}, `line 1: bad: "` + long[:117] + `..."`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("%#v.Error() = %q, want %q", tt.e, got, tt.want)
		}
		if !errors.Is(tt.e, ErrSyntax) {
			t.Errorf("%#v does not wrap ErrSyntax", tt.e)
		}
	}
}

// indexControl passes over eight bytes at a time: every byte value at
// every place of a word, and the first of two control bytes.
func TestIndexControl(t *testing.T) {
	for c := range 256 {
		for p := range 41 {
			b := []byte(strings.Repeat("a\t\n\r\v\f é\x7f\xff", 5)[:41])
			b[p] = byte(c)
			want := -1
			if isControl(byte(c)) {
				want = p
			}
			if got := indexControl(b); got != want {
				t.Fatalf("indexControl(%q) = %d, want %d", b, got, want)
			}
			if p+3 < len(b) {
				b[p+3] = 0
				if want < 0 {
					want = p + 3
				}
				if got := indexControl(b); got != want {
					t.Fatalf("indexControl(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}
