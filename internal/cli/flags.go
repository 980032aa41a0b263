package cli

import (
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flamediff/flamediff/internal/names"
)

// Flags that take one of a fixed set of values, and flags that exclude each
// other, are declared here once: every command words their errors alike and
// completes their values.

// enumAnnotation holds the values an enum flag accepts.
const enumAnnotation = "flamediff_enum"

// EnumFlag adds a string flag that takes one of values (def among them),
// completed by the shell. cmd checks the value before it runs (CheckEnums
// as its PreRunE, which no command sets otherwise).
func EnumFlag(cmd *cobra.Command, p *string, name, def, usage string, values ...string) {
	cmd.Flags().StringVar(p, name, def, usage)
	_ = cmd.Flags().SetAnnotation(name, enumAnnotation, values)
	_ = cmd.RegisterFlagCompletionFunc(name, FixedCompletion(values...))
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error { return CheckEnums(cmd) }
}

// CheckEnums checks every enum flag of cmd: `--format "xml": want table,
// json, csv or markdown`.
func CheckEnums(cmd *cobra.Command) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		values, ok := f.Annotations[enumAnnotation]
		if !ok || err != nil {
			return
		}
		if v := f.Value.String(); !slices.Contains(values, v) {
			err = UsageError("--%s %q: want %s", f.Name, v, OrList(values))
		}
	})
	return err
}

// FixedCompletion completes a flag with a fixed list of values.
func FixedCompletion(values ...string) func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// Exclusive fails when more than one of the named flags is set: "give one
// of --pid, --pidfile and --process".
func Exclusive(cmd *cobra.Command, names ...string) error {
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
	return UsageError("give one of %s", AndList(flags))
}

// ArgCount checks a command's number of arguments: min to max (max < 0:
// no limit), else the usage error "WANT, got N arguments".
func ArgCount(min, max int, want string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if n := len(args); n < min || max >= 0 && n > max {
			return UsageError("%s, got %s", want, names.Plural(n, "argument"))
		}
		return nil
	}
}
