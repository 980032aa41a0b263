package record

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/symbolmap"
	"github.com/flamediff/flamediff/workload/procstat"
)

// threadFidelity pairs the samples of each thread name in p (the stacks'
// first frame) with the run time the threads of that name were accounted,
// and what the sampler's switch fix did to them (corrections, by name),
// most accounted first, then most sampled, then by name. Each name's
// samples and sampled CPU are its share of p's total applied to samples
// and sampledCPU (the stacks may count periods). Nil without accounted
// run times (no schedstat) or without samples.
func threadFidelity(p *fold.Profile, samples int64, sampledCPU float64, accounted []procstat.ThreadCPU, corrections map[string]map[string]uint64) []fold.ThreadFidelity {
	if p == nil || len(accounted) == 0 {
		return nil
	}
	total := p.Total()
	if total <= 0 {
		return nil
	}
	byName := map[string]*fold.ThreadFidelity{}
	get := func(name string) *fold.ThreadFidelity {
		t := byName[name]
		if t == nil {
			t = &fold.ThreadFidelity{Thread: name}
			byName[name] = t
		}
		return t
	}
	sampled := map[string]int64{}
	for _, st := range p.Stacks {
		if len(st.Frames) > 0 {
			sampled[st.Frames[0]] += st.Value
		}
	}
	for name, v := range sampled {
		t := get(name)
		share := float64(v) / float64(total)
		t.Samples = int64(math.Round(share * float64(samples)))
		t.SampledCPUSeconds = share * sampledCPU
	}
	for _, a := range accounted {
		t := get(a.Name)
		t.Threads = a.Threads
		t.AccountedCPUSeconds = a.Seconds
	}
	for name, c := range corrections {
		if len(c) > 0 {
			get(name).Corrections = c
		}
	}
	out := make([]fold.ThreadFidelity, 0, len(byName))
	for _, t := range byName {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		switch {
		case a.AccountedCPUSeconds != b.AccountedCPUSeconds:
			return a.AccountedCPUSeconds > b.AccountedCPUSeconds
		case a.SampledCPUSeconds != b.SampledCPUSeconds:
			return a.SampledCPUSeconds > b.SampledCPUSeconds
		}
		return a.Thread < b.Thread
	})
	return out
}

// stackFigures sets m's StackCompleteness from p, the run's folded stacks:
// the share of samples whose stack reaches a thread root, with the default
// symbol map applied and its thread roots (diff.StackCompleteness), as a
// report without a map of its own computes it. When the sampler recorded no
// Unwind (perf, or a sampler that walks frame pointers only), it records
// the call graph as the method, so that every run says how its stacks were
// walked. A profile without samples leaves StackCompleteness nil.
func stackFigures(m *fold.Meta, p *fold.Profile) {
	if m.Unwind == nil && m.CallGraph != "" {
		m.Unwind = &fold.Unwind{Method: m.CallGraph}
	}
	if p == nil {
		return
	}
	sm := symbolmap.Default()
	mp, _ := sm.Apply(p)
	c := diff.StackCompleteness(mp, sm.IsThreadRoot)
	if c.Total <= 0 {
		return
	}
	share := 1 - float64(c.Incomplete)/float64(c.Total)
	m.StackCompleteness = &share
}

// sysbenchTime returns sysbench's --time value from its arguments (10 when
// the command is sysbench without --time, its default), or 0.
func sysbenchTime(args []string) time.Duration {
	if len(args) == 0 || filepath.Base(args[0]) != "sysbench" {
		return 0
	}
	secs := 10
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--time=")
		if !ok && a == "--time" && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			if n, err := strconv.Atoi(v); err == nil {
				secs = n
			}
		}
	}
	if secs == 0 {
		return 0 // --time=0: runs until --events; unknown length
	}
	return time.Duration(secs) * time.Second
}

// markWriter passes writes through and notes when a marker first appears.
type markWriter struct {
	w    io.Writer
	mark []byte
	mu   sync.Mutex
	seen time.Time
	tail []byte
}

func (m *markWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	if m.seen.IsZero() {
		buf := append(m.tail, p...)
		if bytes.Contains(buf, m.mark) {
			m.seen = time.Now()
		}
		if n := len(m.mark) - 1; len(buf) > n {
			buf = buf[len(buf)-n:]
		}
		m.tail = append(m.tail[:0], buf...)
	}
	m.mu.Unlock()
	return m.w.Write(p)
}

// at returns when the marker was seen, or zero.
func (m *markWriter) at() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seen
}

// sampledGap is the warning of a run whose samples (at freq Hz) stand for
// more or less CPU than the process was accounted in the window (cpu): the
// reports' rule and words (diff.SampledWarning: more than
// diff.SampledOff percent apart), so that record, report, diff and the
// bench report say the same of a run. profiler is the off-CPU program's
// run time charged to the process's threads (sampler_health
// offcpu_charged_ns, in seconds), which the switch fix keeps out of the
// samples on purpose (docs/fidelity.md): the samples are compared with cpu
// less it. With per-CPU events it adds their known cause.
func sampledGap(samples int64, freq int, cpu, profiler float64, perCPU bool) string {
	if cpu <= 0 || freq <= 0 || profiler >= cpu {
		return ""
	}
	w := diff.SampledWarning(100 * float64(samples) / float64(freq) / (cpu - profiler))
	if w != "" && profiler > 0 {
		w += fmt.Sprintf(" (accounted CPU less the off-CPU program's %.3f s charged to the threads)", profiler)
	}
	if w != "" && perCPU && float64(samples) < (cpu-profiler)*float64(freq) {
		w += "; per-CPU events lose samples on some kernels when CPUs idle between short queries, per-thread events do not"
	}
	return w
}

// labelFromVersion turns "10.11.19-MariaDB-0+deb12u1" into "10.11"; without
// a version, the directory name.
func labelFromVersion(v, dir string) string {
	if v != "" {
		parts := strings.SplitN(v, ".", 3)
		if len(parts) >= 2 {
			return parts[0] + "." + strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' })
		}
	}
	return filepath.Base(filepath.Clean(dir))
}
