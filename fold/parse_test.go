package fold

import (
	"bytes"
	"errors"
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
		{"blank lines only", "\n\n\n", ""},
		{"comments only", "# a\n# b\n", ""},
		{"binary", "\x00\x01\x02", "binary"},
		{"one control byte", "a;b 1\n\x01", "binary"},
	}
	for _, tt := range tests {
		if got := detect([]byte(tt.in)); got != tt.want {
			t.Errorf("%s: detect(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
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
