package fold

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
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

// ParseError reports input that could not be understood, with its line.
type ParseError struct {
	Line int    // 1-based line number; 0 when not line-oriented
	Text string // the offending line, possibly shortened
	Msg  string // what is wrong and how to fix it
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

func (e *ParseError) Unwrap() error { return ErrSyntax }

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

const sniffSize = 64 << 10

// Parse reads a profile in any supported format, detected from its first
// bytes when opts.Format is auto, and gunzips it transparently. Errors in
// the input are *ParseError values (with the line) or wrap ErrUnknownFormat
// or ErrTruncated.
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
		sniff, err := br.Peek(sniffSize)
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
		format = detect(sniff)
		if format == "" {
			return nil, fmt.Errorf("%w: the first lines are neither perf script text, folded stacks (\"frame;frame COUNT\") nor pprof; name the format with --input-format", ErrUnknownFormat)
		}
		if format == "binary" {
			p, err := ParsePprof(in)
			if err != nil {
				return nil, fmt.Errorf("%w: binary data that is neither gzip nor pprof (%w)", ErrUnknownFormat, err)
			}
			return p, nil
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

// detect names the format of the first bytes of an input: FormatPerf,
// FormatFolded, FormatPprof, "binary" or "" (text of unknown form).
func detect(b []byte) string {
	if len(b) == 0 {
		return FormatFolded // empty input: an empty profile
	}
	ctl := 0
	for _, c := range b {
		if c < 0x09 || (c > 0x0d && c < 0x20) {
			ctl++
		}
	}
	if ctl > 0 {
		return "binary" // pprof protobuf, or garbage: the pprof parser judges
	}
	folded, lines := 0, 0
	for len(b) > 0 && lines < 200 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		lines++
		if isSpace(line[0]) {
			if _, _, _, _, ok := matchStackLine(line); ok {
				return FormatPerf
			}
			continue
		}
		if _, _, _, ok := matchHeader(line); ok {
			if _, _, ok := matchEvent(line); ok {
				return FormatPerf
			}
		}
		if sp := bytes.LastIndexByte(line, ' '); sp > 0 && allDigits(bytes.TrimPrefix(line[sp+1:], []byte("-"))) {
			folded++
		}
	}
	if folded > 0 {
		return FormatFolded
	}
	return ""
}
