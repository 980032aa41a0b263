package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMapCheckFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    mapCheckOptions
		wantErr bool
	}{
		{"file only", []string{"m.yaml"}, mapCheckOptions{File: "m.yaml"}, false},
		{"profiles", []string{"m.yaml", "--profile", "a", "-p", "b"}, mapCheckOptions{File: "m.yaml", Profiles: []string{"a", "b"}}, false},
		{"no file", []string{}, mapCheckOptions{}, true},
		{"two files", []string{"a", "b"}, mapCheckOptions{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &streams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
			var got *mapCheckOptions
			cmd := newMapCheckCmd(s, func(o *mapCheckOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(s.Out)
			cmd.SetErr(s.ErrOut)
			err := cmd.Execute()
			if (err != nil) != tt.wantErr {
				t.Fatalf("map check %v: err %v, want error %v", tt.args, err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if got.File != tt.want.File || strings.Join(got.Profiles, ",") != strings.Join(tt.want.Profiles, ",") {
				t.Errorf("map check %v: options %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestMapCheckRun(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("version: 1\nrename:\n  - to: a\n    from: [b]\nsubsystems:\n  - name: x\n    from: [a]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("version: 1\nrenam: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                string
		args                []string
		code                int
		wantOut, wantErrOut string
	}{
		{"good", []string{"map", "check", good}, exitOK, good + ": ok, 1 rename rule, 0 elide, 0 comm, 1 subsystem\n", ""},
		{"bad", []string{"map", "check", bad}, exitError, bad + ": 1 error, 0 warnings\n", bad + `:2:1: error: top level: unknown key "renam" (hint: did you mean "rename"?)`},
		{"missing", []string{"map", "check", filepath.Join(dir, "nope.yaml")}, exitError, "", "no such file"},
		{"shipped mariadb", []string{"map", "check", "../../examples/symbolmaps/mariadb.yaml"}, exitOK, "../../examples/symbolmaps/mariadb.yaml: ok,", ""},
		{"shipped mysql", []string{"map", "check", "../../examples/symbolmaps/mysql.yaml"}, exitOK, "../../examples/symbolmaps/mysql.yaml: ok,", ""},
		{"usage", []string{"map", "check"}, exitUsage, "", "takes one FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tt.args, strings.NewReader(""), &out, &errOut)
			if code != tt.code {
				t.Errorf("flamediff %v = exit %d, want %d (stderr %s)", tt.args, code, tt.code, errOut.String())
			}
			if !strings.HasPrefix(out.String(), tt.wantOut) {
				t.Errorf("stdout = %q, want prefix %q", out.String(), tt.wantOut)
			}
			if !strings.Contains(errOut.String(), tt.wantErrOut) {
				t.Errorf("stderr = %q, want it to contain %q", errOut.String(), tt.wantErrOut)
			}
		})
	}
}
