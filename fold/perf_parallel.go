package fold

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sort"
	"strings"
	"sync"
)

// chunkSize is how much perf script text one worker takes at a time.
const chunkSize = 4 << 20

// ParsePerfScript reads perf script text and folds it as
// stackcollapse-perf.pl does with the same options (see PerfOptions). The
// result's stacks are sorted by Key; Unit is UnitPeriod when perf printed
// sample periods (values are then the sum of periods, as the Perl script
// prints them), else UnitSamples.
//
// Input is read in chunks cut at blank lines (where the Perl script's state
// is always reset) and folded by one worker per CPU, so memory grows with
// the number of distinct stacks and frames, not with the input size.
//
// Lines that are neither a sample header nor a stack line are counted in
// Skipped, or, with strict, make ParsePerfScript return a *ParseError. A
// line with a NUL or another control byte (ErrBinaryText) and sample
// values that add up to more than an int64 holds (ErrOverflow, naming the
// header of the sample that passes it) are *ParseErrors even when not
// strict; the error of the earliest line is returned, however the input
// was cut into chunks.
func ParsePerfScript(r io.Reader, opts PerfOptions, strict bool) (*Profile, error) {
	return parsePerf(r, opts, strict, runtime.GOMAXPROCS(0))
}

type perfChunk struct {
	data      []byte
	firstLine int
	index     int // 0, 1, 2, ... in input order
}

func parsePerf(r io.Reader, opts PerfOptions, strict bool, workers int) (*Profile, error) {
	chunks := make(chan perfChunk, workers)
	var readErr error
	free := make(chan []byte, workers*2+2)

	// The reader: cut the input after the last blank line of each block.
	go func() {
		defer close(chunks)
		var carry []byte
		line, index := 1, 0
		for {
			var buf []byte
			select {
			case buf = <-free:
			default:
			}
			target := len(carry) + chunkSize
			if cap(buf) < len(carry)+256<<10 {
				// Small inputs stay small; buffers grow (and are reused)
				// up to a chunk for large ones.
				buf = make([]byte, 0, len(carry)+256<<10)
			}
			buf = append(buf[:0], carry...)
			for len(buf) < target {
				if cap(buf)-len(buf) < 64<<10 {
					nb := make([]byte, len(buf), min(2*cap(buf), target+64<<10))
					copy(nb, buf)
					buf = nb
				}
				n, err := r.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if err == io.EOF {
					if len(buf) > 0 {
						chunks <- perfChunk{data: buf, firstLine: line, index: index}
					}
					return
				}
				if err != nil {
					readErr = err
					return
				}
			}
			cut := bytes.LastIndex(buf, []byte("\n\n"))
			if cut < 0 {
				// No blank line in a whole block: keep reading into it.
				carry = buf
				continue
			}
			cut += 2
			carry = append(carry[:0:0], buf[cut:]...)
			chunks <- perfChunk{data: buf[:cut], firstLine: line, index: index}
			line += bytes.Count(buf[:cut], []byte{'\n'})
			index++
		}
	}()

	// The first chunk decides the event filter when none is given: the
	// Perl script keeps the first event it sees. Without one there, all
	// chunks are folded in order by one state machine.
	first, ok := <-chunks
	if !ok {
		if readErr != nil {
			return nil, readErr
		}
		return &Profile{Unit: UnitSamples}, nil
	}
	o := opts
	if o.EventFilter == "" {
		o.EventFilter = firstEvent(first.data)
	}
	var total runningTotal
	if o.EventFilter == "" || workers < 2 {
		st := newPerfState(&opts, strict)
		st.runChunk(first, &total)
		for c := range chunks {
			st.runChunk(c, &total)
			select {
			case free <- c.data:
			default:
			}
		}
		if readErr != nil {
			return nil, readErr
		}
		return finishPerf([]*perfState{st}, &total)
	}
	states := make([]*perfState, workers)
	var wg sync.WaitGroup
	work := make(chan perfChunk, workers)
	for i := range states {
		st := newPerfState(&o, strict)
		st.defaulted = opts.EventFilter == ""
		states[i] = st
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				st.runChunk(c, &total)
				select {
				case free <- c.data:
				default:
				}
			}
		}()
	}
	work <- first
	for c := range chunks {
		work <- c
	}
	close(work)
	wg.Wait()
	if readErr != nil {
		return nil, readErr
	}
	return finishPerf(states, &total)
}

// firstEvent returns the event of the first sample header in data, as the
// Perl script would default its filter to, or "".
func firstEvent(data []byte) string {
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if _, _, _, ok := matchHeader(line); ok {
			if _, ev, ok := matchEvent(line); ok {
				return string(ev)
			}
		}
	}
	return ""
}

// finishPerf merges the states' stacks. Of their errors and the running
// total's, the one of the earliest line wins.
func finishPerf(states []*perfState, total *runningTotal) (*Profile, error) {
	perr := total.err
	for _, st := range states {
		if st.err != nil && (perr == nil || st.err.Line < perr.Line) {
			perr = st.err
		}
	}
	if perr != nil {
		return nil, perr
	}
	all := states[0].stacks
	for _, st := range states[1:] {
		st.mergeInto(all)
	}
	p := &Profile{Unit: UnitSamples}
	for _, st := range states {
		if st.hadPeriod {
			p.Unit = UnitPeriod
		}
		if st.skipped > 0 {
			if p.Skipped == 0 || st.firstSkipLine < p.skipLine {
				p.skipLine = st.firstSkipLine
				p.SkippedFirst = fmt.Sprintf("line %d: %q", st.firstSkipLine, shorten(st.firstSkipText))
			}
			p.Skipped += st.skipped
		}
		if st.otherEvents {
			p.FilteredEvents = true
		}
	}
	p.Event = states[0].filter
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p.Stacks = make([]Stack, len(keys))
	for i, k := range keys {
		a := all[k]
		p.Stacks[i] = Stack{Frames: strings.Split(k, ";"), Value: a.value}
		p.Samples += a.samples
	}
	if len(p.Stacks) == 0 && p.Skipped > 0 {
		return nil, &ParseError{Line: p.skipLine, Msg: fmt.Sprintf("no samples found in %d line(s) of input; first unrecognised %s", p.Skipped, p.SkippedFirst)}
	}
	return p, nil
}
