package input

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/atomicfile"
)

// RepeatedError says that two arguments are the same input.
type RepeatedError struct {
	// First and Second are the two arguments, as given; equal when the
	// same name was given twice.
	First, Second string
}

func (e *RepeatedError) Error() string {
	switch {
	case e.Second == Stdin:
		return "standard input (-) is given twice; it can be read once"
	case e.First == e.Second:
		return fmt.Sprintf("%s is given twice; give each input once", e.Second)
	}
	return fmt.Sprintf("%s and %s are the same file; give each input once", e.First, e.Second)
}

// Distinct fails with a *RepeatedError when two arguments are the same
// input: "-" twice (standard input can be read once) or the same file or
// run directory under one name or two. Every command that reads several
// profiles follows this one rule: an input is given once (fold merges
// different files; diff compares different runs). A missing file is no
// error here: it is reported when it is read.
func Distinct(args ...string) error {
	type seen struct {
		arg string
		fi  os.FileInfo
	}
	var prev []seen
	for _, a := range args {
		var fi os.FileInfo
		if a != Stdin {
			fi, _ = os.Stat(a)
		}
		for _, p := range prev {
			if a == p.arg || (fi != nil && p.fi != nil && os.SameFile(fi, p.fi)) {
				return &RepeatedError{First: p.arg, Second: a}
			}
		}
		prev = append(prev, seen{a, fi})
	}
	return nil
}

// CheckOutput checks an output path before any input is read: it fails at
// once, naming the path, when the file cannot be written, and when it is
// one of the inputs (Files of each: a profile file, a run directory's
// files, the symbol map). "" and "-" mean standard output and return nil.
func CheckOutput(path string, inputs ...string) (*atomicfile.Output, error) {
	if path == "" || path == Stdin {
		return nil, nil
	}
	o, err := atomicfile.Check(path)
	if err != nil {
		return nil, err
	}
	for _, in := range inputs {
		for _, f := range Files(in) {
			if err := o.SameAs(f); err != nil {
				return nil, err
			}
		}
	}
	return o, nil
}

// Files are the files an input argument reads: the file itself, or a run
// directory's stacks.folded, run.json and off-CPU files (whichever a
// command reads); none for "" and "-".
func Files(arg string) []string {
	if arg == "" || arg == Stdin {
		return nil
	}
	if st, err := os.Stat(arg); err == nil && st.IsDir() {
		return []string{filepath.Join(arg, fold.StacksFile), filepath.Join(arg, fold.MetaFile),
			filepath.Join(arg, fold.OffCPUFile), filepath.Join(arg, fold.OffCPUSwitchesFile)}
	}
	return []string{arg}
}
