package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/internal/buildinfo"
	"github.com/flamediff/flamediff/internal/cli"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// streams are the command's standard input and outputs; tests inject buffers.
type streams = cli.Streams

func newRootCmd(s *streams) *cobra.Command {
	root := &cobra.Command{
		Use:           "flamediff",
		Short:         "Where did the CPU go between version A and version B?",
		Long:          help.Long("flamediff"),
		Example:       help.Example("flamediff"),
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.Version = buildinfo.String()
	root.SetVersionTemplate("flamediff {{.Version}}\n")
	root.SetIn(s.In)
	root.SetOut(s.Out)
	root.SetErr(s.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return fmt.Errorf("%w: %w", cli.ErrUsage, err) })
	root.AddCommand(
		newFoldCmd(s, nil),
		newReportCmd(s, nil),
		newDiffCmd(s, nil),
		newMapCmd(s),
		newRecordCmd(s, nil),
		newSVGCmd(s, nil), newHTMLCmd(s, nil),
		newBenchCmd(s, nil),
		newVersionCmd(s),
		newDocsCmd(s),
	)
	return root
}

// run is main without os.Exit, for tests and testscript.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := &streams{In: stdin, Out: stdout, ErrOut: stderr}
	root := newRootCmd(s)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "flamediff: %v\n", err)
	if errors.Is(err, cli.ErrUsage) || strings.HasPrefix(err.Error(), "unknown command ") {
		if cmd == nil || cmd == root || !cmd.Runnable() {
			fmt.Fprintln(stderr, "run 'flamediff --help' for usage")
		} else {
			fmt.Fprintf(stderr, "run '%s --help' for usage\n", cmd.CommandPath())
		}
		return exitUsage
	}
	return exitError
}
