//go:build linux

package capture

import (
	"bufio"
	"cmp"
	"context"
	"io"
	"slices"
	"time"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/capture/symtab"
	"github.com/flamediff/flamediff/capture/unwind"
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
	out.ByTID = map[int]ThreadSwitches{}
	for _, c := range counts {
		s := out.ByTID[int(c.TID)]
		if c.Voluntary {
			s.Voluntary += int64(c.Switches)
		} else {
			s.Involuntary += int64(c.Switches)
		}
		out.ByTID[int(c.TID)] = s
	}
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

// cfiPoll and cfiPollMax bound how often answerCFI gives the off-CPU walk
// the rules it asked for: every cfiPoll while it asks (a walk through glibc
// learns one more frame per round trip, and walks before that fall back to
// frame pointers), backing off to cfiPollMax while it asks for nothing.
const (
	cfiPoll    = 5 * time.Millisecond
	cfiPollMax = 200 * time.Millisecond
)

// answerCFI answers the off-CPU program's requests for CFI rules
// (bpf.Options.OffCPUCFI) from the objects' unwind tables until the run
// stops.
func (r *bpfRun) answerCFI(ctx context.Context) {
	wait := cfiPoll
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.stopped:
			return
		case <-timer.C:
		}
		pcs, err := r.prof.CFIWanted()
		if err == nil && len(pcs) > 0 {
			if err := r.prof.SetCFIRules(r.copies.cfiRules(pcs)); err != nil {
				return
			}
			wait = cfiPoll
		} else {
			wait = min(2*wait, cfiPollMax)
		}
		timer.Reset(wait)
	}
}

// cfiRules returns the off-CPU walk's rules for pcs (runtime addresses: a
// leaf's ip or a return address minus one), from the CFI of the objects
// mapped there; a pc without an object, a table or an FDE, or whose row the
// walk cannot follow, gets bpf.CFAUnsupported (its walk ends there).
func (c *copyUnwinder) cfiRules(pcs []uint64) map[uint64]bpf.CFIRule {
	rules := make(map[uint64]bpf.CFIRule, len(pcs))
	refreshed := false
	for _, pc := range pcs {
		mp, ok := c.syms.Mapped(pc)
		if !ok && !refreshed {
			refreshed = true
			_ = c.syms.Refresh()
			mp, ok = c.syms.Mapped(pc)
		}
		rule := bpf.CFIRule{CFA: bpf.CFAUnsupported}
		if ok {
			if o := c.object(mp); o.table != nil {
				if row, err := o.table.RowAt(pc - mp.Bias); err == nil {
					rule = cfiRule(row)
				}
			}
		}
		rules[pc] = rule
	}
	return rules
}

// cfiRule reduces a CFI row to the off-CPU walk's rule: a CFA of rsp or
// rbp plus an offset, the return address saved at CFA-8 (or none: the
// thread's root), rbp saved at an offset from the CFA or unchanged.
// Anything else (expressions, signal frames, registers the walk does not
// keep) is bpf.CFAUnsupported.
func cfiRule(row unwind.Row) bpf.CFIRule {
	bad := bpf.CFIRule{CFA: bpf.CFAUnsupported}
	if row.Signal || row.CFA.Kind != unwind.RegOffset || row.CFA.Offset != int64(int32(row.CFA.Offset)) {
		return bad
	}
	var r bpf.CFIRule
	switch row.CFA.Reg {
	case unwind.RegSP:
		r.CFA = bpf.CFASP
	case unwind.RegBP:
		r.CFA = bpf.CFABP
	default:
		return bad
	}
	r.CFAOffset = int32(row.CFA.Offset)
	switch {
	case row.RA.Kind == unwind.Undefined:
		return bpf.CFIRule{CFA: bpf.CFARoot}
	case row.RA.Kind != unwind.Offset || row.RA.Offset != -8:
		return bad
	}
	switch row.BP.Kind {
	case unwind.Undefined, unwind.SameValue:
	case unwind.Offset:
		if row.BP.Offset != int64(int32(row.BP.Offset)) {
			return bad
		}
		r.BPSaved, r.BPOffset = true, int32(row.BP.Offset)
	default:
		return bad
	}
	return r
}
