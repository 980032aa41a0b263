package fold

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// perfSnippets returns the first samples of each real capture, for seeds.
func perfSnippets(f *testing.F) [][]byte {
	var out [][]byte
	for _, name := range captures(f) {
		data := readGz(f, name)
		// The first three samples.
		end := 0
		for range 3 {
			i := bytes.Index(data[end:], []byte("\n\n"))
			if i < 0 {
				break
			}
			end += i + 2
		}
		out = append(out, data[:end])
	}
	return out
}

var perfSeeds = []string{
	"mariadbd 12480  6594.735928:    2004008 cpu-clock:ppp: \n\t          79c841 Item_equal::add_key_fields+0xa1 (/opt/m/mariadbd)\n\t          79cc59 [unknown] (/opt/m/mariadbd)\n\n",
	"Web Content 42/43 1.0: 1 cycles:\n\t7f00 a->b->c (/tmp/perf-12.map)\n\tffff k+0x1 ([kernel.kallsyms])\n\n",
	"java 123/0 1.0: 00 instructions:\n\t7f00 Lorg/x/Y;.z(I)V (/x (deleted))\n\t7f01 [unknown] ([unknown])\n\na1 1 2.0: 5 cycles:\n\t7f00 (anonymous namespace)::f (/x)\n\n",
	"a1 1 1.0: 007 cycles:\n\t7f00 net/http.(*Client).Do+0x10 (/bin/app)\n# comment\ngarbage\n\n\ttrailing (x)\n",
}

// optionsFromByte derives perf options, strictness and a filter from b.
func optionsFromByte(b byte) (PerfOptions, bool) {
	o := PerfOptions{PID: b&1 != 0, TID: b&2 != 0, Kernel: b&4 != 0, JIT: b&8 != 0, All: b&16 != 0, Addrs: b&32 != 0}
	if b&128 != 0 {
		o.EventFilter = "cycles"
	}
	return o, b&64 != 0
}

// foldPerChunk folds data as parsePerf's parallel path does, but with a
// chunk (and a state machine) for every block that ends in a blank line,
// so that small inputs cross many chunk boundaries.
func foldPerChunk(data []byte, opts PerfOptions, strict bool) (*Profile, error) {
	var chunks []perfChunk
	line := 1
	for len(data) > 0 {
		cut := bytes.Index(data, []byte("\n\n"))
		if cut < 0 {
			cut = len(data)
		} else {
			cut += 2
		}
		chunks = append(chunks, perfChunk{data: data[:cut], firstLine: line, index: len(chunks)})
		line += bytes.Count(data[:cut], []byte{'\n'})
		data = data[cut:]
	}
	if len(chunks) == 0 {
		return &Profile{Unit: UnitSamples}, nil
	}
	o := opts
	if o.EventFilter == "" {
		o.EventFilter = firstEvent(chunks[0].data)
	}
	var total runningTotal
	if o.EventFilter == "" {
		st := newPerfState(&opts, strict)
		for _, c := range chunks {
			st.runChunk(c, &total)
		}
		return finishPerf([]*perfState{st}, &total)
	}
	// One state per chunk, folded last chunk first, so that the running
	// total takes them out of order.
	states := make([]*perfState, len(chunks))
	for i := len(chunks) - 1; i >= 0; i-- {
		states[i] = newPerfState(&o, strict)
		states[i].defaulted = opts.EventFilter == ""
		states[i].runChunk(chunks[i], &total)
	}
	return finishPerf(states, &total)
}

func samePerfResult(p1 *Profile, err1 error, p2 *Profile, err2 error) string {
	if (err1 == nil) != (err2 == nil) {
		return fmt.Sprintf("errors %v and %v", err1, err2)
	}
	if err1 != nil {
		var pe1, pe2 *ParseError
		if !errors.As(err1, &pe1) || !errors.As(err2, &pe2) || pe1.Line != pe2.Line || pe1.Line < 1 {
			return fmt.Sprintf("errors %v and %v: want *ParseErrors for the same line", err1, err2)
		}
		return ""
	}
	if !sameStacks(p1.Stacks, p2.Stacks) || p1.Skipped != p2.Skipped || p1.SkippedFirst != p2.SkippedFirst ||
		p1.Samples != p2.Samples || p1.Unit != p2.Unit || p1.Event != p2.Event || p1.FilteredEvents != p2.FilteredEvents {
		return fmt.Sprintf("profiles differ:\n%+v\n%+v", p1, p2)
	}
	return ""
}

func FuzzParsePerfScript(f *testing.F) {
	for i, s := range perfSnippets(f) {
		f.Add(s, byte(i*37))
	}
	for i, s := range perfSeeds {
		f.Add([]byte(s), byte(i*53))
	}
	f.Fuzz(func(t *testing.T, data []byte, flags byte) {
		opts, strict := optionsFromByte(flags)
		p1, err1 := parsePerf(bytes.NewReader(data), opts, strict, 1)
		if (p1 == nil) == (err1 == nil) {
			t.Fatalf("parsePerf = %v, %v: want a profile xor an error", p1, err1)
		}
		p2, err2 := parsePerf(bytes.NewReader(data), opts, strict, 2)
		if d := samePerfResult(p1, err1, p2, err2); d != "" {
			t.Fatalf("workers=1 and workers=2 disagree: %s", d)
		}
		p3, err3 := foldPerChunk(data, opts, strict)
		if d := samePerfResult(p1, err1, p3, err3); d != "" {
			t.Fatalf("one state machine and one per block disagree: %s", d)
		}
		if err1 != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteFolded(&buf, p1); err != nil {
			t.Fatal(err)
		}
		back, err := ParseFolded(bytes.NewReader(buf.Bytes()), true)
		if err != nil {
			t.Fatalf("ParseFolded(WriteFolded(p)) error: %v\n%q", err, buf.String())
		}
		if !sameStacks(back.Stacks, p1.Stacks) {
			t.Fatalf("ParseFolded(WriteFolded(p)) = %v, want %v", back.Stacks, p1.Stacks)
		}
	})
}

func FuzzParseFolded(f *testing.F) {
	for _, s := range []string{"a;b;c 3\n", "a b;c 1\r\nd -0\n\n", "x 1\ny\n", "a 9223372036854775807\na 1\n", "a -1\n", " 5\n", ";; 0\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lax, errLax := ParseFolded(bytes.NewReader(data), false)
		if (lax == nil) == (errLax == nil) {
			t.Fatalf("ParseFolded = %v, %v: want a profile xor an error", lax, errLax)
		}
		strict, errStrict := ParseFolded(bytes.NewReader(data), true)
		if (strict == nil) == (errStrict == nil) {
			t.Fatalf("ParseFolded(strict) = %v, %v: want a profile xor an error", strict, errStrict)
		}
		if errStrict == nil {
			if errLax != nil || !sameStacks(lax.Stacks, strict.Stacks) || lax.Skipped != 0 {
				t.Fatalf("strict parse succeeded but lax gave %v, %v", lax, errLax)
			}
		}
		if errLax != nil {
			return
		}
		for _, s := range lax.Stacks {
			if s.Value < 0 {
				t.Fatalf("negative value in %v", s)
			}
		}
		var out1, out2 bytes.Buffer
		if err := WriteFolded(&out1, lax); err != nil {
			t.Fatal(err)
		}
		back, err := ParseFolded(bytes.NewReader(out1.Bytes()), true)
		if err != nil {
			t.Fatalf("ParseFolded(WriteFolded(p)) error: %v\n%q", err, out1.String())
		}
		if !sameStacks(back.Stacks, lax.Stacks) {
			t.Fatalf("ParseFolded(WriteFolded(p)) = %v, want %v", back.Stacks, lax.Stacks)
		}
		if err := WriteFolded(&out2, back); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out1.Bytes(), out2.Bytes()) {
			t.Fatalf("WriteFolded not stable: %q then %q", out1.String(), out2.String())
		}
	})
}

func FuzzParsePprof(f *testing.F) {
	var buf bytes.Buffer
	_ = WritePprof(&buf, &Profile{Unit: UnitPeriod, Event: "cpu-clock", Stacks: []Stack{st(3, "a", "b"), st(5, "a", "c")}})
	f.Add(buf.Bytes())
	buf.Reset()
	_ = WritePprof(&buf, &Profile{Stacks: []Stack{st(1, "x")}, Meta: &Meta{FrequencyHz: 99}})
	f.Add(buf.Bytes())
	f.Add([]byte("\x00\x01garbage"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePprof(bytes.NewReader(data))
		if (p == nil) == (err == nil) {
			t.Fatalf("ParsePprof = %v, %v: want a profile xor an error", p, err)
		}
		if err != nil {
			return
		}
		for i, s := range p.Stacks {
			if s.Value < 0 || len(s.Frames) == 0 {
				t.Fatalf("bad stack %v", s)
			}
			if i > 0 && p.Stacks[i-1].Key() >= s.Key() {
				t.Fatalf("stacks not sorted and distinct: %q then %q", p.Stacks[i-1].Key(), s.Key())
			}
		}
		if err := WritePprof(&bytes.Buffer{}, p); err != nil {
			t.Fatalf("WritePprof(ParsePprof(data)): %v", err)
		}
	})
}

// canonJSON decodes raw JSON keeping numbers as written, for comparisons.
func canonJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func FuzzParseMeta(f *testing.F) {
	for _, s := range []string{
		`{"format":1,"label":"10.5","cpu_seconds":3.83,"operations":67300,"samples":1411,"complete":true}`,
		`{"label":"x","future":{"a":[1,2.50,null]},"big":12345678901234567890,"unit":"period","event":"cpu-clock"}`,
		`{"LABEL":"a","label":"b"}`,
		`{"format":2}`, `{"operations":-1}`, `null`, `{}`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m1, err := ParseMeta(bytes.NewReader(data))
		if (m1 == nil) == (err == nil) {
			t.Fatalf("ParseMeta = %v, %v: want metadata xor an error", m1, err)
		}
		// ParseMeta refuses what encoding/json refuses, and more only for
		// its own checks of values; its errors have a place.
		var ref Meta
		refErr := json.Unmarshal(data, &ref)
		if refErr != nil && err == nil {
			t.Fatalf("ParseMeta(%q) = nil error, encoding/json: %v", data, refErr)
		}
		if err != nil {
			var me *MetaError
			if !errors.Is(err, ErrBadMeta) || !errors.As(err, &me) || me.Line < 1 || me.Column < 1 {
				t.Fatalf("ParseMeta(%q) error %v: want a *MetaError with a line and column, wrapping ErrBadMeta", data, err)
			}
			if refErr == nil && !strings.HasPrefix(me.Msg, "want 0 or more") && !strings.Contains(me.Msg, "newer") && me.Key != "unit" {
				t.Fatalf("ParseMeta(%q) error %v, but encoding/json takes it", data, err)
			}
			return
		}
		var w1, w2 bytes.Buffer
		if err := WriteMeta(&w1, m1); err != nil {
			t.Fatalf("WriteMeta(ParseMeta(data)): %v", err)
		}
		m2, err := ParseMeta(bytes.NewReader(w1.Bytes()))
		if err != nil {
			t.Fatalf("ParseMeta(WriteMeta(m)) error: %v\n%s", err, w1.String())
		}
		if err := WriteMeta(&w2, m2); err != nil {
			t.Fatal(err)
		}
		if w1.String() != w2.String() {
			t.Fatalf("WriteMeta not stable:\n%s\n%s", w1.String(), w2.String())
		}
		// Known fields survive; Format defaults to 1.
		k1, k2 := *m1, *m2
		if k1.Format == 0 {
			k1.Format = 1
		}
		k1.Extra, k2.Extra = nil, nil
		if !reflect.DeepEqual(k1, k2) {
			t.Fatalf("round trip changed known fields:\n%+v\n%+v", k1, k2)
		}
		// Unknown fields survive.
		if len(m1.Extra) != len(m2.Extra) {
			t.Fatalf("round trip changed Extra: %v, then %v", m1.Extra, m2.Extra)
		}
		for k, v := range m1.Extra {
			a, errA := canonJSON(v)
			b, errB := canonJSON(m2.Extra[k])
			if errA != nil || errB != nil || !reflect.DeepEqual(a, b) {
				t.Fatalf("round trip changed Extra[%q]: %s, then %s", k, v, m2.Extra[k])
			}
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range perfSnippets(f) {
		f.Add(s)
	}
	for _, s := range perfSeeds {
		f.Add([]byte(s))
	}
	f.Add([]byte("a;b 3\nc 4\n"))
	f.Add([]byte{0x1f, 0x8b})
	var buf bytes.Buffer
	_ = WritePprof(&buf, &Profile{Stacks: []Stack{st(3, "a", "b")}})
	f.Add(buf.Bytes())
	f.Add([]byte("\x00\x01garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(bytes.NewReader(data), ParseOptions{})
		if (p == nil) == (err == nil) {
			t.Fatalf("Parse = %v, %v: want a profile xor an error", p, err)
		}
		if err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatalf("Parse error with an empty message")
		}
	})
}

// FuzzPerfChunks checks FuzzParsePerfScript's properties on the state
// machine directly, without parsePerf's reader (which allocates a chunk
// buffer per call and so fuzzes slowly): one state machine over the whole
// input agrees with one per block, and the result round-trips through
// the folded format.
func FuzzPerfChunks(f *testing.F) {
	for i, s := range perfSnippets(f) {
		f.Add(s, byte(i*37))
	}
	for i, s := range perfSeeds {
		f.Add([]byte(s), byte(i*53))
	}
	f.Fuzz(func(t *testing.T, data []byte, flags byte) {
		if len(data) == 0 {
			return // parsePerf answers before any state machine runs
		}
		opts, strict := optionsFromByte(flags)
		st := newPerfState(&opts, strict)
		var total runningTotal
		st.runChunk(perfChunk{data: data, firstLine: 1}, &total)
		p1, err1 := finishPerf([]*perfState{st}, &total)
		if (p1 == nil) == (err1 == nil) {
			t.Fatalf("finishPerf = %v, %v: want a profile xor an error", p1, err1)
		}
		p2, err2 := foldPerChunk(data, opts, strict)
		if d := samePerfResult(p1, err1, p2, err2); d != "" {
			t.Fatalf("one state machine and one per block disagree: %s", d)
		}
		if err1 != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteFolded(&buf, p1); err != nil {
			t.Fatal(err)
		}
		back, err := ParseFolded(bytes.NewReader(buf.Bytes()), true)
		if err != nil {
			t.Fatalf("ParseFolded(WriteFolded(p)) error: %v\n%q", err, buf.String())
		}
		if !sameStacks(back.Stacks, p1.Stacks) {
			t.Fatalf("ParseFolded(WriteFolded(p)) = %v, want %v", back.Stacks, p1.Stacks)
		}
	})
}

// sanitizeLine returns b without line breaks and control bytes, never
// empty and never starting with '#' (a comment) or a space, so that it can
// start a line of any format.
func sanitizeLine(b []byte) string {
	out := []byte{'x'}
	for _, c := range b {
		if c != '\n' && c != '\r' && !isControl(c) {
			out = append(out, c)
		}
	}
	return string(out)
}

// foldedFrom builds valid folded text from data, a stack per line of data.
func foldedFrom(data []byte) []string {
	var lines []string
	for i, l := range bytes.SplitN(data, []byte{'\n'}, 40) {
		lines = append(lines, fmt.Sprintf("%s %d\n", sanitizeLine(l), i))
	}
	return lines
}

// perfFrom builds valid perf script text from data, a sample per line of
// data, with each header form (with and without a timestamp, pid/tid,
// cpu, period) and the line's bytes in the thread and function names.
func perfFrom(data []byte) []string {
	var lines []string
	for i, l := range bytes.SplitN(data, []byte{'\n'}, 40) {
		name := sanitizeLine(l)
		switch i % 4 {
		case 0:
			lines = append(lines, fmt.Sprintf("%s %d %d.%06d: %d cycles:\n", name, i, i, i, i+1))
		case 1:
			lines = append(lines, fmt.Sprintf("%s %d/%d [%03d] %d.5: cpu-clock:ppp: \n", name, i, i+1, i, i))
		case 2:
			lines = append(lines, fmt.Sprintf("%s %d cycles:\n", name, i))
		case 3:
			lines = append(lines, fmt.Sprintf("%s %d/%d [001] %d cycles:u:\n", name, i, i, i))
		}
		for j := range i % 3 {
			lines = append(lines, fmt.Sprintf("\t%x %s+0x%x (/usr/lib/lib%d.so)\n", 0x7f00+j, name, j, j))
		}
		lines = append(lines, "\n")
	}
	return lines
}

// FuzzDetect checks format detection. Any bytes: no panic, and every byte
// detection read reaches the parser, however the reader delivers them.
// Valid folded and perf script text built from the bytes: every prefix
// that ends at a line boundary is detected as the whole text's format or
// as unknown ("", when no line tells yet), and a version whose first line
// (or first stack line) is longer than the read buffer is detected the
// same.
func FuzzDetect(f *testing.F) {
	for _, s := range perfSeeds {
		f.Add([]byte(s))
	}
	for _, s := range []string{"a;b 3\nc 4\n", "java 19983 cycles:\n\tffff f (/x)\n\n", "\n\x04\x08\x01", "a;b 1\n\x00", "# c\n\n", "x (y) 1\n", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1024 {
			data = data[:1024] // the prefix checks are quadratic
		}
		want := detect(data)
		for _, r := range []io.Reader{iotest.OneByteReader(bytes.NewReader(data)), iotest.HalfReader(bytes.NewReader(data))} {
			br := bufio.NewReaderSize(r, sniffSize)
			s, err := sniff(br)
			if err != nil {
				t.Fatalf("sniff(%q) error: %v", data, err)
			}
			rest, err := io.ReadAll(br)
			if err != nil {
				t.Fatal(err)
			}
			if got := append(s.head, rest...); !bytes.Equal(got, data) {
				t.Fatalf("sniff(%q) gave back %q", data, got)
			}
			if s.format != want {
				t.Fatalf("sniff(%q) through a slow reader = %q, detect = %q", data, s.format, want)
			}
		}

		long := strings.Repeat("std::map<int, std::string>::find;", 2200) // 72 KB
		for _, tt := range []struct {
			format string
			lines  []string
		}{
			{FormatFolded, foldedFrom(data)},
			{FormatPerf, perfFrom(data)},
		} {
			var prefix []byte
			for i, l := range tt.lines {
				prefix = append(prefix, l...)
				got := detect(prefix)
				if got != tt.format && got != "" {
					t.Fatalf("detect(%q) = %q: the first %d line(s) of %s text", prefix, got, i+1, tt.format)
				}
			}
			if got := detect(prefix); got != tt.format {
				t.Fatalf("detect(%q) = %q, want %q", prefix, got, tt.format)
			}
			// The first line (folded) or the first stack line (perf, the
			// first sample of data's second line) made long.
			longer := slices.Clone(tt.lines)
			i := 0
			if tt.format == FormatPerf {
				i = slices.IndexFunc(longer, func(l string) bool { return l[0] == '\t' })
			}
			if i >= 0 {
				longer[i] = strings.Replace(longer[i], "x", "x"+long, 1)
				if got := detect([]byte(strings.Join(longer, ""))); got != tt.format {
					t.Fatalf("detect(%s text with a %d-byte line %d) = %q, want %q", tt.format, len(longer[i]), i+1, got, tt.format)
				}
			}
		}
	})
}
