package fold

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Formats understood by Parse.
const (
	FormatAuto   = "auto"
	FormatPerf   = "perf"   // perf script text
	FormatFolded = "folded" // "frame;frame;frame count" (also bcc profile -f)
	FormatPprof  = "pprof"  // pprof protobuf, gzipped or not
)

// ParseOptions control Parse.
type ParseOptions struct {
	// Format is one of the Format constants; "" means FormatAuto.
	Format string
	// Perf holds the stackcollapse-perf.pl options for perf script input.
	Perf PerfOptions
	// Strict makes any line that cannot be understood an error; otherwise
	// such lines are counted in Profile.Skipped.
	Strict bool
}

// PerfOptions are stackcollapse-perf.pl's options, with the same meaning.
type PerfOptions struct {
	PID    bool // --pid: "comm-PID" as the first frame
	TID    bool // --tid: "comm-PID/TID" as the first frame
	Kernel bool // --kernel: "_[k]" after kernel frames
	JIT    bool // --jit: "_[j]" after JIT frames (/tmp/perf-PID.map)
	All    bool // --all: Kernel and JIT
	Addrs  bool // --addrs: "[dso <addr>]" for unresolved frames
	// EventFilter keeps only samples of this event; "" means the first
	// event seen, as stackcollapse-perf.pl does.
	EventFilter string
	NoKernel    bool // drop kernel frames ([kernel.kallsyms], vmlinux, modules "[...]" that are kernel) from stacks; flamediff's own option, not stackcollapse-perf.pl's
}

// ErrSyntax is wrapped by every ParseError.
var ErrSyntax = errors.New("syntax error")

// ErrOverflow is wrapped (through a *ParseError for text input) when the
// counts of a profile add up to more than an int64 holds.
var ErrOverflow = errors.New("counts overflow 64 bits")

// ErrBinaryText is wrapped by the *ParseError of text input (folded stacks
// or perf script) that holds a NUL or another control byte.
var ErrBinaryText = errors.New("binary data in text input")

// ParseError reports input that could not be understood, with its line.
type ParseError struct {
	Line int    // 1-based line number; 0 when not line-oriented
	Text string // the offending line, possibly shortened
	Msg  string // what is wrong and how to fix it
	// Err, when set, is the kind of error beyond ErrSyntax: ErrOverflow or
	// ErrBinaryText.
	Err error
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return e.Msg
	}
	if e.Text == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: %s: %q", e.Line, e.Msg, shorten(e.Text))
}

// Unwrap returns ErrSyntax and Err, when set.
func (e *ParseError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrSyntax, e.Err}
	}
	return []error{ErrSyntax}
}

// overflowMsg is the message of ErrOverflow's parse errors.
const overflowMsg = "the counts add up to more than 9223372036854775807 (the largest total flamediff can hold)"

func overflowError(line int) *ParseError {
	return &ParseError{Line: line, Msg: overflowMsg, Err: ErrOverflow}
}

// isControl reports the bytes that text input never holds: the C0 control
// bytes other than \t, \n, \v, \f and \r.
func isControl(c byte) bool { return c < 0x09 || (c > 0x0d && c < 0x20) }

var controlBytes = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = isControl(byte(c))
	}
	return t
}()

// indexControl returns the index of the first control byte of b, or -1.
// It looks at eight bytes at a time: the words with no byte below 0x09
// and none in 0x0e-0x1f (most words) are passed over.
func indexControl(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
		lows  = 0x7f7f7f7f7f7f7f7f
	)
	// Any byte < 0x09, or in (0x0d, 0x20): the exact word tests of "Bit
	// Twiddling Hacks" (hasless, hasbetween).
	control := func(x uint64) uint64 {
		low := x & lows
		return ((x-ones*0x09)&^x | (ones*(127+0x20)-low)&^x&(low+ones*(127-0x0d))) & highs
	}
	i := 0
	for ; i+16 <= len(b); i += 16 {
		if control(binary.LittleEndian.Uint64(b[i:]))|control(binary.LittleEndian.Uint64(b[i+8:])) != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if controlBytes[b[i]] {
			return i
		}
	}
	return -1
}

// controlError says that line holds the control byte c.
func controlError(line int, c byte) *ParseError {
	what := fmt.Sprintf("a control byte (\\x%02x)", c)
	if c == 0 {
		what = `a NUL byte (\x00)`
	}
	return &ParseError{Line: line, Msg: what + " in text input: is this a binary file?", Err: ErrBinaryText}
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// ErrUnknownFormat is returned by Parse when auto-detection finds neither
// perf script text, folded stacks nor pprof.
var ErrUnknownFormat = errors.New("unknown input format")

// ErrTruncated is wrapped when a gzip stream ends early.
var ErrTruncated = errors.New("truncated gzip input")

const (
	// sniffSize is the read buffer, and the window at the start of an
	// input in which a control byte before any line of text means binary
	// data (pprof protobuf).
	sniffSize = 64 << 10
	// detectLines is how many lines (not blank, not comments) detection
	// looks at, at most; detectMax bounds the bytes it reads, lines of
	// any length included (the folded parser's longest line).
	detectLines = 200
	detectMax   = 64 << 20
)

// Parse reads a profile in any supported format, detected from its first
// lines when opts.Format is auto (as many bytes as those lines take, long
// lines included), and gunzips it transparently. Errors in the input are
// *ParseError values (with the line) or wrap ErrUnknownFormat or
// ErrTruncated; text with a NUL or another control byte is a *ParseError
// wrapping ErrBinaryText, counts that add up beyond 64 bits one wrapping
// ErrOverflow.
func Parse(r io.Reader, opts ParseOptions) (*Profile, error) {
	br := bufio.NewReaderSize(r, sniffSize)
	head, _ := br.Peek(2)
	var in io.Reader = br
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("gzip header: %w: the stream ends early (an interrupted copy or download?)", ErrTruncated)
		}
		if err != nil {
			return nil, fmt.Errorf("gzip header: %w", err)
		}
		zr.Multistream(true)
		br = bufio.NewReaderSize(&gzipErrReader{zr}, sniffSize)
		in = br
	}
	format := opts.Format
	if format == "" || format == FormatAuto {
		s, err := sniff(br)
		if err != nil {
			return nil, err
		}
		in = io.MultiReader(bytes.NewReader(s.head), br)
		format = s.format
		switch {
		case format == "binary":
			p, err := ParsePprof(in)
			if err != nil && s.ctlLine > 0 {
				// Not pprof, and text but for a control byte or two.
				return nil, controlError(s.ctlLine, s.ctl)
			}
			if err != nil {
				return nil, fmt.Errorf("%w: binary data that is neither gzip nor pprof (%w)", ErrUnknownFormat, err)
			}
			return p, nil
		case format == "" && s.ctlLine > 0:
			// Text whose first lines say nothing, then a control byte:
			// pprof after all, or a text file with binary data in it.
			if p, err := ParsePprof(in); err == nil {
				return p, nil
			}
			return nil, controlError(s.ctlLine, s.ctl)
		case format == "":
			return nil, fmt.Errorf("%w: the first lines are neither perf script text, folded stacks (\"frame;frame COUNT\") nor pprof; name the format with --input-format", ErrUnknownFormat)
		}
	}
	switch format {
	case FormatPerf:
		return ParsePerfScript(in, opts.Perf, opts.Strict)
	case FormatFolded:
		return ParseFolded(in, opts.Strict)
	case FormatPprof:
		return ParsePprof(in)
	}
	return nil, fmt.Errorf("%w: %q (want auto, perf, folded or pprof)", ErrUnknownFormat, format)
}

type gzipErrReader struct{ r io.Reader }

func (g *gzipErrReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = fmt.Errorf("%w: the stream ends early (an interrupted copy or download?)", ErrTruncated)
	} else if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("gzip: %w", err)
	}
	return n, err
}

// sniffed is what sniff found.
type sniffed struct {
	head    []byte // the bytes sniff read, to be read again
	format  string // as detector.result, or "binary"
	ctlLine int    // the line of the first control byte, when detection stopped there
	ctl     byte
}

// sniff reads from br the lines detection needs (whole lines, however long,
// up to detectMax bytes in all) and names the format.
//
// A control byte in the first sniffSize bytes means binary data (pprof)
// unless lines of text come before it: then the lines before it decide,
// and the parser reports the byte with its line.
func sniff(br *bufio.Reader) (sniffed, error) {
	win, err := br.Peek(sniffSize)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return sniffed{}, err
	}
	if c := indexControl(win); c >= 0 && !textBefore(win[:c]) {
		s := sniffed{format: "binary"}
		if mostlyText(win) {
			s.ctlLine, s.ctl = 1+bytes.Count(win[:c], []byte{'\n'}), win[c]
		}
		return s, nil
	}
	var s sniffed
	var d detector
	for lineNo := 1; len(s.head) < detectMax; lineNo++ {
		start := len(s.head)
		var err error
		for {
			var frag []byte
			frag, err = br.ReadSlice('\n')
			s.head = append(s.head, frag...)
			if !errors.Is(err, bufio.ErrBufferFull) || len(s.head) >= detectMax {
				break
			}
		}
		eof := errors.Is(err, io.EOF)
		if err != nil && !eof && !errors.Is(err, bufio.ErrBufferFull) {
			return sniffed{}, err
		}
		line := s.head[start:]
		if !eof && (len(line) == 0 || line[len(line)-1] != '\n') {
			break // detectMax reached inside a line: judge without it
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if c := indexControl(line); c >= 0 {
			s.ctlLine, s.ctl = lineNo, line[c]
			break
		}
		if d.line(line) || eof {
			break
		}
	}
	s.format = d.result()
	if len(s.head) == 0 {
		s.format = FormatFolded // empty input: an empty profile
	}
	return s, nil
}

// textBefore reports whether b, the bytes before a control byte, hold a
// whole line of text: then the control byte is in a text file, not in
// binary data. (A pprof protobuf starts with a field tag: 0x0a, a newline,
// then a length below 0x20, or a control byte.)
func textBefore(b []byte) bool {
	i := bytes.LastIndexByte(b, '\n')
	return i > 0 && len(bytes.TrimSpace(b[:i])) > 0 && utf8.Valid(b[:i])
}

// mostlyText reports whether b, which holds a control byte, is lines of
// text but for one control byte in a hundred (at most): then, if b is not
// pprof either, the error names the control byte's line.
func mostlyText(b []byte) bool {
	if bytes.IndexByte(b, '\n') < 0 {
		return false
	}
	n := 0
	for _, c := range b {
		if isControl(c) {
			n++
		}
	}
	return n <= max(1, len(b)/100) && utf8.Valid(b[:bytes.LastIndexByte(b, '\n')])
}

// detect names the format of a whole input as Parse detects it: FormatPerf,
// FormatFolded, "binary" or "" (text of unknown form).
func detect(b []byte) string {
	// A buffer that holds b whole sees what a sniffSize one sees.
	s, err := sniff(bufio.NewReaderSize(bytes.NewReader(b), min(len(b)+1, sniffSize)))
	if err != nil {
		return ""
	}
	return s.format
}

// detector judges an input's format from its lines, one at a time. A line
// that only perf script has (a sample header ending in its event, or an
// indented stack line ending in ")") decides at once; else lines ending in
// a count make it folded.
type detector struct {
	lines, folded int
	format        string
}

// line takes the next line (without its '\n') and reports whether the
// format is decided or enough lines were seen.
func (d *detector) line(line []byte) bool {
	line = bytes.TrimRight(line, "\r")
	if len(line) == 0 || line[0] == '#' {
		return false
	}
	d.lines++
	switch {
	case isSpace(line[0]) && isStackLine(line), !isSpace(line[0]) && isSampleHeader(line):
		d.format = FormatPerf
		return true
	default:
		if sp := bytes.LastIndexByte(line, ' '); sp > 0 && allDigits(bytes.TrimPrefix(line[sp+1:], []byte("-"))) {
			d.folded++
		}
	}
	return d.lines >= detectLines
}

// result is FormatPerf, FormatFolded or "" (nothing known). Blank lines
// and comments only are folded: an empty profile, which callers report as
// having no samples rather than as an unknown format.
func (d *detector) result() string {
	if d.format == "" && (d.folded > 0 || d.lines == 0) {
		return FormatFolded
	}
	return d.format
}

// isStackLine reports a perf script stack line: what the Perl script takes
// as one, ending in ")" as perf prints them (a folded line starting with a
// space may match the Perl expression, but ends in its count).
func isStackLine(line []byte) bool {
	t := bytes.TrimRight(line, " \t\v\f\r")
	if len(t) == 0 || t[len(t)-1] != ')' {
		return false
	}
	_, _, _, _, ok := matchStackLine(line)
	return ok
}

// isCPUField reports perf script's cpu field: "[001]".
func isCPUField(f []byte) bool {
	return len(f) > 2 && f[0] == '[' && f[len(f)-1] == ']' && allDigits(f[1:len(f)-1])
}

// isSampleHeader reports a perf script sample header: what the Perl script
// takes as one ("comm pid[/tid] ..."), ending in the event: after a
// timestamp ("java 25607 4794564.109216: 1 cycles:"), or, as older perf and
// some "perf script -F" field sets print it, without one: "java 19983
// cycles:", "java 19983/19984 [001] 100 cycles:".
func isSampleHeader(line []byte) bool {
	comm, pid, _, ok := matchHeader(line)
	if !ok {
		return false
	}
	if _, _, ok := matchEvent(line); ok {
		return true
	}
	// After "comm pid[/tid]": [cpu] and period fields, then "event:".
	p := len(comm)
	for p < len(line) && isSpace(line[p]) {
		p++
	}
	p += len(pid)
	for p < len(line) && line[p] == '/' {
		p++
	}
	for p < len(line) && isDigit(line[p]) {
		p++
	}
	var last []byte
	for p < len(line) {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		q := p
		for q < len(line) && !isSpace(line[q]) {
			q++
		}
		if q == p {
			break
		}
		if last != nil && !allDigits(last) && !isCPUField(last) {
			return false
		}
		last = line[p:q]
		p = q
	}
	return len(last) > 1 && last[len(last)-1] == ':'
}
