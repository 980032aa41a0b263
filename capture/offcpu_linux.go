//go:build linux

package capture

import (
	"bufio"
	"cmp"
	"io"
	"slices"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/capture/symtab"
	"github.com/flamediff/flamediff/fold"
)

// foldOffCPU symbolises and folds the off-CPU counts as the on-CPU ones
// are (perf script text through fold.ParsePerfScript, so frames have the
// same names), once weighted by nanoseconds and once by switches, each
// kind of switch apart with its leaf frame; the time profile is then
// counted in microseconds (rounded per stack).
func foldOffCPU(counts []bpf.OffCPUCount, syms *symtab.Process, kern *symtab.Kernel, kernel bool) (*OffCPU, error) {
	var time, switches []*fold.Profile
	for _, voluntary := range []bool{true, false} {
		leaf := fold.OffCPUInvoluntary
		if voluntary {
			leaf = fold.OffCPUVoluntary
		}
		for _, w := range []struct {
			out    *[]*fold.Profile
			weight func(bpf.OffCPUCount) uint64
		}{
			{&time, func(c bpf.OffCPUCount) uint64 { return c.Nanoseconds }},
			{&switches, func(c bpf.OffCPUCount) uint64 { return c.Switches }},
		} {
			var cs []bpf.Count
			for _, c := range counts {
				if c.Voluntary == voluntary && w.weight(c) > 0 {
					cs = append(cs, bpf.Count{PID: c.PID, TID: c.TID, Comm: c.Comm, User: c.User, Kernel: c.Kernel, Samples: w.weight(c)})
				}
			}
			p, err := foldCounts(cs, syms, kern, kernel)
			if err != nil {
				return nil, err
			}
			for i := range p.Stacks {
				p.Stacks[i].Frames = append(p.Stacks[i].Frames, leaf)
			}
			p.Unit, p.Event, p.Samples = fold.UnitSamples, "", 0
			*w.out = append(*w.out, p)
		}
	}
	out := &OffCPU{}
	var err error
	if out.Time, err = time[0].Merge(time[1]); err != nil {
		return nil, err
	}
	// Microseconds; a stack of less than half a microsecond in all is
	// left out (its switches are in Switches).
	out.Time = out.Time.Filter(func(s fold.Stack) bool { return s.Value >= 500 })
	for i := range out.Time.Stacks {
		out.Time.Stacks[i].Value = (out.Time.Stacks[i].Value + 500) / 1000
	}
	if out.Switches, err = switches[0].Merge(switches[1]); err != nil {
		return nil, err
	}
	out.Totals = offCPUTotals(counts)
	return out, nil
}

// foldCounts folds counts as Stop folds the on-CPU ones.
func foldCounts(counts []bpf.Count, syms *symtab.Process, kern *symtab.Kernel, kernel bool) (*fold.Profile, error) {
	pr, pw := io.Pipe()
	go func() {
		bw := bufio.NewWriterSize(pw, 256<<10)
		err := renderPerfScript(bw, counts, syms, kern, kernel)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
	}()
	p, err := fold.ParsePerfScript(pr, fold.PerfOptions{Kernel: kernel, NoKernel: !kernel}, false)
	_ = pr.Close()
	return p, err
}

// offCPUTotals sums the counts over the window and by thread name.
func offCPUTotals(counts []bpf.OffCPUCount) fold.OffCPU {
	var t fold.OffCPU
	byName := map[string]*fold.OffCPUThread{}
	tids := map[string]map[uint32]bool{}
	var vns, ins uint64
	for _, c := range counts {
		name := c.Comm
		if name == "" {
			name = "[unknown]"
		}
		th := byName[name]
		if th == nil {
			th = &fold.OffCPUThread{Name: name}
			byName[name] = th
			tids[name] = map[uint32]bool{}
		}
		tids[name][c.TID] = true
		th.Seconds += float64(c.Nanoseconds) / 1e9
		if c.Voluntary {
			vns += c.Nanoseconds
			t.Voluntary += int64(c.Switches)
			th.Voluntary += int64(c.Switches)
		} else {
			ins += c.Nanoseconds
			t.Involuntary += int64(c.Switches)
			th.Involuntary += int64(c.Switches)
		}
	}
	t.VoluntarySeconds, t.InvoluntarySeconds = float64(vns)/1e9, float64(ins)/1e9
	t.Seconds = float64(vns+ins) / 1e9
	for name, th := range byName {
		th.Threads = len(tids[name])
		t.Threads = append(t.Threads, *th)
	}
	slices.SortFunc(t.Threads, func(a, b fold.OffCPUThread) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Name, b.Name))
	})
	return t
}
