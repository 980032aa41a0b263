package main

import (
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flamediff/flamediff/internal/names"
)

// Flags that take one of a fixed set of values, and flags that exclude each
// other, are declared here once: every command words their errors alike and
// completes their values.

// enumAnnotation holds the values an enum flag accepts.
const enumAnnotation = "flamediff_enum"

// enumFlag adds a string flag that takes one of values (def among them),
// completed by the shell. cmd checks the value before it runs (checkEnums
// as its PreRunE, which no command sets otherwise).
func enumFlag(cmd *cobra.Command, p *string, name, def, usage string, values ...string) {
	cmd.Flags().StringVar(p, name, def, usage)
	_ = cmd.Flags().SetAnnotation(name, enumAnnotation, values)
	_ = cmd.RegisterFlagCompletionFunc(name, fixedCompletion(values...))
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return checkEnums(cmd) }
}

// checkEnums checks every enum flag of cmd: `--format "xml": want table,
// json, csv or markdown`.
func checkEnums(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		values, ok := f.Annotations[enumAnnotation]
		if !ok || err != nil {
			return
		}
		if v := f.Value.String(); !slices.Contains(values, v) {
			err = enumError(f.Name, v, values)
		}
	})
	return err
}

// enumError is the usage error of a flag given a value it does not take.
func enumError(name, value string, values []string) error {
	return usageError("--%s %q: want %s", name, value, orList(values))
}

// exclusive fails when more than one of the named flags is set: "give one
// of --pid, --pidfile and --process".
func exclusive(cmd *cobra.Command, names ...string) error {
	n := 0
	for _, name := range names {
		if cmd.Flags().Changed(name) {
			n++
		}
	}
	if n <= 1 {
		return nil
	}
	flags := make([]string, len(names))
	for i, name := range names {
		flags[i] = "--" + name
	}
	return usageError("give one of %s", andList(flags))
}

// argCount checks a command's number of arguments: min to max (max < 0:
// no limit), else the usage error "WANT, got N arguments".
func argCount(min, max int, want string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if n := len(args); n < min || max >= 0 && n > max {
			return usageError("%s, got %s", want, names.Plural(n, "argument"))
		}
		return nil
	}
}

// checkNewDir checks an output directory a command creates: absent or
// empty, so that no earlier run or report (what) is overwritten.
func checkNewDir(flag, dir, what string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	if !st.IsDir() {
		return usageError("%s %s exists and is not a directory", flag, dir)
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		return usageError("%s %s is not empty: choose a new directory so that no earlier %s is overwritten", flag, dir, what)
	}
	return nil
}

// orList is "a, b or c".
func orList(s []string) string { return joinLast(s, " or ") }

// andList is "a, b and c".
func andList(s []string) string { return joinLast(s, " and ") }

func joinLast(s []string, last string) string {
	if len(s) <= 1 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + last + s[len(s)-1]
}
