package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/atomicfile"
	"github.com/flamediff/flamediff/rundir"
)

// checkOutput checks an -o (or --apply) path before any input is read: it
// fails at once, naming the path, when the file cannot be written, and when
// it is one of the inputs (a profile file, a run directory's files, the
// symbol map). "" and "-" mean standard output and return nil.
func checkOutput(flag, path string, inputs ...string) (*atomicfile.Output, error) {
	if path == "" || path == "-" {
		return nil, nil
	}
	o, err := atomicfile.Check(path)
	if err != nil {
		return nil, fmt.Errorf("%s %w", flag, err)
	}
	for _, in := range inputs {
		for _, f := range inputFiles(in) {
			if err := o.SameAs(f); err != nil {
				return nil, fmt.Errorf("%s %w", flag, err)
			}
		}
	}
	return o, nil
}

// inputFiles are the files an input argument reads: the file itself, or a
// run directory's stacks.folded and run.json.
func inputFiles(path string) []string {
	if path == "" || path == "-" {
		return nil
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return []string{filepath.Join(path, fold.StacksFile), filepath.Join(path, fold.MetaFile)}
	}
	return []string{path}
}

// writeOutput writes data to standard output when o is nil, else to the
// checked output: /dev/stdout and /dev/stderr go to the command's streams,
// devices, FIFOs and descriptors are written through, regular files are
// replaced atomically (README, "Outputs").
func writeOutput(s *streams, o *atomicfile.Output, data []byte) error {
	if o == nil {
		_, err := s.Out.Write(data)
		return err
	}
	if o.Kind == atomicfile.FD {
		switch o.Descriptor {
		case 1:
			return o.Write(s.Out, data)
		case 2:
			return o.Write(s.ErrOut, data)
		}
	}
	return o.Write(nil, data)
}

// writeFileAtomic writes one of the files flamediff makes in its own output
// directories (rundir.WriteFile).
func writeFileAtomic(path string, data []byte) error {
	return rundir.WriteFile(path, data)
}
