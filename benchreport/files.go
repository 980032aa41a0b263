package benchreport

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/flamediff/flamediff/flamegraph"
	"github.com/flamediff/flamediff/internal/atomicfile"
	"github.com/flamediff/flamediff/internal/names"
	"github.com/flamediff/flamediff/report"
)

// File names WriteFiles writes in its directory.
const (
	JSONFile     = "report.json"
	MarkdownFile = "report.md"
	HTMLFile     = "index.html"
	SVGDir       = "svg"
)

// graphLink is one flame graph of the HTML page: where it is, or why it
// could not be drawn.
type graphLink struct {
	Title string
	Href  string // relative to the report directory, "/"-separated
	Err   string
}

// WriteFiles writes the report into dir (created if need be): report.json,
// report.md, the rQPS matrix as rqps.txt and rqps.csv (WriteRQPSText,
// WriteRQPSCSV), index.html and, with Options.SVG, for each workload a flame
// graph per version, svg/WORKLOAD/VERSION.svg, a differential flame graph
// normalised per operation from the base to each other version,
// svg/WORKLOAD/BASE-vs-VERSION.svg, and one from the version before each
// step of the workload's version series to the step's version when the
// former is not the base, svg/WORKLOAD/PREV-vs-VERSION.svg (Step.Graph);
// with off-CPU profiles, each version's off-CPU graphs of switches and of
// time off the CPU (OffCPUGraphPath) and the differential ones from the
// base (OffCPUDiffGraphPath), shown on index.html apart from the CPU ones.
// Names with characters other than letters, digits, '.', '_' and '-' have
// them replaced by '_'. A graph
// that cannot be drawn is named on the page with the reason; it is not an
// error. Every file is written atomically (a temporary file in the same
// directory, then a rename), so that an interrupted run never leaves a
// half-written file; files already in dir that the report does not write
// are left alone.
func (r *Report) WriteFiles(dir string) error {
	files := map[string][]byte{}
	graphs := map[string][]graphLink{}
	offGraphs := map[string][]graphLink{}
	if r.svg {
		for _, w := range r.Workloads {
			graphs[w.Name] = r.renderGraphs(w, files)
			offGraphs[w.Name] = r.drawOffCPUGraphs(w, files)
		}
	}
	var buf bytes.Buffer
	if err := r.WriteJSON(&buf); err != nil {
		return err
	}
	files[JSONFile] = bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := r.WriteMarkdown(&buf); err != nil {
		return err
	}
	files[MarkdownFile] = bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := r.WriteRQPSText(&buf); err != nil {
		return err
	}
	files[RQPSTextFile] = bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := r.WriteRQPSCSV(&buf); err != nil {
		return err
	}
	files[RQPSCSVFile] = bytes.Clone(buf.Bytes())
	buf.Reset()
	if err := r.writeHTML(&buf, graphs, offGraphs); err != nil {
		return err
	}
	files[HTMLFile] = bytes.Clone(buf.Bytes())
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("report %w", err)
		}
		if err := writeFileAtomic(p, files[n]); err != nil {
			return err
		}
	}
	return nil
}

// safeName makes a label usable as a file name.
func safeName(s string) string {
	out := []rune(s)
	for i, c := range out {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			out[i] = '_'
		}
	}
	if len(out) == 0 || string(out) == "." || string(out) == ".." {
		return "_"
	}
	return string(out)
}

// PlainGraphPath is where WriteFiles puts the flame graph of a version
// under a workload, relative to its directory, "/"-separated.
func PlainGraphPath(workload, server string) string {
	return path.Join(SVGDir, safeName(workload), safeName(server)+".svg")
}

// DiffGraphPath is where WriteFiles puts the differential flame graph from
// the base to a version under a workload, as PlainGraphPath.
func DiffGraphPath(workload, base, server string) string {
	return path.Join(SVGDir, safeName(workload), safeName(base)+"-vs-"+safeName(server)+".svg")
}

// renderGraphs draws the workload's flame graphs into files and returns
// their links, plain graphs first, in server order.
func (r *Report) renderGraphs(w *Workload, files map[string][]byte) []graphLink {
	var links []graphLink
	base := w.merged[r.Base]
	draw := drawInto(files, &links)
	for _, v := range w.Versions {
		p := w.merged[v.Server]
		if p == nil {
			continue
		}
		o := r.graphOptions()
		o.Title = fmt.Sprintf("%s: %s", w.Name, v.Server)
		o.Subtitle = fmt.Sprintf("cpu/o %s µs, %s o/s, %d run(s)", report.F2(v.CPUPerOp.Median), report.F2(v.QPS.Median), v.Repeats)
		if o.Subsystem != nil {
			o.Palette = flamegraph.PaletteSubsystem
		}
		draw(v.Server, PlainGraphPath(w.Name, v.Server), func() (*flamegraph.Graph, error) { return flamegraph.Layout(p, o) })
	}
	if base == nil {
		return links
	}
	for _, v := range w.Versions {
		p := w.merged[v.Server]
		if p == nil || v.Server == r.Base {
			continue
		}
		o := r.graphOptions()
		o.Title = fmt.Sprintf("%s: %s → %s", w.Name, r.Base, v.Server)
		o.Subtitle = "Change in CPU µs per operation; widths follow " + v.Server
		o.Normalize = flamegraph.NormalizePerOp
		o.BaseLabel, o.TargetLabel = r.Base, v.Server
		draw(r.Base+" → "+v.Server, DiffGraphPath(w.Name, r.Base, v.Server), func() (*flamegraph.Graph, error) {
			return flamegraph.LayoutDiff(base, p, o)
		})
	}
	r.renderStepGraphs(w, draw)
	return links
}

// drawInto returns a function that lays a graph out, writes it into files
// at href and adds its link (or the reason it could not be drawn) to links.
func drawInto(files map[string][]byte, links *[]graphLink) func(string, string, func() (*flamegraph.Graph, error)) {
	return func(title, href string, layout func() (*flamegraph.Graph, error)) {
		l := graphLink{Title: names.Clean(title), Href: href}
		g, err := layout()
		var b bytes.Buffer
		if err == nil {
			err = g.WriteSVG(&b)
		}
		if err != nil {
			l.Href, l.Err = "", names.Clean(err.Error())
		} else {
			files[href] = b.Bytes()
		}
		*links = append(*links, l)
	}
}

// drawOffCPUGraphs draws the workload's off-CPU graphs into files and
// returns their links.
func (r *Report) drawOffCPUGraphs(w *Workload, files map[string][]byte) []graphLink {
	var links []graphLink
	r.renderOffCPUGraphs(w, drawInto(files, &links))
	return links
}

// renderStepGraphs draws the differential flame graph of every step of
// the workload's series (Step.Graph) that is not one from the base.
func (r *Report) renderStepGraphs(w *Workload, draw func(string, string, func() (*flamegraph.Graph, error))) {
	if w.Series == nil {
		return
	}
	drawn := map[string]bool{}
	for _, f := range slices.Concat(w.Series.Figures, w.Series.Subsystems) {
		for _, st := range f.Steps {
			if st.Graph == "" || drawn[st.Graph] || st.Previous == r.Base {
				continue
			}
			drawn[st.Graph] = true // once, whichever figures stepped there
			before, after := w.merged[st.Previous], w.merged[st.Server]
			o := r.graphOptions()
			o.Title = fmt.Sprintf("%s: step %s → %s", w.Name, st.Previous, st.Server)
			o.Subtitle = "Change in CPU µs per operation; widths follow " + st.Server
			o.Normalize = flamegraph.NormalizePerOp
			o.BaseLabel, o.TargetLabel = st.Previous, st.Server
			draw("step "+st.Previous+" → "+st.Server, st.Graph, func() (*flamegraph.Graph, error) {
				return flamegraph.LayoutDiff(before, after, o)
			})
		}
	}
}

func (r *Report) graphOptions() flamegraph.Options {
	o := flamegraph.Options{Hash: true}
	if r.subsystem != nil {
		o.Subsystem, o.Subsystems = r.subsystem, r.subNames
	}
	return o
}

// writeFileAtomic writes data to path atomically, readable by all.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

// HTML page.

type htmlWorkload struct {
	Name   string
	ID     string
	Charts []htmlChart
	Tables template.HTML
	Graphs []graphLink
	// OffGraphs are the off-CPU graphs (none without off-CPU profiles).
	OffGraphs []graphLink
}

type htmlPage struct {
	Title     string
	Intro     []string
	Overview  template.HTML
	Charts    []htmlChart
	Workloads []htmlWorkload
	SVG       bool
}

// htmlTables writes sections as the page's tables: cells that wrap, names
// indented with non-breaking spaces, a figure within noise grey and a
// missing cell red.
func htmlTables(ss []report.Section) (template.HTML, error) {
	for _, s := range ss {
		for _, row := range s.Rows {
			for i, c := range row {
				switch {
				case strings.HasPrefix(c.Text, noise):
					row[i].Class = "noise"
				case c.Text == "missing":
					row[i].Class = "missing"
				}
			}
		}
	}
	return report.HTMLTables(ss, report.HTMLOptions{Heading: "h3", Indent: "\u00a0\u00a0"})
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: -apple-system, "Segoe UI", "DejaVu Sans", Verdana, sans-serif; margin: 1.5em; color: #222; max-width: 110em; }
h1 { font-size: 1.4em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin-top: 1.5em; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; vertical-align: top; }
th { background: #f0f0f0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.name { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; white-space: pre-wrap; overflow-wrap: anywhere; max-width: 45em; }
td.noise { color: #888; }
td.missing { background: #fde8e8; color: #a00; }
p.note { color: #444; font-size: 0.9em; overflow-wrap: anywhere; }
nav a { margin-right: 1em; }
.graphs { display: flex; flex-wrap: wrap; gap: 1em; }
.graphs figure { margin: 0; width: 48%; min-width: 30em; }
.graphs img { width: 100%; border: 1px solid #ddd; }
.graphs figcaption { font-size: 0.9em; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; margin: 1em 0; }
.charts figure { margin: 0; }
.charts svg { max-width: 100%; height: auto; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Intro}}<p>{{.}}</p>
{{end}}<nav>{{range .Workloads}}<a href="#{{.ID}}">{{.Name}}</a>{{end}}<a href="report.md">report.md</a><a href="report.json">report.json</a><a href="rqps.txt">rqps.txt</a><a href="rqps.csv">rqps.csv</a></nav>
{{.Overview}}
{{template "charts" .Charts}}{{range .Workloads}}<h2 id="{{.ID}}">{{.Name}}</h2>
{{template "charts" .Charts}}{{.Tables}}
{{if $.SVG}}<h3>Flame graphs</h3>
<p class="note">Plain graphs per version, then differential graphs from the base and of each step of the version series, normalised per operation (red: more CPU per operation, blue: less). Click a graph to open it: hover for figures, click to zoom, search by regular expression.</p>
<div class="graphs">
{{range .Graphs}}<figure>{{if .Err}}<figcaption>{{.Title}}: no graph: {{.Err}}</figcaption>{{else}}<a href="{{.Href}}"><img src="{{.Href}}" alt="flame graph {{.Title}}"></a><figcaption><a href="{{.Href}}">{{.Title}}</a></figcaption>{{end}}</figure>
{{end}}</div>
{{if .OffGraphs}}<h3>Off-CPU flame graphs</h3>
<p class="note">Where the server's threads left the CPU (profiled windows), by context switches and by time off the CPU, in the off-CPU palette (blues; leaves [voluntary] teal, [involuntary] amber); then differential graphs from the base normalised per operation (red: more per operation, blue: less).</p>
<div class="graphs">
{{range .OffGraphs}}<figure>{{if .Err}}<figcaption>{{.Title}}: no graph: {{.Err}}</figcaption>{{else}}<a href="{{.Href}}"><img src="{{.Href}}" alt="off-CPU flame graph {{.Title}}"></a><figcaption><a href="{{.Href}}">{{.Title}}</a></figcaption>{{end}}</figure>
{{end}}</div>
{{end}}{{end}}{{end}}</body>
</html>
{{define "charts"}}{{if .}}<div class="charts">
{{range .}}<figure>{{if .Err}}<figcaption>{{.Title}}: no chart: {{.Err}}</figcaption>{{else}}{{.SVG}}{{end}}</figure>
{{end}}</div>
{{end}}{{end}}`))

// writeHTML writes index.html: the tables of the markdown report and the
// flame graphs (linked, shown as images).
func (r *Report) writeHTML(w io.Writer, graphs, offGraphs map[string][]graphLink) error {
	p := htmlPage{Title: r.title(), Intro: r.intro(), SVG: r.svg, Charts: draw(r.overviewCharts())}
	var err error
	if p.Overview, err = htmlTables(r.overview()); err != nil {
		return fmt.Errorf("report html: %w", err)
	}
	for i, wl := range r.Workloads {
		hw := htmlWorkload{Name: names.Clean(wl.Name), ID: fmt.Sprintf("w%d-%s", i+1, safeName(wl.Name)), Graphs: graphs[wl.Name], OffGraphs: offGraphs[wl.Name], Charts: draw(r.workloadCharts(wl))}
		if hw.Tables, err = htmlTables(withoutOffGraphs(r.workloadSections(wl))); err != nil {
			return fmt.Errorf("report html: %w", err)
		}
		p.Workloads = append(p.Workloads, hw)
	}
	if err := pageTemplate.Execute(w, p); err != nil {
		return fmt.Errorf("report html: %w", err)
	}
	return nil
}
