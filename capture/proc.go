//go:build linux

package capture

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// FindProcesses returns the processes under procRoot ("/proc", or a fake
// tree in tests) whose comm or argv[0] base name is one of names, sorted by
// PID. Zombies and kernel threads are left out; processes that vanish while
// the tree is read are skipped. An error means procRoot itself could not be
// read.
func FindProcesses(procRoot string, names ...string) ([]Process, error) {
	ents, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("find processes: %w", err)
	}
	var out []Process
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		p, ok := readProcess(filepath.Join(procRoot, e.Name()), pid)
		if !ok {
			continue
		}
		arg0 := ""
		if len(p.Cmdline) > 0 {
			arg0 = filepath.Base(p.Cmdline[0])
		}
		if slices.Contains(names, p.Comm) || arg0 != "" && slices.Contains(names, arg0) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// readProcess reads comm, cmdline and state of one /proc/PID directory. It
// reports false for processes that are gone, zombies and kernel threads
// (empty cmdline).
func readProcess(dir string, pid int) (Process, bool) {
	comm, err := os.ReadFile(filepath.Join(dir, "comm"))
	if err != nil {
		return Process{}, false
	}
	cmd, err := os.ReadFile(filepath.Join(dir, "cmdline"))
	if err != nil || len(cmd) == 0 {
		return Process{}, false
	}
	if stat, err := os.ReadFile(filepath.Join(dir, "stat")); err == nil {
		// "PID (comm) S ...": the state follows the last ')'.
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			if s := stat[i+2]; s == 'Z' || s == 'X' || s == 'x' {
				return Process{}, false
			}
		}
	}
	cmd = bytes.TrimRight(cmd, "\x00")
	var args []string
	for _, a := range bytes.Split(cmd, []byte{0}) {
		args = append(args, string(a))
	}
	return Process{PID: pid, Comm: strings.TrimRight(string(comm), "\n"), Cmdline: args}, true
}

// FindServer returns the single running mariadbd or mysqld process under
// procRoot. With none it returns an error wrapping ErrNoProcess, with
// several one wrapping ErrAmbiguous whose message lists their PIDs and
// command lines.
func FindServer(procRoot string) (Process, error) {
	ps, err := FindProcesses(procRoot, serverNames...)
	if err != nil {
		return Process{}, err
	}
	switch len(ps) {
	case 0:
		return Process{}, fmt.Errorf("find server: no %s process is running (start the server, or give its PID): %w",
			strings.Join(serverNames, " or "), ErrNoProcess)
	case 1:
		return ps[0], nil
	}
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "\n  %d: %s", p.PID, strings.Join(p.Cmdline, " "))
	}
	return Process{}, fmt.Errorf("find server: %d server processes are running, give the PID of one:%s\n%w", len(ps), b.String(), ErrAmbiguous)
}

// ReadPIDFile reads a server's PID file (a decimal PID, optionally followed
// by a newline) and checks that the process exists. Errors say whether the
// file is missing or unreadable, holds no PID, or names a process that is
// gone (wrapping ErrProcessGone).
func ReadPIDFile(path string) (int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("pid file %s does not exist (is the server running? is this its pid-file setting?): %w", path, err)
		}
		return 0, fmt.Errorf("pid file: %w", err)
	}
	s := strings.TrimSpace(string(data))
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("pid file %s: %q is not a process ID", path, shorten(s, 40))
	}
	if err := processAlive(pid); err != nil {
		return 0, fmt.Errorf("pid file %s: %w", path, err)
	}
	return pid, nil
}

// processAlive returns nil when pid exists (even if owned by another user),
// else an error wrapping ErrProcessGone.
func processAlive(pid int) error {
	err := syscall.Kill(pid, 0)
	if err == nil || errors.Is(err, syscall.EPERM) {
		if zombie(pid) {
			return fmt.Errorf("process %d has exited (zombie): %w", pid, ErrProcessGone)
		}
		return nil
	}
	return fmt.Errorf("process %d does not exist: %w", pid, ErrProcessGone)
}

func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X')
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
