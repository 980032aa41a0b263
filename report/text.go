package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// indent is how a name shows its level in text tables.
const indent = "  "

// plain is a cell as text output shows it: the name indented by its
// level, then its suffix.
func (c Cell) plain() string {
	return strings.Repeat(indent, c.Level) + c.Text + c.Suffix
}

// WriteText writes d for a terminal: the title, each section's title, its
// table (drawn by tablewriter, numbers right-aligned) and its notes, then
// the document's notes, one trailing newline.
func WriteText(w io.Writer, d *Document) error {
	var b bytes.Buffer
	if d.Title != "" {
		fmt.Fprintf(&b, "%s\n\n", d.Title)
	}
	for _, s := range d.Sections {
		fmt.Fprintf(&b, "%s\n", s.Title)
		if err := writeTextTable(&b, &s); err != nil {
			return err
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "\n%s\n", n)
		}
		b.WriteString("\n")
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "%s\n", n)
	}
	return writeTrimmed(w, b.Bytes())
}

// writeTrimmed writes out ending in exactly one newline.
func writeTrimmed(w io.Writer, out []byte) error {
	out = append(bytes.TrimRight(out, "\n"), '\n')
	_, err := w.Write(out)
	return err
}

// writeTextTable draws s's table with tablewriter.
func writeTextTable(w io.Writer, s *Section) error {
	align := make([]tw.Align, len(s.Columns))
	head := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		head[i] = c.Head
		align[i] = tw.AlignLeft
		if c.Numeric {
			align[i] = tw.AlignRight
		}
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithBehavior(tw.Behavior{TrimSpace: tw.Off}),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
	)
	t.Header(head)
	for _, r := range s.Rows {
		texts := make([]string, len(r))
		for i, c := range r {
			texts[i] = c.plain()
		}
		if err := t.Append(texts); err != nil {
			return fmt.Errorf("table %s: %w", s.Title, err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("table %s: %w", s.Title, err)
	}
	return nil
}

// WritePlainTable writes s's table as aligned plain text, without borders:
// columns two spaces apart, numbers right-aligned, a rule of dashes under
// the heading, no trailing spaces. Its title and notes are the caller's.
func WritePlainTable(w io.Writer, s *Section) error {
	width := make([]int, len(s.Columns))
	for i, c := range s.Columns {
		width[i] = utf8.RuneCountInString(c.Head)
	}
	texts := make([][]string, len(s.Rows))
	for r, row := range s.Rows {
		texts[r] = make([]string, len(row))
		for i, c := range row {
			texts[r][i] = c.plain()
			width[i] = max(width[i], utf8.RuneCountInString(texts[r][i]))
		}
	}
	var b bytes.Buffer
	line := func(cells []string) {
		var l strings.Builder
		for i, t := range cells {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(t))
			if i > 0 {
				l.WriteString("  ")
			}
			if s.Columns[i].Numeric {
				l.WriteString(pad + t)
			} else {
				l.WriteString(t + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " ") + "\n")
	}
	head := make([]string, len(s.Columns))
	rule := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		head[i], rule[i] = c.Head, strings.Repeat("-", width[i])
	}
	line(head)
	line(rule)
	for _, row := range texts {
		line(row)
	}
	_, err := w.Write(b.Bytes())
	return err
}
