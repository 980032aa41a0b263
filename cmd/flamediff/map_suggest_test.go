package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
	"github.com/flamediff/flamediff/input"
	"github.com/flamediff/flamediff/internal/cli"
	"github.com/flamediff/flamediff/symbolmap"
	"github.com/flamediff/flamediff/symbolmap/suggest"
)

func TestMapSuggestFlags(t *testing.T) {
	def := mapSuggestOptions{MinShare: suggest.DefaultMinShare, MinScore: suggest.DefaultMinScore}
	tests := []struct {
		name    string
		args    []string
		want    mapSuggestOptions
		wantErr string
	}{
		{"defaults", []string{"a", "b"}, mapSuggestOptions{Base: "a", Target: "b", MinShare: 0.5, MinScore: 0.3}, ""},
		{"all", []string{"--map", "m.yaml", "-o", "out.yaml", "--apply", "new.yaml", "--force", "--root", "r", "--min-share", "1", "--min-score", "0.5", "--top", "3", "--strict", "a", "b"},
			mapSuggestOptions{Base: "a", Target: "b", inputFlags: inputFlags{MapFile: "m.yaml", Output: "out.yaml", Strict: true}, Apply: "new.yaml", Force: true, Root: "r", MinShare: 1, MinScore: 0.5, Top: 3}, ""},
		{"one profile", []string{"a"}, def, "takes BASE and TARGET"},
		{"three profiles", []string{"a", "b", "c"}, def, "got 3 arguments"},
		{"min-share 0", []string{"--min-share", "0", "a", "b"}, def, "--min-share 0"},
		{"min-share above 100", []string{"--min-share", "101", "a", "b"}, def, "--min-share 101"},
		{"min-score above 1", []string{"--min-score", "2", "a", "b"}, def, "--min-score 2"},
		{"negative top", []string{"--top", "-1", "a", "b"}, def, "--top -1"},
		{"stdin twice", []string{"-", "-"}, def, "standard input"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			var got *mapSuggestOptions
			cmd := newMapSuggestCmd(s, func(o *mapSuggestOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(s.Out)
			cmd.SetErr(s.ErrOut)
			err := cmd.Execute()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, cli.ErrUsage) {
					t.Fatalf("map suggest %v: err %v, want a usage error containing %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("map suggest %v: %v", tt.args, err)
			}
			g := *got
			g.IO, g.Load = nil, nil
			if !(g.Base == tt.want.Base && g.Target == tt.want.Target && g.MapFile == tt.want.MapFile && g.Output == tt.want.Output &&
				g.Apply == tt.want.Apply && g.Force == tt.want.Force && g.Root == tt.want.Root && g.MinShare == tt.want.MinShare &&
				g.MinScore == tt.want.MinScore && g.Top == tt.want.Top && g.Strict == tt.want.Strict) {
				t.Errorf("map suggest %v: options %+v, want %+v", tt.args, g, tt.want)
			}
		})
	}
}

// fakeProfiles serves small profiles by name: BASE has f, TARGET has its
// rename g (same caller, same callees).
func fakeProfiles() input.LoadFunc {
	return fakeLoad(map[string]*fold.Profile{
		"base":   testProfile("1", "t;main;f;x 60", "t;main;f;y 30", "t;main;z 10"),
		"target": testProfile("2", "t;main;g;x 55", "t;main;g;y 35", "t;main;z 10"),
	})
}

func testProfile(label string, stacks ...string) *fold.Profile {
	p, err := fold.Parse(strings.NewReader(strings.Join(stacks, "\n")+"\n"), fold.ParseOptions{Format: fold.FormatFolded})
	if err != nil {
		panic(err)
	}
	p.Meta = &fold.Meta{Label: label}
	return p
}

func TestMapSuggestRun(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing.yaml")
	mapFile := filepath.Join(dir, "map.yaml")
	const mapText = "version: 1\n# keep this comment\nrename:\n  - to: x\n    from: [x_old]\n"
	tests := []struct {
		name    string
		opts    mapSuggestOptions
		wantErr string
		// wantOut must be in stdout; wantFile, when set, names a file that
		// must exist afterwards and hold wantInFile.
		wantOut, wantFile, wantInFile, wantErrOut string
	}{
		{name: "stdout", opts: mapSuggestOptions{},
			wantOut: "  - to: f\n    from: [g]\n    labels: [\"2\"]\n"},
		{name: "complete map without --map", opts: mapSuggestOptions{},
			wantOut: "\nversion: 1\n"},
		{name: "output file", opts: mapSuggestOptions{inputFlags: inputFlags{Output: filepath.Join(dir, "out.yaml")}},
			wantFile: filepath.Join(dir, "out.yaml"), wantInFile: "  - to: f\n"},
		{name: "apply", opts: mapSuggestOptions{Apply: filepath.Join(dir, "new.yaml")},
			wantFile: filepath.Join(dir, "new.yaml"), wantInFile: "version: 1\n", wantErrOut: "wrote " + filepath.Join(dir, "new.yaml")},
		{name: "apply onto a map", opts: mapSuggestOptions{inputFlags: inputFlags{MapFile: mapFile}, Apply: filepath.Join(dir, "merged.yaml")},
			wantFile: filepath.Join(dir, "merged.yaml"), wantInFile: "rename:\n  # #1 rename", wantErrOut: "added to the rules of " + mapFile},
		// Every output overwrites (atomically), as fold, report and svg do...
		{name: "existing file", opts: mapSuggestOptions{Apply: existing}, wantFile: existing, wantInFile: "from: [g]"},
		{name: "existing output file", opts: mapSuggestOptions{inputFlags: inputFlags{Output: existing}}, wantFile: existing, wantInFile: "  - to: f\n"},
		// ...except an output that is one of the inputs.
		{name: "input map", opts: mapSuggestOptions{inputFlags: inputFlags{MapFile: mapFile}, Apply: mapFile}, wantErr: "--apply " + mapFile + ": output is one of the inputs"},
		{name: "output onto input map", opts: mapSuggestOptions{inputFlags: inputFlags{MapFile: mapFile, Output: mapFile}}, wantErr: "-o " + mapFile + ": output is one of the inputs"},
		{name: "apply and output the same", opts: mapSuggestOptions{Apply: filepath.Join(dir, "same.yaml"), inputFlags: inputFlags{Output: filepath.Join(dir, "same.yaml")}}, wantErr: "same file"},
		{name: "force", opts: mapSuggestOptions{Apply: existing, Force: true}, wantFile: existing, wantInFile: "from: [g]"},
		{name: "missing map", opts: mapSuggestOptions{inputFlags: inputFlags{MapFile: filepath.Join(dir, "nope.yaml")}}, wantErr: "no such file"},
		{name: "root absent", opts: mapSuggestOptions{Root: "nowhere"}, wantErr: `root "nowhere" is in neither profile`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(existing, []byte("keep me\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(mapFile, []byte(mapText), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			opts := tt.opts
			opts.IO = &streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
			opts.Base, opts.Target, opts.Load = "base", "target", fakeProfiles()
			opts.MinShare, opts.MinScore = 0.5, 0.3
			err := runMapSuggest(t.Context(), &opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("runMapSuggest: err %v, want it to contain %q", err, tt.wantErr)
				}
				if b, _ := os.ReadFile(existing); string(b) != "keep me\n" {
					t.Errorf("%s was changed: %q", existing, b)
				}
				if b, _ := os.ReadFile(mapFile); string(b) != mapText {
					t.Errorf("the input map was changed: %q", b)
				}
				return
			}
			if err != nil {
				t.Fatalf("runMapSuggest: %v", err)
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", out.String(), tt.wantOut)
			}
			if !strings.Contains(errOut.String(), tt.wantErrOut) {
				t.Errorf("stderr = %q, want it to contain %q", errOut.String(), tt.wantErrOut)
			}
			if tt.wantFile == "" {
				return
			}
			b, err := os.ReadFile(tt.wantFile)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), tt.wantInFile) {
				t.Errorf("%s = %q, want it to contain %q", tt.wantFile, b, tt.wantInFile)
			}
			if _, _, err := symbolmap.Parse(bytes.NewReader(b), tt.wantFile); err != nil {
				t.Errorf("%s does not parse as a map: %v", tt.wantFile, err)
			}
			if opts.MapFile != "" && !strings.Contains(string(b), "# keep this comment\n") {
				t.Errorf("the merged map lost the input map's comment:\n%s", b)
			}
			left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp*"))
			if len(left) > 0 {
				t.Errorf("temporary files left behind: %v", left)
			}
		})
	}
}

func TestDiffSuggest(t *testing.T) {
	tests := []struct {
		name, format string
		suggest      bool
		wantOut      []string
		notOut       []string
		wantErrOut   string
	}{
		{"table", formatTable, true, []string{"Suggested map rules, 1 vs 2 (top 1 of 1;", "rename g → f", "2 g 90.00% is 1 f 90.00%"}, nil, ""},
		{"markdown", formatMarkdown, true, []string{"### Suggested map rules, 1 vs 2", "| rename g → f |"}, nil, ""},
		{"json to stderr", formatJSON, true, []string{`"functions"`}, []string{"Suggested"}, "Suggested map rules, 1 vs 2"},
		{"off", formatTable, false, nil, []string{"Suggested"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			opts := &DiffOptions{
				IO:   &streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
				Base: "base", Targets: []string{"target"}, Load: fakeProfiles(), Suggest: tt.suggest,
				commonFlags: commonFlags{Format: tt.format, tableFlags: tableFlags{Top: 30, Depth: 2, CollapseThreshold: 0.95}},
			}
			if err := runDiff(t.Context(), opts); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.wantOut {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.notOut {
				if strings.Contains(out.String(), w) {
					t.Errorf("stdout has %q:\n%s", w, out.String())
				}
			}
			if !strings.Contains(errOut.String(), tt.wantErrOut) {
				t.Errorf("stderr = %q, want it to contain %q", errOut.String(), tt.wantErrOut)
			}
		})
	}
}
