package cputruth

import (
	"encoding/binary"
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

// The functions' two figures, the time on the CPU by CLOCK_MONOTONIC
// (the truth: Share(fn)) and the thread clock's (Share(fn+"@thread"), its
// reads corrected by their calibrated cost), count the same CPU: per call
// they differ by less than one thread clock read, also for bursts of 10
// to 30 µs right after a wake-up, where the first read of the thread clock
// is cold and costs more than its calibration (the reason the truth is
// the monotonic figure, see account in truth.c), and for system calls. A
// call that left the CPU (preempted) is counted by the thread clock in
// both, so load beside the test does not widen the gap; counting the time
// off the CPU would put it microseconds per call apart.
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
			clock := float64(d.ClockNs)
			for _, fn := range Scenarios[i].Funcs {
				calls := float64(d.Calls[fn])
				if calls == 0 || d.Share(fn) < 5 {
					t.Fatalf("%s: %v calls, %.2f%% of the run time: want it to run", fn, calls, d.Share(fn))
				}
				excess := (float64(d.Funcs[fn]) - float64(d.Funcs[fn+"@thread"])) / calls
				t.Logf("%s: %.2f%% on the CPU, %.2f%% by the thread clock; %.0f ns a call more (a thread clock read: %.0f ns)",
					fn, d.Share(fn), d.Share(fn+"@thread"), excess, clock)
				if excess < -clock/2 || excess > clock {
					t.Errorf("%s: the time on the CPU is %.0f ns a call more than the thread clock's: want between -%.0f and %.0f (half a thread clock read less, one more)", fn, excess, clock/2, clock)
				}
			}
		})
	}
}

func TestParseCounters(t *testing.T) {
	data := make([]byte, 24+2*48)
	copy(data, "TRUTH3")
	binary.LittleEndian.PutUint64(data[8:], 2)
	binary.LittleEndian.PutUint64(data[16:], 10) // a clock read: 10 ns
	copy(data[24:], "f")
	binary.LittleEndian.PutUint64(data[24+32:], 500)
	binary.LittleEndian.PutUint64(data[24+40:], 5)
	copy(data[72:], "g")
	binary.LittleEndian.PutUint64(data[72+32:], 7)
	s, err := ParseCounters(data)
	if err != nil || s.Funcs["f"] != 500 || s.Calls["f"] != 5 || s.Funcs["g"] != 7 || s.ClockNs != 10 || len(s.Funcs) != 2 {
		t.Fatalf("ParseCounters = %+v, %v", s, err)
	}
	for _, bad := range [][]byte{nil, []byte("TRUTH2xxxxxxxxxxxxxxxxxx"), data[:100]} {
		if _, err := ParseCounters(bad); err == nil {
			t.Errorf("ParseCounters(%d bytes) accepted", len(bad))
		}
	}
}

func FuzzParseCounters(f *testing.F) {
	f.Add([]byte("TRUTH3\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00"))
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
