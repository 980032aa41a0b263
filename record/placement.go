package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// Placements are the named values of Config.Placement; a list
// ("server=1,client=0") is the fourth form (ParsePlacement).
const (
	// PlacementNone leaves the server and the client where the scheduler
	// puts them, and pins nothing (Config.Placement "").
	PlacementNone = "none"
	// PlacementSame pins the server's threads and the client to one CPU,
	// the last this process may use.
	PlacementSame = "same"
	// PlacementSeparate pins the server's threads to the last CPU this
	// process may use and the client to the first.
	PlacementSeparate = "separate"
)

// Placement is where the server's threads and the workload client run:
// a parsed Config.Placement. Server and Client are the CPUs of a list
// placement; Resolve gives the CPUs of every form on a machine.
type Placement struct {
	// Mode is PlacementNone, PlacementSame, PlacementSeparate or "list".
	Mode string
	// Server and Client are a list placement's CPUs, sorted; nil when
	// that side is not pinned.
	Server, Client []int
}

// ParsePlacement parses a placement: "none" (or ""), "same", "separate",
// or a list of the CPUs of each side, "server=LIST,client=LIST", where
// LIST is a CPU list as the kernel writes one ("1", "0-3,6") and either
// side may be left out (not pinned). Its errors start with the quoted
// value and say what is wanted.
func ParsePlacement(s string) (Placement, error) {
	switch s {
	case "", PlacementNone:
		return Placement{Mode: PlacementNone}, nil
	case PlacementSame, PlacementSeparate:
		return Placement{Mode: s}, nil
	}
	const want = "want none, same, separate, or server=CPUS,client=CPUS (CPU lists such as 1 or 0-3,6; either side may be left out)"
	p := Placement{Mode: "list"}
	lists := map[string]*strings.Builder{}
	var cur *strings.Builder
	for _, piece := range strings.Split(s, ",") {
		key, val, ok := strings.Cut(piece, "=")
		if ok {
			if key != "server" && key != "client" {
				return Placement{}, fmt.Errorf("%q: unknown side %q: %s", s, key, want)
			}
			if lists[key] != nil {
				return Placement{}, fmt.Errorf("%q: %s given twice: %s", s, key, want)
			}
			cur = &strings.Builder{}
			lists[key] = cur
			piece = val
		} else if cur == nil {
			return Placement{}, fmt.Errorf("%q: %s", s, want)
		} else {
			cur.WriteByte(',')
		}
		cur.WriteString(piece)
	}
	for key, b := range lists {
		cpus, err := ParseCPUList(b.String())
		if err != nil {
			return Placement{}, fmt.Errorf("%q: %s: %w", s, key, err)
		}
		if key == "server" {
			p.Server = cpus
		} else {
			p.Client = cpus
		}
	}
	return p, nil
}

// String returns the placement as ParsePlacement reads it.
func (p Placement) String() string {
	if p.Mode != "list" {
		if p.Mode == "" {
			return PlacementNone
		}
		return p.Mode
	}
	var parts []string
	if p.Server != nil {
		parts = append(parts, "server="+FormatCPUList(p.Server))
	}
	if p.Client != nil {
		parts = append(parts, "client="+FormatCPUList(p.Client))
	}
	return strings.Join(parts, ",")
}

// Resolve returns the CPUs of the server's threads and of the client on
// a machine where this process may use the CPUs allowed (sorted): same is
// the last of them for both, separate the last for the server and the
// first for the client. A side not pinned is nil. A list naming a CPU
// that is not allowed, or separate with one CPU, is an error.
func (p Placement) Resolve(allowed []int) (server, client []int, err error) {
	if len(allowed) == 0 && p.Mode != PlacementNone && p.Mode != "" {
		return nil, nil, errors.New("no CPU is allowed to this process")
	}
	switch p.Mode {
	case "", PlacementNone:
		return nil, nil, nil
	case PlacementSame:
		last := allowed[len(allowed)-1]
		return []int{last}, []int{last}, nil
	case PlacementSeparate:
		if len(allowed) < 2 {
			return nil, nil, fmt.Errorf("separate needs two CPUs, this process may use only CPU %s", FormatCPUList(allowed))
		}
		return []int{allowed[len(allowed)-1]}, []int{allowed[0]}, nil
	}
	ok := map[int]bool{}
	for _, c := range allowed {
		ok[c] = true
	}
	for _, side := range []struct {
		name string
		cpus []int
	}{{"server", p.Server}, {"client", p.Client}} {
		for _, c := range side.cpus {
			if !ok[c] {
				return nil, nil, fmt.Errorf("%s CPU %d is not one this process may use (%s)", side.name, c, FormatCPUList(allowed))
			}
		}
	}
	return p.Server, p.Client, nil
}

// maxCPU bounds the CPU numbers of a CPU list (the kernel's NR_CPUS is at
// most 8192).
const maxCPU = 8191

// ParseCPUList parses a CPU list as the kernel writes one
// (Cpus_allowed_list, cpuset.cpus, taskset -c): comma-separated numbers
// and ranges "A-B" (A <= B). It returns the CPUs sorted without
// duplicates; an empty list is an error.
func ParseCPUList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, errors.New("empty CPU list")
	}
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := cpuNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = cpuNumber(hi); err != nil {
				return nil, fmt.Errorf("CPU list %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("CPU list %q: range %s runs backwards", s, part)
			}
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	sort.Ints(out)
	return out, nil
}

func cpuNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || s != strconv.Itoa(n) {
		return 0, fmt.Errorf("%q is not a CPU number", s)
	}
	if n > maxCPU {
		return 0, fmt.Errorf("CPU %d is beyond the most a kernel has (%d)", n, maxCPU)
	}
	return n, nil
}

// FormatCPUList writes sorted CPUs as the kernel does: "0-3,6".
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(cpus[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(cpus[j]))
		}
		i = j + 1
	}
	return b.String()
}

// ParseStatusAffinity returns the Cpus_allowed_list of a
// /proc/PID/task/TID/status text, parsed (ParseCPUList).
func ParseStatusAffinity(data []byte) ([]int, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Cpus_allowed_list:"); ok {
			return ParseCPUList(v)
		}
	}
	return nil, errors.New("no Cpus_allowed_list line")
}

// threadAffinity is one thread and the CPUs it may run on.
type threadAffinity struct {
	tid  int
	name string
	cpus []int
}

// readAffinities returns the affinity of every thread of pid, by thread
// id; threads that exit while it reads are left out.
func readAffinities(procRoot string, pid int) ([]threadAffinity, error) {
	dir := filepath.Join(procRoot, strconv.Itoa(pid), "task")
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []threadAffinity
	for _, t := range tasks {
		tid, err := strconv.Atoi(t.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, t.Name(), "status"))
		if err != nil {
			continue // exited
		}
		cpus, err := ParseStatusAffinity(data)
		if err != nil {
			return nil, fmt.Errorf("thread %d: %w", tid, err)
		}
		comm, _ := os.ReadFile(filepath.Join(dir, t.Name(), "comm"))
		out = append(out, threadAffinity{tid: tid, name: strings.TrimSpace(string(comm)), cpus: cpus})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tid < out[j].tid })
	return out, nil
}

// affinityFigures sums threads by CPU list for run.json, and names the
// threads whose CPUs are not want (nil: anything goes), each as
// "SIDE TID NAME: CPUS".
func affinityFigures(side string, threads []threadAffinity, want []int) (found []fold.Affinity, mismatched []string) {
	byList := map[string]int{}
	wantList := FormatCPUList(want)
	for _, t := range threads {
		l := FormatCPUList(t.cpus)
		byList[l]++
		if want != nil && l != wantList {
			mismatched = append(mismatched, fmt.Sprintf("%s %d %s: %s", side, t.tid, t.name, l))
		}
	}
	for l, n := range byList {
		found = append(found, fold.Affinity{CPUs: l, Threads: n})
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].Threads != found[j].Threads {
			return found[i].Threads > found[j].Threads
		}
		return found[i].CPUs < found[j].CPUs
	})
	return found, mismatched
}
