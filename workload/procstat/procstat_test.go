package procstat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name         string
		file         string // under testdata, or
		text         string
		utime, stime uint64
		comm         string
		wantErr      bool
	}{
		{name: "python", file: "proc/python.stat", utime: 25, stime: 5, comm: "python3"},
		{name: "mariadbd", file: "proc/mariadbd/24122/stat", utime: 252, stime: 189, comm: "mariadbd"},
		{name: "parentheses and spaces", file: "proc/weird.stat", utime: 7, stime: 5, comm: "my (weird) proc"},
		{name: "fake fields in the name", file: "proc/fakefields.stat", utime: 7, stime: 5, comm: "x) R 1 2 (y"},
		{name: "newline in the name", file: "proc/newline.stat", utime: 7, stime: 5, comm: "sp ace\nnl"},
		{name: "empty name", text: "1 () S 0 1 1 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0", utime: 3, stime: 4, comm: ""},
		{name: "huge utime", text: "1 (a) S 0 1 1 0 -1 0 0 0 0 0 18446744073709551615 4 0 0 20 0 1 0", utime: 1<<64 - 1, stime: 4, comm: "a"},
		{name: "empty", text: "", wantErr: true},
		{name: "no name", text: "1 S 0 1 1 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0", wantErr: true},
		{name: "unclosed name", text: "1 (a S 0 1 1 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0", wantErr: true},
		{name: "bad pid", text: "x (a) S 0 1 1 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0", wantErr: true},
		{name: "too few fields", text: "1 (a) S 0 1 1 0 -1 0 0 0 0 0 3 4", wantErr: true},
		{name: "negative utime", text: "1 (a) S 0 1 1 0 -1 0 0 0 0 0 -3 4 0 0 20 0 1 0", wantErr: true},
		{name: "long state", text: "1 (a) SS 0 1 1 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.text)
			if tt.file != "" {
				data = readTestdata(t, tt.file)
			}
			utime, stime, comm, err := ParseStat(data)
			if tt.wantErr {
				if err == nil || !errors.Is(err, ErrBadProcData) {
					t.Fatalf("ParseStat(%q) error = %v, want ErrBadProcData", data, err)
				}
				if utime != 0 || stime != 0 || comm != "" {
					t.Errorf("ParseStat(%q) = %d, %d, %q with an error, want zeros", data, utime, stime, comm)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseStat(%q): %v", data, err)
			}
			if utime != tt.utime || stime != tt.stime || comm != tt.comm {
				t.Errorf("ParseStat(%q) = %d, %d, %q, want %d, %d, %q", data, utime, stime, comm, tt.utime, tt.stime, tt.comm)
			}
		})
	}
}

func TestParseStatFields(t *testing.T) {
	f, err := parseStat(readTestdata(t, "proc/mariadbd/24122/stat"))
	if err != nil {
		t.Fatal(err)
	}
	want := statFields{pid: 24122, comm: "mariadbd", state: 'S', ppid: 1, pgrp: 24075, utime: 252, stime: 189, numThreads: 17}
	if f != want {
		t.Errorf("parseStat = %+v, want %+v", f, want)
	}
}

func TestParseStatus(t *testing.T) {
	tests := []struct {
		name        string
		file        string
		text        string
		vol, invol  int64
		wantErr     bool
		errContains string
	}{
		{name: "python", file: "proc/python.status", vol: 23, invol: 34},
		{name: "escaped newline in Name", file: "proc/newline.status", vol: 28, invol: 24},
		{name: "minimal", text: "voluntary_ctxt_switches:\t1\nnonvoluntary_ctxt_switches:\t2", vol: 1, invol: 2},
		{name: "spaces", text: "voluntary_ctxt_switches:   10  \nnonvoluntary_ctxt_switches: 0\n", vol: 10, invol: 0},
		{name: "empty", text: "", wantErr: true, errContains: "voluntary_ctxt_switches"},
		{name: "no nonvoluntary", text: "voluntary_ctxt_switches:\t1\n", wantErr: true, errContains: "nonvoluntary_ctxt_switches"},
		{name: "not a number", text: "voluntary_ctxt_switches:\tx\nnonvoluntary_ctxt_switches:\t2", wantErr: true},
		{name: "negative", text: "voluntary_ctxt_switches:\t-1\nnonvoluntary_ctxt_switches:\t2", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.text)
			if tt.file != "" {
				data = readTestdata(t, tt.file)
			}
			vol, invol, err := ParseStatus(data)
			if tt.wantErr {
				if !errors.Is(err, ErrBadProcData) {
					t.Fatalf("ParseStatus(%q) error = %v, want ErrBadProcData", data, err)
				}
				if tt.errContains != "" && !strings.Contains(err.Error(), tt.errContains) {
					t.Errorf("ParseStatus(%q) error = %q, want it to name %q", data, err, tt.errContains)
				}
				if vol != 0 || invol != 0 {
					t.Errorf("ParseStatus(%q) = %d, %d with an error, want zeros", data, vol, invol)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseStatus(%q): %v", data, err)
			}
			if vol != tt.vol || invol != tt.invol {
				t.Errorf("ParseStatus(%q) = %d, %d, want %d, %d", data, vol, invol, tt.vol, tt.invol)
			}
		})
	}
}

func TestParseIO(t *testing.T) {
	tests := []struct {
		name                 string
		file                 string
		text                 string
		syscr, syscw, rb, wb int64
		wantErr              bool
	}{
		{name: "python", file: "proc/python.io", syscr: 962, syscw: 33, rb: 0, wb: 118784},
		{name: "mariadbd", file: "proc/mariadbd/24122/io", syscr: 486, syscw: 2355, rb: 2969600, wb: 15671296},
		{name: "order does not matter", text: "write_bytes: 4\nread_bytes: 3\nsyscw: 2\nsyscr: 1\n", syscr: 1, syscw: 2, rb: 3, wb: 4},
		{name: "no read_bytes (no task I/O accounting)", text: "rchar: 1\nwchar: 1\nsyscr: 1\nsyscw: 1\n", wantErr: true},
		{name: "empty", text: "", wantErr: true},
		{name: "overflow", text: "syscr: 99999999999999999999\nsyscw: 1\nread_bytes: 1\nwrite_bytes: 1\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.text)
			if tt.file != "" {
				data = readTestdata(t, tt.file)
			}
			syscr, syscw, rb, wb, err := ParseIO(data)
			if tt.wantErr {
				if !errors.Is(err, ErrBadProcData) {
					t.Fatalf("ParseIO(%q) error = %v, want ErrBadProcData", data, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseIO(%q): %v", data, err)
			}
			if syscr != tt.syscr || syscw != tt.syscw || rb != tt.rb || wb != tt.wb {
				t.Errorf("ParseIO(%q) = %d, %d, %d, %d, want %d, %d, %d, %d", data, syscr, syscw, rb, wb, tt.syscr, tt.syscw, tt.rb, tt.wb)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	base := Snapshot{Time: t0, UserTicks: 1000, SystemTicks: 500, ClockTicks: 100, Voluntary: 10, Involuntary: 5,
		ReadOps: 100, WriteOps: 200, ReadBytes: 4096, WriteBytes: 8192, IOAvailable: true, Threads: 4}
	later := func(f func(*Snapshot)) *Snapshot {
		s := base
		f(&s)
		return &s
	}
	tests := []struct {
		name          string
		before, after *Snapshot
		want          Window
	}{
		{
			name:   "six seconds",
			before: &base,
			after: later(func(s *Snapshot) {
				s.Time = t0.Add(6 * time.Second)
				s.UserTicks += 250
				s.SystemTicks += 123
				s.Voluntary += 15261
				s.Involuntary += 7
				s.ReadOps += 3
				s.WriteOps += 40
				s.ReadBytes += 2048
				s.WriteBytes += 1 << 20
			}),
			want: Window{Seconds: 6, CPUUser: 2.5, CPUSystem: 1.23, Voluntary: 15261, Involuntary: 7,
				ReadOps: 3, WriteOps: 40, ReadKB: 2, WriteKB: 1024},
		},
		{
			name:   "other clock ticks",
			before: later(func(s *Snapshot) { s.ClockTicks = 250 }),
			after: later(func(s *Snapshot) {
				s.ClockTicks = 250
				s.Time = t0.Add(time.Second)
				s.UserTicks += 500
			}),
			want: Window{Seconds: 1, CPUUser: 2},
		},
		{
			name:   "zero clock ticks means 100",
			before: later(func(s *Snapshot) { s.ClockTicks = 0 }),
			after:  later(func(s *Snapshot) { s.ClockTicks = 0; s.SystemTicks += 50 }),
			want:   Window{CPUSystem: 0.5},
		},
		{
			name:   "threads exited: counts went down",
			before: &base,
			after: later(func(s *Snapshot) {
				s.Time = t0.Add(2 * time.Second)
				s.Voluntary = 3
				s.Involuntary = 1
				s.UserTicks += 10
			}),
			want: Window{Seconds: 2, CPUUser: 0.1},
		},
		{
			name:   "no io in one snapshot",
			before: &base,
			after: later(func(s *Snapshot) {
				s.IOAvailable = false
				s.ReadOps, s.WriteOps, s.ReadBytes, s.WriteBytes = 0, 0, 0, 0
			}),
			want: Window{},
		},
		{
			name:   "swapped",
			before: later(func(s *Snapshot) { s.Time = t0.Add(time.Second); s.UserTicks += 100 }),
			after:  &base,
			want:   Window{},
		},
		{
			name: "threads by name",
			before: later(func(s *Snapshot) {
				s.Tasks = map[int]Task{1: {"mariadbd", 1e9}, 2: {"worker", 5e8}, 3: {"worker", 2e8}, 4: {"gone", 7e9}}
			}),
			after: later(func(s *Snapshot) {
				// 2 and 3 ran 0.25 s each, 1 ran 0.1 s, 5 started in the
				// window, 4 exited, 6 started and did not run.
				s.Tasks = map[int]Task{1: {"mariadbd", 1.1e9}, 2: {"worker", 7.5e8}, 3: {"worker", 4.5e8}, 5: {"new", 3e8}, 6: {"idle", 0}}
			}),
			want: Window{Threads: []ThreadCPU{{"worker", 2, 0.5}, {"new", 1, 0.3}, {"mariadbd", 1, 0.1}}},
		},
		{
			name:   "threads in one snapshot only",
			before: &base,
			after:  later(func(s *Snapshot) { s.Tasks = map[int]Task{1: {"mariadbd", 1e9}} }),
			want:   Window{},
		},
		{
			name: "switches thread by thread",
			before: later(func(s *Snapshot) {
				s.TaskSwitches = map[int]Switches{1: {100, 10}, 2: {50, 5}, 3: {900, 90}}
			}),
			after: later(func(s *Snapshot) {
				// 1 switched 20 and 2, 2 switched 0, 3 exited (its 900
				// and 90 before the window no longer lower the sum), 4
				// started in the window and switched 7 and 1.
				s.Voluntary, s.Involuntary = 177, 18
				s.TaskSwitches = map[int]Switches{1: {120, 12}, 2: {50, 5}, 4: {7, 1}}
			}),
			want: Window{Voluntary: 27, Involuntary: 3, ExitedThreads: 1, Alive: map[int]bool{1: true, 2: true, 4: true}},
		},
		{name: "nil before", before: nil, after: &base, want: Window{}},
		{name: "nil after", before: &base, after: nil, want: Window{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff(tt.before, tt.after)
			if !windowsClose(got, tt.want) {
				t.Errorf("Diff() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestWindowCPU(t *testing.T) {
	w := Window{CPUUser: 2.5, CPUSystem: 1.25}
	if got := w.CPU(); got != 3.75 {
		t.Errorf("CPU() = %v, want 3.75", got)
	}
	s := Snapshot{UserTicks: 250, SystemTicks: 125}
	if got := s.CPUSeconds(); got != 3.75 {
		t.Errorf("CPUSeconds() = %v, want 3.75", got)
	}
}

func windowsClose(a, b Window) bool {
	near := func(x, y float64) bool { d := x - y; return d < 1e-9 && d > -1e-9 }
	return near(a.Seconds, b.Seconds) && near(a.CPUUser, b.CPUUser) && near(a.CPUSystem, b.CPUSystem) &&
		a.Voluntary == b.Voluntary && a.Involuntary == b.Involuntary && a.ReadOps == b.ReadOps &&
		a.WriteOps == b.WriteOps && near(a.ReadKB, b.ReadKB) && near(a.WriteKB, b.WriteKB) &&
		len(a.Threads) == len(b.Threads) && threadsClose(a.Threads, b.Threads, near)
}

func threadsClose(a, b []ThreadCPU, near func(x, y float64) bool) bool {
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Threads != b[i].Threads || !near(a[i].Seconds, b[i].Seconds) {
			return false
		}
	}
	return true
}

func TestParseSchedstat(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"123456789 1000 7\n", 123456789, true},
		{"42", 42, true},
		{"", 0, false},
		{"x 1 2", 0, false},
		{"-1 0 0", 0, false},
	} {
		got, err := ParseSchedstat([]byte(tt.in))
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseSchedstat(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
