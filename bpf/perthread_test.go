//go:build linux

package bpf

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// burstSource runs in short bursts (300 µs of CPU, 700 µs asleep), as a
// server between short queries does; each line on stdin starts one more
// such thread, whose thread id it prints.
const burstSource = `
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static void *burst(void *arg) {
	if (arg) {
		printf("%d\n", gettid());
		fflush(stdout);
	}
	for (;;) {
		double start = now();
		while (now() - start < 300e-6)
			sink++;
		usleep(700);
	}
	return NULL;
}

int main(void) {
	pthread_t t;
	char line[16];
	pthread_create(&t, NULL, burst, NULL);
	while (fgets(line, sizeof line, stdin)) {
		pthread_create(&t, NULL, burst, (void *)1);
	}
	return 0;
}
`

// buildBurst compiles burstSource, or skips the test without gcc.
func buildBurst(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	src, bin := filepath.Join(dir, "burst.c"), filepath.Join(dir, "burst")
	if err := os.WriteFile(src, []byte(burstSource), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("gcc", "-O1", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	return bin
}

// threadCPU is the CPU seconds of thread tid of process pid so far: the
// scheduler's run time in nanoseconds, first in schedstat.
func threadCPU(t *testing.T, pid, tid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	ns, err := strconv.ParseInt(strings.Fields(string(b))[0], 10, 64)
	if err != nil {
		t.Fatalf("schedstat of thread %d: %q: %v", tid, b, err)
	}
	return float64(ns) / 1e9
}

// TestProfilePerThread samples a bursty process with per-thread events: a
// thread it creates while sampling inherits the event, every thread's
// samples follow its CPU time, and closing leaves no descriptor behind.
func TestProfilePerThread(t *testing.T) {
	bin := buildBurst(t)
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start(t, cmd)
	pid := cmd.Process.Pid
	time.Sleep(100 * time.Millisecond) // the first burst thread exists
	before, err := threads("/proc", pid)
	if err != nil {
		t.Fatal(err)
	}

	fdsBefore := openFDs(t)
	const hz = 499
	p := load(t, Options{PID: pid, FrequencyHz: hz, PerThread: true})
	if err := p.Start(); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if n := len(p.events); n != len(before) {
		t.Errorf("%d events for the %d threads %v", n, len(before), before)
	}
	cpu0 := map[int]float64{}
	for _, tid := range before {
		cpu0[tid] = threadCPU(t, pid, tid)
	}
	// A thread created now, by a thread that has an event: inherited.
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the new thread's id: %v", err)
	}
	newTID, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || slices.Contains(before, newTID) {
		t.Fatalf("new thread %q (%v): want a thread id not among %v", line, err, before)
	}
	cpu0[newTID] = threadCPU(t, pid, newTID)
	time.Sleep(2 * time.Second)
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	cpu := map[int]float64{}
	for tid, c := range cpu0 {
		cpu[tid] = threadCPU(t, pid, tid) - c
	}
	counts, err := p.Counts()
	if err != nil {
		t.Fatal(err)
	}
	h, err := p.Health()
	if err != nil {
		t.Fatal(err)
	}

	perTID := map[int]uint64{}
	var sum uint64
	for _, c := range counts {
		perTID[int(c.TID)] += c.Samples
		sum += c.Samples
		if c.PID != uint32(pid) {
			t.Errorf("count %+v: want PID %d", c, pid)
		}
	}
	t.Logf("health %+v; samples per thread %v; CPU-s per thread %v", h, perTID, cpu)
	if h.Idle != 0 {
		t.Errorf("%d idle samples: per-thread events run only while their thread does", h.Idle)
	}
	if h.Samples != sum+h.MapFull {
		t.Errorf("Health.Samples = %d, want sum of counts %d + MapFull %d", h.Samples, sum, h.MapFull)
	}
	// Busy threads: the main thread only waits on stdin.
	for _, tid := range append(before[1:], newTID) {
		want := hz * cpu[tid]
		got := float64(perTID[tid])
		what := "thread"
		if tid == newTID {
			what = "thread created while sampling"
		}
		if got < 0.85*want-10 || got > 1.15*want+10 || got < 30 {
			t.Errorf("%s %d: %.0f samples for %.3f CPU-s at %d Hz, want about %.0f", what, tid, got, cpu[tid], hz, want)
		}
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if fdsAfter := openFDs(t); fdsAfter != fdsBefore {
		t.Errorf("%d open fds after Close, %d before Load: leaked", fdsAfter, fdsBefore)
	}
}

// TestPerThreadExited: per-thread events of a process that has exited
// cannot open, and the error says so.
func TestPerThreadExited(t *testing.T) {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	p := load(t, Options{PID: cmd.Process.Pid, FrequencyHz: 99, PerThread: true})
	err := p.Start()
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("threads of process %d", cmd.Process.Pid)) {
		t.Errorf("Start on an exited process: %v, want an error naming it", err)
	}
}
