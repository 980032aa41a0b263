package lab

import (
	"bytes"
	"fmt"
	"os"

	"github.com/flamediff/flamediff/internal/fserr"
)

// LoadConfig reads the bench config file at path (ParseConfig with path as
// the name). A path that cannot be read gives an error naming it and
// saying why in words: "bench config PATH: no such file" (wrapping
// fs.ErrNotExist), "...: is a directory, not a file", "...: permission
// denied" (wrapping fs.ErrPermission).
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("bench config %w", describePath(path, err, false))
	}
	return ParseConfig(bytes.NewReader(data), path)
}

// describePath returns err, from using path (a directory when dir), in
// words naming path (fserr.Describe).
func describePath(path string, err error, dir bool) error {
	if dir {
		return fserr.Describe(path, err, "directory")
	}
	return fserr.Describe(path, err, "file")
}
