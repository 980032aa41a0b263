package input

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

func TestClosest(t *testing.T) {
	names := []string{"mysqld_stmt_execute", "mysql_execute_command", "mysql_update", "trans_commit_stmt", "row_upd"}
	for _, tc := range []struct {
		want string
		out  []string
	}{
		{"mysqld_stmt_exec", []string{"mysqld_stmt_execute"}},
		{"mysql_updat", []string{"mysql_update"}},
		{"trans_comit_stmt", []string{"trans_commit_stmt"}},
		{"MYSQL_", []string{"mysql_update", "mysql_execute_command"}},
		{"zzzzzzzzzz", nil},
	} {
		if got := closest(tc.want, names, 5); !reflect.DeepEqual(got, tc.out) {
			t.Errorf("closest(%q) = %v, want %v", tc.want, got, tc.out)
		}
	}
}

func TestResolveRoots(t *testing.T) {
	m := readTestMap(t, "version: 1\nelide:\n  - from: [w]\nrename:\n  - to: f\n    from: [g]\n")
	load := fakeLoad(map[string]*fold.Profile{
		"base":   folded("1", "t;main;f;x 3"),
		"target": folded("2", "t;main;w;g;x 3"),
	})
	in, err := ReadSet(context.Background(), load, m, []string{"base", "target"}, nil, fold.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		roots []string
		want  []string
		err   *RootError
		text  string
	}{
		{name: "none"},
		{name: "found", roots: []string{"main", "x"}, want: []string{"main", "x"}},
		{name: "renamed", roots: []string{"g"}, want: []string{"f"}},
		{name: "elided", roots: []string{"x", "w"}, err: &RootError{Root: "w", ElidedBy: "elide w"},
			text: `root "w": the symbol map removes this frame (elide w); choose its caller or callee`},
		{name: "not found", roots: []string{"mian"}, err: &RootError{Root: "mian", Closest: []string{"main"}},
			text: `root "mian": no such function in the profile; closest: main`},
		{name: "nothing close", roots: []string{"zzzzzzzz"}, err: &RootError{Root: "zzzzzzzz"},
			text: `root "zzzzzzzz": no such function in the profile`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := in.ResolveRoots(tc.roots)
			if tc.err == nil {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Errorf("ResolveRoots(%q) = %q, %v; want %q", tc.roots, got, err, tc.want)
				}
				return
			}
			var re *RootError
			if !errors.As(err, &re) {
				t.Fatalf("ResolveRoots(%q) = %v, want a *RootError", tc.roots, err)
			}
			if re.Root != tc.err.Root || re.Closest == nil != (tc.err.Closest == nil) || !reflect.DeepEqual(re.Closest, tc.err.Closest) || (re.ElidedBy == "") != (tc.err.ElidedBy == "") {
				t.Errorf("ResolveRoots(%q) = %+v, want %+v", tc.roots, re, tc.err)
			}
			if tc.err.ElidedBy == "" && err.Error() != tc.text {
				t.Errorf("ResolveRoots(%q) = %q, want %q", tc.roots, err, tc.text)
			}
		})
	}
}
