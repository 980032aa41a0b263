// Package yamlpos finds where the problem is in a YAML document that
// gopkg.in/yaml.v3 rejected, for the symbol map and the lab config.
//
// yaml.v3 reports a syntax error at the line where the enclosing
// construct starts, and for most errors at the line before it (its marks
// count lines from 0): an unclosed '[' opened on line 4 is reported at
// line 3, a badly indented key at the line of the list it breaks, and some
// errors carry no line at all. Locate finds the line and column of the
// problem itself, in two steps:
//
//  1. A small scanner follows what yaml.v3's scanner would see of flow
//     brackets, quotes, comments, block scalars and indentation, and finds
//     a '[' or '{' never closed (or closed by the wrong bracket), a quote
//     never closed, a closing bracket that closes nothing, or a tab that
//     indents a line.
//  2. yaml.v3 itself is the judge: the scanner's finding on line N is
//     taken only when the document up to the line before N parses and the
//     document up to line N does not. Otherwise the problem line is the
//     first line whose addition makes the document fail, found by bisection
//     over the lines where no bracket or quote is open (a document cut
//     there parses when the lines before it are right).
package yamlpos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// Problem is where a YAML document goes wrong and what is wrong there.
type Problem struct {
	// Line and Column are 1-based; Column counts characters.
	Line, Column int
	// Msg says what is wrong: "the '[' opened here is never closed", or
	// yaml.v3's own words when the scanner has nothing better to say.
	Msg string
	// Fix says how to correct it; empty when Msg is yaml.v3's.
	Fix string
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?(?:line \d+: )?`)

// Message returns yaml.v3's error text without its "yaml: line N: " prefix.
func Message(err error) string {
	return yamlLine.ReplaceAllString(err.Error(), "")
}

// Locate returns where the problem of data is, given err, the error
// yaml.v3's Decoder.Decode returned for data's first document. It never
// fails: without a better answer it returns the first line whose
// addition makes the document fail to parse, at its first non-blank
// column, with yaml.v3's message.
func Locate(data []byte, err error) Problem {
	lines := splitLines(data)
	sc := scan(lines)
	if p := sc.problem; p != nil {
		before := 0
		for k := p.Line - 1; k > 0; k-- {
			if sc.clean[k] {
				before = k
				break
			}
		}
		if parses(prefix(data, lines, before)) && !parses(prefix(data, lines, p.Line)) {
			return *p
		}
	}
	line := firstBadLine(data, lines, sc.clean)
	for _, q := range sc.quotes {
		if q.open.line == line {
			// A string quoted over several lines is allowed, but rarely
			// meant in these files: a quote is missing on this line.
			return Problem{Line: line, Column: q.open.col,
				Msg: fmt.Sprintf("the quote (%c) opened here ends only on line %d", q.open.ch, q.end),
				Fix: fmt.Sprintf("end the string on this line with %c; inside %s write %s", q.open.ch, quoteName(q.open.ch), quoteEscape(q.open.ch))}
		}
	}
	col := 1
	if line <= len(lines) {
		s := lines[line-1].text
		col = utf8.RuneCount(s[:len(s)-len(bytes.TrimLeft(s, " \t"))]) + 1
	}
	return Problem{Line: line, Column: col, Msg: Message(err)}
}

// firstBadLine returns the first line from which the document no longer
// parses: the line after the longest clean prefix that parses (clean: no
// bracket or quote open at its end), or the first line of the construct
// that starts there when it spans several lines.
func firstBadLine(data []byte, lines []line, clean []bool) int {
	var cuts []int // line counts where a cut leaves nothing open
	for k := 1; k <= len(lines); k++ {
		if clean[k] {
			cuts = append(cuts, k)
		}
	}
	// Prefixes that parse come first: find the first cut that fails.
	lo, hi := 0, len(cuts)
	for lo < hi {
		mid := (lo + hi) / 2
		if parses(prefix(data, lines, cuts[mid])) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	good := 0
	if lo > 0 {
		good = cuts[lo-1]
	}
	if good >= len(lines) {
		return max(len(lines), 1)
	}
	return good + 1
}

func parses(doc []byte) bool {
	var n yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(doc)).Decode(&n)
	return err == nil || errors.Is(err, io.EOF)
}

// line is one line of the document, without its line break.
type line struct {
	text []byte
	end  int // offset just past its line break
}

func splitLines(data []byte) []line {
	var out []line
	for off := 0; off < len(data); {
		i := bytes.IndexByte(data[off:], '\n')
		end := len(data)
		if i >= 0 {
			end = off + i + 1
		}
		text := bytes.TrimSuffix(data[off:end], []byte("\n"))
		text = bytes.TrimSuffix(text, []byte("\r"))
		out = append(out, line{text: text, end: end})
		off = end
	}
	return out
}

// prefix returns the first n lines of data.
func prefix(data []byte, lines []line, n int) []byte {
	if n <= 0 {
		return nil
	}
	return data[:lines[n-1].end]
}

// mark is a bracket or quote the scanner saw.
type mark struct {
	ch        byte
	line, col int
}

type scanner struct {
	problem *Problem
	clean   []bool // by line count: nothing open after that many lines
	// quotes are the quoted scalars that go on over a line break: where
	// they open, and the line where they end (0: never).
	quotes []quoted
}

type quoted struct {
	open mark
	end  int
}

// Scanner states between tokens.
const (
	atStart = iota // where a node may start
	inPlain        // inside a plain scalar
	after          // after a quoted scalar, an alias or a closed bracket
)

// scan follows the brackets and quotes of the document; see the package
// comment. It is an approximation of YAML's grammar; Locate checks what
// it finds against yaml.v3.
func scan(lines []line) *scanner {
	sc := &scanner{clean: make([]bool, len(lines)+1)}
	sc.clean[0] = true
	var (
		stack       []mark
		quote       *mark
		blockIndent = -1 // >= 0: inside a block scalar whose parent is indented so
		plainIndent = -1 // >= 0: a plain scalar, on a line indented so, may go on
	)
	report := func(p Problem) {
		if sc.problem == nil {
			sc.problem = &p
		}
	}
	for ln, l := range lines {
		s := l.text
		if ln == 0 {
			s = bytes.TrimPrefix(s, []byte("\xef\xbb\xbf"))
		}
		col := func(i int) int { return utf8.RuneCount(s[:i]) + 1 }
		indent := len(s) - len(bytes.TrimLeft(s, " "))
		rest := bytes.TrimLeft(s, " \t")
		if blockIndent >= 0 && quote == nil {
			if len(rest) == 0 || indent > blockIndent {
				sc.clean[ln+1] = true
				continue
			}
			blockIndent = -1
		}
		i := 0
		if quote == nil {
			i = len(s) - len(rest)
			if t := bytes.IndexByte(s[:i], '\t'); t >= 0 && len(stack) == 0 && len(rest) > 0 && rest[0] != '#' {
				report(Problem{Line: ln + 1, Column: col(t), Msg: "a tab indents this line; YAML indents with spaces only",
					Fix: "replace the tab by spaces"})
			}
			if len(stack) == 0 && i == 0 && len(rest) > 0 && rest[0] == '%' {
				sc.clean[ln+1] = true
				continue // a directive
			}
		}
		state := atStart
		continued := quote == nil && plainIndent >= 0 && len(stack) == 0 && indent > plainIndent &&
			len(rest) > 0 && rest[0] != '#'
		if continued {
			state = inPlain // a more indented line goes on with the plain scalar
		}
		space := func(j int) bool { return j >= len(s) || s[j] == ' ' || s[j] == '\t' }
		flowInd := func(c byte) bool { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' }
		closeBracket := func(j int) {
			c := s[j]
			if len(stack) == 0 {
				report(Problem{Line: ln + 1, Column: col(j), Msg: fmt.Sprintf("this '%c' closes nothing", c),
					Fix: "remove it, or quote the value it is part of"})
				return
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if want := closer(top.ch); c != want {
				report(Problem{Line: top.line, Column: top.col,
					Msg: fmt.Sprintf("the '%c' opened here is closed by a '%c' (line %d, column %d)", top.ch, c, ln+1, col(j)),
					Fix: fmt.Sprintf("close it with '%c', or quote the value if the '%c' is part of it", want, top.ch)})
			}
		}
	chars:
		for i < len(s) {
			c := s[i]
			if quote != nil {
				switch {
				case quote.ch == '"' && c == '\\':
					i += 2
				case c == quote.ch && quote.ch == '\'' && i+1 < len(s) && s[i+1] == '\'':
					i += 2
				case c == quote.ch:
					if quote.line != ln+1 {
						sc.quotes = append(sc.quotes, quoted{*quote, ln + 1})
					}
					quote, state = nil, after
					i++
				default:
					i++
				}
				continue
			}
			flow := len(stack) > 0
			if c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t') {
				break // a comment
			}
			switch state {
			case atStart:
				switch {
				case c == ' ' || c == '\t':
				case c == '[' || c == '{':
					stack = append(stack, mark{c, ln + 1, col(i)})
				case c == ']' || c == '}':
					closeBracket(i)
					state = after
				case c == '"' || c == '\'':
					quote = &mark{c, ln + 1, col(i)}
				case c == ',' && flow:
				case (c == '-' || c == '?' || c == ':') && space(i+1):
				case (c == '|' || c == '>') && !flow:
					blockIndent = indent
					break chars
				case c == '&' || c == '!' || c == '*': // anchor, tag, alias
					for i+1 < len(s) && !space(i+1) && (!flow || !flowInd(s[i+1])) {
						i++
					}
					if c == '*' {
						state = after
					}
				default:
					state = inPlain
				}
			case inPlain:
				switch {
				case c == ':' && (space(i+1) || flow && flowInd(s[i+1])):
					state = atStart
				case flow && (c == ',' || c == '[' || c == '{'):
					if c != ',' {
						stack = append(stack, mark{c, ln + 1, col(i)})
					}
					state = atStart
				case flow && (c == ']' || c == '}'):
					closeBracket(i)
					state = after
				}
			case after:
				switch {
				case c == ' ' || c == '\t':
				case c == ':' || c == ',' && flow:
					state = atStart
				case c == '[' || c == '{':
					stack = append(stack, mark{c, ln + 1, col(i)})
					state = atStart
				case c == ']' || c == '}':
					closeBracket(i)
				case c == '"' || c == '\'':
					quote = &mark{c, ln + 1, col(i)}
				default:
					state = inPlain
				}
			}
			i++
		}
		sc.clean[ln+1] = quote == nil && len(stack) == 0
		switch {
		case state == inPlain && sc.clean[ln+1] && blockIndent < 0:
			if !continued {
				plainIndent = indent
			}
		case len(rest) > 0 && rest[0] != '#':
			plainIndent = -1
		}
	}
	switch {
	case quote != nil:
		report(Problem{Line: quote.line, Column: quote.col,
			Msg: fmt.Sprintf("the quote (%c) opened here is never closed", quote.ch),
			Fix: fmt.Sprintf("end the string with %c; inside %s write %s", quote.ch, quoteName(quote.ch), quoteEscape(quote.ch))})
	case len(stack) > 0:
		b := stack[0]
		report(Problem{Line: b.line, Column: b.col,
			Msg: fmt.Sprintf("the '%c' opened here is never closed", b.ch),
			Fix: fmt.Sprintf("close it with '%c', or quote the value if the '%c' is part of it", closer(b.ch), b.ch)})
	}
	return sc
}

func closer(open byte) byte {
	if open == '[' {
		return ']'
	}
	return '}'
}

func quoteName(q byte) string {
	if q == '"' {
		return "double quotes"
	}
	return "single quotes"
}

func quoteEscape(q byte) string {
	if q == '"' {
		return `\" for a quote`
	}
	return "'' for a quote"
}
