package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// writeOutput writes data to stdout, or atomically to path (a temporary
// file in the same directory, then a rename), so that an interrupted run
// never leaves a half-written file.
func writeOutput(s *streams, path string, data []byte) error {
	if path == "" || path == "-" {
		_, err := s.Out.Write(data)
		return err
	}
	return writeFileAtomic(path, data)
}

func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("output %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, bytes.NewReader(data)); err != nil {
		tmp.Close()
		return fmt.Errorf("output %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("output %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("output %w", err)
	}
	return nil
}
