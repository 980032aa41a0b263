package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/flamediff/flamediff/internal/names"
)

// MarkdownOptions say how WriteMarkdownSection writes a section.
type MarkdownOptions struct {
	// Heading is the section title's markup: "##", "###".
	Heading string
	// EscapeText escapes the backticks of every text that is not a name
	// (titles, headings, plain cells, intros and notes), so that none
	// starts a code span: the text reads the same once rendered.
	EscapeText bool
}

// WriteMarkdown writes d as GitHub markdown: the title as "##", each
// section as "###" with its table and notes, then the document's notes as
// quotes, one trailing newline.
func WriteMarkdown(w io.Writer, d *Document) error {
	var b bytes.Buffer
	if d.Title != "" {
		fmt.Fprintf(&b, "## %s\n\n", d.Title)
	}
	for _, s := range d.Sections {
		WriteMarkdownSection(&b, &s, MarkdownOptions{Heading: "###"})
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "> %s\n\n", n)
	}
	return writeTrimmed(w, b.Bytes())
}

// WriteMarkdownSection writes one section: its heading, intro paragraphs,
// a GitHub pipe table (or IfEmpty) and its notes, each followed by a blank
// line. Names go in code spans that show them as they are (names.CodeSpan;
// C++ templates would otherwise be taken for HTML), indented by their
// level with non-breaking spaces; a | inside a cell, code span or not, is
// written \| (GitHub's table syntax takes it out before the cell is
// rendered).
func WriteMarkdownSection(b *bytes.Buffer, s *Section, o MarkdownOptions) {
	text := func(s string) string {
		if o.EscapeText {
			return EscapeMarkdown(s)
		}
		return s
	}
	fmt.Fprintf(b, "%s %s\n\n", o.Heading, text(s.Title))
	for _, p := range s.Intro {
		fmt.Fprintf(b, "%s\n\n", text(p))
	}
	if len(s.Rows) > 0 || s.IfEmpty == "" {
		line := func(cells []string) {
			for i, c := range cells {
				cells[i] = strings.ReplaceAll(c, "|", `\|`)
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		head := make([]string, len(s.Columns))
		rule := make([]string, len(s.Columns))
		for i, c := range s.Columns {
			head[i], rule[i] = text(c.Head), "---"
			if c.Numeric {
				rule[i] = "---:"
			}
		}
		line(head)
		b.WriteString("|" + strings.Join(rule, "|") + "|\n")
		for _, row := range s.Rows {
			cells := make([]string, len(row))
			for i, c := range row {
				if c.Name {
					cells[i] = strings.Repeat("\u00a0\u00a0", c.Level) + names.CodeSpan(c.Text) + c.Suffix
				} else {
					cells[i] = text(c.Text)
				}
			}
			line(cells)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(b, "%s\n\n", s.IfEmpty)
	}
	for _, n := range s.Notes {
		fmt.Fprintf(b, "%s\n\n", text(n))
	}
}

// EscapeMarkdown escapes the backticks of text so that none starts a code
// span: the text reads the same once rendered.
func EscapeMarkdown(s string) string {
	return strings.ReplaceAll(s, "`", "\\`")
}
