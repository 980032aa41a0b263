package cputruth

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
	"time"
)

// The program's own accounting agrees with the kernel's: in a steady
// scenario its working functions account for nearly all of its threads'
// run time, and work_b for three times work_a's share in the thread that
// runs both (plus all of the other thread's).
func TestSteadyTruth(t *testing.T) {
	bin, dir := BuildT(t)
	p := StartT(t, bin, dir, Scenarios[0])
	before, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	after, err := p.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	d := after.Sub(before)
	total := d.TotalNs()
	work := d.Funcs["work_a"] + d.Funcs["work_b"]
	t.Logf("threads %v, functions %v, calls %v", d.Threads, d.Funcs, d.Calls)
	if total == 0 || d.Threads["steady1"] == 0 || d.Threads["steady2"] == 0 {
		t.Fatalf("thread run times %v: want both steady threads", d.Threads)
	}
	// Work counted at the end of each call: up to one call (3 ms) per
	// thread falls outside the window at either end.
	if work > total+8e6 || work < total*8/10 {
		t.Errorf("functions %d ns of %d ns of thread run time: want nearly all", work, total)
	}
	if d.Share("work_a") <= 0 || d.Share("work_a") > 25 {
		t.Errorf("work_a %.1f%% of the run time, want about 12.5%%", d.Share("work_a"))
	}
}

// The functions' figures by the thread clock (corrected for its reads by
// clock_ns) and by CLOCK_MONOTONIC (a read of 30 ns, see account in
// truth.c) agree, also for bursts of 10 to 30 µs, where the thread
// clock's two reads are a tenth of a call, and for system calls.
func TestClocksAgree(t *testing.T) {
	bin, dir := BuildT(t)
	for _, name := range []string{"bursty-jitter-20us-100us", "pingpong-30us-60us", "syscalls"} {
		t.Run(name, func(t *testing.T) {
			i := slices.IndexFunc(Scenarios, func(s Scenario) bool { return s.Name == name })
			p := StartT(t, bin, dir, Scenarios[i])
			before, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Second)
			after, err := p.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			d := after.Sub(before)
			for _, fn := range Scenarios[i].Funcs {
				clock, wall := d.Share(fn), d.Share(fn+"@wall")
				t.Logf("%s: %.2f%% by the thread clock, %.2f%% by CLOCK_MONOTONIC", fn, clock, wall)
				if clock < 5 || math.Abs(clock-wall) > 1 {
					t.Errorf("%s: %.2f%% by the thread clock, %.2f%% by CLOCK_MONOTONIC: want them within 1 point", fn, clock, wall)
				}
			}
		})
	}
}

func TestParseCounters(t *testing.T) {
	data := make([]byte, 24+2*48)
	copy(data, "TRUTH2")
	binary.LittleEndian.PutUint64(data[8:], 2)
	binary.LittleEndian.PutUint64(data[16:], 10) // a clock read: 10 ns
	copy(data[24:], "f")
	binary.LittleEndian.PutUint64(data[24+32:], 500)
	binary.LittleEndian.PutUint64(data[24+40:], 5)
	copy(data[72:], "g")
	binary.LittleEndian.PutUint64(data[72+32:], 7)
	s, err := ParseCounters(data)
	if err != nil || s.Funcs["f"] != 550 || s.Calls["f"] != 5 || s.Funcs["g"] != 7 || len(s.Funcs) != 2 {
		t.Fatalf("ParseCounters = %+v, %v", s, err)
	}
	for _, bad := range [][]byte{nil, []byte("TRUTH1xxxxxxxxxxxxxxxxxx"), data[:100]} {
		if _, err := ParseCounters(bad); err == nil {
			t.Errorf("ParseCounters(%d bytes) accepted", len(bad))
		}
	}
}

func FuzzParseCounters(f *testing.F) {
	f.Add([]byte("TRUTH2\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00"))
	f.Add(make([]byte, 64))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseCounters(data)
		if err != nil {
			return
		}
		if len(s.Funcs) > 64 || len(s.Funcs) != len(s.Calls) {
			t.Fatalf("ParseCounters: %d functions, %d call counts", len(s.Funcs), len(s.Calls))
		}
	})
}
