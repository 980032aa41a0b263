//go:build linux

package record

import (
	"context"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/internal/mariadbtest"
	"github.com/flamediff/flamediff/internal/recordtest"
)

// TestRunPlacementMariaDB records a real server with the server and
// sysbench on different CPUs and checks that the placement held: the
// threads the server had when it was pinned, and the connection threads
// it started afterwards for sysbench (no thread cache, so each connection
// is a new thread), are on the server's CPU during the window, as taskset
// reads them; sysbench on the client's; and run.json says so.
func TestRunPlacementMariaDB(t *testing.T) {
	const sampler = "bpf"
	recordtest.RequireSampler(t, sampler)
	allowed := twoCPUs(t)
	server, client := allowed[len(allowed)-1], allowed[0]
	srv := mariadbtest.Start(t, mariadbtest.Options{Args: []string{"--thread-cache-size=0"}})
	srv.Prepare(t, "oltp_point_select", 10000)
	out := filepath.Join(t.TempDir(), "run")

	var mu sync.Mutex
	atPin := map[int]bool{}    // the server's threads when Run pinned them
	during := map[int]string{} // threads started since, and their affinity (taskset)
	var clientAffinity string  // sysbench's, during the window
	var clientPID int
	progress := func(st Status) {
		mu.Lock()
		defer mu.Unlock()
		switch st.Phase {
		case PhaseWarmup: // "workload started (pid N); ..."
			if _, after, ok := strings.Cut(st.Message, "(pid "); ok {
				clientPID, _ = strconv.Atoi(strings.TrimSuffix(strings.Fields(after)[0], ");"))
			}
		case PhasePlacement:
			for _, tid := range tids(t, srv.PID) {
				atPin[tid] = true
			}
		case PhaseTick:
			for _, tid := range tids(t, srv.PID) {
				if cpus := tasksetList(t, tid); !atPin[tid] && cpus != "" {
					during[tid] = cpus
				}
			}
			if clientPID > 0 {
				clientAffinity = tasksetList(t, clientPID)
			}
		}
	}
	placement := "server=" + strconv.Itoa(server) + ",client=" + strconv.Itoa(client)
	res, err := Run(context.Background(), Config{Sampler: sampler, Target: Target{PID: srv.PID}, Socket: srv.Socket,
		Placement: placement, Warmup: time.Second, Margin: time.Second, Out: out,
		Workload: srv.Sysbench(t, "oltp_point_select", "--threads=4", "--time=6", "run")}, progress)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("pinned %d threads; %d started after it, during the window: %v; sysbench (pid %d) on %q", len(atPin), len(during), during, clientPID, clientAffinity)
	if len(atPin) == 0 {
		t.Fatal("Run did not report pinning the server (PhasePlacement)")
	}
	if len(during) < 4 {
		t.Fatalf("%d server threads started after pinning; sysbench --threads=4 without a thread cache starts at least 4", len(during))
	}
	for tid, cpus := range during {
		if cpus != strconv.Itoa(server) {
			t.Errorf("server thread %d, started after pinning: CPUs %s, want %d", tid, cpus, server)
		}
	}
	if clientAffinity != strconv.Itoa(client) {
		t.Errorf("sysbench ran on CPUs %q, want %d", clientAffinity, client)
	}
	m, _ := recordtest.ReadRun(t, out)
	p := m.Placement
	if p == nil {
		t.Fatal("run.json has no placement")
	}
	if p.Asked != placement || p.ServerCPUs != strconv.Itoa(server) || p.ClientCPUs != strconv.Itoa(client) || p.PinnedServerThreads != len(atPin) {
		t.Errorf("run.json placement %+v; want %s asked, %d pinned", p, placement, len(atPin))
	}
	if want := []fold.Affinity{{CPUs: strconv.Itoa(server), Threads: p.Server[0].Threads}}; !reflect.DeepEqual(p.Server, want) || p.Server[0].Threads < len(atPin) {
		t.Errorf("run.json placement.server %+v; want every thread on CPU %d, at least the %d pinned", p.Server, server, len(atPin))
	}
	if len(p.Client) != 1 || p.Client[0].CPUs != strconv.Itoa(client) || len(p.Mismatched) != 0 {
		t.Errorf("run.json placement.client %+v, mismatched %q; want sysbench's threads on CPU %d", p.Client, p.Mismatched, client)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "placement") {
			t.Errorf("warning %q", w)
		}
	}
	// The host figures cover the window, the client included.
	h := m.Host
	if h == nil || h.CPUs < len(allowed) || h.CPUSeconds < m.CPUSeconds() || h.CPUMicrosPerOp < m.CPUMicrosPerOp() ||
		h.ContextSwitches < m.VoluntaryCtxSwitches+m.InvoluntaryCtxSwitches || h.CPUFreq == nil {
		t.Errorf("run.json host %+v; want at least the server's CPU (%.3f s, %.2f µs/o) and switches (%d)", h, m.CPUSeconds(), m.CPUMicrosPerOp(), m.VoluntaryCtxSwitches+m.InvoluntaryCtxSwitches)
	}
}

// tids returns the thread ids of pid.
func tids(t *testing.T, pid int) []int {
	t.Helper()
	threads, err := readAffinities("/proc", pid)
	if err != nil {
		t.Errorf("threads of %d: %v", pid, err)
	}
	var out []int
	for _, th := range threads {
		out = append(out, th.tid)
	}
	return out
}

// tasksetList returns the affinity of thread tid as taskset prints it
// ("pid N's current affinity list: 1"), or "" when it exited.
func tasksetList(t *testing.T, tid int) string {
	t.Helper()
	out, err := exec.Command("taskset", "-pc", strconv.Itoa(tid)).Output()
	if err != nil {
		if _, lerr := exec.LookPath("taskset"); lerr != nil {
			t.Skip("taskset not installed (util-linux): the test reads affinities with it")
		}
		return ""
	}
	_, list, _ := strings.Cut(strings.TrimSpace(string(out)), ": ")
	return list
}
