package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"

	"github.com/flamediff/flamediff/internal/names"
)

// WriteCSV writes a header row and rows as CSV (RFC 4180), every cell
// cleaned (names.Clean). It cleans rows in place.
func WriteCSV(w io.Writer, header []string, rows [][]string) error {
	for _, r := range rows {
		for i, c := range r {
			r[i] = names.Clean(c)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	if err := cw.WriteAll(rows); err != nil {
		return err
	}
	return cw.Error()
}

// WriteJSON writes v as JSON indented by two spaces, with a trailing newline.
func WriteJSON(w io.Writer, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("json output: %w", err)
	}
	_, err = w.Write(append(data, '\n'))
	return err
}
