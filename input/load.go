package input

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/fserr"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/rundir"
)

// Stdin is the argument that means the caller's standard input.
const Stdin = "-"

// LoadFunc reads one profile argument with the given parse options.
// (*Loader).Load is the one flamediff uses; tests give their own.
type LoadFunc func(arg string, opts fold.ParseOptions) (*fold.Profile, error)

// Loader reads profile arguments from files, run directories and, for
// "-", Stdin.
type Loader struct {
	// Stdin is read for the argument "-"; nil: "-" is an error.
	Stdin io.Reader
	// Warn, when not nil, is called when an input had lines that could
	// not be parsed and were skipped (without fold.ParseOptions.Strict),
	// as soon as that input is read.
	Warn func(Skipped)
	// OffCPU, when not "", reads off-CPU profiles: OffCPUTime or
	// OffCPUSwitches. A run directory is then read for its offcpu.folded
	// or offcpu-switches.folded instead of stacks.folded, and a file or
	// stdin is taken for one (a file named offcpu*.folded is one
	// whatever OffCPU says: OffCPUFileUnit).
	OffCPU string
}

// Skipped says that an input had lines that could not be parsed, which
// were left out.
type Skipped struct {
	// Name is the input as messages name it: "stdin", the file, or a run
	// directory's stacks.folded.
	Name string
	// Lines is how many lines were skipped; First describes the first.
	Lines int
	First string
}

// String reads "NAME: skipped 3 lines that could not be parsed (first: ...)".
func (s Skipped) String() string {
	return fmt.Sprintf("%s: skipped %s that could not be parsed (first: %s)", s.Name, names.Plural(s.Lines, "line"), s.First)
}

// Load reads a profile argument: "-" is read from l.Stdin and named
// "stdin" in messages; a directory is a run directory (stacks.folded plus
// run.json, rundir.Read); anything else is a profile file in any format
// fold reads (rundir.ParseFile). Profiles of files and stdin get their
// clock period inferred (fold.Profile.InferClockPeriod), unless they are
// off-CPU profiles: with l.OffCPU (a run directory's off-CPU file, see
// rundir.ReadOffCPU, whose error for a run recorded without one names the
// directory and wraps fs.ErrNotExist), or a file named offcpu*.folded
// (OffCPUFileUnit), which is read as folded text. An input without
// samples is an error wrapping rundir.ErrNoSamples; a path that cannot be
// read is an error that says so in words ("profile PATH: no such file or
// directory").
func (l *Loader) Load(arg string, opts fold.ParseOptions) (*fold.Profile, error) {
	if l.OffCPU != "" && !slices.Contains(OffCPUKinds, l.OffCPU) {
		return nil, fmt.Errorf("off-CPU profile %q: want %s or %s", l.OffCPU, OffCPUTime, OffCPUSwitches)
	}
	if arg == Stdin {
		if l.Stdin == nil {
			return nil, errors.New("stdin: no standard input to read")
		}
		p, err := rundir.Parse("stdin", l.Stdin, opts)
		if err != nil {
			return nil, err
		}
		if err := l.offCPUFile("stdin", "", p); err != nil {
			return nil, err
		}
		p.InferClockPeriod()
		l.warn("stdin", p)
		return p, nil
	}
	st, err := os.Stat(arg)
	if err != nil {
		return nil, fmt.Errorf("profile %w", fserr.Describe(arg, err, "file or directory"))
	}
	if !st.IsDir() {
		if OffCPUFileUnit(arg) != "" {
			opts.Format = fold.FormatFolded
		}
		p, err := rundir.ParseFile(arg, opts)
		if err != nil {
			return nil, err
		}
		if err := l.offCPUFile(arg, arg, p); err != nil {
			return nil, err
		}
		p.InferClockPeriod()
		l.warn(arg, p)
		return p, nil
	}
	if l.OffCPU != "" {
		return l.loadOffCPU(arg)
	}
	p, err := rundir.Read(arg, opts.Strict)
	if err != nil {
		return nil, err
	}
	l.warn(filepath.Join(arg, rundir.StacksFile), p)
	return p, nil
}

func (l *Loader) warn(name string, p *fold.Profile) {
	if p.Skipped > 0 && l.Warn != nil {
		l.Warn(Skipped{Name: name, Lines: p.Skipped, First: p.SkippedFirst})
	}
}

// Read loads the profile arguments in order, each once, as read: no map
// applied, names as in the input. ctx is checked before each; the first
// error stops it. Profiles that measure different quantities (CPU beside
// off-CPU time, say) are a *MixedError (SameQuantity).
func Read(ctx context.Context, load LoadFunc, args []string, opts fold.ParseOptions) ([]*fold.Profile, error) {
	ps := make([]*fold.Profile, len(args))
	for i, arg := range args {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p, err := load(arg, opts)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	if err := SameQuantity(args, ps); err != nil {
		return nil, err
	}
	return ps, nil
}

// Label names a profile in tables and graphs: its metadata label, else the
// argument's file name ("stdin" for "-").
func Label(p *fold.Profile, arg string) string {
	if l := p.Label(); l != "" {
		return l
	}
	if arg == Stdin {
		return "stdin"
	}
	return filepath.Base(arg)
}

// Merge loads the arguments in order and merges them into one profile
// (fold.Profile.Merge); each, when not nil, is called with every profile
// as it is read. ctx is checked before each argument.
func Merge(ctx context.Context, load LoadFunc, args []string, opts fold.ParseOptions, each func(arg string, p *fold.Profile)) (*fold.Profile, error) {
	var p *fold.Profile
	for _, arg := range args {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("interrupted before %s: %w", arg, err)
		}
		q, err := load(arg, opts)
		if err != nil {
			return nil, err
		}
		if each != nil {
			each(arg, q)
		}
		if p == nil {
			p = q
		} else if p, err = p.Merge(q); err != nil {
			return nil, fmt.Errorf("merging %s: %w", arg, err)
		}
	}
	return p, nil
}
