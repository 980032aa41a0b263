package yamlpos

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func decodeErr(src string) error {
	var n yaml.Node
	return yaml.NewDecoder(strings.NewReader(src)).Decode(&n)
}

// TestLocate: each syntax error is placed at the line and column of the
// problem, not where yaml.v3 puts it (given in the comment).
func TestLocate(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // LINE:COL: MSG
	}{
		// yaml.v3: line 3
		{"unclosed [", "version: 1\nrename:\n  - to: a\n    from: [x, y\n  - to: b\n    from: [z]\n",
			"4:11: the '[' opened here is never closed"},
		{"unclosed [ at the end", "version: 1\nrename:\n  - to: a\n    from: [x, y\n",
			"4:11: the '[' opened here is never closed"},
		{"unclosed [ without a last line break", "a: 1\nb: [x", "2:4: the '[' opened here is never closed"},
		// yaml.v3: line 1
		{"unclosed {", "version: 1\nnormalize: {clone_suffixes: false\nrename:\n  - to: b\n",
			"2:12: the '{' opened here is never closed"},
		{"unclosed { on line 1", "normalize: {clone_suffixes: false\n", "1:12: the '{' opened here is never closed"},
		// yaml.v3: line 2
		{"[ closed by }", "version: 1\n\nthread_roots: {from: [a, b}\nrename: []\n",
			"3:22: the '[' opened here is closed by a '}' (line 3, column 27)"},
		{"unclosed double quote", "version: 1\nrename:\n  - to: \"abc\n    from: [x]\n",
			`3:9: the quote (") opened here is never closed`},
		{"unclosed single quote", "version: 1\nrename:\n  - to: 'it''s\n    from: [x]\n",
			"3:9: the quote (') opened here is never closed"},
		// yaml.v3: line 3, the quote swallowed the ']'
		{"unclosed quote in a list", "a: [\"x, y]\nb: 2\n", `1:5: the quote (") opened here is never closed`},
		// yaml.v3: line 1
		{"] closes nothing", "version: 1\nrename: [a]]\n", "2:12: this ']' closes nothing"},
		{"] closes nothing after a list over two lines", "a: [x,\n  y]]\n", "2:5: this ']' closes nothing"},
		{"tab indents a list", "version: 1\nrename:\n\t- to: a\n", "3:1: a tab indents this line; YAML indents with spaces only"},
		// yaml.v3: line 3
		{"tab indents a key", "version: 1\nrename:\n  - to: a\n\tfrom: [x]\n", "4:1: a tab indents this line; YAML indents with spaces only"},
		{"tab after spaces", "a:\n  b: 1\n  \tc: 2\n", "3:3: a tab indents this line; YAML indents with spaces only"},
		// yaml.v3: line 2
		{"key indented less", "version: 1\nrename:\n  - to: a\n   from: [x]\n", "4:4: did not find expected '-' indicator"},
		{"key indented more", "version: 1\nrename:\n  - to: a\n      from: [x]\n", "4:7: mapping values are not allowed in this context"},
		{"mapping value not allowed", "version: 1\nrename:\n  - to: a: b\n    from: [x]\n", "3:3: mapping values are not allowed in this context"},
		// yaml.v3: line 2
		{"list item in a mapping", "version: 1\nrename:\n  to: a\n  - from: [x]\n", "4:3: did not find expected key"},
		{"key without colon", "a: 1\nb\nc: 2\n", "2:1: could not find expected ':'"},
		// yaml.v3: no line
		{"unknown alias", "a: 1\nb: *x\n", "2:1: unknown anchor 'x' referenced"},
		{"error after a list over two lines", "a: [x,\n  y]\nb: 1\n c: 2\n", "4:2: mapping values are not allowed in this context"},
		{"bracket inside a plain scalar", "a: foo [bar\nb: [\n", "2:4: the '[' opened here is never closed"},
		{"bracket on a continuation line", "a: foo\n  [bar\nb: [\n", "3:4: the '[' opened here is never closed"},
		{"brackets inside a block scalar", "a: |\n  [x\n  \"y\nb: [1\n", "4:4: the '[' opened here is never closed"},
		{"brackets and quotes in comments", "a: 1 # [x \"y\n# {\nb: [1\n", "3:4: the '[' opened here is never closed"},
		{"CRLF line ends", "a: 1\r\nb: [x\r\nc: 2\r\n", "2:4: the '[' opened here is never closed"},
		{"column in characters", "é: \"ü\"\nb: [x\n", "2:4: the '[' opened here is never closed"},
		{"glob with brackets unquoted", "elide:\n  - glob: [foo[ab]*]\n", "2:3: did not find expected alphabetic or numeric character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := decodeErr(tt.src)
			if err == nil {
				t.Fatalf("yaml.v3 accepts %q; the case is wrong", tt.src)
			}
			p := Locate([]byte(tt.src), err)
			if got := fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Msg); got != tt.want {
				t.Errorf("Locate(%q) = %s, want %s (yaml.v3: %v)", tt.src, got, tt.want, err)
			}
			if strings.HasPrefix(p.Msg, "the ") || strings.HasPrefix(p.Msg, "this ") || strings.HasPrefix(p.Msg, "a tab") {
				if p.Fix == "" {
					t.Errorf("Locate(%q) = %+v: the scanner's finding has no fix", tt.src, p)
				}
			} else if p.Fix != "" {
				t.Errorf("Locate(%q) = %+v: a fix for yaml.v3's message", tt.src, p)
			}
		})
	}
}

// TestLocateInShippedFiles breaks the shipped symbol maps and lab configs
// after each line in turn, and checks that the problem is found on the
// inserted line, whatever comes before and after it.
func TestLocateInShippedFiles(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*/*.yaml")
	if len(files) < 4 {
		t.Fatalf("shipped YAML files: %v, want the symbol maps and lab configs", files)
	}
	breaks := []struct {
		line string
		col  int
		msg  string
	}{
		{"]", 1, "this ']' closes nothing"},
		{"x: [1, 2", 4, "the '[' opened here is never closed"},
		{"x: {a: 1", 4, "the '{' opened here is never closed"},
		{`x: "a`, 4, `the quote (") opened here `}, // never closed, or ends only on a later line
		{"\tx: 1", 1, "a tab indents this line; YAML indents with spaces only"},
		{" x: 1", 2, ""},
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(strings.TrimSuffix(string(data), "\n"), "\n")
		lines[len(lines)-1] += "\n"
		for k := 0; k <= len(lines); k++ {
			// Only between top-level entries: after a line that ends one
			// (the next one starts at column 1), or at the very end.
			if k > 0 && k < len(lines) && (lines[k] == "" || lines[k][0] == ' ' || lines[k][0] == '#' || lines[k][0] == '\n') {
				continue
			}
			for _, b := range breaks {
				src := strings.Join(lines[:k], "") + b.line + "\n" + strings.Join(lines[k:], "")
				err := decodeErr(src)
				if err == nil {
					if b.msg == "" {
						continue // " x: 1" can be valid (a top-level key after nothing)
					}
					t.Fatalf("%s with %q as line %d: yaml.v3 accepts it", f, b.line, k+1)
				}
				p := Locate([]byte(src), err)
				if p.Line != k+1 || p.Column != b.col || !strings.HasPrefix(p.Msg, b.msg) {
					t.Errorf("%s with %q as line %d: Locate = %d:%d: %s, want %d:%d: %s (yaml.v3: %v)",
						f, b.line, k+1, p.Line, p.Column, p.Msg, k+1, b.col, b.msg, err)
				}
			}
		}
	}
}

// FuzzLocate: no panic, and a position inside the document.
func FuzzLocate(f *testing.F) {
	files, _ := filepath.Glob("../../examples/*/*.yaml")
	for _, fn := range files {
		if data, err := os.ReadFile(fn); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("a: [x,\n  y]]\n"))
	f.Add([]byte("a: |\n  [x\nb: \"y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := decodeErr(string(data))
		if err == nil {
			return
		}
		p := Locate(data, err)
		n := max(1, bytes.Count(data, []byte("\n"))+1)
		if p.Line < 1 || p.Line > n || p.Column < 1 || p.Msg == "" {
			t.Fatalf("Locate(%q) = %+v: outside the document's %d lines, or no message", data, p, n)
		}
	})
}
