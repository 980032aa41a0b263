package record

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/workload/procstat"
)

// ErrBadHostStat is wrapped by ParseHostStat's errors: the text is not
// what the kernel writes in /proc/stat.
var ErrBadHostStat = errors.New("malformed /proc/stat")

// HostStat is the machine-wide part of /proc/stat that the host figures
// use: the "cpu" line (all CPUs, in USER_HZ ticks), the number of "cpuN"
// lines and "ctxt". Counters are cumulative since boot.
type HostStat struct {
	// The columns of the "cpu" line, in its order. Kernels older than
	// 2.6.33 write fewer columns; those missing are zero.
	User, Nice, System, Idle, IOWait, IRQ, SoftIRQ, Steal, Guest, GuestNice uint64
	// CPUs is the number of "cpuN" lines.
	CPUs int
	// Ctxt is the context switches of the whole machine since boot.
	Ctxt uint64
}

// Busy returns the ticks the CPUs worked: user, nice, system, irq and
// softirq (guest and guest_nice are counted inside user and nice).
func (s *HostStat) Busy() uint64 {
	return s.User + s.Nice + s.System + s.IRQ + s.SoftIRQ
}

// Total returns every tick of the "cpu" line but guest time (which user
// and nice hold already): busy, idle, iowait and steal.
func (s *HostStat) Total() uint64 {
	return s.Busy() + s.Idle + s.IOWait + s.Steal
}

// ParseHostStat reads /proc/stat text from r. It needs the "cpu" line
// with at least its first four columns (user nice system idle) and the
// "ctxt" line; other lines are skipped. Its errors wrap ErrBadHostStat and
// name the line, or are r's read errors.
func ParseHostStat(r io.Reader) (*HostStat, error) {
	s := &HostStat{}
	var sawCPU, sawCtxt bool
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20) // the intr line is long
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: line %d: %s", ErrBadHostStat, n, fmt.Sprintf(format, a...))
		}
		switch name := fields[0]; {
		case name == "cpu":
			if sawCPU {
				return nil, bad("a second cpu line")
			}
			sawCPU = true
			cols := []*uint64{&s.User, &s.Nice, &s.System, &s.Idle, &s.IOWait, &s.IRQ, &s.SoftIRQ, &s.Steal, &s.Guest, &s.GuestNice}
			if len(fields) < 5 {
				return nil, bad("the cpu line has %d columns, want at least 4 (user nice system idle)", len(fields)-1)
			}
			for i, f := range fields[1:] {
				if i == len(cols) {
					break // columns of kernels newer than this code
				}
				v, err := strconv.ParseUint(f, 10, 64)
				if err != nil {
					return nil, bad("cpu column %d: %q is not a count", i+1, f)
				}
				*cols[i] = v
			}
		case strings.HasPrefix(name, "cpu"):
			if _, err := cpuNumber(name[3:]); err != nil {
				return nil, bad("%q is not cpu followed by a number", name)
			}
			s.CPUs++
		case name == "ctxt":
			if sawCtxt {
				return nil, bad("a second ctxt line")
			}
			if len(fields) != 2 {
				return nil, bad("want ctxt and one count, found %d fields", len(fields))
			}
			v, err := strconv.ParseUint(fields[1], 10, 64)
			if err != nil {
				return nil, bad("ctxt %q is not a count", fields[1])
			}
			s.Ctxt, sawCtxt = v, true
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("%w: a line longer than 4 MiB", ErrBadHostStat)
		}
		return nil, fmt.Errorf("reading /proc/stat: %w", err)
	}
	switch {
	case !sawCPU:
		return nil, fmt.Errorf("%w: no cpu line", ErrBadHostStat)
	case !sawCtxt:
		return nil, fmt.Errorf("%w: no ctxt line", ErrBadHostStat)
	}
	return s, nil
}

// WriteTo writes s as the lines of /proc/stat it was parsed from (the cpu
// line with all ten columns, CPUs lines cpu0... with zero counts, ctxt),
// which ParseHostStat reads back to s.
func (s *HostStat) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "cpu  %d %d %d %d %d %d %d %d %d %d\n", s.User, s.Nice, s.System, s.Idle, s.IOWait, s.IRQ, s.SoftIRQ, s.Steal, s.Guest, s.GuestNice)
	for i := range s.CPUs {
		fmt.Fprintf(&b, "cpu%d 0 0 0 0 0 0 0 0 0 0\n", i)
	}
	fmt.Fprintf(&b, "ctxt %d\n", s.Ctxt)
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// hostSnapshot is the machine at one moment: /proc/stat and the CPUs'
// frequencies.
type hostSnapshot struct {
	at   time.Time
	stat *HostStat
	// freq is scaling_cur_freq by CPU number; nil when not exposed.
	freq []int64
}

// readHost reads procRoot/stat and the cpufreq files under sysRoot.
func readHost(procRoot, sysRoot string) (*hostSnapshot, error) {
	f, err := os.Open(filepath.Join(procRoot, "stat"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	at := time.Now()
	st, err := ParseHostStat(f)
	if err != nil {
		return nil, err
	}
	return &hostSnapshot{at: at, stat: st, freq: readCPUFreq(sysRoot)}, nil
}

// readCPUFreq returns each CPU's devices/system/cpu/cpuN/cpufreq/scaling_cur_freq
// under sysRoot, in kHz, by CPU number; nil when no CPU has one or one
// cannot be read.
func readCPUFreq(sysRoot string) []int64 {
	paths, _ := filepath.Glob(filepath.Join(sysRoot, "devices/system/cpu/cpu[0-9]*/cpufreq/scaling_cur_freq"))
	type cpuFreq struct {
		cpu int
		khz int64
	}
	var got []cpuFreq
	for _, p := range paths {
		cpu, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(filepath.Dir(p))), "cpu"))
		if err != nil {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		khz, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err != nil || khz < 0 {
			return nil
		}
		got = append(got, cpuFreq{cpu, khz})
	}
	if len(got) == 0 {
		return nil
	}
	sort.Slice(got, func(i, j int) bool { return got[i].cpu < got[j].cpu })
	out := make([]int64, len(got))
	for i, g := range got {
		out[i] = g.khz
	}
	return out
}

// cpuFreqNotExposed is the note of a machine without cpufreq files.
const cpuFreqNotExposed = "not exposed: no devices/system/cpu/cpu*/cpufreq/scaling_cur_freq (usual on VMs)"

// hostWindow returns the machine's figures between two snapshots, per
// operation when ops > 0. A counter that went backwards counts as zero.
func hostWindow(before, after *hostSnapshot, ops int64) *fold.Host {
	b, a := before.stat, after.stat
	tick := func(f func(*HostStat) uint64) float64 {
		return float64(deltaTicks(f(b), f(a))) / procstat.DefaultClockTicks
	}
	h := &fold.Host{
		CPUs:            a.CPUs,
		Seconds:         after.at.Sub(before.at).Seconds(),
		CPUSeconds:      tick((*HostStat).Busy),
		UserSeconds:     tick(func(s *HostStat) uint64 { return s.User + s.Nice }),
		SystemSeconds:   tick(func(s *HostStat) uint64 { return s.System + s.IRQ + s.SoftIRQ }),
		IdleSeconds:     tick(func(s *HostStat) uint64 { return s.Idle + s.IOWait }),
		StealSeconds:    tick(func(s *HostStat) uint64 { return s.Steal }),
		ContextSwitches: int64(deltaTicks(b.Ctxt, a.Ctxt)),
	}
	if total := tick((*HostStat).Total); total > 0 {
		h.StealShare = h.StealSeconds / total
	}
	if ops > 0 {
		h.CPUMicrosPerOp = h.CPUSeconds * 1e6 / float64(ops)
		h.CtxSwitchesPerOp = float64(h.ContextSwitches) / float64(ops)
	}
	h.CPUFreq = cpuFreqWindow(before.freq, after.freq)
	return h
}

// cpuFreqWindow compares the CPUs' frequencies at the window's start and
// end; without them at both, it says they are not exposed.
func cpuFreqWindow(start, end []int64) *fold.CPUFreq {
	if start == nil || end == nil {
		return &fold.CPUFreq{Note: cpuFreqNotExposed}
	}
	f := &fold.CPUFreq{Exposed: true, StartKHz: start, EndKHz: end}
	if len(start) != len(end) {
		f.Changed = true
		f.Note = fmt.Sprintf("%d CPUs had a frequency at the start, %d at the end", len(start), len(end))
		return f
	}
	for i := range start {
		if start[i] != end[i] {
			f.Changed = true
		}
	}
	return f
}

func deltaTicks(before, after uint64) uint64 {
	if after < before {
		return 0
	}
	return after - before
}
