//go:build linux

package capture

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestCheckAccess(t *testing.T) {
	const (
		perfmon = 1 << capPerfmon
		ptrace  = 1 << capSysPtrace
		admin   = 1 << capSysAdmin
	)
	tests := []struct {
		name     string
		a        access
		wantErr  error
		contains []string
	}{
		{"root, paranoid 4", access{EUID: 0, Paranoid: 4, TargetUID: 999}, nil, nil},
		{"root, paranoid -1", access{EUID: 0, Paranoid: -1, TargetUID: -1}, nil, nil},
		{"user, paranoid 3 (Debian default)", access{EUID: 1000, Paranoid: 3, TargetUID: 1000}, ErrPermission,
			[]string{"perf_event_paranoid is 3", "sysctl kernel.perf_event_paranoid=1", "run flamediff as root"}},
		{"user, paranoid 4", access{EUID: 1000, Paranoid: 4, TargetUID: -1}, ErrPermission, []string{"perf_event_paranoid is 4"}},
		{"user, paranoid 2, own process", access{EUID: 1000, Paranoid: 2, TargetUID: 1000}, nil, nil},
		{"user, paranoid 1, unknown target", access{EUID: 1000, Paranoid: 1, TargetUID: -1}, nil, nil},
		{"user, paranoid 1, mysql's process", access{EUID: 1000, Paranoid: 1, TargetUID: 105}, ErrPermission,
			[]string{"uid 105", "uid 1000", "root"}},
		{"user with CAP_PERFMON, paranoid 3", access{EUID: 1000, Paranoid: 3, CapEff: perfmon, TargetUID: 1000}, nil, nil},
		{"CAP_PERFMON without CAP_SYS_PTRACE, other user", access{EUID: 1000, Paranoid: 3, CapEff: perfmon, TargetUID: 105}, ErrPermission, []string{"CAP_SYS_PTRACE"}},
		{"CAP_PERFMON and CAP_SYS_PTRACE, other user", access{EUID: 1000, Paranoid: 3, CapEff: perfmon | ptrace, TargetUID: 105}, nil, nil},
		{"CAP_SYS_ADMIN", access{EUID: 1000, Paranoid: 4, CapEff: admin, TargetUID: 105}, nil, nil},
		{"no perf events", access{EUID: 0, ParanoidErr: os.ErrNotExist, TargetUID: -1}, errors.ErrUnsupported, []string{"no perf events"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkAccess(tt.a)
			if (err != nil) != (tt.wantErr != nil) || !errors.Is(err, tt.wantErr) {
				t.Fatalf("checkAccess(%+v) = %v, want %v", tt.a, err, tt.wantErr)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("checkAccess(%+v) = %q, want it to contain %q", tt.a, err, s)
				}
			}
		})
	}
}

func TestStatusHex(t *testing.T) {
	st := "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n"
	if got, want := statusHex(st, "CapEff:"), uint64(0x1fffeffffff); got != want {
		t.Errorf("statusHex = %#x, want %#x", got, want)
	}
	if got := statusHex(st, "CapAmb:"); got != 0 {
		t.Errorf("statusHex(missing) = %#x, want 0", got)
	}
}

func TestCheckPerfNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := CheckPerf()
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "apt-get install linux-perf") {
		t.Errorf("CheckPerf() without perf = %v, want ErrNotInstalled saying apt-get install linux-perf", err)
	}
}

func TestClassifyPerfError(t *testing.T) {
	tests := []struct {
		name   string
		stderr string
		want   error
	}{
		{"paranoid", "Error:\nAccess to performance monitoring and observability operations is limited.\nperf_event_paranoid setting is 2:\n", ErrPermission},
		{"no permission", "Error:\nNo permission to enable cpu-clock event.\n", ErrPermission},
		{"no such process", "Couldn't create thread/CPU maps: No such process\n", ErrProcessGone},
		{"debian wrapper", "WARNING: perf not found for kernel 6.18\n\n  You may need to install the following packages for this specific kernel:\n", ErrNotInstalled},
		{"other", "Error: something else\n", nil},
	}
	for _, tt := range tests {
		got := classifyPerfError(tt.stderr)
		if (got != nil) != (tt.want != nil) || !errors.Is(got, tt.want) {
			t.Errorf("%s: classifyPerfError(%q) = %v, want %v", tt.name, tt.stderr, got, tt.want)
		}
	}
}

func TestParsePerfStderr(t *testing.T) {
	tests := []struct {
		name   string
		stderr string
		want   perfReport
	}{
		{"nothing", "", perfReport{Samples: -1}},
		{"captured", "Events disabled\nEvents enabled\n[ perf record: Woken up 92 times to write data ]\n[ perf record: Captured and wrote 22.715 MB perf.data (294244 samples) ]\n",
			perfReport{Samples: 294244}},
		{"lost chunks", "Warning:\nProcessed 5123 events and lost 3 chunks!\n\nCheck IO/CPU overload!\n\n[ perf record: Captured and wrote 1.000 MB /tmp/x/perf.data (5000 samples) ]\n",
			perfReport{Samples: 5000, Lost: 3, Warnings: []string{"perf lost 3 chunk(s) of samples: the system could not keep up; sample less often (lower frequency, fp instead of dwarf)"}}},
		{"lost percent", "Warning:\nProcessed 900 samples and lost 10.00% samples!\n\n",
			perfReport{Samples: -1, Lost: 100, Warnings: []string{"perf lost 10.00% of samples: sample less often (lower frequency, fp instead of dwarf)"}}},
	}
	for _, tt := range tests {
		got := parsePerfStderr(tt.stderr)
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: parsePerfStderr(%q) = %+v, want %+v", tt.name, tt.stderr, got, tt.want)
		}
	}
}

func TestWithDefaultsAndArgs(t *testing.T) {
	o, err := withDefaults(Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(recordArgs(o, 42, "/w/perf.data"), " ")
	want := "record -F 99 -e cpu-clock -g --call-graph fp -p 42 -o /w/perf.data -N -D -1 --control fd:3,4"
	if got != want {
		t.Errorf("recordArgs(defaults) = %q, want %q", got, want)
	}
	// dwarf copies DefaultDwarfStackBytes of stack unless told a size.
	for _, tt := range []struct{ callGraph, want string }{
		{"dwarf", "record -F 499 -e cycles -g --call-graph dwarf,32768 -m 4096 -p 7 -o p.data -N -D -1 --control fd:3,4"},
		{"dwarf,4096", "record -F 499 -e cycles -g --call-graph dwarf,4096 -m 1024 -p 7 -o p.data -N -D -1 --control fd:3,4"},
	} {
		o, err = withDefaults(Options{FrequencyHz: 499, CallGraph: tt.callGraph, Event: "cycles"})
		if err != nil {
			t.Fatalf("withDefaults(%s): %v", tt.callGraph, err)
		}
		if got := strings.Join(recordArgs(o, 7, "p.data"), " "); got != tt.want {
			t.Errorf("recordArgs(%s) = %q, want %q", tt.callGraph, got, tt.want)
		}
	}
	for _, bad := range []struct {
		o       Options
		wantErr string
	}{
		{Options{CallGraph: "lbr"}, `perf: call graph "lbr": want fp or dwarf`},
		{Options{CallGraph: "dwarf,65536"}, `perf: call graph "dwarf,65536": stack size 65536: want 8 to 65528 bytes`},
		{Options{CallGraph: "dwarf,100"}, "not a multiple of 8"},
		{Options{FrequencyHz: -1}, "invalid frequency"},
	} {
		if _, err := withDefaults(bad.o); err == nil || !strings.Contains(err.Error(), bad.wantErr) {
			t.Errorf("withDefaults(%+v) = %v, want error %q", bad.o, err, bad.wantErr)
		}
	}
}

// TestSampleBytes: the perf.data size per sample that SamplesSoFar divides
// by follows dwarf's stack size (perf writes the whole copy every sample).
func TestSampleBytes(t *testing.T) {
	for _, tt := range []struct {
		callGraph string
		want      int64
	}{
		{"fp", fpSampleBytes},
		{"dwarf,32768", 32768 + dwarfSampleOverhead},
		{"dwarf,4096", 4096 + dwarfSampleOverhead},
		{"dwarf", DefaultDwarfStackBytes + dwarfSampleOverhead},
	} {
		if got := sampleBytes(tt.callGraph); got != tt.want {
			t.Errorf("sampleBytes(%q) = %d, want %d", tt.callGraph, got, tt.want)
		}
	}
}

func TestTailWriter(t *testing.T) {
	var copyTo strings.Builder
	w := newTailWriter(&copyTo, 8)
	w.Write([]byte("0123456789"))
	w.Write([]byte("ab"))
	if got := w.String(); got != "456789ab" {
		t.Errorf("tail = %q, want %q", got, "456789ab")
	}
	if copyTo.String() != "0123456789ab" {
		t.Errorf("copy = %q, want everything", copyTo.String())
	}
}

func TestStatCPUTicks(t *testing.T) {
	tests := []struct {
		stat string
		want int64
	}{
		{"4242 (mariadbd) S 1 4242 4242 0 -1 4194624 100 0 0 0 1234 567 0 0 20 0 40 0 100 1000 500", 1801},
		{"7 (a) b) c) R 1 7 7 0 -1 0 0 0 0 0 10 5 0 0 20 0 1 0 1 1 1", 15},
		{"7 (x) R 1 2", -1},
		{"garbage", -1},
	}
	for _, tt := range tests {
		if got := statCPUTicks([]byte(tt.stat)); got != tt.want {
			t.Errorf("statCPUTicks(%q) = %d, want %d", tt.stat, got, tt.want)
		}
	}
}
