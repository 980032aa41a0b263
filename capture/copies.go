package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/capture/symtab"
	"github.com/flamediff/flamediff/capture/unwind"
	"github.com/flamediff/flamediff/fold"
)

// Stack copy settings of Options.StackCopy.
const (
	StackCopyNever  = "never"
	StackCopyAuto   = "auto"
	StackCopyAlways = "always"
	// DefaultStackCopy is the BPF sampler's stack copy setting when
	// Options.StackCopy is "".
	DefaultStackCopy = StackCopyAlways
)

// StackCopies are the values Options.StackCopy accepts.
var StackCopies = []string{StackCopyNever, StackCopyAuto, StackCopyAlways}

// ThreadRootSymbols are the functions the BPF sampler takes for thread
// roots when it decides which samples to copy (Options.StackCopy auto): a
// frame-pointer walk that ends in one of them reached its thread's root.
// They are the user-space names of symbolmap.DefaultThreadRoots, kept here
// as data because capture does not import symbolmap.
var ThreadRootSymbols = []string{
	"start_thread", "clone", "clone3", "__clone", "__clone3", "__clone_internal",
	"_start", "__libc_start_main", "__libc_start_call_main", "__libc_start_main_impl",
	"thread_start",
}

// noFPShare: an object is "without frame pointers" when fewer than this
// share of its sampled FDEs keep the CFA on rbp (glibc: 2%, mariadbd: 70%).
const noFPShare = 0.5

// fpSampleFDEs bounds the FDEs looked at to classify an object.
const fpSampleFDEs = 512

// cfiObject is the CFI of one mapped file, loaded once.
type cfiObject struct {
	table   *unwind.Table // nil: none (note says why)
	note    string
	fpShare float64 // share of sampled FDEs whose CFA is rbp-based mid-function
}

// copyUnwinder unwinds the stack copies of the BPF sampler with the CFI of
// the mapped objects and aggregates the walks as bpf.Counts, so that they
// fold with the kernel's counts. add runs in one goroutine at a time.
type copyUnwinder struct {
	syms *symtab.Process
	u    unwind.Unwinder

	mu      sync.Mutex
	objects map[string]*cfiObject // by symtab.Mapped.Key

	frames []unwind.Frame
	user   []uint64
	key    []byte
	counts map[string]*bpf.Count
	order  []string
	ends   map[unwind.End]int64
	tally  map[string]*fold.UnwindObject
	notes  map[string]string // by dso
	// stops counts, by dso, the walks that ended in it before a root and
	// were not spliced, by how they ended.
	stops   map[string]map[unwind.End]int64
	copied  int64
	spliced int64
	// refreshed is when lookup last re-read the maps.
	refreshed time.Time
}

// missRefresh is how often, at most, a pc in no known mapping makes the
// unwinder re-read the target's maps.
const missRefresh = 100 * time.Millisecond

func newCopyUnwinder(syms *symtab.Process) *copyUnwinder {
	c := &copyUnwinder{
		syms:    syms,
		objects: make(map[string]*cfiObject),
		counts:  make(map[string]*bpf.Count),
		ends:    make(map[unwind.End]int64),
		tally:   make(map[string]*fold.UnwindObject),
		notes:   make(map[string]string),
		stops:   make(map[string]map[unwind.End]int64),
	}
	c.u.Lookup = c.lookup
	return c
}

// preload reads the symbols and the CFI of the objects the process maps
// executable now, before sampling starts (symtab.Process.Preload).
func (c *copyUnwinder) preload() {
	c.syms.Preload()
	for _, m := range c.syms.Mappings() {
		if !m.Exec() {
			continue
		}
		if mp, ok := c.syms.Mapped(m.Start); ok {
			c.object(mp)
		}
	}
}

// lookup is the Unwinder's Lookup: the object at a runtime pc.
func (c *copyUnwinder) lookup(pc uint64) (unwind.Object, bool) {
	mp, ok := c.syms.Mapped(pc)
	if !ok && time.Since(c.refreshed) >= missRefresh {
		// A library mapped since the maps were read, or a new program
		// after an exec: read them again, not too often.
		c.refreshed = time.Now()
		_ = c.syms.Refresh()
		mp, ok = c.syms.Mapped(pc)
	}
	if !ok {
		return unwind.Object{}, false
	}
	o := c.object(mp)
	return unwind.Object{Table: o.table, Bias: mp.Bias, Name: mp.DSO}, true
}

// object returns the CFI of mp's file, reading it on first use: its
// .eh_frame, else the .debug_frame of its separate debug file.
func (c *copyUnwinder) object(mp symtab.Mapped) *cfiObject {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.objects[mp.Key]; ok {
		return o
	}
	o := &cfiObject{}
	c.objects[mp.Key] = o
	t, err := c.readTable(mp)
	switch {
	case err == nil:
		o.table = t
		o.fpShare = fpShare(t)
	case errors.Is(err, unwind.ErrNoCFI):
		o.note = "no .eh_frame (nor .debug_frame in a debug file): frames by frame pointer"
	default:
		o.note = fmt.Sprintf("unwind table unreadable (%v): frames by frame pointer", err)
	}
	if o.table != nil && o.table.Section() == ".debug_frame" {
		o.note = "no .eh_frame: .debug_frame of its debug file"
	}
	if o.note != "" {
		c.notes[mp.DSO] = o.note
	}
	return o
}

func (c *copyUnwinder) readTable(mp symtab.Mapped) (*unwind.Table, error) {
	r, err := c.syms.Open(mp)
	if err != nil {
		return nil, err
	}
	if cl, ok := r.(io.Closer); ok {
		defer func() { _ = cl.Close() }()
	}
	t, err := unwind.FromELF(r)
	if errors.Is(err, unwind.ErrNoCFI) {
		if dbg := c.syms.DebugFile(mp.BuildID); dbg != "" {
			if t, derr := unwind.FromFile(dbg); derr == nil {
				return t, nil
			}
		}
	}
	return t, err
}

// fpShare is the share of (at most fpSampleFDEs, evenly spread) FDEs of t
// whose CFA is rbp-based in the middle of the function: functions that
// keep a frame pointer.
func fpShare(t *unwind.Table) float64 {
	n := t.Len()
	if n == 0 {
		return 0
	}
	step := max(1, n/fpSampleFDEs)
	var seen, fp int
	for i := 0; i < n; i += step {
		begin, end := t.FDE(i)
		row, err := t.RowAt(begin + (end-begin)/2)
		if err != nil {
			continue
		}
		seen++
		if row.CFA.Kind == unwind.RegOffset && row.CFA.Reg == unwind.RegBP {
			fp++
		}
	}
	if seen == 0 {
		return 0
	}
	return float64(fp) / float64(seen)
}

// ranges returns, from the current executable mappings, the ranges of
// objects whose CFI says they mostly keep no frame pointer, and the ranges
// of the thread root functions, each at most bpf.MaxRanges (the largest
// mappings first), and notes on what did not fit.
func (c *copyUnwinder) ranges(roots []string) (noFP, root []bpf.Range, notes []string) {
	var maps []symtab.Mapping
	for _, m := range c.syms.Mappings() {
		if m.Exec() && m.Path != "" && (m.Inode != 0 || m.Path == "[vdso]") {
			maps = append(maps, m)
		}
	}
	sort.SliceStable(maps, func(i, j int) bool { return maps[i].End-maps[i].Start > maps[j].End-maps[j].Start })
	var dropped []string
	for _, m := range maps {
		mp, ok := c.syms.Mapped(m.Start)
		if !ok {
			continue
		}
		if o := c.object(mp); o.table == nil || o.fpShare >= noFPShare {
			continue
		}
		if len(noFP) == bpf.MaxRanges {
			dropped = append(dropped, m.Path)
			continue
		}
		noFP = append(noFP, bpf.Range{Start: m.Start, End: m.End})
	}
	if len(dropped) > 0 {
		notes = append(notes, fmt.Sprintf("stack copies: %d objects without frame pointers beyond the first %d are not copied by leaf (%s)", len(dropped), bpf.MaxRanges, strings.Join(dropped, ", ")))
	}
	for _, s := range c.syms.FindSymbols(roots) {
		if len(root) == bpf.MaxRanges {
			notes = append(notes, fmt.Sprintf("stack copies: more than %d thread root functions: %s and later ones left out", bpf.MaxRanges, s.Name))
			break
		}
		root = append(root, bpf.Range{Start: s.Start, End: s.End})
	}
	return noFP, root, notes
}

// endKeys name the ends of walks in run.json (fold.Unwind.Ends).
var endKeys = map[unwind.End]string{
	unwind.EndRoot: "root", unwind.EndZeroPC: "zero_pc", unwind.EndWindow: "window",
	unwind.EndNoTable: "no_table", unwind.EndBadCFA: "bad_cfa", unwind.EndDepth: "depth",
}

// add unwinds one copied sample and counts its stack. The sample's slices
// are not kept.
func (c *copyUnwinder) add(s bpf.RawSample) error {
	c.copied++
	frames, end := c.u.Unwind(c.frames[:0], unwind.Regs{IP: s.Regs.IP, SP: s.Regs.SP, BP: s.Regs.BP},
		unwind.Stack{Base: s.StackBase, Bytes: s.Stack})
	c.frames = frames
	c.ends[end]++
	user := c.user[:0]
	for _, f := range frames {
		user = append(user, f.PC)
	}
	var splice []uint64
	switch {
	case len(frames) == 0:
		// No pc to start from (a zero IP): the kernel's walk is all
		// there is.
		splice = s.User
	case end != unwind.EndRoot && end != unwind.EndZeroPC:
		// The walk stopped before a root: go on with the kernel's
		// frame-pointer walk from the last frame found, if it has it.
		if j := slices.Index(s.User, frames[len(frames)-1].PC); j >= 0 && j+1 < len(s.User) {
			splice = s.User[j+1:]
		}
	}
	if len(splice) > 0 {
		user = append(user, splice...)
		c.spliced++
	}
	c.user = user
	if len(splice) == 0 && end != unwind.EndRoot && end != unwind.EndZeroPC && len(frames) > 0 {
		dso := frames[len(frames)-1].Object
		if dso == "" {
			dso = "[unknown]"
		}
		if c.stops[dso] == nil {
			c.stops[dso] = make(map[unwind.End]int64)
		}
		c.stops[dso][end]++
	}
	for i, f := range frames {
		m := f.Method
		if i == len(frames)-1 && len(splice) > 0 {
			m = unwind.MethodFP
		}
		c.count(f.Object, m)
	}
	for i, pc := range splice {
		dso := "[unknown]"
		if mp, ok := c.syms.Mapped(pc); ok {
			dso = mp.DSO
		}
		m := unwind.MethodFP
		if i == len(splice)-1 {
			m = unwind.MethodNone
		}
		c.count(dso, m)
	}
	// The key: pid, tid, comm, then the user and kernel frames.
	k := binary.LittleEndian.AppendUint32(c.key[:0], s.PID)
	k = binary.LittleEndian.AppendUint32(k, s.TID)
	k = append(k, s.Comm...)
	k = append(k, 0)
	k = binary.LittleEndian.AppendUint32(k, uint32(len(user)))
	for _, pc := range user {
		k = binary.LittleEndian.AppendUint64(k, pc)
	}
	for _, pc := range s.Kernel {
		k = binary.LittleEndian.AppendUint64(k, pc)
	}
	c.key = k
	if cnt, ok := c.counts[string(k)]; ok {
		cnt.Samples += uint64(max(s.Weight, 1))
		return nil
	}
	key := string(k)
	c.counts[key] = &bpf.Count{PID: s.PID, TID: s.TID, Comm: s.Comm, User: slices.Clone(user), Kernel: slices.Clone(s.Kernel), Samples: uint64(max(s.Weight, 1))}
	c.order = append(c.order, key)
	return nil
}

// count tallies one frame of object dso unwound by m.
func (c *copyUnwinder) count(dso string, m unwind.Method) {
	if dso == "" {
		dso = "[unknown]"
	}
	o := c.tally[dso]
	if o == nil {
		o = &fold.UnwindObject{Object: dso}
		c.tally[dso] = o
	}
	o.Frames++
	switch m {
	case unwind.MethodCFI:
		o.CFI++
	case unwind.MethodFP:
		o.FP++
	default:
		o.None++
	}
}

// result returns the aggregated stacks, in the order first seen.
func (c *copyUnwinder) result() []bpf.Count {
	out := make([]bpf.Count, 0, len(c.order))
	for _, k := range c.order {
		out = append(out, *c.counts[k])
	}
	return out
}

// summary says how the copied samples were unwound, for run.json.
func (c *copyUnwinder) summary(stackCopy string, windowBytes int) *fold.Unwind {
	u := &fold.Unwind{Method: "cfi+fp", StackCopy: stackCopy, WindowBytes: windowBytes, CopiedSamples: c.copied}
	if len(c.ends) > 0 {
		u.Ends = make(map[string]int64, len(c.ends))
		for e, n := range c.ends {
			k, ok := endKeys[e]
			if !ok {
				k = e.String()
			}
			u.Ends[k] += n
		}
	}
	for dso, o := range c.tally {
		obj := *o
		var notes []string
		if n := c.notes[dso]; n != "" {
			notes = append(notes, n)
		}
		if st := c.stops[dso]; len(st) > 0 {
			var ends []string
			for e, n := range st {
				ends = append(ends, fmt.Sprintf("%d at %s", n, e))
			}
			sort.Strings(ends)
			notes = append(notes, "walks stopped here before a thread root: "+strings.Join(ends, ", "))
		}
		obj.Note = strings.Join(notes, "; ")
		u.Objects = append(u.Objects, obj)
	}
	sort.Slice(u.Objects, func(i, j int) bool { return u.Objects[i].Object < u.Objects[j].Object })
	return u
}
