package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flamediff/flamediff/benchreport"
	"github.com/flamediff/flamediff/internal/atomicfile"
	"github.com/flamediff/flamediff/internal/fserr"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/lab"
)

// BenchOptions are the inputs of `flamediff bench`.
type BenchOptions struct {
	IO     *streams
	Config string
	Out    string
	Cache  string
	Repeat int
	Quiet  bool
	// Record runs one measurement; runRecord when nil (tests may inject).
	Record func(ctx context.Context, o *RecordOptions) error
}

func newBenchCmd(s *streams, runF func(*BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{IO: s}
	cmd := &cobra.Command{
		Use:   "bench -c CONFIG [--out DIR] [--repeat N]",
		Short: "Run sysbench against several server versions, capture each, and write the comparison report",
		Long: `Bench is the version lab: for every server of the config (an installed
mariadbd, or a MariaDB fetched from a Debian suite into the cache) it
bootstraps a private datadir, starts the server on a unix socket, prepares
sysbench's tables, and measures every workload under 'flamediff record'
(--repeat times, the versions interleaved in every round so that drift of
the machine does not favour one). Then it writes the report to --out:
index.html (tables and flame graphs), report.md (to paste into a post),
report.json (every figure), the run directories (runs/WORKLOAD/VERSION/N)
and the flame graphs (svg/), and prints a summary.

The report gives rQPS (QPS relative to the base version), CPU, context
switches, reads and writes per operation, the subtree breakdown of each
root with renamed functions aligned by the symbol map, the attribution of
the change in CPU per operation to subsystems, and with --repeat 2 or more
whether each difference is larger than the noise between repeats (Welch's
t-test and a permutation test, with p-values).

A server that cannot be fetched, fails to start or dies is reported with the
tail of its error log; the other versions still run. Nothing outside the
cache (--cache) and --out is changed, and no server or sampler is left
running whatever the way out (Ctrl-C included: the report is still written
from the runs that finished).`,
		Example: `  # The demo matrix: 10.5 and 11.8 fetched from Debian, 10.11 installed.
  flamediff bench -c examples/lab/demo.yaml --out out/demo
  # Three repeats of each measurement, with significance tests.
  flamediff bench -c my-lab.yaml --repeat 3 --out out/lab3
  xdg-open out/lab3/index.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return runBench(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Config, "config", "c", "", "bench config `FILE` (YAML: servers, workloads, capture, map, roots; see examples/lab/)")
	f.StringVarP(&opts.Out, "out", "o", "", "report `DIR` (created; must be empty or absent; default out/NAME of the config)")
	f.StringVar(&opts.Cache, "cache", "", "cache `DIR` for fetched servers (default ~/.cache/flamediff)")
	f.IntVar(&opts.Repeat, "repeat", 1, "measure each workload and version `N` times; 2 or more adds significance tests")
	f.BoolVarP(&opts.Quiet, "quiet", "q", false, "no progress output")
	return cmd
}

func (o *BenchOptions) validate() error {
	switch {
	case o.Config == "":
		return usageError("-c CONFIG is required (examples/lab/demo.yaml is one)")
	case o.Repeat < 1 || o.Repeat > 100:
		return usageError("--repeat %d: want 1 to 100", o.Repeat)
	}
	if o.Out == "" {
		o.Out = filepath.Join("out", strings.TrimSuffix(filepath.Base(o.Config), filepath.Ext(o.Config)))
	}
	if st, err := os.Stat(o.Out); err == nil {
		if !st.IsDir() {
			return usageError("--out %s exists and is not a directory", o.Out)
		}
		if ents, _ := os.ReadDir(o.Out); len(ents) > 0 {
			return usageError("--out %s is not empty: choose a new directory so that no earlier report is overwritten", o.Out)
		}
	}
	return nil
}

// benchServer is one version of the config and what became of it.
type benchServer struct {
	spec    lab.ServerSpec
	bin     *lab.Binary
	srv     *lab.Server
	missing string // why it has no runs ("" while usable)
}

func runBench(ctx context.Context, opts *BenchOptions) error {
	s := opts.IO
	logw := s.ErrOut
	if opts.Quiet {
		logw = io.Discard
	}
	logf := func(format string, a ...any) { fmt.Fprintf(logw, "bench: "+format+"\n", a...) }

	data, err := os.ReadFile(opts.Config)
	if err != nil {
		return fmt.Errorf("bench: config %w", fserr.Describe(opts.Config, err, "file"))
	}
	cfg, err := lab.ParseConfig(bytes.NewReader(data), opts.Config)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	m, err := loadMap(s, cfg.MapPath(filepath.Dir(opts.Config)))
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if opts.Cache == "" {
		if opts.Cache, err = lab.DefaultCacheDir(); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	out, err := filepath.Abs(opts.Out)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := atomicfile.MakeDir(out); err != nil {
		return fmt.Errorf("bench: --out %w", err)
	}
	if err := writeFileAtomic(filepath.Join(out, "config.yaml"), data); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	record := opts.Record
	if record == nil {
		record = runRecord
	}

	// Servers: resolve (fetch) and start every version; one that fails is
	// reported and the others run.
	servers := make([]*benchServer, len(cfg.Servers))
	for i, spec := range cfg.Servers {
		servers[i] = &benchServer{spec: spec}
	}
	defer func() {
		for _, b := range servers {
			if b.srv == nil {
				continue
			}
			if err := b.srv.Stop(); err != nil {
				logf("%s: stop: %v", b.spec.Label, err)
			}
			// The datadir is large and of no use once the runs are
			// written; my.cnf and the error log stay.
			_ = os.RemoveAll(b.srv.DataDir)
		}
	}()
	var fetcher *lab.Fetcher
	for _, b := range servers {
		if err := ctx.Err(); err != nil {
			break
		}
		if b.spec.Suite != "" && fetcher == nil {
			if fetcher, err = lab.NewFetcher(opts.Cache, logw); err != nil {
				b.missing = fmt.Sprintf("fetch: %v", err)
				logf("%s: %s", b.spec.Label, b.missing)
				continue
			}
		}
		logf("%s: resolving %s", b.spec.Label, serverSource(b.spec))
		if b.bin, err = lab.Resolve(ctx, fetcher, b.spec); err != nil {
			b.missing = fmt.Sprintf("server binary: %v", err)
			logf("%s: %s", b.spec.Label, b.missing)
			continue
		}
		logf("%s: starting %s (%s)", b.spec.Label, b.bin.Mariadbd, b.bin.Version)
		b.srv, err = lab.StartServer(ctx, b.bin, lab.ServerConfig{
			Dir:        filepath.Join(out, "servers", b.spec.Label),
			BufferPool: lab.BufferPoolFor(cfg.Workloads),
			Options:    append(append([]string{}, cfg.ServerOptions...), b.spec.Options...),
			Log:        logw,
		})
		if err != nil {
			b.srv = nil
			b.missing = fmt.Sprintf("server did not start: %v", err)
			logf("%s: %s", b.spec.Label, b.missing)
		}
	}

	// Measurements: per workload, prepare every server, then N rounds with
	// the versions in a rotating order.
	var runs []benchreport.Run
	total := len(cfg.Workloads) * len(servers) * opts.Repeat
	done := 0
	for _, w := range cfg.Workloads {
		prepared := make(map[*benchServer]string)
		for _, b := range servers {
			if b.srv == nil || ctx.Err() != nil {
				continue
			}
			logf("%s: %s: preparing %s of %d rows", b.spec.Label, w.Name, names.Plural(w.Tables, "table"), w.TableSize)
			if err := b.srv.Prepare(ctx, w); err != nil {
				prepared[b] = fmt.Sprintf("sysbench prepare: %v", err)
				logf("%s: %s: %s", b.spec.Label, w.Name, prepared[b])
			}
		}
		for r := 1; r <= opts.Repeat; r++ {
			for k := range servers {
				b := servers[(k+r-1)%len(servers)]
				run := benchreport.Run{Server: b.spec.Label, Workload: w.Name, Repeat: r}
				done++
				switch {
				case b.missing != "":
					run.Missing = b.missing
				case prepared[b] != "":
					run.Missing = prepared[b]
				case ctx.Err() != nil:
					run.Missing = "bench was interrupted before this run"
				case b.srv.Err() != nil:
					run.Missing = fmt.Sprintf("server died: %v", b.srv.Err())
				default:
					run.Dir = filepath.Join(out, "runs", w.Name, b.spec.Label, strconv.Itoa(r))
					logf("[%d/%d] %s %s repeat %d: sysbench %s, %s", done, total, w.Name, b.spec.Label, r, w.Test, w.Duration)
					if err := record(ctx, benchRecordOptions(s, cfg, w, b, run.Dir)); err != nil {
						logf("[%d/%d] %s %s repeat %d: %v", done, total, w.Name, b.spec.Label, r, err)
						if _, serr := os.Stat(filepath.Join(run.Dir, "run.json")); serr != nil {
							run.Dir, run.Missing = "", fmt.Sprintf("record: %v", err)
						}
						if died := b.srv.Err(); died != nil {
							b.missing = fmt.Sprintf("server died: %v", died)
						}
					}
				}
				runs = append(runs, run)
			}
		}
	}

	// The report, from whatever was measured.
	labels := make([]string, len(servers))
	for i, b := range servers {
		labels[i] = b.spec.Label
	}
	workloads := make([]string, len(cfg.Workloads))
	for i, w := range cfg.Workloads {
		workloads[i] = w.Name
	}
	base := ""
	if sp := cfg.Base(); sp != nil {
		base = sp.Label
	}
	logf("writing the report to %s", out)
	rep, err := benchreport.Build(runs, benchreport.Options{Base: base, Servers: labels, Workloads: workloads,
		Roots: cfg.Roots, Map: m, SVG: true})
	if err != nil {
		return fmt.Errorf("bench: report: %w", err)
	}
	if err := rep.WriteFiles(out); err != nil {
		return fmt.Errorf("bench: report: %w", err)
	}
	if err := rep.WriteSummary(s.Out); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "\nreport: %s\n", filepath.Join(out, "index.html"))
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("bench: interrupted; the report holds the runs that finished: %w", err)
	}
	var failed []string
	for _, b := range servers {
		if b.missing != "" {
			failed = append(failed, b.spec.Label+": "+firstLine(b.missing))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("bench: %d of %s failed (the report shows their cells as missing): %s",
			len(failed), names.Plural(len(servers), "server"), strings.Join(failed, "; "))
	}
	return nil
}

// benchRecordOptions is `flamediff record` of one measurement.
func benchRecordOptions(s *streams, cfg *lab.Config, w lab.Workload, b *benchServer, dir string) *RecordOptions {
	// The window: from the warmup to a margin before sysbench ends.
	margin := min(2*time.Second, (w.Duration-w.Warmup)/4)
	var debug []string
	if b.bin.LibcDebugDir != "" {
		debug = []string{filepath.Dir(b.bin.LibcDebugDir)} // the root above .build-id
	}
	return &RecordOptions{
		Streams:    &streams{In: s.In, Out: io.Discard, ErrOut: io.Discard},
		PID:        b.srv.PID(),
		Sampler:    cfg.Capture.Sampler,
		Event:      "auto",
		Freq:       cfg.Capture.Frequency,
		CallGraph:  cfg.Capture.CallGraph,
		PerCPU:     cfg.Capture.Events == "cpu",
		Warmup:     w.Warmup,
		Margin:     margin,
		Socket:     b.srv.Socket,
		User:       "root",
		OpsCounter: []string{"Questions"},
		Label:      b.spec.Label,
		Out:        dir,
		DebugDirs:  debug,
		Quiet:      true,
		Workload:   b.srv.SysbenchArgs(w, "run", "--report-interval=1"),
		ProcRoot:   "/proc",
	}
}

func serverSource(spec lab.ServerSpec) string {
	if spec.Path != "" {
		return spec.Path
	}
	return "Debian " + spec.Suite
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
