package fold

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFolded(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Stack
	}{
		{"one stack", "a;b;c 3\n", []Stack{st(3, "a", "b", "c")}},
		{"no final newline", "a;b 3", []Stack{st(3, "a", "b")}},
		{"frames with spaces", "Web Content;foo bar (x);baz 7\n", []Stack{st(7, "Web Content", "foo bar (x)", "baz")}},
		{"crlf", "a;b 1\r\nc 2\r\n", []Stack{st(1, "a", "b"), st(2, "c")}},
		{"empty and blank lines", "\n\na 1\n   \n\t\nb 2\n\n", []Stack{st(1, "a"), st(2, "b")}},
		{"duplicates summed", "b 1\na 2\nb 3\na;x 4\n", []Stack{st(2, "a"), st(4, "a", "x"), st(4, "b")}},
		{"sorted in byte order", "b 1\nB 1\n_ 1\na;b 1\na b 1\n", []Stack{st(1, "B"), st(1, "_"), st(1, "a b"), st(1, "a", "b"), st(1, "b")}},
		{"zero and minus zero", "a 0\nb -0\n", []Stack{st(0, "a"), st(0, "b")}},
		{"leading zeros", "a 007\n", []Stack{st(7, "a")}},
		{"empty frames kept", ";a; 1\n", []Stack{st(1, "", "a", "")}},
		{"max int64", "a 9223372036854775807\n", []Stack{st(9223372036854775807, "a")}},
		{"empty input", "", []Stack{}},
	}
	for _, tt := range tests {
		for _, strict := range []bool{false, true} {
			p, err := ParseFolded(strings.NewReader(tt.in), strict)
			if err != nil {
				t.Errorf("%s: ParseFolded(%q, %v) error: %v", tt.name, tt.in, strict, err)
				continue
			}
			if !sameStacks(p.Stacks, tt.want) {
				t.Errorf("%s: ParseFolded(%q, %v) = %v, want %v", tt.name, tt.in, strict, p.Stacks, tt.want)
			}
			if p.Unit != UnitSamples || p.Skipped != 0 {
				t.Errorf("%s: ParseFolded(%q) Unit, Skipped = %q, %d, want %q, 0", tt.name, tt.in, p.Unit, p.Skipped, UnitSamples)
			}
		}
	}
}

func TestParseFoldedBadLines(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		line    int    // line of the strict error
		skipped int    // lines skipped when not strict; -1: an error even then
		msg     string // in the error
	}{
		{"missing count", "a 1\na;b\n", 2, 1, "no count"},
		{"count not a number", "a 1\na;b x\n", 2, 1, "not a whole number"},
		{"trailing space", "a 1\na;b 3 \n", 2, 1, "no count"},
		{"count only", "a 1\n 5\n", 2, 1, "no count"},
		{"double minus", "a 1\na --5\n", 2, 1, "not a whole number"},
		{"two bad lines", "a 1\nx\ny\n", 2, 2, "no count"},
		{"negative count", "a 1\nb -3\n", 2, -1, "negative count"},
		{"count overflow", "a 1\nb 9223372036854775808\n", 2, -1, "64 bits"},
		{"total overflow", "a 9223372036854775807\nb 1\na 1\n", 2, -1, "add up to more than 9223372036854775807"},
		{"stack sum overflow", "a 9223372036854775807\n\na 1\n", 3, -1, "add up to more than 9223372036854775807"},
		{"NUL byte", "a 1\nb\x00 1\n", 2, -1, `a NUL byte (\x00) in text input`},
		{"only garbage", "hello\nworld\n", 1, -1, "no count"},
	}
	for _, tt := range tests {
		_, err := ParseFolded(strings.NewReader(tt.in), true)
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Line != tt.line || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: ParseFolded(%q, strict) error = %v, want a *ParseError at line %d mentioning %q", tt.name, tt.in, err, tt.line, tt.msg)
		}
		p, err := ParseFolded(strings.NewReader(tt.in), false)
		if tt.skipped < 0 {
			if !errors.As(err, &pe) || pe.Line != tt.line {
				t.Errorf("%s: ParseFolded(%q) error = %v, want a *ParseError at line %d", tt.name, tt.in, err, tt.line)
			}
			if tt.name != "only garbage" && !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("%s: ParseFolded(%q) error = %v, want it to mention %q", tt.name, tt.in, err, tt.msg)
			}
			if tt.name == "only garbage" && !strings.Contains(err.Error(), "no stacks found: none of 2") {
				t.Errorf("%s: ParseFolded(%q) error = %v, want it to say no stacks were found in 2 lines", tt.name, tt.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: ParseFolded(%q) error = %v, want nil", tt.name, tt.in, err)
			continue
		}
		if p.Skipped != tt.skipped || !strings.HasPrefix(p.SkippedFirst, "line 2: ") {
			t.Errorf("%s: ParseFolded(%q) Skipped, SkippedFirst = %d, %q, want %d, \"line 2: ...\"", tt.name, tt.in, p.Skipped, p.SkippedFirst, tt.skipped)
		}
		if want := []Stack{st(1, "a")}; !sameStacks(p.Stacks, want) {
			t.Errorf("%s: ParseFolded(%q) = %v, want %v", tt.name, tt.in, p.Stacks, want)
		}
	}
}

func TestParseFoldedLongLine(t *testing.T) {
	long := strings.Repeat("f;", 40<<10) + "x 1\n" // 80 KiB: more than the initial buffer
	p, err := ParseFolded(strings.NewReader(long), true)
	if err != nil {
		t.Fatalf("ParseFolded(80 KiB line): %v", err)
	}
	if len(p.Stacks) != 1 || len(p.Stacks[0].Frames) != 40<<10+1 {
		t.Errorf("ParseFolded(80 KiB line) = %d stacks, want 1 of %d frames", len(p.Stacks), 40<<10+1)
	}
}

func TestWriteFolded(t *testing.T) {
	p := &Profile{Stacks: []Stack{st(3, "a", "b c"), st(-2, "d"), st(0, "e")}}
	if got, want := folded(t, p), "a;b c 3\nd -2\ne 0\n"; got != want {
		t.Errorf("WriteFolded(%v) = %q, want %q", p.Stacks, got, want)
	}
	if got := folded(t, &Profile{}); got != "" {
		t.Errorf("WriteFolded(empty) = %q, want \"\"", got)
	}
}

type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteFoldedError(t *testing.T) {
	p := &Profile{Stacks: []Stack{st(1, "a")}}
	if err := WriteFolded(errWriter{}, p); err == nil {
		t.Errorf("WriteFolded(failing writer) = nil, want an error")
	}
}

// The stackcollapse-perf.pl goldens and the run directories read back to
// the same bytes.
func TestFoldedRoundTripGoldens(t *testing.T) {
	names, _ := filepath.Glob("../testdata/golden/*.stackcollapse.folded")
	runs, _ := filepath.Glob("../testdata/runs/*/" + StacksFile)
	names = append(names, runs...)
	if len(names) == 0 {
		t.Fatal("no folded fixtures")
	}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseFolded(bytes.NewReader(data), true)
		if err != nil {
			t.Errorf("ParseFolded(%s): %v", name, err)
			continue
		}
		if len(p.Stacks) == 0 {
			t.Errorf("ParseFolded(%s): no stacks", name)
		}
		if got := folded(t, p); got != string(data) {
			t.Errorf("WriteFolded(ParseFolded(%s)) differs from the file: %s", name, firstDiff([]byte(got), data))
		}
	}
}
