package input

import (
	"bytes"
	"fmt"
	"os"

	"github.com/flamediff/flamediff/internal/fserr"
	"github.com/flamediff/flamediff/symbolmap"
)

// ReadMap reads the symbol map file at path and returns the map, the
// file's text (for a caller that rewrites the map) and the diagnostics of
// symbolmap.Parse, which the caller prints; diagnostics are returned even
// with an error. Without a path ("") it returns the default map
// (normalisation and thread roots only) and no text.
func ReadMap(path string) (*symbolmap.Map, []byte, []symbolmap.Diagnostic, error) {
	if path == "" {
		return symbolmap.Default(), nil, nil, nil
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("symbol map %w", fserr.Describe(path, err, "map file"))
	}
	m, diags, err := symbolmap.Parse(bytes.NewReader(src), path)
	if err != nil {
		return nil, nil, diags, err
	}
	return m, src, diags, nil
}
