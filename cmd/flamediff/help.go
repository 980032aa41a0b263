package main

import (
	"embed"

	"github.com/flamediff/flamediff/internal/cli"
)

// The long description and the examples of each command are text files,
// help/NAME.txt (see cli.Help).
//
//go:embed help/*.txt
var helpFiles embed.FS

var help = cli.Help{FS: helpFiles, Dir: "help"}
