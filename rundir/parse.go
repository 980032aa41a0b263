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
// line. A profile without samples is an error wrapping ErrNoSamples that
// says what was read instead.
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
		return nil, fmt.Errorf("%s: %w (%s)", name, ErrNoSamples, noSamplesReason(p, cr.n, opts))
	}
	return p, nil
}

// noSamplesReason says why a parsed profile holds no samples.
func noSamplesReason(p *fold.Profile, read int64, opts fold.ParseOptions) string {
	switch {
	case read == 0:
		return "the input is empty"
	case p.FilteredEvents || opts.Perf.EventFilter != "":
		ev := opts.Perf.EventFilter
		if ev == "" {
			ev = p.Event
		}
		return fmt.Sprintf("no sample of event %q; choose another with --event-filter", ev)
	case p.Skipped > 0:
		return fmt.Sprintf("%s could not be parsed, first: %s", names.Plural(p.Skipped, "line"), p.SkippedFirst)
	case len(p.Stacks) > 0:
		return fmt.Sprintf("%s, every count 0", names.Plural(len(p.Stacks), "stack"))
	}
	return fmt.Sprintf("blank lines and comments, no stack, in %d bytes", read)
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
