// Package report is flamediff's one report layer: the document model that
// every table of flamediff report, diff and html and of the bench report
// is built in (a Document of titled Sections of Columns and Cells, with
// sentences around them), the writers that print it (text tables drawn by
// tablewriter, aligned plain text, GitHub markdown, CSV, JSON and HTML
// tables, and the HTML page of a document around a flame graph), the one rule for rounding figures (Round, Fixed, Signed) and
// the builders that turn a diff.Summary or diff.Result into a Document,
// CSV rows or the JSON objects whose schema is in schema.go, and map rule
// proposals (suggest.Suggestions) into the section of diff --suggest.
//
// The package does no file I/O: writers take an io.Writer, builders take
// values computed by package diff and symbolmap. Names are cleaned and
// shortened by internal/names, so the same name looks the same in every
// output.
package report
