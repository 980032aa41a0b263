package report

import (
	"fmt"
	"io"
)

// FormatNames returns the names of Formats, in their order: the values a
// user may give, for help texts and usage messages.
func FormatNames() []string {
	out := make([]string, len(Formats))
	for i, f := range Formats {
		out[i] = string(f)
	}
	return out
}

// Write writes d in format f: a text table for FormatTable, GitHub
// markdown for FormatMarkdown. The other formats are not written from a
// Document (JSON and CSV are built from the figures: DiffJSON, DiffCSV,
// ProfileJSON, ProfileCSV; HTML by HTMLTables), and Write refuses them.
func Write(w io.Writer, f Format, d *Document) error {
	switch f {
	case FormatTable:
		return WriteText(w, d)
	case FormatMarkdown:
		return WriteMarkdown(w, d)
	}
	return fmt.Errorf("report: format %q is not written from a document", f)
}
