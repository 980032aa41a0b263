package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/flamediff/flamediff/capture"
	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/workload"
	"github.com/flamediff/flamediff/workload/procstat"
)

// BenchmarkCaptureOverheadPaired measures what sampling costs sysbench's
// QPS with the sampler switched on and off during one sysbench run, in
// phases of a few seconds: off, config 1, off, config 2, ..., off, the
// configurations' order rotating every cycle. Each on-phase's QPS (from
// sysbench's reports of every second, those wholly inside the phase less
// half a second after the sampler started) is divided by the mean QPS of
// the off-phases before and after it, and the benchmark prints the median
// ratio per configuration and the range over the cycles.
//
// Separate runs (BenchmarkCaptureOverhead) compare QPS minutes apart, and
// this VM's speed moves by 10–20% over minutes: losses of a few percent
// drown in it. Neighbouring seconds of the same run move far less. The
// configuration "aa" switches nothing on: its ratios are the method's own
// spread (an A/A run), against which the other configurations' losses are
// read.
//
// What per-thread events cost is taken apart by "count" (a counting
// cpu-clock event per server thread: perf's per-thread context, switched
// at every context switch, without a timer) and "bpf-1Hz" (sampling
// timers, stopped and started at every switch, that are hardly ever the
// CPU's next timer to fire, so that starting them programs no timer
// device) against "bpf-99Hz".
//
// FLAMEDIFF_BENCH_CONFIGS (default aa,bpf-99Hz,bpf-fix-99Hz,bpf-a-99Hz;
// the names of BenchmarkCaptureOverhead's configurations, aa, count and
// bpf-1Hz),
// FLAMEDIFF_BENCH_CYCLES (default 6), FLAMEDIFF_BENCH_PHASE (default 4
// seconds), FLAMEDIFF_BENCH_TEST and FLAMEDIFF_BENCH_PIN as there. Run
// with `make bench-overhead-paired`.
func BenchmarkCaptureOverheadPaired(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root: starts mariadbd and samples it with perf and BPF")
	}
	if err := capture.CheckPerf(); err != nil {
		b.Skipf("perf cannot sample here: %v", err)
	}
	cycles := envInt("FLAMEDIFF_BENCH_CYCLES", 6)
	phase := time.Duration(envInt("FLAMEDIFF_BENCH_PHASE", 4)) * time.Second
	test := os.Getenv("FLAMEDIFF_BENCH_TEST")
	if test == "" {
		test = "oltp_point_select"
	}
	pin, err := parsePin(os.Getenv("FLAMEDIFF_BENCH_PIN"))
	if err != nil {
		b.Fatal(err)
	}
	list := os.Getenv("FLAMEDIFF_BENCH_CONFIGS")
	if list == "" {
		list = "aa,bpf-99Hz,bpf-fix-99Hz,bpf-a-99Hz"
	}
	// aa switches nothing on; count opens a counting cpu-clock event on
	// each of the server's threads (perf's per-thread context at every
	// switch, no timer); bpf-1Hz samples with timers that are armed and
	// cancelled at every switch but are almost never the CPU's next.
	all := append(overheadConfigs(), config{name: "aa"}, config{name: "count", count: true}, config{name: "bpf-1Hz", freq: 1, bpf: true})
	configs := pick(all, list)[1:] // without "none": the off-phases are it
	if len(configs) == 0 {
		b.Fatalf("FLAMEDIFF_BENCH_CONFIGS=%q names no configuration", list)
	}
	srv := mariadbtest.Start(b, mariadbtest.Options{})
	srv.Prepare(b, test, 10000)
	if err := pin.server(srv.PID); err != nil {
		b.Fatalf("pinning the server: %v", err)
	}
	// This process (the sampler's reading, and its work after a stop)
	// stays off the server's CPU: unpinned, the off-phases right after a
	// stop ran slower on update-nonindex, whose server leaves its CPU idle
	// while it waits for fsync (its A/A phases ran 4.5% faster than the
	// off-phases beside them; point-select saturates its CPU and showed
	// nothing).
	if err := pin.harness(); err != nil {
		b.Fatalf("pinning this process: %v", err)
	}
	for i := 0; i < b.N; i++ {
		res := runPaired(b, srv, test, pin, configs, cycles, phase)
		fmt.Printf("\n%s, one sysbench run, %d cycles of %s phases (off, then each configuration, then off), %s:\n", test, cycles, phase, pin)
		for _, c := range configs {
			r := res[c.name]
			if r == nil || len(r.ratios) == 0 {
				fmt.Printf("  %-14s no phase measured\n", c.name)
				continue
			}
			m := median(r.ratios)
			fmt.Printf("  %-14s QPS loss %6.2f%% (median of %d phases; %.2f%% to %.2f%%), %.2f cs/o on, %.2f off\n", c.name, 100*(1-m), len(r.ratios),
				100*(1-slices.Max(r.ratios)), 100*(1-slices.Min(r.ratios)), median(r.csOn), median(r.csOff))
			b.ReportMetric(100*(1-m), "%loss-"+c.name)
		}
	}
}

// openCounting opens a counting cpu-clock event on every thread of pid,
// inherited by the threads they start, and returns their descriptors.
func openCounting(pid int) ([]int, error) {
	tids, err := threadIDs(strconv.Itoa(pid))
	if err != nil {
		return nil, err
	}
	attr := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK,
		Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{})), Bits: unix.PerfBitInherit}
	var fds []int
	for _, tid := range tids {
		fd, err := unix.PerfEventOpen(&attr, tid, -1, -1, unix.PERF_FLAG_FD_CLOEXEC)
		if errors.Is(err, unix.ESRCH) {
			continue
		}
		if err != nil {
			for _, fd := range fds {
				_ = unix.Close(fd)
			}
			return nil, fmt.Errorf("counting cpu-clock event on thread %d: %w", tid, err)
		}
		fds = append(fds, fd)
	}
	return fds, nil
}

// pairedResult is what runPaired measured for one configuration: per
// on-phase, its QPS over the neighbouring off-phases' mean, and the
// server's context switches per query on and off.
type pairedResult struct {
	ratios, csOn, csOff []float64
}

// phase is one phase of runPaired: the configuration on in it ("" when
// none is), its bounds in seconds since sysbench started (from is half a
// second past the phase's start) and the server's context
// switches over it, which lasted secs.
type phase struct {
	config         string
	from, to, secs float64
	switches       int64
}

// runPaired runs sysbench once, long enough for every phase, and switches
// the configurations' samplers on and off in phases of length.
func runPaired(tb testing.TB, srv *mariadbtest.Server, test string, pin placement, configs []config, cycles int, length time.Duration) map[string]*pairedResult {
	const warmup = 3 * time.Second
	// Each phase takes its length plus the sampler's start and stop: room
	// enough; sysbench is stopped after the last phase.
	total := warmup + time.Duration(cycles*(2*len(configs))+1)*(length+5*time.Second)
	args := pin.client(srv.Sysbench(tb, test, "--time="+strconv.Itoa(int(total.Seconds())), "--report-interval=1", "run"))
	var out bytes.Buffer
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		tb.Fatalf("sysbench: %v", err)
	}
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	// sysbench starts its clock a little later than this (connecting),
	// which the half second left out at each phase's start covers.
	since := func() float64 { return time.Since(start).Seconds() }
	switches := func() int64 {
		st, err := procstat.Read("/proc", srv.PID)
		if err != nil {
			tb.Fatalf("reading the server's counters: %v", err)
		}
		return st.Voluntary + st.Involuntary
	}
	run := func(name string) phase {
		t0, s0 := since(), switches()
		time.Sleep(length)
		p := phase{config: name, from: t0 + 0.5, to: since(), switches: switches() - s0}
		p.secs = p.to - t0
		return p
	}
	// What is switched on in the current phase; switchOff also runs if
	// the benchmark fails in the middle of a phase.
	var sampling capture.Sampler
	var counting []int
	switchOff := func() error {
		for _, fd := range counting {
			_ = unix.Close(fd)
		}
		counting = nil
		var err error
		if sampling != nil {
			_, err = sampling.Stop(context.Background())
			sampling = nil
		}
		return err
	}
	defer func() { _ = switchOff() }()
	time.Sleep(warmup)
	phases := []phase{run("")}
	for cycle := 0; cycle < cycles; cycle++ {
		for k := range configs {
			c := configs[(k+cycle)%len(configs)]
			if c.count {
				fds, err := openCounting(srv.PID)
				if err != nil {
					tb.Fatalf("cycle %d, %s: %v", cycle+1, c.name, err)
				}
				counting = fds
			}
			if c.freq > 0 {
				s, err := c.start(srv.PID)
				if err != nil {
					tb.Fatalf("cycle %d, %s: %v", cycle+1, c.name, err)
				}
				sampling = s
			}
			phases = append(phases, run(c.name))
			if err := switchOff(); err != nil {
				tb.Fatalf("cycle %d, %s: stop: %v", cycle+1, c.name, err)
			}
			phases = append(phases, run(""))
		}
	}
	if since() > total.Seconds()-1 {
		tb.Fatalf("the phases took %.0f s, longer than sysbench's %.0f s run", since(), total.Seconds())
	}
	// Stop sysbench (its summary is not needed) and read its reports.
	_ = cmd.Process.Kill()
	<-done
	stopped = true
	ivs, err := workload.ParseSysbenchIntervals(&out)
	if err != nil {
		tb.Fatalf("sysbench: %v", err)
	}
	rep := &workload.SysbenchReport{Intervals: ivs}
	qps := func(p phase) (float64, float64) {
		q, covered := rep.QPSBetween(p.from, p.to)
		if covered == 0 {
			tb.Fatalf("no whole second of sysbench's reports within %.1f-%.1f s", p.from, p.to)
		}
		return q, float64(p.switches) / (q * p.secs)
	}
	res := make(map[string]*pairedResult)
	for i := 1; i+1 < len(phases); i += 2 {
		p := phases[i]
		q, cs := qps(p)
		qb, csb := qps(phases[i-1])
		qa, csa := qps(phases[i+1])
		r := res[p.config]
		if r == nil {
			r = &pairedResult{}
			res[p.config] = r
		}
		r.ratios = append(r.ratios, q/((qb+qa)/2))
		r.csOn, r.csOff = append(r.csOn, cs), append(r.csOff, (csb+csa)/2)
	}
	return res
}
