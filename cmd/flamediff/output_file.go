package main

import (
	"fmt"

	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/atomicfile"
)

// checkOutput is input.CheckOutput with the flag (-o, --apply) naming the
// path in its errors.
func checkOutput(flag, path string, inputs ...string) (*atomicfile.Output, error) {
	o, err := input.CheckOutput(path, inputs...)
	if err != nil {
		return nil, fmt.Errorf("%s %w", flag, err)
	}
	return o, nil
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
