package benchreport

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A profiled window recorded with kernel frames (as the lab records them)
// gives its cell the share of the kernel's scheduling and wake-up paths,
// and nothing else changes: the frames are dropped before any other figure
// is computed, so subtrees and comparisons are those of the same run
// without them.
func TestKernelFramesEnvironment(t *testing.T) {
	dir := t.TempDir()
	var sched, total int64
	kernel := func(lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			sp := strings.LastIndexByte(l, ' ')
			n, err := strconv.ParseInt(l[sp+1:], 10, 64)
			if err != nil {
				t.Fatalf("stacks line %q: %v", l, err)
			}
			total += n
			out[i] = l
			switch i % 4 {
			case 0:
				sched += n
				out[i] = l[:sp] + ";do_syscall_64_[k];__schedule_[k];finish_task_switch.isra.0_[k]" + l[sp:]
			case 1:
				// In the kernel, not in a path: dropped, counted for the user stack.
				out[i] = l[:sp] + ";do_syscall_64_[k];unix_stream_sendmsg_[k]" + l[sp:]
			}
		}
		return out
	}
	var plain, framed []Run
	for _, s := range []string{"10.11", "11.8"} {
		src := fixtureDir(s, "point-select")
		plain = append(plain, Run{Server: s, Workload: "point-select", Repeat: 1, Dir: src})
		dst := filepath.Join(dir, s)
		if s == "11.8" {
			copyRun(t, src, dst, nil, kernel)
		} else {
			copyRun(t, src, dst, nil, nil)
		}
		framed = append(framed, Run{Server: s, Workload: "point-select", Repeat: 1, Dir: dst})
	}
	opts := Options{Base: "10.11", Servers: []string{"10.11", "11.8"}, Workloads: []string{"point-select"}, Map: loadMariaDBMap(t)}
	want, got := mustBuild(t, plain, opts), mustBuild(t, framed, opts)

	w := got.Workloads[0]
	if v := w.version("10.11"); v.SchedWakePct != nil {
		t.Errorf("10.11 (no kernel frames): sched+wake %v, want none", v.SchedWakePct)
	}
	v := w.version("11.8")
	if v.SchedWakePct == nil || math.Abs(v.SchedWakePct.Median-100*float64(sched)/float64(total)) > 1e-9 {
		t.Fatalf("11.8: sched+wake %+v, want %.4f%%", v.SchedWakePct, 100*float64(sched)/float64(total))
	}
	for _, part := range []struct {
		name      string
		want, got any
	}{
		{"subtrees", want.Workloads[0].Subtrees, w.Subtrees},
		{"comparisons", want.Workloads[0].Comparisons, w.Comparisons},
	} {
		a, _ := json.Marshal(part.want)
		b, _ := json.Marshal(part.got)
		if string(a) != string(b) {
			t.Errorf("%s differ with kernel frames in the run: the frames were not dropped", part.name)
		}
	}
	if md := markdown(t, got); !strings.Contains(md, "sched+wake %") || strings.Contains(md, "_[k]") {
		t.Errorf("markdown: want a sched+wake %% column and no kernel frame:\n%s", md)
	}
}
