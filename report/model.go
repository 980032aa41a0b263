package report

// Format is an output format of a report.
type Format string

// Output formats. FormatHTML is the document of flamediff html's tables
// (not a --format value): as FormatTable, with names whole for the HTML
// writer to shorten, the whole name as tooltip.
const (
	FormatTable    Format = "table"
	FormatJSON     Format = "json"
	FormatCSV      Format = "csv"
	FormatMarkdown Format = "markdown"
	FormatHTML     Format = "html"
)

// Formats are the formats a user chooses among, in the order they are listed.
var Formats = []Format{FormatTable, FormatJSON, FormatCSV, FormatMarkdown}

// Column is one column of a Section: its heading and whether it holds
// numbers (right-aligned).
type Column struct {
	Head    string
	Numeric bool
}

// TextColumn is a column of text (left-aligned).
func TextColumn(head string) Column { return Column{Head: head} }

// NumColumn is a column of numbers (right-aligned).
func NumColumn(head string) Column { return Column{Head: head, Numeric: true} }

// Cell is one table cell.
type Cell struct {
	// Text is what the cell shows.
	Text string
	// Name marks a function name (or a chain "a → b"): markdown shows it
	// in a code span, HTML in monospace.
	Name bool
	// Level indents a name by its depth in a call tree.
	Level int
	// Suffix is text after a name, outside its code span: figures such as
	// "(end 66.43%)".
	Suffix string
	// Title is the whole text when Text shows it shortened: the HTML
	// writer gives it as the cell's tooltip.
	Title string
	// Class holds extra HTML classes of the cell ("noise", "missing").
	Class string
	// Href, when set, makes the HTML writer show the cell's text as a link
	// to it (a path relative to the page); the other writers ignore it.
	Href string
}

// Text returns a plain cell.
func Text(s string) Cell { return Cell{Text: s} }

// Section is one titled table, with paragraphs before it (Intro) and
// sentences after it (Notes).
type Section struct {
	Title   string
	Intro   []string
	Columns []Column
	Rows    [][]Cell
	Notes   []string
	// IfEmpty is shown instead of the table when it has no rows; with ""
	// the table is printed with its head alone.
	IfEmpty string
}

// AddRow appends a row of plain cells.
func (s *Section) AddRow(texts ...string) {
	row := make([]Cell, len(texts))
	for i, t := range texts {
		row[i] = Text(t)
	}
	s.Rows = append(s.Rows, row)
}

// Document is a titled list of sections, then notes (sentences about the
// whole document, such as warnings).
type Document struct {
	Title    string
	Sections []Section
	Notes    []string
}
