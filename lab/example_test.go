package lab_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/flamediff/flamediff/lab"
	"github.com/flamediff/flamediff/workload"
)

// The server side of `flamediff bench`: every version of the config,
// fetched if needed, started, prepared, run, stopped. (Compiled, not run.)
func Example() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	f, err := os.Open("examples/lab/demo.yaml")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	cfg, err := lab.ParseConfig(f, f.Name())
	f.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // FILE:LINE:COL: what (fix: how), one per line
		return
	}
	cache, _ := lab.DefaultCacheDir()
	fetcher, err := lab.NewFetcher(cache, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	for _, spec := range cfg.Servers {
		bin, err := lab.Resolve(ctx, fetcher, spec) // installed, or fetched and cached
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", spec.Label, err) // the other versions still run
			continue
		}
		dir, _ := os.MkdirTemp("/tmp", "bench-"+spec.Label+"-")
		srv, err := lab.StartServer(ctx, bin, lab.ServerConfig{
			Dir:        dir,
			BufferPool: lab.BufferPoolFor(cfg.Workloads),
			Options:    append(append([]string{}, cfg.ServerOptions...), spec.Options...),
			Log:        os.Stderr,
		})
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", spec.Label, err) // quotes the error log
			continue
		}
		for _, w := range cfg.Workloads {
			if err := srv.Prepare(ctx, w); err != nil {
				fmt.Fprintf(os.Stderr, "%s %s: %v\n", spec.Label, w.Name, err)
				break
			}
			run, err := workload.Start(ctx, srv.SysbenchArgs(w, "run", "--report-interval=1"), nil)
			if err != nil {
				break
			}
			// ... sample srv.PID() from w.Warmup on, with bin.LibcDebugFile() for libc ...
			_ = run.Wait()
		}
		if err := srv.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", spec.Label, err)
		}
		os.RemoveAll(dir)
	}
}
