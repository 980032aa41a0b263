package record

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

func TestParsePlacement(t *testing.T) {
	tests := []struct {
		in      string
		want    Placement
		text    string // String(); in when ""
		wantErr string
	}{
		{in: "", want: Placement{Mode: PlacementNone}, text: "none"},
		{in: "none", want: Placement{Mode: PlacementNone}},
		{in: "same", want: Placement{Mode: PlacementSame}},
		{in: "separate", want: Placement{Mode: PlacementSeparate}},
		{in: "server=1,client=0", want: Placement{Mode: "list", Server: []int{1}, Client: []int{0}}},
		{in: "client=0,server=1", want: Placement{Mode: "list", Server: []int{1}, Client: []int{0}}, text: "server=1,client=0"},
		// A CPU list's commas stay with the side before them.
		{in: "server=0,2-3,client=1", want: Placement{Mode: "list", Server: []int{0, 2, 3}, Client: []int{1}}},
		{in: "server=3,1-2", want: Placement{Mode: "list", Server: []int{1, 2, 3}}, text: "server=1-3"},
		{in: "client=5", want: Placement{Mode: "list", Client: []int{5}}},
		{in: "apart", wantErr: `"apart": want none, same, separate, or server=CPUS,client=CPUS`},
		{in: "Same", wantErr: `"Same": want none`},
		{in: "server=1,server=2", wantErr: "server given twice"},
		{in: "cpu=1", wantErr: `unknown side "cpu"`},
		{in: "server=", wantErr: "server: empty CPU list"},
		{in: "server=1,,client=0", wantErr: `server: CPU list "1,": "" is not a CPU number`},
		{in: "server=3-1", wantErr: "range 3-1 runs backwards"},
		{in: "server=a", wantErr: `"a" is not a CPU number`},
		{in: "server=99999", wantErr: "beyond the most a kernel has"},
	}
	for _, tt := range tests {
		got, err := ParsePlacement(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParsePlacement(%q) = %+v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParsePlacement(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		text := tt.text
		if text == "" {
			text = tt.in
		}
		if s := got.String(); s != text {
			t.Errorf("ParsePlacement(%q).String() = %q, want %q", tt.in, s, text)
		}
	}
}

func TestPlacementResolve(t *testing.T) {
	tests := []struct {
		in             string
		allowed        []int
		server, client []int
		wantErr        string
	}{
		{"none", []int{0, 1}, nil, nil, ""},
		{"same", []int{0, 1}, []int{1}, []int{1}, ""},
		{"same", []int{0}, []int{0}, []int{0}, ""},
		{"separate", []int{0, 1}, []int{1}, []int{0}, ""},
		// This process restricted to CPUs 2, 5 and 7 (taskset, a cpuset).
		{"separate", []int{2, 5, 7}, []int{7}, []int{2}, ""},
		{"separate", []int{3}, nil, nil, "separate needs two CPUs, this process may use only CPU 3"},
		{"server=1,client=0", []int{0, 1}, []int{1}, []int{0}, ""},
		{"server=0-1", []int{0, 1}, []int{0, 1}, nil, ""},
		{"server=2,client=0", []int{0, 1}, nil, nil, "server CPU 2 is not one this process may use (0-1)"},
		{"same", nil, nil, nil, "no CPU is allowed"},
	}
	for _, tt := range tests {
		p, err := ParsePlacement(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		server, client, err := p.Resolve(tt.allowed)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q.Resolve(%v) = %v, %v, %v; want an error with %q", tt.in, tt.allowed, server, client, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(server, tt.server) || !reflect.DeepEqual(client, tt.client) {
			t.Errorf("%q.Resolve(%v) = %v, %v, %v; want %v, %v", tt.in, tt.allowed, server, client, err, tt.server, tt.client)
		}
	}
}

func TestCPUList(t *testing.T) {
	for _, tt := range []struct {
		in, out string
		cpus    []int
	}{
		{"0", "0", []int{0}},
		{"0-1", "0-1", []int{0, 1}},
		{"0-3,6", "0-3,6", []int{0, 1, 2, 3, 6}},
		{"6,0-3", "0-3,6", []int{0, 1, 2, 3, 6}},
		{"1,1,2", "1-2", []int{1, 2}},
		{" 0-1\n", "0-1", []int{0, 1}},
		{"0,2,4", "0,2,4", []int{0, 2, 4}},
	} {
		cpus, err := ParseCPUList(tt.in)
		if err != nil || !reflect.DeepEqual(cpus, tt.cpus) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", tt.in, cpus, err, tt.cpus)
			continue
		}
		if s := FormatCPUList(cpus); s != tt.out {
			t.Errorf("FormatCPUList(%v) = %q, want %q", cpus, s, tt.out)
		}
	}
	for _, bad := range []string{"", "-1", "1-", "a", "01", "1-0", "0 1", "+1"} {
		if cpus, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q) = %v, want an error", bad, cpus)
		}
	}
}

func TestReadAffinities(t *testing.T) {
	// testdata/proc/29134: a python3 process with a thread pinned to CPU 1
	// ("pinned") and one not ("free"); see testdata/README.md.
	threads, err := readAffinities("testdata/proc", 29134)
	if err != nil {
		t.Fatal(err)
	}
	want := []threadAffinity{{29134, "python3", []int{0, 1}}, {29175, "pinned", []int{1}}, {29176, "free", []int{0, 1}}}
	if !reflect.DeepEqual(threads, want) {
		t.Fatalf("readAffinities = %+v, want %+v", threads, want)
	}
	found, mismatched := affinityFigures("server", threads, []int{1})
	if wantFound := []fold.Affinity{{CPUs: "0-1", Threads: 2}, {CPUs: "1", Threads: 1}}; !reflect.DeepEqual(found, wantFound) {
		t.Errorf("affinityFigures found %+v, want %+v", found, wantFound)
	}
	if wantMis := []string{"server 29134 python3: 0-1", "server 29176 free: 0-1"}; !reflect.DeepEqual(mismatched, wantMis) {
		t.Errorf("affinityFigures mismatched %q, want %q", mismatched, wantMis)
	}
	if _, mismatched := affinityFigures("client", threads, nil); mismatched != nil {
		t.Errorf("affinityFigures of a side not pinned named %q, want nothing", mismatched)
	}
	if _, err := readAffinities("testdata/proc", 1); !os.IsNotExist(err) {
		t.Errorf("readAffinities(no such process) = %v, want not exist", err)
	}
}

func TestParseStatusAffinity(t *testing.T) {
	data, err := os.ReadFile("testdata/proc/29134/task/29175/status")
	if err != nil {
		t.Fatal(err)
	}
	if cpus, err := ParseStatusAffinity(data); err != nil || !reflect.DeepEqual(cpus, []int{1}) {
		t.Errorf("ParseStatusAffinity(pinned thread) = %v, %v; want [1]", cpus, err)
	}
	if _, err := ParseStatusAffinity([]byte("Name:\tx\nCpus_allowed:\t3\n")); err == nil {
		t.Error("ParseStatusAffinity without Cpus_allowed_list: no error")
	}
}

func FuzzParsePlacement(f *testing.F) {
	for _, s := range []string{"", "none", "same", "separate", "server=1,client=0", "server=0,2-3,client=1", "client=0-1", "server=,", "=1", "server=1-", ","} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePlacement(s)
		if err != nil {
			return
		}
		// Its text reads back to the same placement.
		p2, err := ParsePlacement(p.String())
		if err != nil || !reflect.DeepEqual(p, p2) {
			t.Fatalf("ParsePlacement(%q) = %+v; its String %q reads as %+v, %v", s, p, p.String(), p2, err)
		}
	})
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0-3,6", "1,1", "8191", "0-8191", "", "-", "1-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if (cpus == nil) == (err == nil) {
			t.Fatalf("ParseCPUList(%q) = %v, %v: want CPUs or an error", s, cpus, err)
		}
		if err != nil {
			return
		}
		again, err := ParseCPUList(FormatCPUList(cpus))
		if err != nil || !reflect.DeepEqual(cpus, again) {
			t.Fatalf("ParseCPUList(%q) = %v; its format %q reads as %v, %v", s, cpus, FormatCPUList(cpus), again, err)
		}
	})
}
