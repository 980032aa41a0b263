package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flamediff/flamediff/capture"
)

func TestValidate(t *testing.T) {
	ok := Config{Out: "run", Duration: time.Second}
	tests := []struct {
		name    string
		edit    func(c *Config)
		wantErr string // "" or a part of the error
	}{
		{"defaults", func(*Config) {}, ""},
		{"workload without duration", func(c *Config) { c.Duration, c.Workload = 0, []string{"sysbench", "run"} }, ""},
		{"two targets", func(c *Config) { c.Target = Target{PID: 1, Process: "x"} }, "one of PID, PIDFile and Process"},
		{"negative pid", func(c *Config) { c.Target.PID = -1 }, "Target.PID -1"},
		{"no out", func(c *Config) { c.Out = "" }, "Out"},
		{"freq", func(c *Config) { c.Freq = 20000 }, "Freq 20000"},
		{"call graph", func(c *Config) { c.CallGraph = "lbr" }, `CallGraph "lbr": want auto, fp or dwarf`},
		{"call graph auto with a size", func(c *Config) { c.CallGraph = "auto,4096" }, `CallGraph "auto,4096": want auto, fp or dwarf`},
		{"call graph auto with bpf", func(c *Config) { c.Sampler, c.CallGraph = "bpf", "auto" }, ""},
		{"stack copy", func(c *Config) { c.StackCopy = "sometimes" }, `StackCopy "sometimes": want never, auto or always`},
		{"stack copy always", func(c *Config) { c.StackCopy = "always" }, ""},
		{"switch fix", func(c *Config) { c.SwitchFix = true }, ""},
		{"switch fix per-CPU", func(c *Config) { c.SwitchFix, c.PerCPU = true, true }, ""},
		{"switch fix with perf", func(c *Config) { c.SwitchFix, c.Sampler = true, "perf" }, "SwitchFix corrects"},
		{"switch fix with cycles", func(c *Config) { c.SwitchFix, c.Event = true, "cycles" }, "SwitchFix corrects"},
		{"switch fix on and off", func(c *Config) { c.SwitchFix, c.NoSwitchFix = true, true }, "SwitchFix and NoSwitchFix: set one"},
		{"no switch fix with perf", func(c *Config) { c.NoSwitchFix, c.Sampler = true, "perf" }, ""},
		{"off-cpu", func(c *Config) { c.OffCPU, c.OffCPUMin = true, time.Millisecond }, ""},
		{"off-cpu with perf", func(c *Config) { c.OffCPU, c.Sampler = true, "perf" }, "OffCPU needs the BPF sampler"},
		{"off-cpu with dwarf", func(c *Config) { c.OffCPU, c.CallGraph = true, "dwarf" }, "OffCPU needs the BPF sampler"},
		{"off-cpu minimum alone", func(c *Config) { c.OffCPUMin = time.Millisecond }, "OffCPUMin: want 0 or more, with OffCPU"},
		{"off-cpu minimum negative", func(c *Config) { c.OffCPU, c.OffCPUMin = true, -time.Millisecond }, "OffCPUMin: want 0 or more"},
		{"dwarf with a size", func(c *Config) { c.Sampler, c.CallGraph = "perf", "dwarf,16384" }, ""},
		{"dwarf size above perf's", func(c *Config) { c.CallGraph = "dwarf,1000000" }, `CallGraph "dwarf,1000000": stack size 1000000: want 8 to 65528 bytes`},
		{"dwarf size not a multiple of 8", func(c *Config) { c.CallGraph = "dwarf,4100" }, "use 4104"},
		{"bpf dwarf with a size", func(c *Config) { c.Sampler, c.CallGraph = "bpf", "dwarf,4096" }, "needs Sampler perf"},
		{"sampler", func(c *Config) { c.Sampler = "ebpf" }, `Sampler "ebpf": want perf, bpf, auto or none`},
		{"sampler none", func(c *Config) { c.Sampler = SamplerNone }, ""},
		{"sampler none with the switch fix", func(c *Config) { c.Sampler, c.SwitchFix = SamplerNone, true }, "Sampler none samples nothing"},
		{"sampler none per-CPU", func(c *Config) { c.Sampler, c.PerCPU = SamplerNone, true }, "Sampler none samples nothing"},
		{"bpf dwarf", func(c *Config) { c.Sampler, c.CallGraph = "bpf", "dwarf" }, "needs Sampler perf"},
		{"event", func(c *Config) { c.Event = "instructions" }, `Event "instructions"`},
		{"socket and dsn", func(c *Config) { c.Socket, c.DSN = "s", "d" }, "Socket and DSN"},
		{"negative", func(c *Config) { c.Margin = -time.Second }, "negative"},
		{"no window", func(c *Config) { c.Duration = 0 }, "Duration"},
		{"placement same", func(c *Config) { c.Placement = "same" }, ""},
		{"placement list", func(c *Config) { c.Placement = "server=1,client=0" }, ""},
		{"placement", func(c *Config) { c.Placement = "apart" }, `Placement "apart": want none, same, separate`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate() = %v, want ErrInvalidConfig naming %q", err, tt.wantErr)
			}
		})
	}
}

// Targets that do not exist give a *FieldError naming the field, and
// leave the run directory empty.
// auto is dwarf (the default size) with perf and fp with bpf; a call graph
// given is kept whatever the sampler.
func TestResolveCallGraph(t *testing.T) {
	for _, tt := range []struct {
		callGraph, sampler, want string
	}{
		{"", "perf", "dwarf,32768"},
		{"auto", "perf", "dwarf,32768"},
		{"auto", "bpf", "fp"},
		{"fp", "perf", "fp"},
		{"dwarf,4096", "perf", "dwarf,4096"},
		{"fp", "bpf", "fp"},
	} {
		g, err := ParseCallGraph(tt.callGraph)
		if err != nil {
			t.Fatalf("ParseCallGraph(%q): %v", tt.callGraph, err)
		}
		if got := resolveCallGraph(g, tt.sampler).String(); got != tt.want {
			t.Errorf("call graph %q with %s: %q, want %q", tt.callGraph, tt.sampler, got, tt.want)
		}
	}
}

func TestRunTargetErrors(t *testing.T) {
	proc := t.TempDir() // an empty proc tree: no process at all
	for _, tt := range []struct {
		name   string
		target Target
		field  string
		is     error
	}{
		{"pid", Target{PID: 4242}, FieldPID, capture.ErrProcessGone},
		{"process", Target{Process: "mariadbd"}, FieldProcess, capture.ErrNoProcess},
		{"none", Target{}, FieldTarget, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			res, err := Run(context.Background(), Config{Target: tt.target, Out: out, Duration: time.Second, ProcRoot: proc}, nil)
			var fe *FieldError
			if res != nil || !errors.As(err, &fe) || fe.Field != tt.field || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("Run(%+v) = %v, %v; want a *FieldError of %s wrapping %v", tt.target, res, err, tt.field, tt.is)
			}
			if tt.target.PID != 0 && fe.Value != strconv.Itoa(tt.target.PID) {
				t.Errorf("FieldError.Value = %q, want the pid", fe.Value)
			}
			if ents, _ := os.ReadDir(out); len(ents) != 0 {
				t.Errorf("the run directory holds %d files after a target error", len(ents))
			}
		})
	}
}

func TestFieldErrorCandidates(t *testing.T) {
	e := &FieldError{Field: FieldProcess, Value: "mariadbd", Err: capture.ErrAmbiguous, Candidates: []capture.Process{
		{PID: 10, Cmdline: []string{"/usr/sbin/mariadbd", "--port=3306"}},
		{PID: 11, Cmdline: []string{"/usr/sbin/mariadbd", "--port=3307"}},
	}}
	want := "\n  10 /usr/sbin/mariadbd --port=3306\n  11 /usr/sbin/mariadbd --port=3307"
	if got := e.CandidateList(); got != want {
		t.Errorf("CandidateList() = %q, want %q", got, want)
	}
	if !strings.HasSuffix(e.Error(), "choose one by pid:"+want) {
		t.Errorf("Error() = %q, want the candidates", e.Error())
	}
}
