package fold

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"sync"
)

// This file turns perf script text into folded stacks exactly as
// stackcollapse-perf.pl (FlameGraph) does: same frame names, same counts
// (the sum of sample periods when perf prints them, else 1 per sample),
// same order. Each of the Perl script's regular expressions is emulated by
// hand, byte by byte, with the same backtracking outcome, because a regexp
// engine is ten times slower and the output must match to the byte.

// isSpace is Perl's \s for byte strings: [ \t\n\v\f\r].
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWord is Perl's \w for byte strings: [A-Za-z0-9_].
func isWord(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isLowerHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' }

// matchHeader emulates /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/ and returns $1, $2, $3
// ($3 nil when it did not participate).
func matchHeader(line []byte) (comm, pid, tid []byte, ok bool) {
	n := len(line)
	if n < 2 || isSpace(line[0]) {
		return nil, nil, nil, false
	}
	for e := 2; e < n; e++ {
		if !isSpace(line[e]) {
			continue
		}
		a := e
		for a < n && isSpace(line[a]) {
			a++
		}
		b := a
		for b < n && isDigit(line[b]) {
			b++
		}
		if b == a || b == n {
			continue
		}
		if isSpace(line[b]) {
			return line[:e], line[a:b], nil, true
		}
		if line[b] != '/' {
			continue
		}
		c := b
		for c < n && line[c] == '/' {
			c++
		}
		d := c
		for d < n && isDigit(line[d]) {
			d++
		}
		if d < n && isSpace(line[d]) {
			if d > c {
				tid = line[c:d]
			}
			return line[:e], line[a:b], tid, true
		}
	}
	return nil, nil, nil, false
}

// matchEvent emulates /:\s*(\d+)*\s+(\S+):\s*$/ and returns $1 (nil when
// it did not participate) and $2.
func matchEvent(line []byte) (period, event []byte, ok bool) {
	end := len(line)
	for end > 0 && isSpace(line[end-1]) {
		end--
	}
	if end == 0 || line[end-1] != ':' {
		return nil, nil, false
	}
	ts := end - 1
	for ts > 0 && !isSpace(line[ts-1]) {
		ts--
	}
	if ts == end-1 || ts == 0 {
		return nil, nil, false
	}
	q := ts
	for q > 0 && isSpace(line[q-1]) {
		q--
	}
	dend := q
	for q > 0 && isDigit(line[q-1]) {
		q--
	}
	if q < dend {
		period = line[q:dend]
	}
	for q > 0 && isSpace(line[q-1]) {
		q--
	}
	if q == 0 || line[q-1] != ':' {
		return nil, nil, false
	}
	return period, line[ts : end-1], true
}

// matchStackLine emulates /^\s*(\w+)\s*(.+) \((.*)\)/ and returns $1, the
// offset where $2 starts, and the offsets of " (" and of the closing ")".
// $2 is line[s:r], $3 is line[r+2:p].
func matchStackLine(line []byte) (pc []byte, s, r, p int, ok bool) {
	n := len(line)
	i0 := 0
	for i0 < n && isSpace(line[i0]) {
		i0++
	}
	wEnd := i0
	for wEnd < n && isWord(line[wEnd]) {
		wEnd++
	}
	if wEnd == i0 {
		return nil, 0, 0, 0, false
	}
	p = bytes.LastIndexByte(line, ')')
	if p < 0 {
		return nil, 0, 0, 0, false
	}
	// r: the last " (" that ends before p.
	r = -1
	for k := p - 1; k > 0; {
		j := bytes.LastIndexByte(line[:k+1], '(')
		if j <= 0 {
			break
		}
		if line[j-1] == ' ' {
			r = j - 1
			break
		}
		k = j - 1
	}
	if r < 0 {
		return nil, 0, 0, 0, false
	}
	sEnd := wEnd
	for sEnd < n && isSpace(line[sEnd]) {
		sEnd++
	}
	switch {
	case r-1 >= sEnd:
		return line[i0:wEnd], sEnd, r, p, true
	case r-1 >= wEnd:
		return line[i0:wEnd], r - 1, r, p, true
	case r-1 >= i0+1:
		return line[i0 : r-1], r - 1, r, p, true
	}
	return nil, 0, 0, 0, false
}

// stripOffset emulates s/\+0x[\da-f]+$//.
func stripOffset(f []byte) []byte {
	i := bytes.LastIndex(f, []byte("+0x"))
	if i < 0 || i+3 == len(f) {
		return f
	}
	for _, c := range f[i+3:] {
		if !isLowerHex(c) {
			return f
		}
	}
	return f[:i]
}

// splitArrows emulates Perl's split /\->/: trailing empty fields dropped.
func splitArrows(s string) []string {
	parts := strings.Split(s, "->")
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

// tidyGeneric emulates stackcollapse-perf.pl's $tidy_generic block.
func tidyGeneric(f string) string {
	f = strings.ReplaceAll(f, ";", ":")
	// if ($func !~ m/\.\(.*\)\./) { $func =~ s/\((?!anonymous namespace\)).*//; }
	goMethod := false
	if i := strings.Index(f, ".("); i >= 0 {
		if j := strings.LastIndex(f, ")."); j >= i+2 {
			goMethod = true
		}
	}
	if !goMethod {
		for k := 0; k < len(f); k++ {
			if f[k] == '(' && !strings.HasPrefix(f[k+1:], "anonymous namespace)") {
				f = f[:k]
				break
			}
		}
	}
	if strings.ContainsAny(f, `"'`) {
		f = strings.Map(func(r rune) rune {
			if r == '"' || r == '\'' {
				return -1
			}
			return r
		}, f)
	}
	return f
}

// isJITMap emulates m:/tmp/perf-\d+\.map:.
func isJITMap(mod string) bool {
	for {
		i := strings.Index(mod, "/tmp/perf-")
		if i < 0 {
			return false
		}
		rest := mod[i+len("/tmp/perf-"):]
		j := 0
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		if j > 0 && strings.HasPrefix(rest[j:], ".map") {
			return true
		}
		mod = mod[i+1:]
	}
}

// isKernelModule is stackcollapse-perf.pl's kernel test,
// mod =~ m/(^\[|vmlinux$)/ && mod !~ /unknown/, less the bracketed
// mappings perf names that are user-space code or data ([vdso],
// [vsyscall], [heap], [stack], [anon...], [uprobes], [jit...]): their frames
// are the process's own and stay when NoKernel drops kernel frames.
func isKernelModule(mod string) bool {
	if (!strings.HasPrefix(mod, "[") && !strings.HasSuffix(mod, "vmlinux")) || strings.Contains(mod, "unknown") {
		return false
	}
	for _, u := range []string{"[vdso", "[vsyscall", "[heap", "[stack", "[anon", "[uprobes", "[jit"} {
		if strings.HasPrefix(mod, u) {
			return false
		}
	}
	return true
}

// frameGroup is what one perf script stack line contributes to a stack:
// n frames (several when perf shows inlined functions as "a->b"), joined by ';'.
type frameGroup struct {
	s string
	n int
}

// transformFrame turns one stack line ($pc, $rawfunc, $mod) into frames, as
// the body of stackcollapse-perf.pl's stack-line branch does.
func transformFrame(pc, rawfunc, mod []byte, opts *PerfOptions, java bool) (g frameGroup, skip bool) {
	raw := stripOffset(rawfunc)
	if len(raw) > 0 && raw[0] == '(' {
		return frameGroup{}, true // "next if $rawfunc =~ /^\(/": process names
	}
	modS := string(mod)
	if opts.NoKernel && isKernelModule(modS) {
		return frameGroup{}, true
	}
	kernel := opts.Kernel || opts.All
	jit := opts.JIT || opts.All
	var out []string
	for _, f := range splitArrows(string(raw)) {
		if f == "[unknown]" {
			if modS != "[unknown]" {
				f = modS
				if k := strings.LastIndexByte(f, '/'); k >= 0 {
					f = f[k+1:]
				}
			} else {
				f = "unknown"
			}
			if opts.Addrs {
				f = "[" + f + " <" + string(pc) + ">]"
			} else {
				f = "[" + f + "]"
			}
		}
		f = tidyGeneric(f)
		if java && strings.IndexByte(f, '/') >= 0 && strings.HasPrefix(f, "L") {
			f = f[1:]
		}
		switch {
		case len(out) > 0:
			if !strings.Contains(f, "_[i]") {
				f += "_[i]"
			}
		case kernel && (strings.HasPrefix(modS, "[") || strings.HasSuffix(modS, "vmlinux")) && !strings.Contains(modS, "unknown"):
			f += "_[k]"
		case jit && isJITMap(modS):
			if !strings.Contains(f, "_[j]") {
				f += "_[j]"
			}
		}
		out = append(out, f)
	}
	return frameGroup{s: strings.Join(out, ";"), n: len(out)}, false
}

type acc struct {
	value   int64
	samples int64
}

// perfState is one sequential stackcollapse-perf.pl state machine with its
// caches and its own totals. Several run side by side on chunks that start
// after a blank line, where the Perl script's state is always clean.
type perfState struct {
	opts      *PerfOptions
	filter    string // event filter; "" until defaulted
	defaulted bool
	strict    bool

	// per-sample state
	pname      string
	hasPname   bool
	period     int64
	headerLine int
	groups     []frameGroup // leaf first

	// marks are the samples remembered by the current run, for the
	// running total (see runningTotal).
	marks []mark

	frames     map[string]frameGroup // stack line -> frames (non-java thread)
	javaFrames map[string]frameGroup
	pnames     map[string]string
	pnameBuf   []byte
	keyBuf     []byte

	stacks      map[string]*acc
	hadPeriod   bool
	otherEvents bool
	firstEvent  string

	skipped       int
	firstSkipLine int
	firstSkipText string
	err           *ParseError
}

func newPerfState(opts *PerfOptions, strict bool) *perfState {
	return &perfState{
		opts:       opts,
		filter:     opts.EventFilter,
		strict:     strict,
		frames:     make(map[string]frameGroup),
		javaFrames: make(map[string]frameGroup),
		pnames:     make(map[string]string),
		stacks:     make(map[string]*acc),
	}
}

// run feeds the lines of data (whole lines; the last may lack '\n') to the
// state machine. firstLine is the 1-based number of data's first line. It
// stops at the first error: a control byte (always), or a line not
// understood in strict mode. The samples it remembers are in st.marks.
func (st *perfState) run(data []byte, firstLine int) {
	st.marks = st.marks[:0]
	// Text never holds control bytes; the line of the first one is an
	// error, the lines before it are folded as usual.
	ctl := indexControl(data)
	off := 0
	lineNo := firstLine - 1
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		lineNo++
		if ctl >= 0 && ctl < off+len(line) {
			st.err = controlError(lineNo, line[ctl-off])
			return
		}
		off += len(line) + 1
		if !st.line(line, lineNo) {
			return
		}
	}
}

// line handles one line (without its '\n'); false stops the run (strict error).
func (st *perfState) line(line []byte, lineNo int) bool {
	if len(line) == 0 {
		if st.hasPname {
			st.remember()
		}
		return true
	}
	if line[0] == '#' {
		return true
	}
	if comm, pid, tid, ok := matchHeader(line); ok {
		return st.header(line, comm, pid, tid, lineNo)
	}
	if pc, s, r, p, ok := matchStackLine(line); ok {
		if !st.hasPname {
			return true
		}
		cache := st.frames
		java := strings.HasPrefix(st.pname, "java")
		if java {
			cache = st.javaFrames
		}
		key := line[s : p+1]
		if st.opts.Addrs {
			key = line[:p+1]
		}
		g, ok := cache[string(key)]
		if !ok {
			var skip bool
			g, skip = transformFrame(pc, line[s:r], line[r+2:p], st.opts, java)
			if skip {
				g = frameGroup{n: -1}
			}
			cache[string(key)] = g
		}
		if g.n > 0 {
			st.groups = append(st.groups, g)
		}
		return true
	}
	return st.skip(line, lineNo, "not a perf script sample header or stack line")
}

func (st *perfState) skip(line []byte, lineNo int, msg string) bool {
	if st.strict {
		st.err = &ParseError{Line: lineNo, Text: string(line), Msg: msg}
		return false
	}
	if st.skipped == 0 || lineNo < st.firstSkipLine {
		st.firstSkipLine = lineNo
		st.firstSkipText = string(line)
	}
	st.skipped++
	return true
}

func (st *perfState) header(line, comm, pid, tid []byte, lineNo int) bool {
	var period int64 = 1
	if per, ev, ok := matchEvent(line); ok {
		if st.firstEvent == "" {
			st.firstEvent = string(ev)
		}
		if st.filter == "" {
			st.filter = string(ev)
			st.defaulted = true
		} else if string(ev) != st.filter {
			st.otherEvents = true
			return true
		}
		// Perl: $period = $1; if (not $period) { $period = 1 }: "" and "0"
		// are false, "00" is true and numerically 0.
		if len(per) > 0 && (len(per) != 1 || per[0] != '0') {
			v, err := strconv.ParseInt(string(per), 10, 64)
			if err != nil {
				return st.skip(line, lineNo, "sample period does not fit in 64 bits")
			}
			period = v
			st.hadPeriod = true
		}
	}
	st.period = period
	st.headerLine = lineNo
	// pname: "$comm", "$comm-$pid" or "$comm-$pid/$tid", with "?" for a
	// missing pid, spaces turned into underscores.
	b := append(st.pnameBuf[:0], comm...)
	if st.opts.TID || st.opts.PID {
		var p, t []byte
		if len(tid) == 0 || (len(tid) == 1 && tid[0] == '0') {
			p, t = []byte("?"), pid
		} else {
			p, t = pid, tid
		}
		b = append(b, '-')
		b = append(b, p...)
		if st.opts.TID {
			b = append(b, '/')
			b = append(b, t...)
		}
	}
	for i, c := range b {
		if c == ' ' {
			b[i] = '_'
		}
	}
	st.pnameBuf = b
	name, ok := st.pnames[string(b)]
	if !ok {
		name = string(b)
		st.pnames[name] = name
	}
	st.pname = name
	st.hasPname = true
	return true
}

// remember adds the current sample (pname plus frames, root first) and
// resets the per-sample state, as the Perl script does at a blank line.
func (st *perfState) remember() {
	k := append(st.keyBuf[:0], st.pname...)
	for i := len(st.groups) - 1; i >= 0; i-- {
		k = append(k, ';')
		k = append(k, st.groups[i].s...)
	}
	st.keyBuf = k
	st.marks = append(st.marks, mark{line: st.headerLine, value: st.period})
	if a, ok := st.stacks[string(k)]; ok {
		a.value += st.period
		a.samples++
	} else {
		st.stacks[string(k)] = &acc{value: st.period, samples: 1}
	}
	st.groups = st.groups[:0]
	st.hasPname = false
	st.pname = ""
}

// mark is one remembered sample: its value and its header's line.
type mark struct {
	line  int
	value int64
}

// runningTotal adds the values of the samples in input order, a chunk at a
// time (chunks may be folded in any order), and keeps the first sample at
// which the total no longer fits in an int64, so that the error names the
// same line however the input was cut and folded.
type runningTotal struct {
	mu      sync.Mutex
	next    int            // the chunk whose samples are added next
	sum     int64          // the total of chunks before next
	pending map[int][]mark // chunks folded before their turn
	err     *ParseError
}

// add takes the samples of chunk (0, 1, 2, ... in input order). It reports
// whether it kept marks for later, which must then not be changed.
func (t *runningTotal) add(chunk int, marks []mark) (kept bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if chunk != t.next {
		if t.pending == nil {
			t.pending = make(map[int][]mark)
		}
		t.pending[chunk] = marks
		return true
	}
	for {
		for _, m := range marks {
			if t.err != nil {
				break
			}
			if m.value > math.MaxInt64-t.sum {
				t.err = overflowError(m.line)
				break
			}
			t.sum += m.value
		}
		t.next++
		var ok bool
		if marks, ok = t.pending[t.next]; !ok {
			return false
		}
		delete(t.pending, t.next)
	}
}

// runChunk folds c and adds its samples to total.
func (st *perfState) runChunk(c perfChunk, total *runningTotal) {
	if st.err != nil {
		// The chunks after an error are not folded; an error comes
		// before any overflow they could hold.
		total.add(c.index, nil)
		return
	}
	st.run(c.data, c.firstLine)
	if total.add(c.index, st.marks) {
		st.marks = nil
	}
}

// mergeInto adds st's stacks into dst.
func (st *perfState) mergeInto(dst map[string]*acc) {
	for k, a := range st.stacks {
		if d, ok := dst[k]; ok {
			d.value += a.value
			d.samples += a.samples
		} else {
			dst[k] = a
		}
	}
}
