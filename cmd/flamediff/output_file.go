package main

import (
	"fmt"

	"github.com/flamediff/flamediff/internal/atomicfile"
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

// writeFileAtomic writes data to path atomically (0600, as it always has).
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o600); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}
