package lab

import (
	"github.com/flamediff/flamediff/benchreport"
	"github.com/flamediff/flamediff/symbolmap"
)

// WriteReport builds the report of the measurements with package
// benchreport, laid out as cfg says (its base, its servers and workloads
// in the config's order, its roots; a measurement Missing is a missing
// cell; its unprofiled window gives the throughput and per-op figures; a
// workload with RowsPerQuery, scan, reports rows per second as well),
// with the symbol map m (none when nil), and writes its files and
// flame graphs into dir (benchreport.Report.WriteFiles). It returns the
// report, for its summary. The errors are benchreport's.
func WriteReport(dir string, cfg *Config, m *symbolmap.Map, measured []Measurement) (*benchreport.Report, error) {
	base := ""
	if sp := cfg.Base(); sp != nil {
		base = sp.Label
	}
	runs := make([]benchreport.Run, len(measured))
	for i, r := range measured {
		runs[i] = benchreport.Run{Server: r.Server, Workload: r.Workload, Repeat: r.Repeat, Dir: r.Dir, Missing: r.Missing,
			MeasureDir: r.MeasureDir, MeasureMissing: r.MeasureMissing}
	}
	rows := map[string]int{}
	for _, w := range cfg.Workloads {
		if n := w.RowsPerQuery(); n > 0 {
			rows[w.Name] = n
		}
	}
	rep, err := benchreport.Build(runs, benchreport.Options{Base: base, Servers: cfg.Labels(), Workloads: cfg.WorkloadNames(),
		Roots: cfg.Roots, Map: m, SVG: true, RowsPerOp: rows})
	if err != nil {
		return nil, err
	}
	if err := rep.WriteFiles(dir); err != nil {
		return nil, err
	}
	return rep, nil
}
