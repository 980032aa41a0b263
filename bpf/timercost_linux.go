package bpf

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"time"

	"golang.org/x/sys/unix"
)

// MeasureTimerProgramCost measures what programming the CPU's timer device
// costs on this machine, for Options.TimerProgramCost: how much longer it
// takes to arm a timer that fires before every other timer of the CPU (20
// µs out: the kernel programs the device for it) than one that does not
// (1 s out), each disarmed at once, on a timerfd. On a virtual machine the
// programming is a VM exit, several microseconds; on bare metal a
// register write.
//
// It measures five batches of 201 rounds, 10 ms apart. A short arm counts
// as programmed when it took more than a microsecond beyond the long
// arms' median: on a loaded machine another timer of the CPU is often
// due even sooner (or overdue), and then nothing is programmed. A batch
// counts when at least half its short arms were programmed; its figure is
// their median less the long arms' median, and the smallest batch's
// figure is returned. The smallest: while the other vCPU is busy this VM
// runs everything about 30% slower and a batch measures 6.5–7 µs instead
// of 5; against programs whose true CPU is known, 4–5 µs corrects their
// blocking calls to within about a point and 6–7 µs overshoots by 1–3
// points (docs/fidelity.md, "Timer programming"). It returns 0 when no
// batch counts, and takes about 60 ms.
func MeasureTimerProgramCost() (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC)
	if err != nil {
		return 0, fmt.Errorf("bpf: timer programming cost: timerfd_create: %w", err)
	}
	defer func() { _ = unix.Close(fd) }()
	first := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(20 * time.Microsecond))}
	later := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(time.Second))}
	var off unix.ItimerSpec
	arm := func(spec *unix.ItimerSpec) (time.Duration, error) {
		t0 := time.Now()
		if err := unix.TimerfdSettime(fd, 0, spec, nil); err != nil {
			return 0, err
		}
		d := time.Since(t0)
		return d, unix.TimerfdSettime(fd, 0, &off, nil)
	}
	const batches, rounds = 5, 201
	short, long := make([]time.Duration, rounds), make([]time.Duration, rounds)
	cost := time.Duration(-1)
	for i := range batches {
		if i > 0 {
			time.Sleep(10 * time.Millisecond)
		}
		for j := range rounds {
			if short[j], err = arm(&first); err == nil {
				long[j], err = arm(&later)
			}
			if err != nil {
				return 0, fmt.Errorf("bpf: timer programming cost: timerfd_settime: %w", err)
			}
		}
		slices.Sort(short)
		slices.Sort(long)
		base := long[rounds/2]
		programmed := short[sort.Search(rounds, func(k int) bool { return short[k] > base+time.Microsecond }):]
		if len(programmed) < rounds/2 {
			continue
		}
		if d := programmed[len(programmed)/2] - base; cost < 0 || d < cost {
			cost = d
		}
	}
	return max(cost, 0), nil
}
