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
	all := []config{{name: "none"},
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
		{name: "bpf-a-fix-99Hz", freq: 99, all: true, bpf: true, switchFix: true}, {name: "bpf-a-fix-499Hz", freq: 499, all: true, bpf: true, switchFix: true}}
	configs := pick(all, os.Getenv("FLAMEDIFF_BENCH_CONFIGS"))
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
				fmt.Printf("round %d %-12s %9.1f qps  %.2f cs/o  sampler CPU %.2f%% of a core in the window, %.2f%% with stop; BPF program %.3f%%; sampled/accounted %.3f\n",
					round+1, c.name, q, cs.csPerOp, 100*cs.window, 100*cs.total, 100*cs.program, cs.sampled)
			}
		}
	}
	fmt.Printf("\n%s, %d rounds of %d s, interleaved, %s (sampler CPU: %% of one core per second of window):\n", test, pairs, secs, pin)
	// The first config is "none": what this process costs without a
	// sampler (waiting for sysbench, reading its output).
	harness := 0.0
	for _, c := range configs {
		var ratios, win, tot, prog, runNs, sampled, csPerOp []float64
		for j, q := range qps[c.name] {
			ratios = append(ratios, q/qps["none"][j])
			cs := costs[c.name][j]
			win, tot, prog, runNs = append(win, cs.window), append(tot, cs.total), append(prog, cs.program), append(runNs, cs.runNs)
			sampled = append(sampled, cs.sampled)
			csPerOp = append(csPerOp, cs.csPerOp)
		}
		m := median(ratios)
		fmt.Printf("  %-12s median %9.1f qps, %.2f cs/o, ratio to none %.4f (QPS loss %5.2f%%)", c.name, median(qps[c.name]), median(csPerOp), m, 100*(1-m))
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
	}
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
		name := "perf"
		if c.bpf {
			name = "bpf"
		}
		sampler = newSampler(name)
		o := capture.Options{FrequencyHz: freq, SystemWide: c.all, CallGraph: c.callGraph, StackCopy: c.stackCopy, SwitchFix: c.switchFix}
		if err := sampler.Start(context.Background(), srv.PID, o); err != nil {
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
