package report

import (
	"bytes"
	"slices"
	"testing"
)

func TestFormatNames(t *testing.T) {
	if got, want := FormatNames(), []string{"table", "json", "csv", "markdown"}; !slices.Equal(got, want) {
		t.Errorf("FormatNames() = %q, want %q", got, want)
	}
}

func TestWrite(t *testing.T) {
	d := &Document{Title: "Doc", Sections: []Section{{Title: "S", Columns: []Column{TextColumn("f"), NumColumn("n")},
		Rows: [][]Cell{{{Text: "a", Name: true}, Text("1")}}}}}
	tests := []struct {
		format Format
		want   func(*bytes.Buffer) error // the writer Write must match; nil when it refuses
	}{
		{FormatTable, func(b *bytes.Buffer) error { return WriteText(b, d) }},
		{FormatMarkdown, func(b *bytes.Buffer) error { return WriteMarkdown(b, d) }},
		{FormatJSON, nil},
		{FormatCSV, nil},
		{FormatHTML, nil},
	}
	for _, tt := range tests {
		var got bytes.Buffer
		err := Write(&got, tt.format, d)
		if (err != nil) != (tt.want == nil) {
			t.Errorf("Write(%q) error = %v, want error %v", tt.format, err, tt.want == nil)
			continue
		}
		if err != nil {
			continue
		}
		var want bytes.Buffer
		if err := tt.want(&want); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("Write(%q) =\n%s\nwant\n%s", tt.format, got.String(), want.String())
		}
	}
}
