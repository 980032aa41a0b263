package benchreport

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	goldenfile "github.com/flamediff/flamediff/internal/golden"
	"github.com/flamediff/flamediff/symbolmap"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// The fixture matrix: real captures of three MariaDB releases under two
// sysbench workloads (../testdata/README.md says how they were made).
var (
	fixtureServers   = []string{"10.5", "10.11", "11.8"}
	fixtureWorkloads = []string{"point-select", "update-index"}
	fixtureBase      = "10.11"
)

const mapFile = "../examples/symbolmaps/mariadb.yaml"

func fixtureDir(server, workload string) string {
	return filepath.Join("..", "testdata", "runs", "mariadb-"+server+"-"+workload)
}

func fixtureRuns() []Run {
	var runs []Run
	for _, w := range fixtureWorkloads {
		for _, s := range fixtureServers {
			runs = append(runs, Run{Server: s, Workload: w, Repeat: 1, Dir: fixtureDir(s, w)})
		}
	}
	return runs
}

func loadMariaDBMap(t *testing.T) *symbolmap.Map {
	t.Helper()
	f, err := os.Open(mapFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, _, err := symbolmap.Parse(f, "examples/symbolmaps/mariadb.yaml")
	if err != nil {
		t.Fatalf("symbolmap.Parse(%s) = %v", mapFile, err)
	}
	return m
}

func fixtureOptions(t *testing.T) Options {
	return Options{Base: fixtureBase, Servers: fixtureServers, Workloads: fixtureWorkloads, Map: loadMariaDBMap(t)}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", "golden", name), got, *update, "go test ./benchreport -update")
}

// copyRun copies a run directory to dst, letting edit change run.json (as
// a generic map, so that the test does not go through fold.Meta) and
// stacks (the folded lines) on the way.
func copyRun(t *testing.T, src, dst string, edit func(meta map[string]any), stacks func(lines []string) []string) {
	t.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(src, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(meta)
	}
	if data, err = json.MarshalIndent(meta, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "run.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	folded, err := os.ReadFile(filepath.Join(src, "stacks.folded"))
	if err != nil {
		t.Fatal(err)
	}
	if stacks != nil {
		lines := strings.Split(strings.TrimRight(string(folded), "\n"), "\n")
		folded = []byte(strings.Join(stacks(lines), "\n") + "\n")
	}
	if err := os.WriteFile(filepath.Join(dst, "stacks.folded"), folded, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rawMeta reads a run.json as a generic map.
func rawMeta(t *testing.T, dir string) map[string]float64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]any
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for k, v := range all {
		if f, ok := v.(float64); ok {
			out[k] = f
		}
	}
	return out
}

func mustBuild(t *testing.T, runs []Run, opts Options) *Report {
	t.Helper()
	r, err := Build(runs, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return r
}

func markdown(t *testing.T, r *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func rowByPath(t *testing.T, st *Subtree, path ...string) *SubtreeRow {
	t.Helper()
	for _, r := range st.Rows {
		if strings.Join(r.Path, ";") == strings.Join(path, ";") {
			return r
		}
	}
	t.Fatalf("subtree %s has no row %q", st.Root, path)
	return nil
}

func colOf(t *testing.T, st *Subtree, server string) int {
	t.Helper()
	for i, s := range st.Servers {
		if s == server {
			return i
		}
	}
	t.Fatalf("subtree %s has no column %s (columns %q)", st.Root, server, st.Servers)
	return -1
}
