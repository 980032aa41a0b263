package symbolmap

import (
	"fmt"
	"os"

	"github.com/flamediff/flamediff/internal/fserr"
)

// Load reads the map file at path; it is Parse with path as the name. A
// path that cannot be read gives an error naming it and saying why in
// words: "symbol map PATH: no such file" (wrapping fs.ErrNotExist), "...:
// is a directory, not a map file", "...: permission denied" (wrapping
// fs.ErrPermission).
func Load(path string) (*Map, []Diagnostic, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("symbol map %w", describePath(path, err))
	}
	return parse(data, path)
}

// describePath returns err, from reading the map file path, in words
// naming path (fserr.Describe).
func describePath(path string, err error) error {
	return fserr.Describe(path, err, "map file")
}
