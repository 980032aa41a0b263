//go:build linux

package capture

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// requirePerf skips the test unless it runs as root with a working perf.
func requirePerf(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("sampling tests need root (perf record -p on a process)")
	}
	if err := CheckPerf(); err != nil {
		t.Skipf("perf not usable: %v", err)
	}
}

// burner starts a shell spinning on a CPU and kills it at the end of the test.
func burner(t testing.TB) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

// perfChildren returns the PIDs of perf processes whose parent is this test.
func perfChildren(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := strconv.Itoa(os.Getpid())
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var name, ppid string
		for _, l := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(l, "Name:"); ok {
				name = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(l, "PPid:"); ok {
				ppid = strings.TrimSpace(v)
			}
		}
		if ppid == self && strings.HasPrefix(name, "perf") {
			out = append(out, pid)
		}
	}
	return out
}

// checkNoPerfLeft fails when perf record (or any perf child) is still there.
func checkNoPerfLeft(t *testing.T, p *Perf) {
	t.Helper()
	if p.run != nil && p.run.cmd != nil {
		if err := syscall.Kill(p.run.cmd.Process.Pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("perf record (pid %d) still exists: kill 0 = %v", p.run.cmd.Process.Pid, err)
		}
	}
	if left := perfChildren(t); len(left) > 0 {
		t.Errorf("perf processes left behind: %v", left)
	}
}

func TestPerfSample(t *testing.T) {
	requirePerf(t)
	target := burner(t)
	var stderr bytes.Buffer
	p := NewPerf().(*Perf)
	work := t.TempDir()
	ctx := context.Background()
	if err := p.Start(ctx, target.Process.Pid, Options{FrequencyHz: 499, WorkDir: work, KeepRaw: true, Stderr: &stderr}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	time.Sleep(2 * time.Second)
	soFar := p.SamplesSoFar()
	res, err := p.Stop(ctx)
	if err != nil {
		t.Fatalf("Stop: %v\nperf stderr:\n%s", err, stderr.String())
	}
	checkNoPerfLeft(t, p)
	t.Logf("samples %d (SamplesSoFar said %d), lost %d, stacks %d, warnings %q", res.Samples, soFar, res.Lost, len(res.Profile.Stacks), res.Warnings)
	// The estimate comes from the target's CPU time, so it holds however
	// busy the machine is.
	if soFar < res.Samples/2 || soFar > res.Samples*3/2 {
		t.Errorf("SamplesSoFar just before Stop = %d, want about %d", soFar, res.Samples)
	}
	// ~998 expected at 499 Hz over 2 s of a busy CPU.
	if res.Samples < 100 {
		t.Errorf("Samples = %d, want hundreds", res.Samples)
	}
	if res.Sampler != "perf" || res.Profile.Unit != "samples" || res.Profile.Event != "cpu-clock" {
		t.Errorf("Sampler, Unit, Event = %q, %q, %q, want perf, samples, cpu-clock", res.Sampler, res.Profile.Unit, res.Profile.Event)
	}
	if got := res.Profile.Total(); got != res.Profile.Samples {
		t.Errorf("Profile.Total() = %d, want Profile.Samples %d (one count per sample)", got, res.Profile.Samples)
	}
	if d := res.Samples - res.Profile.Samples; d < -5 || d > 5 {
		t.Errorf("Samples %d, profile samples %d: too far apart", res.Samples, res.Profile.Samples)
	}
	for _, s := range res.Profile.Stacks {
		if len(s.Frames) == 0 || s.Frames[0] != "sh" {
			t.Errorf("stack %q: first frame is not the comm %q", s.Key(), "sh")
		}
		for _, f := range s.Frames {
			if strings.HasSuffix(f, "_[k]") {
				t.Errorf("stack %q has a kernel frame without Options.Kernel", s.Key())
			}
		}
	}
	if len(res.Profile.Stacks) == 0 {
		t.Error("no stacks")
	}
	if res.RawPath != filepath.Join(work, "perf.data") {
		t.Errorf("RawPath = %q, want perf.data in the work dir", res.RawPath)
	} else if _, err := os.Stat(res.RawPath); err != nil {
		t.Errorf("KeepRaw: %v", err)
	}
	res2, err2 := p.Stop(ctx)
	if res2 != res || err2 != nil {
		t.Errorf("second Stop = %p, %v, want the first result %p, nil", res2, err2, res)
	}
	if n := p.SamplesSoFar(); n != res.Samples {
		t.Errorf("SamplesSoFar after Stop = %d, want %d", n, res.Samples)
	}
	if err := p.Start(ctx, target.Process.Pid, Options{}); err == nil {
		t.Error("Start after Stop = nil error, want one")
	}
}

// A relative work directory (record --out runs/x) is where perf.data lands,
// although perf itself runs inside that directory.
func TestPerfRelativeWorkDir(t *testing.T) {
	requirePerf(t)
	target := burner(t)
	base := t.TempDir()
	t.Chdir(base)
	if err := os.Mkdir("run", 0o755); err != nil {
		t.Fatal(err)
	}
	p := NewPerf().(*Perf)
	ctx := context.Background()
	if err := p.Start(ctx, target.Process.Pid, Options{FrequencyHz: 199, WorkDir: "run", KeepRaw: true}); err != nil {
		t.Fatalf("Start with WorkDir %q: %v", "run", err)
	}
	time.Sleep(300 * time.Millisecond)
	res, err := p.Stop(ctx)
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	want := filepath.Join(base, "run", "perf.data")
	if res.RawPath != want {
		t.Errorf("RawPath = %q, want %q", res.RawPath, want)
	}
	if _, err := os.Stat(want); err != nil {
		t.Errorf("perf.data: %v", err)
	}
}

func TestPerfTempDirRemoved(t *testing.T) {
	requirePerf(t)
	target := burner(t)
	p := &Perf{}
	if err := p.Start(context.Background(), target.Process.Pid, Options{FrequencyHz: 199, Kernel: true}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	dir := p.run.dir
	time.Sleep(500 * time.Millisecond)
	res, err := p.Stop(context.Background())
	if err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if res.RawPath != "" {
		t.Errorf("RawPath = %q without KeepRaw", res.RawPath)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary work dir %s not removed: %v", dir, err)
	}
	checkNoPerfLeft(t, p)
}

func TestPerfTargetDies(t *testing.T) {
	requirePerf(t)
	target := burner(t)
	p := &Perf{}
	ctx := context.Background()
	if err := p.Start(ctx, target.Process.Pid, Options{FrequencyHz: 499}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	time.Sleep(time.Second)
	target.Process.Kill()
	target.Wait()
	time.Sleep(500 * time.Millisecond)
	res, err := p.Stop(ctx)
	if err != nil {
		t.Fatalf("Stop after the target died: %v", err)
	}
	if res.Samples < 50 {
		t.Errorf("Samples = %d, want those of the second before the kill", res.Samples)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "exited during sampling") {
		t.Errorf("Warnings = %q, want one saying the process exited", res.Warnings)
	}
	checkNoPerfLeft(t, p)
}

func TestPerfContextCancel(t *testing.T) {
	requirePerf(t)
	target := burner(t)
	p := &Perf{}
	ctx, cancel := context.WithCancel(context.Background())
	if err := p.Start(ctx, target.Process.Pid, Options{FrequencyHz: 499}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	time.Sleep(time.Second)
	cancel()
	select {
	case <-p.run.done:
	case <-time.After(10 * time.Second):
		t.Fatal("perf record still runs 10s after its context was cancelled")
	}
	checkNoPerfLeft(t, p)
	res, err := p.Stop(context.Background())
	if err != nil {
		t.Fatalf("Stop after cancel: %v", err)
	}
	if res.Samples == 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), "cancelled") {
		t.Errorf("Stop after cancel: %d samples, warnings %q; want samples and a warning", res.Samples, res.Warnings)
	}
}

func TestPerfStopContextCancelled(t *testing.T) {
	requirePerf(t)
	target := burner(t)
	p := &Perf{}
	if err := p.Start(context.Background(), target.Process.Pid, Options{}); err != nil {
		t.Fatalf("Start: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Stop(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Stop(cancelled ctx) = %v, want context.Canceled", err)
	}
	checkNoPerfLeft(t, p)
	if _, err := os.Stat(p.run.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("work dir left: %v", err)
	}
}

func TestPerfStartErrors(t *testing.T) {
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		p    *Perf
		pid  int
		opts Options
		want error
	}{
		{"process gone", &Perf{}, gone.Process.Pid, Options{}, ErrProcessGone},
		{"perf missing", &Perf{Path: "/nonexistent/perf"}, os.Getpid(), Options{}, ErrNotInstalled},
	}
	for _, tt := range tests {
		err := tt.p.Start(context.Background(), tt.pid, tt.opts)
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: Start = %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := (&Perf{}).Stop(context.Background()); err == nil {
		t.Error("Stop before Start = nil error, want one")
	}
	if left := perfChildren(t); len(left) > 0 {
		t.Errorf("perf processes left behind: %v", left)
	}
}

func TestPerfStartCancelled(t *testing.T) {
	requirePerf(t)
	target := burner(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &Perf{}
	if err := p.Start(ctx, target.Process.Pid, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Start(cancelled ctx) = %v, want context.Canceled", err)
	}
	if left := perfChildren(t); len(left) > 0 {
		t.Errorf("perf processes left behind: %v", left)
	}
}
