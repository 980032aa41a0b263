package input

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/diff"
	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/rundir"
)

// write writes content to dir/name, making the directories, and returns its path.
func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// folded parses folded stacks ("a;b 3" per line) into a profile labelled label.
func folded(label string, stacks ...string) *fold.Profile {
	p, err := fold.Parse(strings.NewReader(strings.Join(stacks, "\n")+"\n"), fold.ParseOptions{Format: fold.FormatFolded})
	if err != nil {
		panic(err)
	}
	if label != "" {
		p.Meta = &fold.Meta{Label: label}
	}
	return p
}

// fakeLoad serves the profiles ps by argument, a copy each time.
func fakeLoad(ps map[string]*fold.Profile) LoadFunc {
	return func(arg string, _ fold.ParseOptions) (*fold.Profile, error) {
		p, ok := ps[arg]
		if !ok {
			return nil, errors.New("no such test profile " + arg)
		}
		return p.Clone(), nil
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := write(t, dir, "a.folded", "t;f 3\nt;g 1\n")
	bad := write(t, dir, "bad.folded", "t;f 3\nnot a stack\n")
	empty := write(t, dir, "empty.folded", "")
	run := filepath.Dir(write(t, dir, "run/stacks.folded", "t;f 2\nnot a stack\n"))
	write(t, dir, "run/run.json", "{\"format\": 1, \"label\": \"10.11\"}\n")
	missing := filepath.Join(dir, "missing.folded")
	for _, tc := range []struct {
		name, arg, stdin string
		strict           bool
		total            int64
		label            string // Label(p, arg)
		skipped          string // the warning, "" for none
		err              string // the error's text, "" for none
		is               error
	}{
		{name: "file", arg: file, total: 4, label: "a.folded"},
		{name: "file with a bad line", arg: bad, total: 3, label: "bad.folded", skipped: bad + ": skipped 1 line that could not be parsed (first: "},
		{name: "strict", arg: bad, strict: true, err: bad + ":2: "},
		{name: "run directory", arg: run, total: 2, label: "10.11", skipped: filepath.Join(run, "stacks.folded") + ": skipped 1 line"},
		{name: "stdin", arg: "-", stdin: "t;f 5\n", total: 5, label: "stdin"},
		{name: "stdin with a bad line", arg: "-", stdin: "x\nt;f 5\n", total: 5, label: "stdin", skipped: "stdin: skipped 1 line"},
		{name: "empty stdin", arg: "-", err: "stdin: no samples (the input is empty)", is: rundir.ErrNoSamples},
		{name: "empty file", arg: empty, err: empty + ": no samples (the input is empty)", is: rundir.ErrNoSamples},
		{name: "missing", arg: missing, err: "profile " + missing + ": no such file or directory", is: os.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var warnings []string
			l := &Loader{Stdin: strings.NewReader(tc.stdin), Warn: func(s Skipped) { warnings = append(warnings, s.String()) }}
			p, err := l.Load(tc.arg, fold.ParseOptions{Strict: tc.strict})
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) || tc.is != nil && !errors.Is(err, tc.is) {
					t.Fatalf("Load(%s) = %v, want an error starting %q (is %v)", tc.arg, err, tc.err, tc.is)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load(%s): %v", tc.arg, err)
			}
			if p.Total() != tc.total || Label(p, tc.arg) != tc.label {
				t.Errorf("Load(%s): total %d, label %q; want %d, %q", tc.arg, p.Total(), Label(p, tc.arg), tc.total, tc.label)
			}
			if tc.skipped == "" && len(warnings) > 0 || tc.skipped != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], tc.skipped)) {
				t.Errorf("Load(%s): warnings %q, want one starting %q", tc.arg, warnings, tc.skipped)
			}
		})
	}
	if _, err := (&Loader{}).Load("-", fold.ParseOptions{}); err == nil {
		t.Error("Load(-) without Stdin: no error")
	}
}

func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		p         *fold.Profile
		arg, want string
	}{
		{folded("10.11", "a 1"), "runs/x", "10.11"},
		{folded("", "a 1"), "runs/x.folded", "x.folded"},
		{folded("", "a 1"), "-", "stdin"},
	} {
		if got := Label(tc.p, tc.arg); got != tc.want {
			t.Errorf("Label(%s) = %q, want %q", tc.arg, got, tc.want)
		}
	}
}

// TestReadThenApply loads profiles once and applies a map as a separate
// step: the raw profiles keep their names, the mapped ones have the map's,
// and a cancelled context stops before the first load.
func TestReadThenApply(t *testing.T) {
	m := readTestMap(t, "version: 1\nrename:\n  - to: f\n    from: [g]\n")
	load := fakeLoad(map[string]*fold.Profile{
		"base":   folded("1", "t;main;f;x 60", "t;main;z 10"),
		"target": folded("2", "t;main;g;x 55", "t;main;z 10"),
	})
	raw, err := Read(context.Background(), load, []string{"base", "target"}, fold.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		i         int
		raw, want string // the frames of the first stack, raw and mapped
	}{
		{0, "t;main;f;x", "t;main;f;x"},
		{1, "t;main;g;x", "t;main;f;x"},
	} {
		mp, expl := Apply(m, raw[tc.i])
		if got := strings.Join(mp.Stacks[0].Frames, ";"); got != tc.want {
			t.Errorf("Apply(profile %d): first stack %s, want %s", tc.i, got, tc.want)
		}
		if got := strings.Join(raw[tc.i].Stacks[0].Frames, ";"); got != tc.raw {
			t.Errorf("after Apply, raw profile %d: first stack %s, want %s (unchanged)", tc.i, got, tc.raw)
		}
		if renamed := len(expl.Rewrites) > 0; renamed != (tc.raw != tc.want) {
			t.Errorf("Apply(profile %d): rewrites %v", tc.i, expl.Rewrites)
		}
		if mp.Label() != raw[tc.i].Label() {
			t.Errorf("Apply(profile %d): label %q, want %q", tc.i, mp.Label(), raw[tc.i].Label())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	counting := func(arg string, o fold.ParseOptions) (*fold.Profile, error) {
		calls++
		return load(arg, o)
	}
	if _, err := Read(ctx, counting, []string{"base"}, fold.ParseOptions{}); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("Read(cancelled) = %v after %d loads, want context.Canceled before any", err, calls)
	}
	if _, err := Read(context.Background(), load, []string{"base", "nope", "target"}, fold.ParseOptions{}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("Read with a bad argument = %v, want its error", err)
	}
}

func TestReadSet(t *testing.T) {
	m := readTestMap(t, "version: 1\nrename:\n  - to: f\n    from: [g]\nsubsystems:\n  - name: work\n    from: [f]\n")
	load := fakeLoad(map[string]*fold.Profile{
		"a":     folded("v", "t;main;f 3"),
		"b":     folded("v", "t;main;g 2"),
		"c.txt": folded("", "t;main;g 1"),
	})
	for _, tc := range []struct {
		args               []string
		labels, baseTarget []string
	}{
		{[]string{"a", "b"}, []string{"v", "v"}, []string{"v (base)", "v (target)"}},
		{[]string{"a", "c.txt"}, []string{"v", "c.txt"}, []string{"v", "c.txt"}},
		{[]string{"a"}, []string{"v"}, []string{"v"}},
	} {
		in, err := ReadSet(context.Background(), load, m, tc.args, nil, fold.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(in.Raw) != len(tc.args) || len(in.Profiles) != len(tc.args) || len(in.Explanations) != len(tc.args) {
			t.Fatalf("ReadSet(%v): %d raw, %d mapped, %d explanations", tc.args, len(in.Raw), len(in.Profiles), len(in.Explanations))
		}
		if strings.Join(in.Labels, "|") != strings.Join(tc.labels, "|") {
			t.Errorf("ReadSet(%v): labels %q, want %q", tc.args, in.Labels, tc.labels)
		}
		for i, p := range in.Profiles {
			if got := p.Stacks[0].Frames[2]; got != "f" {
				t.Errorf("ReadSet(%v): profile %d has %s, want f (mapped)", tc.args, i, got)
			}
		}
		o := in.DiffOptions(diff.Options{Depth: 2})
		if o.Depth != 2 || o.Classify == nil || len(o.SubsystemNames) == 0 || o.IsThreadRoot == nil || len(o.Labels) != len(tc.args) {
			t.Errorf("DiffOptions(%v) = %+v, want depth 2, the map's subsystems and thread roots, the labels", tc.args, o)
		}
		in.LabelBaseTarget()
		if strings.Join(in.Labels, "|") != strings.Join(tc.baseTarget, "|") {
			t.Errorf("LabelBaseTarget(%v): labels %q, want %q", tc.args, in.Labels, tc.baseTarget)
		}
	}
}

func TestCleanNames(t *testing.T) {
	clean := folded("", "t;f 1")
	if got := CleanNames(clean); got != clean {
		t.Error("CleanNames of valid names made a copy")
	}
	dirty := folded("", "t;f\xff 1")
	got := CleanNames(dirty)
	if got.Stacks[0].Frames[1] != "f\uFFFD" || dirty.Stacks[0].Frames[1] != "f\xff" {
		t.Errorf("CleanNames: %q (input now %q), want f\uFFFD and the input unchanged", got.Stacks[0].Frames[1], dirty.Stacks[0].Frames[1])
	}
}

// TestReadSetLabels checks that --label's labels reach the map: a rule
// limited to 11.* applies to the file labelled 11.8 only, and the profiles
// the loader gave are left as they were.
func TestReadSetLabels(t *testing.T) {
	m := readTestMap(t, "version: 1\nrename:\n  - to: mysql_update\n    from: [Sql_cmd_dml::execute]\n    labels: ['11.*']\n")
	base, target := folded("", "t;mysql_update 3"), folded("run", "t;Sql_cmd_dml::execute 2")
	load := fakeLoad(map[string]*fold.Profile{"a.perf": base, "b.perf": target})
	for _, tc := range []struct {
		labels, want []string
		mapped       string // target's frame 1
	}{
		{nil, []string{"a.perf", "run"}, "Sql_cmd_dml::execute"},
		{[]string{"10.11", "11.8"}, []string{"10.11", "11.8"}, "mysql_update"},
		{[]string{"10.11", ""}, []string{"10.11", "run"}, "Sql_cmd_dml::execute"}, // "" keeps run.json's
	} {
		in, err := ReadSet(context.Background(), load, m, []string{"a.perf", "b.perf"}, tc.labels, fold.ParseOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(in.Labels, "|") != strings.Join(tc.want, "|") {
			t.Errorf("ReadSet(labels %q): labels %q, want %q", tc.labels, in.Labels, tc.want)
		}
		if got := in.Profiles[1].Stacks[0].Frames[1]; got != tc.mapped {
			t.Errorf("ReadSet(labels %q): target frame %q, want %q", tc.labels, got, tc.mapped)
		}
	}
	if base.Label() != "" || target.Label() != "run" {
		t.Errorf("the loaded profiles were changed: labels %q, %q", base.Label(), target.Label())
	}
	if _, err := ReadSet(context.Background(), load, m, []string{"a.perf", "b.perf"}, []string{"11.8"}, fold.ParseOptions{}); err == nil || !strings.Contains(err.Error(), "1 label for 2 profiles") {
		t.Errorf("ReadSet with one label for two profiles = %v, want an error saying so", err)
	}
}
