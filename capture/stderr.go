//go:build linux

package capture

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// tailWriter keeps the last max bytes written to it and copies everything
// to w (when not nil). It is safe for concurrent use.
type tailWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	max int
}

func newTailWriter(w io.Writer, max int) *tailWriter { return &tailWriter{w: w, max: max} }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	if t.w != nil {
		_, _ = t.w.Write(p) // diagnostics only: a failing copy must not stop perf
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

var (
	reCaptured  = regexp.MustCompile(`\[ perf record: Captured and wrote .*\((\d+) samples\) \]`)
	reLostChunk = regexp.MustCompile(`Processed (\d+) events and lost (\d+) chunks!`)
	reLostPct   = regexp.MustCompile(`Processed (\d+) samples and lost ([0-9.]+) ?% samples!`)
	reLostLine  = regexp.MustCompile(`(?m)^\s*Lost (\d+) samples`)
)

// perfReport is what perf's stderr says about a recording.
type perfReport struct {
	Samples  int64 // -1 when perf did not say
	Lost     int64
	Warnings []string
}

// parsePerfStderr reads the figures perf record and perf script print on
// stderr: "[ perf record: Captured and wrote 1.2 MB perf.data (N samples) ]",
// "Processed N events and lost M chunks!" and "Processed N samples and lost
// X% samples!". Lost chunks are counted as lost samples (a lower bound).
func parsePerfStderr(s string) perfReport {
	r := perfReport{Samples: -1}
	if m := reCaptured.FindAllStringSubmatch(s, -1); m != nil {
		r.Samples, _ = strconv.ParseInt(m[len(m)-1][1], 10, 64)
	}
	for _, m := range reLostChunk.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		r.Lost = max(r.Lost, n)
		r.Warnings = append(r.Warnings, fmt.Sprintf("perf lost %d chunk(s) of samples: the system could not keep up; sample less often (lower frequency, fp instead of dwarf)", n))
	}
	for _, m := range reLostPct.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		pct, _ := strconv.ParseFloat(m[2], 64)
		if pct > 0 && pct < 100 {
			lost := int64(float64(n)*pct/(100-pct) + 0.5)
			r.Lost = max(r.Lost, lost)
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("perf lost %s%% of samples: sample less often (lower frequency, fp instead of dwarf)", m[2]))
	}
	for _, m := range reLostLine.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.ParseInt(m[1], 10, 64)
		r.Lost = max(r.Lost, n)
	}
	return r
}

// classifyPerfError maps perf record's complaints to the package's
// sentinels; nil when none applies.
func classifyPerfError(stderr string) error {
	l := strings.ToLower(stderr)
	switch {
	case strings.Contains(l, "perf_event_paranoid"), strings.Contains(l, "no permission"),
		strings.Contains(l, "permission denied"), strings.Contains(l, "access to performance monitoring"),
		strings.Contains(l, "operation not permitted"):
		return fmt.Errorf("%s: %w", paranoidFix, ErrPermission)
	case strings.Contains(l, "no such process"), strings.Contains(l, "couldn't create thread"),
		strings.Contains(l, "problems finding threads"):
		return ErrProcessGone
	case strings.Contains(l, "perf not found for kernel"), strings.Contains(l, "is not installed"),
		strings.Contains(l, "command not found"):
		return fmt.Errorf("%s: %w", installFix, ErrNotInstalled)
	}
	return nil
}
