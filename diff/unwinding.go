package diff

import (
	"fmt"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// CompleteEnough is the share of samples (0 to 1) whose stacks must reach a
// thread root for a recorded run to pass without a warning.
const CompleteEnough = 0.99

// Unwinding is what a run recorded about its stacks (run.json
// stack_completeness and unwind): the share of samples whose stack reaches
// a thread root, how the stacks were walked, and the object where most
// walks stopped.
type Unwinding struct {
	// Complete is the share (0 to 1) of the samples whose stack reaches a
	// thread root, as record measured it with the default thread roots.
	Complete float64
	// Sampler is run.json's sampler ("perf", "bpf", or ""); Method how the
	// stacks were walked ("fp", "cfi+fp", "dwarf"; "" when not recorded).
	Sampler, Method string
	// Object is the object where most walks stopped (the most frames
	// unwound by no method, else the first with a note); "" when the run
	// names none. Stopped is the number of walks that stopped there and
	// Note why frames were lost in it ("no .eh_frame"), when recorded.
	Object  string
	Stopped int64
	Note    string
	// UnnamedRoot is the share (0 to 1) of all samples whose stack ends
	// at an unresolved frame of UnnamedObject ("libc.so.6"), as the
	// profile's stacks show it (Completeness.UnnamedRoot): stacks that may
	// be whole, their root unnamed for want of symbols. 0 when unknown.
	UnnamedRoot   float64
	UnnamedObject string
}

// RecordedUnwinding returns what m recorded about its stacks, or nil when
// it has no stack_completeness (older runs, plain files).
func RecordedUnwinding(m *fold.Meta) *Unwinding {
	if m == nil || m.StackCompleteness == nil {
		return nil
	}
	u := &Unwinding{Complete: *m.StackCompleteness, Sampler: m.Sampler, Method: m.CallGraph}
	if m.Unwind == nil {
		return u
	}
	if m.Unwind.Method != "" {
		u.Method = m.Unwind.Method
	}
	var worst *fold.UnwindObject
	for i := range m.Unwind.Objects {
		o := &m.Unwind.Objects[i]
		switch {
		case o.None == 0 && o.Note == "":
		case worst == nil,
			o.None > worst.None,
			o.None == worst.None && o.Note != "" && worst.Note == "":
			worst = o
		}
	}
	if worst != nil {
		u.Object, u.Stopped, u.Note = worst.Object, worst.None, worst.Note
	}
	return u
}

// Warning returns the sentence a report prints when fewer than
// CompleteEnough of the samples' stacks reach a thread root, or "" when
// enough do: the share, how stacks were unwound, what it costs the callers'
// inclusive shares, and the reason the run recorded (the object where most
// walks stopped, with its note). hint, when not "", is added to the reason:
// a command's advice, such as the flag that unwinds further (the library
// names no flag itself).
//
// "stacks reach a thread root in 62.10% of samples (unwinding: fp):
// callers' inclusive shares are understated by up to 37.90 percentage
// points; libc.so.6: 812 walks stopped there (no frame pointers)"
func (u *Unwinding) Warning(hint string) string {
	if u == nil || u.Complete >= CompleteEnough {
		return ""
	}
	var b strings.Builder
	if u.UnnamedRoot > 0 && 2*u.UnnamedRoot >= 1-u.Complete {
		fmt.Fprintf(&b, "stacks reach a named thread root in %.2f%% of samples", 100*u.Complete)
		if u.Method != "" {
			fmt.Fprintf(&b, " (unwinding: %s)", u.Method)
		}
		fmt.Fprintf(&b, "; %.2f%% end at an unnamed frame of %s: %s", 100*u.UnnamedRoot, u.UnnamedObject, unnamedAdvice(u.UnnamedObject))
		if hint != "" {
			b.WriteString("; " + hint)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "stacks reach a thread root in %.2f%% of samples", 100*u.Complete)
	if u.Method != "" {
		fmt.Fprintf(&b, " (unwinding: %s)", u.Method)
	}
	fmt.Fprintf(&b, ": callers' inclusive shares are understated by up to %.2f percentage points", 100*(1-u.Complete))
	var why []string
	if u.Note != "" {
		why = append(why, u.Note)
	}
	if hint != "" {
		why = append(why, hint)
	}
	switch {
	case u.Object != "":
		b.WriteString("; " + u.Object + ":")
		if u.Stopped > 0 {
			fmt.Fprintf(&b, " %d walks stopped there", u.Stopped)
			if len(why) > 0 {
				b.WriteString(" (" + strings.Join(why, "; ") + ")")
			}
		} else {
			b.WriteString(" " + strings.Join(why, "; "))
		}
	case len(why) > 0:
		b.WriteString("; " + strings.Join(why, "; "))
	}
	return b.String()
}

// Hints are what a command adds to the warnings it prints: advice that
// names its own flags, which the library does not know. A nil function
// adds nothing.
type Hints struct {
	// Unwinding returns the advice for a recorded run whose stacks too
	// often stop before a thread root ("" for none).
	Unwinding func(*Unwinding) string
}

func (h Hints) unwinding(u *Unwinding) string {
	if h.Unwinding == nil || u == nil {
		return ""
	}
	return h.Unwinding(u)
}

// unnamedAdvice is what a warning says of stacks that end at an unnamed
// frame of obj.
func unnamedAdvice(obj string) string {
	return "the stacks may be whole, with a thread root (clone3, start_thread) that " + obj +
		" names only in its debug symbols (the -dbg package of that very build)"
}
