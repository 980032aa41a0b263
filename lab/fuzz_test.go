package lab

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/fuzzseed"
)

// FuzzParseConfig: no panic; a config xor a *ConfigError whose every
// diagnostic has a position.
func FuzzParseConfig(f *testing.F) {
	fuzzseed.AddFiles(f, "../examples/lab/*.yaml")
	f.Add([]byte("servers: [{label: a, suite: trixie}]\nworkloads: [{test: oltp_insert, duration: 2s, warmup: 1}]\n"))
	f.Add([]byte("servers:\n\t- x"))
	f.Add([]byte("servers: [{label: a, path: /a}]\nworkloads: [{name: s, command: [sh, -c, \"x {socket} {nope}\"], duration: 9s}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(bytes.NewReader(data), "f.yaml")
		if (c == nil) == (err == nil) {
			t.Fatalf("ParseConfig = %v, %v: want a config xor an error", c, err)
		}
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Diagnostics) == 0 {
				t.Fatalf("error %v is not a *ConfigError with diagnostics", err)
			}
			for _, d := range ce.Diagnostics {
				if d.Line < 1 || d.Column < 0 || d.File != "f.yaml" {
					t.Fatalf("diagnostic without position: %+v", d)
				}
			}
			return
		}
		if c.Base() == nil || len(c.Workloads) == 0 {
			t.Fatalf("valid config without base or workloads: %+v", c)
		}
		for _, w := range c.Workloads {
			if w.Warmup >= w.Duration || w.Threads < 1 {
				t.Fatalf("valid config with a bad workload: %+v", w)
			}
		}
	})
}

// FuzzSources: no panic; every source FindMirror may use has a URI, and
// the mirror's sources.list reads back to the same mirror.
func FuzzSources(f *testing.F) {
	fuzzseed.AddFiles(f, "../testdata/lab/sources/*")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) ([]Source, error){
			func(b []byte) ([]Source, error) { return ParseSourcesList(bytes.NewReader(b), "x") },
			func(b []byte) ([]Source, error) { return ParseDeb822Sources(bytes.NewReader(b), "x") },
		} {
			sources, err := parse(data)
			if err != nil {
				continue
			}
			m, err := FindMirror(sources)
			if err != nil {
				continue
			}
			if m.Archive == "" || strings.ContainsAny(m.Archive+m.Security, " \t\n") {
				continue // a URI with spaces cannot come out of Fields
			}
			want := m
			if !oneLineSignedBy(m.SignedBy) {
				want.SignedBy = "" // left out of a one-line entry
			}
			back, err := ParseSourcesList(strings.NewReader(m.SourcesList("trixie")), "private")
			if err != nil {
				t.Fatalf("SourcesList of %+v does not parse: %v", m, err)
			}
			if m2, err := FindMirror(back); err != nil || m2 != want {
				t.Fatalf("round trip of %+v = %+v, %v; want %+v", m, m2, err, want)
			}
		}
	})
}

// FuzzDepends: no panic; every parsed dependency has a name and an
// operator with a version, or neither.
func FuzzDepends(f *testing.F) {
	f.Add("libc6 (>= 2.38), debconf (>= 0.5) | debconf-2.0, perl:any")
	f.Add("a (= 1:2.3-4~b5+c6)")
	f.Fuzz(func(t *testing.T, s string) {
		groups, err := ParseDepends(s)
		if err != nil {
			return
		}
		for _, g := range groups {
			for _, d := range g {
				if d.Name == "" || (d.Op == "") != (d.Version == "") {
					t.Fatalf("ParseDepends(%q) gave %+v", s, d)
				}
			}
		}
	})
}

// FuzzCompareVersions: antisymmetric, reflexive.
func FuzzCompareVersions(f *testing.F) {
	f.Add("1:2.36-9+deb12u14", "2.38~rc1")
	f.Add("1.0", "1.0-0")
	f.Fuzz(func(t *testing.T, a, b string) {
		if c := CompareVersions(a, a); c != 0 {
			t.Fatalf("CompareVersions(%q, itself) = %d", a, c)
		}
		if x, y := CompareVersions(a, b), CompareVersions(b, a); x != -y {
			t.Fatalf("CompareVersions(%q, %q) = %d but reversed %d", a, b, x, y)
		}
	})
}

// FuzzParseLoaderError: no panic; a result names a library.
func FuzzParseLoaderError(f *testing.F) {
	fuzzseed.AddFiles(f, "../testdata/lab/loader/*.txt")
	f.Fuzz(func(t *testing.T, data []byte) {
		if m := ParseLoaderError(data); m != nil && m.Library == "" {
			t.Fatalf("ParseLoaderError(%q) = %+v without a library", data, m)
		}
	})
}
