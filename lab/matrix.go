package lab

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/record"
	"github.com/flamediff/flamediff/workload/suite"
)

// RunOptions are the inputs of Start and Run besides the config.
type RunOptions struct {
	// Out is the bench's directory, which must exist: each server's
	// my.cnf and error log go to servers/LABEL, each measurement's
	// profiled window to runs/WORKLOAD/LABEL/N and its unprofiled window
	// to measure/WORKLOAD/LABEL/N, and the suite's Lua scripts, when a
	// workload runs one, to scripts (ScriptsDir).
	Out string
	// Cache is the cache directory of fetched servers (DefaultCacheDir
	// when "").
	Cache string
	// Repeat is how many times each workload is measured on each server
	// (1 when 0).
	Repeat int
	// Log receives the progress lines ("bench: ...") and those of the
	// fetcher and the servers; nothing is written when nil.
	Log io.Writer
	// Record runs one measurement: record.Run without progress when nil.
	// A command may pass one that words the errors its way (they are
	// logged and become the reason of a missing measurement); tests may
	// pass a fake.
	Record func(ctx context.Context, cfg record.Config) (*record.Result, error)
	// CheckOffCPU says whether off-CPU profiles can be recorded here
	// (capture.off_cpu auto and on): bpf.CheckOffCPU when nil; tests may
	// pass a fake.
	CheckOffCPU func() error
}

// Measurement is one cell of the matrix: one workload on one server, one
// repeat. It is two windows, each its own run of the workload: an
// unprofiled one (record's sampler none), whose throughput and per-op
// figures are the server's alone, then a profiled one, whose stacks make
// the profile (and whose QPS against the unprofiled one is the sampler's
// effect).
type Measurement struct {
	// Server is the server's label, Workload the workload's name.
	Server, Workload string
	// Repeat numbers the measurement from 1.
	Repeat int
	// Dir is the profiled window's run directory ("" when Missing).
	Dir string
	// Missing, when not empty, says why the profiled window has no run
	// directory: the server could not be fetched, did not start or died,
	// sysbench prepare failed, the bench was interrupted, record failed.
	Missing string
	// MeasureDir is the unprofiled window's run directory, and
	// MeasureMissing why it has none, as Dir and Missing.
	MeasureDir, MeasureMissing string
}

// Failure is a server of the config that could not be measured (or not
// to the end), and why.
type Failure struct {
	Server, Reason string
}

// Result is what Run measured.
type Result struct {
	// Runs are the measurements: per workload, per repeat, the servers in
	// the order they ran.
	Runs []Measurement
	// Failed are the servers that failed, in the config's order.
	Failed []Failure
}

// Session is the lab at work: the servers of a config, started by Start,
// measured by Measure, stopped by Close.
type Session struct {
	cfg     *Config
	opts    RunOptions
	log     io.Writer
	servers []*labServer
	closed  bool
	scripts string // where the suite's Lua scripts are ("" when none runs)
	offCPU  bool   // the profiled windows record off-CPU profiles (resolveOffCPU)
	// offCPUNote says whether they do and why, for the log.
	offCPUNote string
}

// ScriptsDir is the directory under RunOptions.Out the suite's Lua
// scripts are written to (suite.WriteScripts) when a workload runs one.
const ScriptsDir = "scripts"

// labServer is one version of the config and what became of it.
type labServer struct {
	spec    ServerSpec
	bin     *Binary
	srv     *Server
	missing string // why it has no runs ("" while usable)
}

// Run runs the matrix of cfg: Start, Measure, Close. It blocks until
// every measurement is done; a cancelled ctx skips the measurements not
// yet started (they are Missing, with the reason) and stops the one under
// way, whose run directory is kept. No server or sampler is left running.
// The error is about the options (the cache directory); a server that
// fails is in Result.Failed and its measurements are Missing.
func Run(ctx context.Context, cfg *Config, opts RunOptions) (*Result, error) {
	s, err := Start(ctx, cfg, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	runs := s.Measure(ctx)
	return &Result{Runs: runs, Failed: s.Failed()}, nil
}

// Start resolves every server of cfg (fetching it into the cache when it
// comes from a Debian suite) and starts it in a private datadir under
// opts.Out/servers. A server that fails is logged and noted (Failed); the
// others run. Close stops them. When a workload runs one of the suite's
// Lua scripts, Start first writes them to opts.Out/scripts; failing to is
// its error. Before all that it decides whether the profiled windows
// record off-CPU profiles (capture.off_cpu): with off_cpu on where they
// cannot be, its error says so at the config's line, and nothing is
// started.
func Start(ctx context.Context, cfg *Config, opts RunOptions) (*Session, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Repeat < 1 {
		opts.Repeat = 1
	}
	if opts.Record == nil {
		opts.Record = func(ctx context.Context, c record.Config) (*record.Result, error) { return record.Run(ctx, c, nil) }
	}
	if opts.Cache == "" {
		var err error
		if opts.Cache, err = DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	s := &Session{cfg: cfg, opts: opts, log: opts.Log}
	if err := s.resolveOffCPU(); err != nil {
		return nil, err
	}
	if err := s.writeScripts(); err != nil {
		return nil, err
	}
	s.servers = make([]*labServer, len(cfg.Servers))
	for i, spec := range cfg.Servers {
		s.servers[i] = &labServer{spec: spec}
	}
	var fetcher *Fetcher
	var err error
	for _, b := range s.servers {
		if ctx.Err() != nil {
			break
		}
		if b.spec.Suite != "" && fetcher == nil {
			if fetcher, err = NewFetcher(opts.Cache, s.log); err != nil {
				b.missing = fmt.Sprintf("fetch: %v", err)
				s.logf("%s: %s", b.spec.Label, b.missing)
				continue
			}
		}
		s.start(ctx, fetcher, b)
	}
	if s.offCPUNote != "" {
		s.logf("%s", s.offCPUNote)
	}
	return s, nil
}

// writeScripts writes the suite's Lua scripts under Out when a workload
// runs one.
func (s *Session) writeScripts() error {
	for _, w := range s.cfg.Workloads {
		if w.Bench == nil || !w.Bench.Script {
			continue
		}
		dir := filepath.Join(s.opts.Out, ScriptsDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("lab scripts: %w", err)
		}
		if err := suite.WriteScripts(dir); err != nil {
			return fmt.Errorf("lab scripts %s: %w", dir, err)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("lab scripts: %w", err)
		}
		s.scripts = abs
		return nil
	}
	return nil
}

// start resolves and starts one server.
func (s *Session) start(ctx context.Context, fetcher *Fetcher, b *labServer) {
	var err error
	s.logf("%s: resolving %s", b.spec.Label, serverSource(b.spec))
	if b.bin, err = Resolve(ctx, fetcher, b.spec); err != nil {
		b.missing = fmt.Sprintf("server binary: %v", err)
		s.logf("%s: %s", b.spec.Label, b.missing)
		return
	}
	s.logf("%s: starting %s (%s)", b.spec.Label, b.bin.Mariadbd, b.bin.Version)
	b.srv, err = StartServer(ctx, b.bin, ServerConfig{
		Dir:        filepath.Join(s.opts.Out, "servers", b.spec.Label),
		BufferPool: BufferPoolFor(s.cfg.Workloads),
		Options:    append(append([]string{}, s.cfg.ServerOptions...), b.spec.Options...),
		Log:        s.log,
	})
	if err != nil {
		b.srv = nil
		b.missing = fmt.Sprintf("server did not start: %v", err)
		s.logf("%s: %s", b.spec.Label, b.missing)
	}
}

// Close stops the servers and removes their datadirs (my.cnf and the
// error log stay). It is idempotent.
func (s *Session) Close() {
	if s.closed {
		return
	}
	s.closed = true
	for _, b := range s.servers {
		if b.srv == nil {
			continue
		}
		if err := b.srv.Stop(); err != nil {
			s.logf("%s: stop: %v", b.spec.Label, err)
		}
		// The datadir is large and of no use once the runs are written.
		_ = os.RemoveAll(b.srv.DataDir)
	}
}

// Failed returns the servers that failed so far, in the config's order.
func (s *Session) Failed() []Failure {
	var failed []Failure
	for _, b := range s.servers {
		if b.missing != "" {
			failed = append(failed, Failure{Server: b.spec.Label, Reason: b.missing})
		}
	}
	return failed
}

// Measure measures every workload: it prepares sysbench's tables on every
// server, then runs opts.Repeat rounds with the servers in a rotating
// order, so that drift of the machine does not favour one; each
// measurement is an unprofiled window then a profiled one. It returns one
// Measurement per workload, round and server, measured or Missing.
func (s *Session) Measure(ctx context.Context) []Measurement {
	var runs []Measurement
	total := len(s.cfg.Workloads) * len(s.servers) * s.opts.Repeat
	done := 0
	for _, w := range s.cfg.Workloads {
		w.Scripts = s.scripts
		prepared := s.prepare(ctx, w)
		for r := 1; r <= s.opts.Repeat; r++ {
			for k := range s.servers {
				b := s.servers[(k+r-1)%len(s.servers)]
				run := Measurement{Server: b.spec.Label, Workload: w.Name, Repeat: r}
				done++
				step := fmt.Sprintf("[%d/%d]", done, total)
				run.MeasureDir, run.MeasureMissing = s.window(ctx, step, w, b, prepared[b], run.Repeat, false)
				run.Dir, run.Missing = s.window(ctx, step, w, b, prepared[b], run.Repeat, true)
				runs = append(runs, run)
			}
		}
	}
	return runs
}

// prepare creates w's tables on every running server; it returns why it
// failed, by server.
func (s *Session) prepare(ctx context.Context, w Workload) map[*labServer]string {
	failed := make(map[*labServer]string)
	for _, b := range s.servers {
		if b.srv == nil || ctx.Err() != nil {
			continue
		}
		s.logf("%s: %s: preparing %s of %d rows", b.spec.Label, w.Name, names.Plural(w.Tables, "table"), w.TableSize)
		if err := b.srv.Prepare(ctx, w); err != nil {
			failed[b] = fmt.Sprintf("sysbench prepare: %v", err)
			s.logf("%s: %s: %s", b.spec.Label, w.Name, failed[b])
		}
	}
	return failed
}

// window records one window of a measurement, profiled or not, and
// returns its run directory or why it has none (unprepared: why w's
// tables are not there).
func (s *Session) window(ctx context.Context, step string, w Workload, b *labServer, unprepared string, repeat int, profiled bool) (dir, missing string) {
	switch {
	case b.missing != "":
		return "", b.missing
	case unprepared != "":
		return "", unprepared
	case ctx.Err() != nil:
		return "", "bench was interrupted before this run"
	case b.srv.Err() != nil:
		return "", fmt.Sprintf("server died: %v", b.srv.Err())
	}
	tree, what := "measure", "unprofiled"
	if profiled {
		tree, what = "runs", "profiled"
	}
	if w.FreshTables() { // every window on tables of its own
		if err := b.srv.Prepare(ctx, w); err != nil {
			s.logf("%s %s %s repeat %d, %s window: %v", step, w.Name, b.spec.Label, repeat, what, err)
			return "", fmt.Sprintf("sysbench prepare: %v", err)
		}
	}
	dir = filepath.Join(s.opts.Out, tree, w.Name, b.spec.Label, strconv.Itoa(repeat))
	runs := "sysbench " + w.Test
	if w.Command != nil {
		runs = strings.Join(w.Command, " ")
	}
	s.logf("%s %s %s repeat %d, %s window: %s, %s", step, w.Name, b.spec.Label, repeat, what, runs, w.Duration)
	c := s.recordConfig(w, b, dir)
	if !profiled {
		c = unprofiled(c)
	}
	_, err := s.opts.Record(ctx, c)
	if err == nil {
		return dir, ""
	}
	s.logf("%s %s %s repeat %d, %s window: %v", step, w.Name, b.spec.Label, repeat, what, err)
	if _, serr := os.Stat(filepath.Join(dir, "run.json")); serr != nil {
		dir, missing = "", fmt.Sprintf("record: %v", err)
	}
	if died := b.srv.Err(); died != nil {
		b.missing = fmt.Sprintf("server died: %v", died)
	}
	return dir, missing
}

// unprofiled is c for a window without a sampler: the same workload,
// warmup and margin, nothing of the sampler's.
func unprofiled(c record.Config) record.Config {
	c.Sampler = record.SamplerNone
	c.SwitchFix, c.NoSwitchFix, c.PerCPU, c.KeepRaw, c.Kernel, c.DebugDirs = false, false, false, false, false, nil
	c.OffCPU, c.OffCPUMin = false, 0
	return c
}

// recordConfig is the recording session of one measurement.
func (s *Session) recordConfig(w Workload, b *labServer, dir string) record.Config {
	// The window: from the warmup to a margin before sysbench ends.
	margin := min(2*time.Second, (w.Duration-w.Warmup)/4)
	var debug []string
	if b.bin.LibcDebugDir != "" {
		debug = []string{filepath.Dir(b.bin.LibcDebugDir)} // the root above .build-id
	}
	c := s.cfg.Capture
	rc := record.Config{
		Target:      record.Target{PID: b.srv.PID()},
		Sampler:     c.Sampler,
		Event:       "auto",
		Freq:        c.Frequency,
		CallGraph:   c.CallGraph,
		StackCopy:   c.StackCopy,
		SwitchFix:   c.SwitchFix != nil && *c.SwitchFix,
		NoSwitchFix: c.SwitchFix != nil && !*c.SwitchFix,
		PerCPU:      c.Events == "cpu",
		OffCPU:      s.offCPU,
		Warmup:      w.Warmup,
		Margin:      margin,
		Socket:      b.srv.Socket,
		User:        "root",
		OpsCounter:  []string{"Questions"},
		Label:       b.spec.Label,
		Out:         dir,
		DebugDirs:   debug,
		Workload:    b.srv.SysbenchArgs(w, "run", "--report-interval=1"),
		WorkloadEnv: w.SysbenchEnv(),
		Placement:   s.cfg.Placement,
		ProcRoot:    "/proc",
		// Kernel frames, for the share of the kernel's scheduling and
		// wake-up paths (diff.Environment); the report drops them from
		// the profile itself.
		Kernel: true,
	}
	if w.Command != nil {
		// Any command: no --time to derive the window from, so it is
		// given (from the warmup to the margin before the duration), and
		// a command still running at twice its duration is stopped.
		// Clients of libmysqlclient and MariaDB Connector/C find the
		// socket in MYSQL_UNIX_PORT.
		rc.Workload = w.CommandArgs(b.srv.Socket, "root", "sbtest")
		rc.WorkloadEnv = []string{"MYSQL_UNIX_PORT=" + b.srv.Socket}
		rc.Duration = w.Duration - w.Warmup - margin
		rc.WorkloadLimit = 2 * w.Duration
	}
	return rc
}

func (s *Session) logf(format string, a ...any) {
	fmt.Fprintf(s.log, "bench: "+format+"\n", a...)
}

func serverSource(spec ServerSpec) string {
	if spec.Path != "" {
		return spec.Path
	}
	return "Debian " + spec.Suite
}
