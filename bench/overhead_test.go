// Package bench holds benchmarks that need a real server: the capture
// overhead benchmark. Run with `make bench-overhead` (root, mariadb-server,
// sysbench and linux-perf installed).
package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/workload"
	"github.com/flamediff/flamediff/workload/procstat"
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// BenchmarkCaptureOverhead measures sysbench QPS against a real MariaDB
// without sampling and with perf and BPF sampling at 99 Hz and 999 Hz
// (per-thread events on the server, as perf record -p, and per-CPU events,
// as perf record -a: the "-a" configurations), in interleaved rounds (the
// order rotates every round so that drift does not favour one
// configuration), and prints the median QPS ratio of each sampled
// configuration to the unsampled runs of the same rounds, and how many
// samples it took for the server's CPU time (sampled/accounted: 1 when
// every tick of the server's CPU time was sampled), and the server's
// context switches per query (cs/o): per-thread events cost work at each.
//
// FLAMEDIFF_BENCH_PAIRS (default 5) rounds, FLAMEDIFF_BENCH_SECONDS (default
// 8) seconds per run, FLAMEDIFF_BENCH_TEST (default oltp_point_select),
// FLAMEDIFF_BENCH_CONFIGS (default: all; a comma-separated list of the
// configuration names below, e.g. bpf-never-99Hz,bpf-auto-99Hz),
// FLAMEDIFF_BENCH_PIN (default same): where the server and sysbench run.
//
// Placement: on a VM, waking a thread on the other CPU is expensive, and
// unpinned runs measure whichever placement the scheduler chose (here
// point-select ran at about 11,000 QPS with server and client on different
// CPUs and 87,000 on the same one), which swamps a sampler's cost of a few
// percent. The benchmark therefore pins them: "same" puts the server's
// threads and sysbench on the last CPU (the CPU is saturated, so every
// cycle the sampler takes from it, as the BPF program and perf's copies in
// the timer interrupt, is QPS lost), "apart" puts the server on the last
// CPU and sysbench on the first, "none" leaves placement to the scheduler.
// The sampler's own process is not pinned: its CPU is reported apart.
func BenchmarkCaptureOverhead(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root: starts mariadbd and samples it with perf")
	}
	if err := capture.CheckPerf(); err != nil {
		b.Skipf("perf cannot sample here: %v", err)
	}
	pairs := envInt("FLAMEDIFF_BENCH_PAIRS", 5)
	secs := envInt("FLAMEDIFF_BENCH_SECONDS", 8)
	test := os.Getenv("FLAMEDIFF_BENCH_TEST")
	if test == "" {
		test = "oltp_point_select"
	}
	pin, err := parsePin(os.Getenv("FLAMEDIFF_BENCH_PIN"))
	if err != nil {
		b.Fatal(err)
	}
	srv := mariadbtest.Start(b, mariadbtest.Options{})
	srv.Prepare(b, test, 10000)
	if err := pin.server(srv.PID); err != nil {
		b.Fatalf("pinning the server: %v", err)
	}
	configs := pick(overheadConfigs(), os.Getenv("FLAMEDIFF_BENCH_CONFIGS"))
	// The BPF program's run time, counted by the kernel (two clock reads
	// per run, in every configuration alike).
	if stats, err := bpf.EnableStats(); err == nil {
		defer stats.Close()
	} else {
		fmt.Printf("BPF run-time statistics unavailable: %v\n", err)
	}
	qps := make(map[string][]float64)
	costs := make(map[string][]cost)
	for i := 0; i < b.N; i++ {
		for round := 0; round < pairs; round++ {
			for k := range configs {
				c := configs[(k+round)%len(configs)]
				q, cs, err := runOnce(b, srv, test, secs, c, pin)
				if err != nil {
					b.Fatalf("round %d, %s: %v", round+1, c.name, err)
				}
				qps[c.name] = append(qps[c.name], q)
				costs[c.name] = append(costs[c.name], cs)
				fmt.Printf("round %d %-12s %9.1f qps  %.2f cs/o  %.1f µs cpu/o  sampler CPU %.2f%% of a core in the window, %.2f%% with stop; BPF program %.3f%%; sampled/accounted %.3f\n",
					round+1, c.name, q, cs.csPerOp, cs.cpuPerOp, 100*cs.window, 100*cs.total, 100*cs.program, cs.sampled)
			}
		}
	}
	fmt.Printf("\n%s, %d rounds of %d s, interleaved, %s (sampler CPU: %% of one core per second of window):\n", test, pairs, secs, pin)
	// The first config is "none": what this process costs without a
	// sampler (waiting for sysbench, reading its output).
	harness := 0.0
	for _, c := range configs {
		var ratios, win, tot, prog, runNs, sampled, csPerOp, cpuPerOp []float64
		for j, q := range qps[c.name] {
			ratios = append(ratios, q/qps["none"][j])
			cs := costs[c.name][j]
			win, tot, prog, runNs = append(win, cs.window), append(tot, cs.total), append(prog, cs.program), append(runNs, cs.runNs)
			sampled = append(sampled, cs.sampled)
			csPerOp, cpuPerOp = append(csPerOp, cs.csPerOp), append(cpuPerOp, cs.cpuPerOp)
		}
		m := median(ratios)
		fmt.Printf("  %-12s median %9.1f qps, %.2f cs/o, %.1f µs cpu/o (server and sysbench), ratio to none %.4f (QPS loss %5.2f%%, %.2f%% to %.2f%% over the rounds)", c.name, median(qps[c.name]), median(csPerOp), median(cpuPerOp), m, 100*(1-m),
			100*(1-slices.Max(ratios)), 100*(1-slices.Min(ratios)))
		if c.freq == 0 {
			fmt.Printf("; harness CPU %.2f%% (subtracted below)", 100*median(win))
			harness = median(win)
		} else {
			fmt.Printf("; sampler CPU %.2f%% in the window, %.2f%% with stop", 100*(median(win)-harness), 100*(median(tot)-harness))
			fmt.Printf("; sampled/accounted %.3f (%.3f-%.3f)", median(sampled), slices.Min(sampled), slices.Max(sampled))
			b.ReportMetric(100*(1-m), "%loss-"+c.name)
			b.ReportMetric(100*(median(win)-harness), "%cpu-"+c.name)
		}
		if c.bpf {
			fmt.Printf("; BPF program %.3f%% (%.0f ns a run)", 100*median(prog), median(runNs))
		}
		fmt.Println()
		if c.offCPU {
			offCPUSummary(b, c, qps, costs)
		}
	}
}

// offCPUSummary prints what the off-CPU program costs: the QPS of c
// against its base (the same sampler without it) round by round, and the
// program's run time per switch of the server, per run and as a share of
// the window; medians and the range over the rounds.
func offCPUSummary(b *testing.B, c config, qps map[string][]float64, costs map[string][]cost) {
	var ratios, cpuRatios, perSwitch, perRun, share []float64
	for j, q := range qps[c.name] {
		if base := qps[c.base]; j < len(base) {
			ratios = append(ratios, q/base[j])
			cpuRatios = append(cpuRatios, costs[c.name][j].cpuPerOp/costs[c.base][j].cpuPerOp)
		}
		cs := costs[c.name][j]
		perSwitch, perRun, share = append(perSwitch, cs.offNsPerSwitch), append(perRun, cs.offNsPerRun), append(share, cs.offProgram)
	}
	fmt.Printf("    off-CPU program: %.2f µs per server switch (%.2f-%.2f), %.0f ns a run (%.0f-%.0f), %.2f%% of a CPU in the window (%.2f-%.2f)",
		median(perSwitch)/1e3, slices.Min(perSwitch)/1e3, slices.Max(perSwitch)/1e3, median(perRun), slices.Min(perRun), slices.Max(perRun),
		100*median(share), 100*slices.Min(share), 100*slices.Max(share))
	b.ReportMetric(median(perSwitch), "offcpu-ns/switch-"+c.name)
	if len(ratios) > 0 {
		m := median(ratios)
		fmt.Printf("; QPS against %s: ratio %.4f (loss %.2f%%, %.2f%% to %.2f%% over the rounds)", c.base, m, 100*(1-m), 100*(1-slices.Max(ratios)), 100*(1-slices.Min(ratios)))
		b.ReportMetric(100*(1-m), "%loss-offcpu-"+c.name)
		r := median(cpuRatios)
		fmt.Printf("; CPU per query (server and sysbench) against %s: ratio %.4f (%.4f-%.4f), a QPS loss of %.2f%% where that CPU is the bottleneck",
			c.base, r, slices.Min(cpuRatios), slices.Max(cpuRatios), 100*(1-1/r))
		b.ReportMetric(100*(1-1/r), "%cpuloss-offcpu-"+c.name)
	}
	fmt.Println()
}

// offCPUProgramStats returns the run time and run count, as the kernel
// counts them (bpf.EnableStats), of the off-CPU programs this process
// holds: those named offcpu among the BPF program descriptors in
// /proc/self/fd, found by the ids in /proc/self/fdinfo.
func offCPUProgramStats() (time.Duration, uint64, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, 0, err
	}
	var rt time.Duration
	var runs uint64
	found := false
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || l != "anon_inode:bpf-prog" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		var id uint64
		for _, line := range strings.Split(string(info), "\n") {
			if v, ok := strings.CutPrefix(line, "prog_id:"); ok {
				id, _ = strconv.ParseUint(strings.TrimSpace(v), 10, 32)
			}
		}
		p, err := ebpf.NewProgramFromID(ebpf.ProgramID(id))
		if err != nil {
			continue
		}
		pi, ierr := p.Info()
		st, serr := p.Stats()
		p.Close()
		if ierr != nil || serr != nil || pi.Name != "offcpu" {
			continue
		}
		rt, runs, found = rt+st.Runtime, runs+st.RunCount, true
	}
	if !found {
		return 0, 0, fmt.Errorf("no offcpu program among this process's BPF descriptors")
	}
	return rt, runs, nil
}

// overheadConfigs returns the overhead benchmarks' configurations, "none"
// (no sampling) first.
func overheadConfigs() []config {
	return []config{{name: "none"},
		{name: "perf-99Hz", freq: 99}, {name: "perf-999Hz", freq: 999},
		{name: "perf-a-99Hz", freq: 99, all: true}, {name: "perf-a-999Hz", freq: 999, all: true},
		{name: "bpf-a-99Hz", freq: 99, all: true, bpf: true}, {name: "bpf-a-999Hz", freq: 999, all: true, bpf: true},
		{name: "bpf-99Hz", freq: 99, bpf: true}, {name: "bpf-999Hz", freq: 999, bpf: true},
		// Whole stacks (#14): BPF stack copies unwound with CFI, against
		// frame pointers only and perf's DWARF call graphs.
		{name: "bpf-never-99Hz", freq: 99, bpf: true, stackCopy: "never"}, {name: "bpf-never-499Hz", freq: 499, bpf: true, stackCopy: "never"},
		{name: "bpf-auto-99Hz", freq: 99, bpf: true, stackCopy: "auto"}, {name: "bpf-auto-499Hz", freq: 499, bpf: true, stackCopy: "auto"},
		{name: "bpf-always-99Hz", freq: 99, bpf: true, stackCopy: "always"}, {name: "bpf-always-499Hz", freq: 499, bpf: true, stackCopy: "always"},
		{name: "perf-dwarf-99Hz", freq: 99, callGraph: "dwarf"}, {name: "perf-dwarf-499Hz", freq: 499, callGraph: "dwarf"},
		// Sampling fidelity (#15): the switch fix's sched_switch program.
		{name: "bpf-fix-99Hz", freq: 99, bpf: true, switchFix: true}, {name: "bpf-fix-499Hz", freq: 499, bpf: true, switchFix: true},
		{name: "bpf-a-fix-99Hz", freq: 99, all: true, bpf: true, switchFix: true}, {name: "bpf-a-fix-499Hz", freq: 499, all: true, bpf: true, switchFix: true},
		// Off-CPU profiles (#19): the sampler with and without the
		// off-CPU program on sched_switch, without and with kernel
		// stacks (the lab's setting).
		{name: "bpf-offcpu-99Hz", freq: 99, bpf: true, offCPU: true, base: "bpf-99Hz"},
		{name: "bpf-k-99Hz", freq: 99, bpf: true, kernel: true},
		{name: "bpf-k-offcpu-99Hz", freq: 99, bpf: true, kernel: true, offCPU: true, base: "bpf-k-99Hz"}}
}

// config is one configuration of the overhead benchmark.
type config struct {
	name      string
	freq      int // 0: no sampling
	all       bool
	bpf       bool
	stackCopy string // BPF stack copies: "" (the default), never, auto, always
	callGraph string // perf: "" (fp) or dwarf
	switchFix bool   // BPF: capture.Options.SwitchFix
	kernel    bool   // kernel stacks too (capture.Options.Kernel)
	offCPU    bool   // BPF: capture.Options.OffCPU
	count     bool   // paired only: counting per-thread events, no sampler
	// base is the configuration this one adds to (the same sampler
	// without the off-CPU program): its QPS is also compared with the
	// base's runs of the same rounds.
	base string
}

// start starts c's sampler on pid (c.freq > 0).
func (c config) start(pid int) (capture.Sampler, error) {
	name := "perf"
	if c.bpf {
		name = "bpf"
	}
	s := newSampler(name)
	o := capture.Options{FrequencyHz: c.freq, SystemWide: c.all, CallGraph: c.callGraph, StackCopy: c.stackCopy, SwitchFix: c.switchFix,
		Kernel: c.kernel, OffCPU: c.offCPU}
	if err := s.Start(context.Background(), pid, o); err != nil {
		return nil, err
	}
	return s, nil
}

// pick returns the configurations named in the comma-separated list
// (FLAMEDIFF_BENCH_CONFIGS), "none" first; all of them when it is empty.
func pick(all []config, list string) []config {
	if list == "" {
		return all
	}
	out := []config{all[0]}
	for _, c := range all[1:] {
		if slices.Contains(strings.Split(list, ","), c.name) {
			out = append(out, c)
		}
	}
	return out
}

// cost is what sampling cost besides the server's lost QPS, in CPU seconds
// per second of window: window is this process and its perf children while
// sampling; total adds stopping (perf script, symbolisation, folding);
// program is the BPF program's run time (spent in the sampled CPU's
// interrupt, on the server's time). runNs is the program's mean run time.
// sampled is the samples taken over the server's CPU seconds from start to
// stop times the frequency.
type cost struct {
	window, total, program, runNs, sampled float64
	// csPerOp is the server's context switches per query over the run:
	// per-thread events cost work at each of them.
	csPerOp float64
	// cpuPerOp is the CPU microseconds per query of the server and
	// sysbench together (both pinned to one CPU with placement same, so
	// its QPS is that CPU over it): unlike QPS, it does not move when
	// other work takes the CPU, and a BPF program's run time at a switch
	// is in the switching thread's system time.
	cpuPerOp float64
	// With the off-CPU program: its run time per context switch of the
	// server over the run (/proc's count), its mean run time per run (it
	// runs at every switch of the machine) and its share of the window.
	offNsPerSwitch, offNsPerRun, offProgram float64
}

// selfCPU returns the CPU seconds of this process and of its waited-for
// children.
func selfCPU() float64 {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// perfChildrenCPU returns the CPU seconds of this process's running perf
// children (perf record, before it is waited for).
func perfChildrenCPU() float64 {
	ps, err := capture.FindProcesses("/proc", "perf")
	if err != nil {
		return 0
	}
	var sum float64
	for _, p := range ps {
		if parentOf(p.PID) != os.Getpid() {
			continue
		}
		if st, err := procstat.Read("/proc", p.PID); err == nil {
			sum += st.CPUSeconds()
		}
	}
	return sum
}

// runOnce runs sysbench for secs seconds, sampling the server at freq Hz
// for the whole run when freq > 0, and returns sysbench's QPS and what the
// sampler cost.
func runOnce(tb testing.TB, srv *mariadbtest.Server, test string, secs int, c config, pin placement) (float64, cost, error) {
	freq := c.freq
	var sampler capture.Sampler
	var cs cost
	cpu0 := selfCPU()
	srv0, err := procstat.Read("/proc", srv.PID)
	if err != nil {
		return 0, cs, err
	}
	if freq > 0 {
		var err error
		if sampler, err = c.start(srv.PID); err != nil {
			return 0, cs, err
		}
		defer func() { _, _ = sampler.Stop(context.Background()) }()
	}
	args := pin.client(srv.Sysbench(tb, test, "--time="+strconv.Itoa(secs), "run"))
	var out bytes.Buffer
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = &out
	cmd.Stderr = &out
	start, win0, perf0 := time.Now(), selfCPU(), perfChildrenCPU()
	if err := cmd.Run(); err != nil {
		return 0, cs, fmt.Errorf("sysbench: %w\n%s", err, out.String())
	}
	window := time.Since(start).Seconds()
	srvRun, err := procstat.Read("/proc", srv.PID)
	if err != nil {
		return 0, cs, err
	}
	if c.offCPU {
		rt, runs, err := offCPUProgramStats()
		if err != nil {
			return 0, cs, err
		}
		if sw := srvRun.Voluntary + srvRun.Involuntary - srv0.Voluntary - srv0.Involuntary; sw > 0 && runs > 0 {
			cs.offNsPerSwitch = float64(rt.Nanoseconds()) / float64(sw)
			cs.offNsPerRun = float64(rt.Nanoseconds()) / float64(runs)
			cs.offProgram = rt.Seconds() / window
		}
	}
	// sysbench is a waited-for child too: leave it out.
	sb := 0.0
	if st := cmd.ProcessState; st != nil {
		sb = (st.UserTime() + st.SystemTime()).Seconds()
	}
	cs.window = (selfCPU() - sb - win0 + perfChildrenCPU() - perf0) / window
	if freq > 0 {
		res, err := sampler.Stop(context.Background())
		if err != nil {
			return 0, cs, fmt.Errorf("%s stop after %s: %w", sampler.Name(), time.Since(start), err)
		}
		cs.total = (selfCPU() - sb - cpu0) / window
		srv1, err := procstat.Read("/proc", srv.PID)
		if err != nil {
			return 0, cs, err
		}
		cs.sampled = float64(res.Samples) / (float64(freq) * (srv1.CPUSeconds() - srv0.CPUSeconds()))
		cs.program = res.ProgramRunTime.Seconds() / window
		if res.ProgramRuns > 0 {
			cs.runNs = float64(res.ProgramRunTime.Nanoseconds()) / float64(res.ProgramRuns)
		}
	}
	rep, err := workload.ParseSysbench(&out)
	if err != nil {
		return 0, cs, err
	}
	if q := rep.QPS * window; q > 0 {
		cs.csPerOp = float64(srvRun.Voluntary+srvRun.Involuntary-srv0.Voluntary-srv0.Involuntary) / q
		cs.cpuPerOp = 1e6 * (srvRun.CPUSeconds() - srv0.CPUSeconds() + sb) / q
	}
	return rep.QPS, cs, nil
}

// parentOf returns the PPid of /proc/PID/status, or -1.
func parentOf(pid int) int {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
				return n
			}
		}
	}
	return -1
}
