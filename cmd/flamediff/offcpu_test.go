package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/report"
)

// offCPUDir holds hand-made run directories with off-CPU profiles
// (testdata/offcpu/README.md gives the planted figures).
const offCPUDir = "testdata/offcpu"

func TestOffCPUGolden(t *testing.T) {
	base, target := filepath.Join(offCPUDir, "mariadb-10.11"), filepath.Join(offCPUDir, "mariadb-10.5")
	cases := []struct {
		name string
		args []string
	}{
		{"report-time", []string{"report", "--off-cpu", "--map", mapFile, "--root", "do_command", "--top", "8", target}},
		{"report-switches", []string{"report", "--off-cpu=switches", "--map", mapFile, "--top", "8", target}},
		{"diff-time", []string{"diff", "--off-cpu=time", "--map", mapFile, "--top", "8", base, target}},
		{"diff-switches", []string{"diff", "--off-cpu=switches", "--map", mapFile, "--top", "8", base, target}},
	}
	for _, c := range cases {
		for _, format := range formats {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				args := append(append([]string{}, c.args...), "--format", format)
				out, errOut, code := runCLI(t, args...)
				if code != exitOK {
					t.Fatalf("flamediff %s: exit %d, stderr:\n%s", strings.Join(args, " "), code, errOut)
				}
				golden(t, filepath.Join("offcpu", c.name+"."+formatExt[format]), []byte(out))
			})
		}
	}
}

// The figures of report and diff --off-cpu agree with run.json's own
// off_cpu totals (seconds, voluntary and involuntary switches, over its
// operations), which record writes from its BPF maps, not from the folded
// files; and the attribution adds up to the change, with the commit part
// planted in the folded files (+12.00 cs/op, +30.00 µs/op).
func TestOffCPUFiguresAgainstRunJSON(t *testing.T) {
	runs := map[string]*fold.Meta{}
	for _, label := range []string{"10.11", "10.5"} {
		f, err := os.Open(filepath.Join(offCPUDir, "mariadb-"+label, fold.MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		m, err := fold.ParseMeta(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		runs[label] = m
	}
	perOp := func(m *fold.Meta, kind string) (all, vol, invol float64) {
		o, ops := m.OffCPU, float64(m.Operations)
		if kind == "switches" {
			return float64(o.Voluntary+o.Involuntary) / ops, float64(o.Voluntary) / ops, float64(o.Involuntary) / ops
		}
		return o.Seconds * 1e6 / ops, o.VoluntarySeconds * 1e6 / ops, o.InvoluntarySeconds * 1e6 / ops
	}
	for _, c := range []struct {
		kind   string
		commit float64
	}{{"switches", 12}, {"time", 30}} {
		// report: the profile's per-op figures and their kinds.
		for label, m := range runs {
			out, errOut, code := runCLI(t, "report", "--off-cpu="+c.kind, "--format", "json", filepath.Join(offCPUDir, "mariadb-"+label))
			if code != exitOK {
				t.Fatalf("report %s %s: exit %d: %s", c.kind, label, code, errOut)
			}
			var j report.JSONReport
			if err := json.Unmarshal([]byte(out), &j); err != nil {
				t.Fatal(err)
			}
			all, vol, invol := perOp(m, c.kind)
			p := j.Profile
			if p.PerOp == nil || math.Abs(*p.PerOp-all) > 1e-9 || p.Voluntary == nil || p.Involuntary == nil {
				t.Fatalf("%s %s: profile %+v; want per_op %g (run.json)", c.kind, label, p, all)
			}
			gotVol := float64(*p.Voluntary) / float64(*p.Operations)
			gotInvol := float64(*p.Involuntary) / float64(*p.Operations)
			if math.Abs(gotVol-vol) > 1e-9 || math.Abs(gotInvol-invol) > 1e-9 {
				t.Errorf("%s %s: voluntary %g, involuntary %g per op; run.json says %g and %g", c.kind, label, gotVol, gotInvol, vol, invol)
			}
		}
		// diff: the attribution's change is run.json's, and adds up.
		out, errOut, code := runCLI(t, "diff", "--off-cpu="+c.kind, "--map", mapFile, "--format", "json",
			filepath.Join(offCPUDir, "mariadb-10.11"), filepath.Join(offCPUDir, "mariadb-10.5"))
		if code != exitOK {
			t.Fatalf("diff %s: exit %d: %s", c.kind, code, errOut)
		}
		var j report.JSONDiff
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatal(err)
		}
		b, _, _ := perOp(runs["10.11"], c.kind)
		tg, _, _ := perOp(runs["10.5"], c.kind)
		if len(j.Attribution) != 1 {
			t.Fatalf("diff %s: %d attributions, want 1", c.kind, len(j.Attribution))
		}
		a := j.Attribution[0]
		if want := math.Round((tg-b)*100) / 100; a.DeltaMicrosPerOp != want {
			t.Errorf("diff %s: delta %g per op, run.json says %g", c.kind, a.DeltaMicrosPerOp, want)
		}
		var hundredths int64
		for _, p := range a.Parts {
			hundredths += int64(math.Round(p.DeltaMicrosPerOp * 100))
			if p.Subsystem == "commit" && p.DeltaMicrosPerOp != c.commit {
				t.Errorf("diff %s: commit %+g, planted %+g", c.kind, p.DeltaMicrosPerOp, c.commit)
			}
		}
		if hundredths != int64(math.Round(a.DeltaMicrosPerOp*100)) {
			t.Errorf("diff %s: parts add up to %d hundredths, the change is %g", c.kind, hundredths, a.DeltaMicrosPerOp)
		}
		if c.kind == "switches" {
			// The subsystems' kinds add up to run.json's switches.
			for i, label := range []string{"10.11", "10.5"} {
				var vol, invol int64
				for _, sub := range j.Subsystems {
					vol += *sub.Profiles[i].Voluntary
					invol += *sub.Profiles[i].Involuntary
				}
				if o := runs[label].OffCPU; vol != o.Voluntary || invol != o.Involuntary {
					t.Errorf("diff %s: %s's subsystems hold %d voluntary and %d involuntary switches, run.json %d and %d", c.kind, label, vol, invol, o.Voluntary, o.Involuntary)
				}
			}
		}
		wantUnit := map[string]string{"switches": "cs/op", "time": "µs/op"}[c.kind]
		if a.Unit != wantUnit || j.Profiles[0].PerOpUnit != wantUnit {
			t.Errorf("diff %s: unit %q, profile per_op_unit %q; want %q", c.kind, a.Unit, j.Profiles[0].PerOpUnit, wantUnit)
		}
	}
}

func TestOffCPUErrors(t *testing.T) {
	noOff := filepath.Join(offCPUDir, "mariadb-10.11-no-offcpu")
	base := filepath.Join(offCPUDir, "mariadb-10.11")
	for _, c := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"run without off-CPU", []string{"report", "--off-cpu", noOff}, exitError, []string{noOff, "offcpu.folded", "--off-cpu"}},
		{"diff, one run without", []string{"diff", "--off-cpu=switches", base, noOff}, exitError, []string{noOff, "offcpu.folded", "--off-cpu"}},
		{"on-CPU beside off-CPU", []string{"diff", base, filepath.Join(base, "offcpu.folded")}, exitError, []string{"off-CPU time", "CPU", "one kind"}},
		{"time beside switches", []string{"diff", filepath.Join(base, "offcpu.folded"), filepath.Join(offCPUDir, "mariadb-10.5", "offcpu-switches.folded")}, exitError, []string{"context switches", "off-CPU time"}},
		{"file name against the flag", []string{"report", "--off-cpu=time", filepath.Join(base, "offcpu-switches.folded")}, exitError, []string{"context switches", "off-CPU time was asked for"}},
		{"bad kind", []string{"report", "--off-cpu=waits", base}, exitUsage, []string{"--off-cpu", "time or switches"}},
		// Every command with the input flags reads off-CPU profiles.
		{"svg", []string{"svg", "--off-cpu", "-o", filepath.Join(t.TempDir(), "g.svg"), noOff}, exitError, []string{noOff, "--off-cpu"}},
		{"html", []string{"html", "--off-cpu=switches", "-o", filepath.Join(t.TempDir(), "g.html"), noOff}, exitError, []string{noOff, "--off-cpu"}},
		{"map suggest", []string{"map", "suggest", "--off-cpu", base, noOff}, exitError, []string{noOff, "--off-cpu"}},
	} {
		_, errOut, code := runCLI(t, c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", c.name, code, c.code, errOut)
		}
		for _, w := range c.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%s: stderr %q lacks %q", c.name, errOut, w)
			}
		}
	}
}

// A file named offcpu*.folded is an off-CPU profile without --off-cpu: the
// same figures as the run directory read with it, less the per-op ones.
func TestOffCPUFileByName(t *testing.T) {
	file := filepath.Join(offCPUDir, "mariadb-10.5", "offcpu-switches.folded")
	out, errOut, code := runCLI(t, "report", "--format", "json", file)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var j report.JSONReport
	if err := json.Unmarshal([]byte(out), &j); err != nil {
		t.Fatal(err)
	}
	if p := j.Profile; p.Unit != fold.UnitSwitches || p.Quantity != "context switches" || p.Total != 18200 || *p.Voluntary != 16000 || *p.Involuntary != 2200 {
		t.Errorf("profile %+v; want 18200 switches, 16000 voluntary, 2200 involuntary (run.json's off_cpu)", p)
	}
}

// svg and html read the off-CPU profile too (the graphs themselves are
// package flamegraph's); html's tables are report's, worded by quantity.
func TestOffCPUGraphCommands(t *testing.T) {
	run := filepath.Join(offCPUDir, "mariadb-10.5")
	dir := t.TempDir()
	svg, page := filepath.Join(dir, "g.svg"), filepath.Join(dir, "g.html")
	if _, errOut, code := runCLI(t, "svg", "--off-cpu=switches", "-o", svg, run); code != exitOK {
		t.Fatalf("svg --off-cpu=switches: exit %d: %s", code, errOut)
	}
	if _, errOut, code := runCLI(t, "html", "--off-cpu", "-o", page, run); code != exitOK {
		t.Fatalf("html --off-cpu: exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "<title>Profile 10.5: off-CPU time, 150000 us</title>") {
		t.Errorf("html --off-cpu: the page's title does not name off-CPU time and run.json's 0.15 s (150000 us)")
	}
}
