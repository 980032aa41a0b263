//go:build linux

package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Capability bits of /proc/PID/status CapEff.
const (
	capSysAdmin  = 21
	capSysPtrace = 19
	capPerfmon   = 38
)

// access is what decides whether this process may sample another one.
type access struct {
	EUID        int
	Paranoid    int   // kernel.perf_event_paranoid
	ParanoidErr error // reading it failed (no perf events in this kernel)
	CapEff      uint64
	TargetUID   int // owner of the process to sample; -1 when unknown
}

func (a access) has(bit uint) bool { return a.CapEff&(1<<bit) != 0 }

const paranoidFix = "run flamediff as root, or allow sampling with: sysctl kernel.perf_event_paranoid=1"

// checkAccess is CheckPerf's permission rule, a pure function of its input.
func checkAccess(a access) error {
	if a.ParanoidErr != nil {
		return fmt.Errorf("this kernel offers no perf events (%w): %w", a.ParanoidErr, errors.ErrUnsupported)
	}
	if a.EUID == 0 || a.has(capSysAdmin) {
		return nil
	}
	if !a.has(capPerfmon) && a.Paranoid > 2 {
		return fmt.Errorf("kernel.perf_event_paranoid is %d, which forbids sampling to users other than root; %s: %w",
			a.Paranoid, paranoidFix, ErrPermission)
	}
	if a.TargetUID >= 0 && a.TargetUID != a.EUID && !a.has(capSysPtrace) {
		return fmt.Errorf("the process runs as uid %d and flamediff as uid %d; sampling another user's process needs root (or CAP_PERFMON with CAP_SYS_PTRACE): %w",
			a.TargetUID, a.EUID, ErrPermission)
	}
	return nil
}

// currentAccess reads the facts for checkAccess from this system.
// targetPID 0 means no particular target.
func currentAccess(targetPID int) access {
	a := access{EUID: os.Geteuid(), TargetUID: -1}
	b, err := os.ReadFile("/proc/sys/kernel/perf_event_paranoid")
	if err != nil {
		a.ParanoidErr = err
	} else if a.Paranoid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
		a.ParanoidErr = fmt.Errorf("perf_event_paranoid: %w", err)
	}
	if st, err := os.ReadFile("/proc/self/status"); err == nil {
		a.CapEff = statusHex(string(st), "CapEff:")
	}
	if targetPID > 0 {
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(targetPID) + "/status"); err == nil {
			// "Uid:	real	effective	saved	fs"
			for _, line := range strings.Split(string(st), "\n") {
				if f := strings.Fields(line); len(f) >= 2 && f[0] == "Uid:" {
					if uid, err := strconv.Atoi(f[1]); err == nil {
						a.TargetUID = uid
					}
				}
			}
		}
	}
	return a
}

func statusHex(status, key string) uint64 {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			v, _ := strconv.ParseUint(strings.TrimSpace(rest), 16, 64)
			return v
		}
	}
	return 0
}

const installFix = "install it with: apt-get install linux-perf (Ubuntu: linux-tools-$(uname -r))"

// lookPerf finds the perf binary (path "" means "perf" from PATH) and
// checks that it runs ("perf version"): Debian's and Ubuntu's wrappers fail
// when no perf matches the running kernel.
func lookPerf(ctx context.Context, path string) (string, error) {
	if path == "" {
		path = "perf"
	}
	full, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("perf not found (%w); %s: %w", err, installFix, ErrNotInstalled)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, full, "version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s version: %w: %s; %s: %w", full, err, tail(string(out), 3), installFix, ErrNotInstalled)
	}
	return full, nil
}

// CheckPerf is a quick preflight for the perf sampler: perf is on PATH and
// runs, and this user may sample another process (root, CAP_PERFMON or
// CAP_SYS_ADMIN, or kernel.perf_event_paranoid at most 2). Errors wrap
// ErrNotInstalled or ErrPermission and say how to fix the problem. Sampling
// a process of another user needs root even when CheckPerf passes; Start
// checks that.
func CheckPerf() error {
	if _, err := lookPerf(context.Background(), ""); err != nil {
		return err
	}
	return checkAccess(currentAccess(0))
}

// tail returns the last n non-empty lines of s, joined by "; ".
func tail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}
