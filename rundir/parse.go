package rundir

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/fserr"
	"github.com/flamediff/flamediff/internal/names"
)

// ErrNoSamples is wrapped when an input holds no samples: an error for
// every command that reads profiles, so that an empty capture never turns
// into an empty report or replaces an earlier output.
var ErrNoSamples = errors.New("no samples")

// NoSamplesError is the error of Parse for an input that holds no samples.
// It wraps ErrNoSamples and reads "NAME: no samples (REASON)".
type NoSamplesError struct {
	// Name is the input as Parse was told to name it.
	Name string
	// Reason says what was read instead: "the input is empty", "1 stack,
	// every count 0", "no sample of event \"cycles\"".
	Reason string
	// Event is the event samples were kept of when the input's samples
	// were filtered by event (fold.ParseOptions.Perf.EventFilter, or the
	// first event seen) and none was left: a caller may say how to choose
	// another. Empty otherwise.
	Event string
}

func (e *NoSamplesError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Name, ErrNoSamples, e.Reason)
}

// Unwrap returns ErrNoSamples.
func (e *NoSamplesError) Unwrap() error { return ErrNoSamples }

// ParseFile parses the profile file at path (see Parse). Its errors name
// the path: "profile PATH: no such file or directory".
func ParseFile(path string, opts fold.ParseOptions) (*fold.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("profile %w", fserr.Describe(path, err, "file or directory"))
	}
	defer f.Close()
	return Parse(path, f, opts)
}

// Parse parses r, naming it in errors as NAME:LINE: when the error has a
// line. A profile without samples is a *NoSamplesError that says what was
// read instead.
func Parse(name string, r io.Reader, opts fold.ParseOptions) (*fold.Profile, error) {
	cr := &countingReader{r: r}
	p, err := fold.Parse(cr, opts)
	if err != nil {
		var pe *fold.ParseError
		if errors.As(err, &pe) && pe.Line > 0 {
			return nil, fmt.Errorf("%s:%d: %s", name, pe.Line, parseErrorText(pe))
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if p.Total() == 0 {
		return nil, noSamples(name, p, cr.n, opts)
	}
	return p, nil
}

// noSamples says why a parsed profile holds no samples.
func noSamples(name string, p *fold.Profile, read int64, opts fold.ParseOptions) *NoSamplesError {
	e := &NoSamplesError{Name: name}
	switch {
	case read == 0:
		e.Reason = "the input is empty"
	case p.FilteredEvents || opts.Perf.EventFilter != "":
		e.Event = opts.Perf.EventFilter
		if e.Event == "" {
			e.Event = p.Event
		}
		e.Reason = fmt.Sprintf("no sample of event %q", e.Event)
	case p.Skipped > 0:
		e.Reason = fmt.Sprintf("%s could not be parsed, first: %s", names.Plural(p.Skipped, "line"), p.SkippedFirst)
	case len(p.Stacks) > 0:
		e.Reason = fmt.Sprintf("%s, every count 0", names.Plural(len(p.Stacks), "stack"))
	default:
		e.Reason = fmt.Sprintf("blank lines and comments, no stack, in %d bytes", read)
	}
	return e
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

func parseErrorText(pe *fold.ParseError) string {
	if pe.Text == "" {
		return pe.Msg
	}
	return fmt.Sprintf("%s (line: %q)", pe.Msg, pe.Text)
}
