package fold

import (
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

// Parse reads a profile in any supported format (detected when
// opts.Format is auto), transparently gunzipping it.
func Parse(r io.Reader, opts ParseOptions) (*Profile, error) {
	return nil, errors.New("not implemented yet")
}
