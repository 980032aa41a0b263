package main

import (
	"embed"
	"strings"
)

// The long description and the examples of each command are text files,
// help/NAME.txt (NAME: the command's words after flamediff, joined by _;
// flamediff for the root): the description, a line "-- example --", then
// the examples. --help and the command reference (docs/commands) show them
// as they are, without the file's final newline.
//
//go:embed help/*.txt
var helpFiles embed.FS

// helpExampleMark separates a help file's description from its examples.
const helpExampleMark = "\n-- example --\n"

// helpLong is the long description of command name ("map check").
func helpLong(name string) string {
	long, _ := helpText(name)
	return long
}

// helpExample is the examples of command name.
func helpExample(name string) string {
	_, example := helpText(name)
	return example
}

// helpText reads help/NAME.txt. The files are part of the binary, so a
// missing file or mark is a bug every test that builds the commands meets:
// it panics.
func helpText(name string) (long, example string) {
	file := "help/" + strings.ReplaceAll(name, " ", "_") + ".txt"
	b, err := helpFiles.ReadFile(file)
	if err != nil {
		panic(err)
	}
	long, example, ok := strings.Cut(string(b), helpExampleMark)
	if !ok {
		panic(file + ": no " + strings.TrimSpace(helpExampleMark) + " line")
	}
	return long, strings.TrimSuffix(example, "\n")
}
