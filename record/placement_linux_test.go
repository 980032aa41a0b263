//go:build linux

package record

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// twoCPUs returns the CPUs this process may use; it skips the test when
// there is one only (every affinity would then be the same).
func twoCPUs(t *testing.T) []int {
	t.Helper()
	allowed, err := allowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	if len(allowed) < 2 {
		t.Skipf("this process may use CPU %s only: pinning would change nothing", FormatCPUList(allowed))
	}
	return allowed
}

// threadsHelperEnv makes TestThreadsHelper a process that starts threads
// when told to.
const threadsHelperEnv = "RECORD_TEST_THREADS_HELPER"

// TestThreadsHelper is not a test: run with threadsHelperEnv set, it
// starts 4 threads, says "ready", and at each line on its standard input
// starts 4 more (from threads of its own) and says "more N"; it exits when
// its input ends.
func TestThreadsHelper(t *testing.T) {
	if os.Getenv(threadsHelperEnv) == "" {
		t.Skip("a helper process of TestPinThreads")
	}
	block := make(chan struct{})
	start := func(n int) {
		started := make(chan struct{})
		for range n {
			go func() {
				runtime.LockOSThread() // one OS thread each, kept
				started <- struct{}{}
				<-block
			}()
		}
		for range n {
			<-started
		}
	}
	start(4)
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		start(4)
		fmt.Println("more")
	}
	os.Exit(0)
}

func TestPinThreads(t *testing.T) {
	allowed := twoCPUs(t)
	cpus := []int{allowed[len(allowed)-1]}
	cmd := exec.Command(os.Args[0], "-test.run=^TestThreadsHelper$")
	cmd.Env = append(os.Environ(), threadsHelperEnv+"=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	out := bufio.NewScanner(outPipe)
	expect := func(want string) {
		t.Helper()
		if !out.Scan() || out.Text() != want {
			t.Fatalf("helper said %q, %v; want %q", out.Text(), out.Err(), want)
		}
	}
	expect("ready")
	pid := cmd.Process.Pid
	before, err := readAffinities("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range before {
		if reflect.DeepEqual(th.cpus, cpus) {
			t.Fatalf("thread %d is on CPU %v before pinning; the test cannot tell", th.tid, th.cpus)
		}
	}
	n, err := pinThreads("/proc", pid, cpus)
	if err != nil {
		t.Fatalf("pinThreads = %d, %v", n, err)
	}
	if n < 5 {
		t.Errorf("pinThreads pinned %d threads; the helper has at least 5", n)
	}
	pinned, err := readAffinities("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	// Threads started after pinning, by pinned threads, inherit it.
	for range 2 {
		fmt.Fprintln(in, "more")
		expect("more")
	}
	after, err := readAffinities("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}
	old := map[int]bool{}
	for _, th := range pinned {
		old[th.tid] = true
	}
	var started int
	for _, th := range after {
		if !old[th.tid] {
			started++
		}
	}
	if started == 0 {
		t.Fatalf("the helper has %d threads, all there when it was pinned: the test saw no thread started after pinning", len(after))
	}
	if _, mismatched := affinityFigures("helper", after, cpus); mismatched != nil {
		t.Errorf("threads not on CPU %v after pinning (%d started after it): %q", cpus, started, mismatched)
	}
}

func TestStartOn(t *testing.T) {
	allowed := twoCPUs(t)
	cpus := []int{allowed[0]}
	var cmd *exec.Cmd
	err := startOn(cpus, func() error {
		cmd = exec.Command("sleep", "30")
		return cmd.Start()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	threads, err := readAffinities("/proc", cmd.Process.Pid)
	if err != nil || len(threads) != 1 || !reflect.DeepEqual(threads[0].cpus, cpus) {
		t.Errorf("the started process's affinity: %+v, %v; want CPU %v", threads, err, cpus)
	}
	// The pinned thread was this process's; it ends with the call, and no
	// thread of this process is left pinned (its exit is asynchronous).
	deadline := time.Now().Add(5 * time.Second)
	for {
		self, err := readAffinities("/proc", os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		var pinned []string
		for _, th := range self {
			if !reflect.DeepEqual(th.cpus, allowed) {
				pinned = append(pinned, strconv.Itoa(th.tid)+": "+FormatCPUList(th.cpus))
			}
		}
		if pinned == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads of the test still pinned 5 s after startOn: %s", strings.Join(pinned, ", "))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := startOn([]int{allowed[0]}, func() error { return fmt.Errorf("boom") }); err == nil || err.Error() != "boom" {
		t.Errorf("startOn returned %v, want start's error", err)
	}
}

// TestHostFiguresTruth checks the host figures against what the kernel
// accounted to processes of known work: one CPU burner per CPU for about a
// second, and a shell that starts 200 processes, all between two reads of
// /proc/stat. Their CPU time (user plus system, from wait4's rusage) is
// busy time of the host, and their context switches (nvcsw plus nivcsw)
// are host context switches: the host figures cannot be less, whatever
// else runs. Nor can idle time be more than what the burners left.
func TestHostFiguresTruth(t *testing.T) {
	before, err := readHost("/proc", "/sys")
	if err != nil {
		t.Fatal(err)
	}
	var cmds []*exec.Cmd
	for range before.stat.CPUs {
		cmds = append(cmds, exec.Command("sh", "-c", "while :; do :; done"))
	}
	switcher := exec.Command("sh", "-c", "i=0; while [ $i -lt 200 ]; do /bin/true; i=$((i+1)); done")
	for _, c := range append(cmds, switcher) {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	for _, c := range cmds {
		_ = c.Process.Kill()
	}
	var cpu time.Duration
	var switches int64
	for _, c := range append(cmds, switcher) {
		_ = c.Wait()
		cpu += c.ProcessState.UserTime() + c.ProcessState.SystemTime()
		if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
			switches += ru.Nvcsw + ru.Nivcsw
		}
	}
	after, err := readHost("/proc", "/sys")
	if err != nil {
		t.Fatal(err)
	}
	h := hostWindow(before, after, 0)
	// /proc/stat truncates each of its five busy columns to 10 ms
	// (USER_HZ) at each read: the busy delta may be up to 50 ms short.
	const trunc = 0.05
	capacity := h.Seconds * float64(h.CPUs)
	t.Logf("window %.3f s on %d CPUs: host busy %.3f s, idle %.3f s, steal %.3f s, ctxt %d; the children: CPU %.3f s, %d switches",
		h.Seconds, h.CPUs, h.CPUSeconds, h.IdleSeconds, h.StealSeconds, h.ContextSwitches, cpu.Seconds(), switches)
	// On a loaded machine the burners get less than the whole window,
	// which weakens the checks but leaves them true.
	if cpu.Seconds() < 0.2 {
		t.Fatalf("the burners got %.3f s of CPU in a %.3f s window on %d CPUs: too little to check anything", cpu.Seconds(), h.Seconds, h.CPUs)
	}
	if h.CPUSeconds < cpu.Seconds()-trunc {
		t.Errorf("host busy %.3f s < the children's CPU %.3f s (less 50 ms of truncation)", h.CPUSeconds, cpu.Seconds())
	}
	if h.CPUSeconds > capacity+trunc {
		t.Errorf("host busy %.3f s > %d CPUs x %.3f s", h.CPUSeconds, h.CPUs, h.Seconds)
	}
	if idle := h.IdleSeconds; idle > capacity-cpu.Seconds()+trunc {
		t.Errorf("host idle %.3f s > the %.3f s the children left of %.3f s", idle, capacity-cpu.Seconds(), capacity)
	}
	if switches < 200 || h.ContextSwitches < switches {
		t.Errorf("host ctxt %d < the children's %d context switches (at least 200: one wait per /bin/true)", h.ContextSwitches, switches)
	}
}
