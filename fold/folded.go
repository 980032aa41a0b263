package fold

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ParseFolded reads Brendan Gregg's folded format, one stack per line:
// frames root first separated by ';', a space, and a non-negative integer
// count ("mariadbd;do_command;dispatch_command 42"). bcc's `profile -f`
// writes the same format. Frames may contain spaces: the count is the last
// space-separated field. Empty lines are ignored; identical stacks are
// summed; the result is sorted by Key. A line starting with '#' and
// without a count is a comment.
//
// A line without a count is skipped (counted in Skipped) or, with strict,
// an error; a negative count, one that does not fit in 64 bits, counts
// whose total does not (ErrOverflow) and control bytes such as NUL
// (ErrBinaryText) are always errors, *ParseErrors with the line.
func ParseFolded(r io.Reader, strict bool) (*Profile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	sums := make(map[string]int64)
	p := &Profile{Unit: UnitSamples}
	lineNo := 0
	var total int64
	for sc.Scan() {
		lineNo++
		line := bytes.TrimRight(sc.Bytes(), "\r")
		if c := indexControl(line); c >= 0 {
			return nil, controlError(lineNo, line[c])
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		sp := bytes.LastIndexByte(line, ' ')
		var stack, count []byte
		if sp > 0 {
			stack, count = line[:sp], line[sp+1:]
		}
		if sp <= 0 || len(count) == 0 || !allDigits(bytes.TrimPrefix(count, []byte("-"))) {
			if line[0] == '#' {
				continue // a comment, as detection takes it ("#x;y 5" is a stack)
			}
			msg := "folded line has no count (want \"frame;frame;frame COUNT\")"
			if sp > 0 && len(count) > 0 {
				msg = fmt.Sprintf("folded line's count %q is not a whole number (want \"frame;frame;frame COUNT\")", shorten(string(count)))
			}
			if strict {
				return nil, &ParseError{Line: lineNo, Text: string(line), Msg: msg}
			}
			if p.Skipped == 0 {
				p.SkippedFirst = fmt.Sprintf("line %d: %q", lineNo, shorten(string(line)))
				p.skipLine = lineNo
			}
			p.Skipped++
			continue
		}
		v, err := strconv.ParseInt(string(count), 10, 64)
		if err != nil {
			return nil, &ParseError{Line: lineNo, Text: string(line), Msg: "count does not fit in 64 bits"}
		}
		if v < 0 {
			return nil, &ParseError{Line: lineNo, Text: string(line), Msg: fmt.Sprintf("negative count %d (counts are samples and cannot be negative)", v)}
		}
		// Counts are not negative: the total is the largest sum.
		if v > math.MaxInt64-total {
			return nil, overflowError(lineNo)
		}
		total += v
		sums[string(stack)] += v
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{Line: lineNo + 1, Msg: "line longer than 64 MiB: not a folded stack file"}
		}
		return nil, err
	}
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	p.Stacks = make([]Stack, len(keys))
	for i, k := range keys {
		p.Stacks[i] = Stack{Frames: strings.Split(k, ";"), Value: sums[k]}
	}
	if len(p.Stacks) == 0 && p.Skipped > 0 {
		lines := fmt.Sprintf("none of %d non-empty lines is", p.Skipped)
		if p.Skipped == 1 {
			lines = "the one non-empty line is not"
		}
		return nil, &ParseError{Line: p.skipLine, Msg: fmt.Sprintf("no stacks found: %s \"frame;frame COUNT\"; first: %s", lines, p.SkippedFirst)}
	}
	return p, nil
}

func allDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// WriteFolded writes p in folded format, one "frames count" line per stack,
// in the order of p.Stacks (sorted by Key after any parser or Normalize).
func WriteFolded(w io.Writer, p *Profile) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var num [20]byte
	for _, s := range p.Stacks {
		for i, f := range s.Frames {
			if i > 0 {
				bw.WriteByte(';')
			}
			bw.WriteString(f)
		}
		bw.WriteByte(' ')
		bw.Write(strconv.AppendInt(num[:0], s.Value, 10))
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}
