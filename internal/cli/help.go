package cli

import (
	"io/fs"
	"strings"
)

// Help reads the long description and the examples of each command from
// text files, DIR/NAME.txt (NAME: the command's words after the program's
// name, joined by _; the program's name for the root): the description, a
// line "-- example --", then the examples. --help and a command reference
// show them as they are, without the file's final newline.
type Help struct {
	FS  fs.FS
	Dir string
}

// helpExampleMark separates a help file's description from its examples.
const helpExampleMark = "\n-- example --\n"

// Long is the long description of command name ("map check").
func (h Help) Long(name string) string {
	long, _ := h.Text(name)
	return long
}

// Example is the examples of command name.
func (h Help) Example(name string) string {
	_, example := h.Text(name)
	return example
}

// File is the help file of command name.
func (h Help) File(name string) string {
	return h.Dir + "/" + strings.ReplaceAll(name, " ", "_") + ".txt"
}

// Text reads the help file of command name. The files are part of the
// binary, so a missing file or mark is a bug every test that builds the
// commands meets: it panics.
func (h Help) Text(name string) (long, example string) {
	file := h.File(name)
	b, err := fs.ReadFile(h.FS, file)
	if err != nil {
		panic(err)
	}
	long, example, ok := strings.Cut(string(b), helpExampleMark)
	if !ok {
		panic(file + ": no " + strings.TrimSpace(helpExampleMark) + " line")
	}
	return long, strings.TrimSuffix(example, "\n")
}
