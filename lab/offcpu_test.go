package lab

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Start decides whether the profiled windows record off-CPU profiles
// (capture.off_cpu) with the check it is given: auto follows the check,
// on where the check fails is Start's error at the config's off_cpu line
// (wrapping the check's error) and nothing is started, off and the perf
// sampler do not check. The profiled window's record.Config has OffCPU,
// the unprofiled one's never.
func TestStartOffCPU(t *testing.T) {
	errNo := errors.New("bpf: no sched_switch here")
	for _, tt := range []struct {
		name, capture string
		check         error
		wantOn        bool
		wantChecked   bool
		wantErr       string // "" for no error
		wantLog       string
	}{
		{"default auto, allowed", "{frequency: 99}", nil, true, true, "", "bench: off-CPU profiles: on (auto: the kernel allows them)"},
		{"auto, refused", "{off_cpu: auto}", errNo, false, true, "", "bench: off-CPU profiles: off (auto: bpf: no sched_switch here)"},
		{"on, allowed", "{off_cpu: on}", nil, true, true, "", "bench: off-CPU profiles: on (on: the kernel allows them)"},
		{"on, refused", "\n  sampler: bpf\n  off_cpu: on", errNo, false, true,
			"lab.yaml:11:12: capture.off_cpu is on, but off-CPU profiles cannot be recorded here: bpf: no sched_switch here (fix: run as root", ""},
		{"off", "{off_cpu: off}", nil, false, false, "", ""},
		{"perf sampler", "{sampler: perf}", nil, false, false, "", "bench: off-CPU profiles: off (auto: the perf sampler records none)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parseTestConfig(t, `servers:
  - label: "10.11"
    path: /no/such/mariadbd
workloads:
  - name: ps
    test: oltp_point_select
    duration: 10s
    warmup: 2s
capture: `+tt.capture+"\n")
			checked := false
			var log bytes.Buffer
			out := t.TempDir()
			s, err := Start(context.Background(), cfg, RunOptions{Out: out, Cache: t.TempDir(), Log: &log,
				CheckOffCPU: func() error { checked = true; return tt.check }})
			if checked != tt.wantChecked {
				t.Errorf("checked %v, want %v", checked, tt.wantChecked)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, errNo) {
					t.Fatalf("Start: %v; want an error with %q wrapping the check's", err, tt.wantErr)
				}
				if _, serr := os.Stat(filepath.Join(out, "servers")); serr == nil || log.Len() > 0 {
					t.Errorf("Start failed but started: servers directory %v, log %q", serr, log.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			defer s.Close()
			if s.offCPU != tt.wantOn {
				t.Errorf("off-CPU %v, want %v", s.offCPU, tt.wantOn)
			}
			if tt.wantLog != "" && !strings.Contains(log.String(), tt.wantLog) {
				t.Errorf("log:\n%s\nwant %q", log.String(), tt.wantLog)
			}
			b := &labServer{spec: cfg.Servers[0], bin: &Binary{},
				srv: &Server{Socket: "/tmp/s.sock", cmd: &exec.Cmd{Process: &os.Process{Pid: 4242}}}}
			c := s.recordConfig(cfg.Workloads[0], b, "/out/runs/ps/10.11/1")
			if c.OffCPU != tt.wantOn {
				t.Errorf("profiled window: record OffCPU %v, want %v", c.OffCPU, tt.wantOn)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("profiled window: Validate() = %v", err)
			}
			if u := unprofiled(c); u.OffCPU || u.OffCPUMin != 0 || u.Validate() != nil {
				t.Errorf("unprofiled window: OffCPU %v, OffCPUMin %s, Validate() = %v; want none", u.OffCPU, u.OffCPUMin, u.Validate())
			}
		})
	}
}
