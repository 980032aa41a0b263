package lab

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func openFixture(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "lab", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestFindMirror(t *testing.T) {
	const keyring = "/usr/share/keyrings/debian-archive-keyring.gpg"
	for _, tc := range []struct {
		file    string
		want    Mirror
		wantErr error
	}{
		// This VM's own /etc/apt/sources.list.d/debian.sources.
		{"sources/bookworm-snapshot.sources", Mirror{Archive: "http://deb.mirror.example/debian", Security: "http://deb.mirror.example/debian-security", SignedBy: keyring}, nil},
		{"sources/mixed.sources", Mirror{Archive: "http://mirror.example.org/debian", Security: "http://security.example.org/debian-security", SignedBy: keyring}, nil},
		{"sources/classic.list", Mirror{Archive: "http://ftp.example.net/debian", Security: "http://security.example.net/debian-security", SignedBy: keyring}, nil},
		{"sources/vendor-first.list", Mirror{Archive: "http://mirror.example.org/debian", Security: "http://mirror.example.org/debian-security", SignedBy: keyring}, nil},
		{"sources/third-party-only.list", Mirror{}, ErrNoMirror},
	} {
		t.Run(tc.file, func(t *testing.T) {
			parse := ParseSourcesList
			if strings.HasSuffix(tc.file, ".sources") {
				parse = ParseDeb822Sources
			}
			sources, err := parse(openFixture(t, tc.file), tc.file)
			if err != nil {
				t.Fatalf("parse %s: %v", tc.file, err)
			}
			got, err := FindMirror(sources)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("FindMirror(%s) error = %v, want %v", tc.file, err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("FindMirror(%s) = %+v, want %+v", tc.file, got, tc.want)
			}
		})
	}
}

func TestParseSourcesList(t *testing.T) {
	got, err := ParseSourcesList(openFixture(t, "sources/classic.list"), "classic.list")
	if err != nil {
		t.Fatal(err)
	}
	want := []Source{
		{Types: []string{"deb"}, URIs: []string{"https://packages.cloud.google.com/apt"}, Suites: []string{"cloud-sdk-bookworm"}, Components: []string{"main"}, Enabled: true, Origin: "classic.list:2"},
		{Types: []string{"deb"}, URIs: []string{"http://ftp.example.net/debian"}, Suites: []string{"bullseye"}, Components: []string{"main", "contrib", "non-free"}, SignedBy: "/usr/share/keyrings/debian-archive-keyring.gpg", Enabled: true, Origin: "classic.list:4"},
		{Types: []string{"deb-src"}, URIs: []string{"http://ftp.example.net/debian"}, Suites: []string{"bullseye"}, Components: []string{"main"}, Enabled: true, Origin: "classic.list:5"},
		{Types: []string{"deb"}, URIs: []string{"http://security.example.net/debian-security"}, Suites: []string{"bullseye-security"}, Components: []string{"main"}, Enabled: true, Origin: "classic.list:6"},
		{Types: []string{"deb"}, URIs: []string{"http://ftp.example.net/debian"}, Suites: []string{"bullseye-updates"}, Components: []string{"main"}, Enabled: true, Origin: "classic.list:7"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSourcesList =\n%+v\nwant\n%+v", got, want)
	}
}

func TestParseSourcesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		deb822     bool
		want       string
	}{
		{"not deb", "rpm http://x 40 main\n", false, "x.list line 1: \"rpm\" is not deb or deb-src"},
		{"no suite", "\ndeb http://x\n", false, "x.list line 2: want URI and suite"},
		{"options only", "deb [arch=amd64]\n", false, "x.list line 1: want URI and suite"},
		{"stanza without URIs", "Types: deb\nSuites: bookworm\n", true, "x.sources stanza 1: want Types, URIs and Suites"},
		{"not a field", "Types: deb\nthis is not a field\n", true, "x.sources: line 2"},
		{"orphan continuation", " continued\n", true, "line 1: continuation line without a field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.deb822 {
				_, err = ParseDeb822Sources(strings.NewReader(tc.text), "x.sources")
			} else {
				_, err = ParseSourcesList(strings.NewReader(tc.text), "x.list")
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("parse %q = %v, want an error containing %q", tc.text, err, tc.want)
			}
		})
	}
}

func TestParseDeb822SourcesInlineKey(t *testing.T) {
	got, err := ParseDeb822Sources(openFixture(t, "sources/mixed.sources"), "mixed.sources")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("ParseDeb822Sources = %d sources, want 4", len(got))
	}
	if got[1].Enabled {
		t.Errorf("stanza 2 (Enabled: no) parsed as enabled")
	}
	if got[3].SignedBy != "" {
		t.Errorf("inline Signed-By key gave SignedBy %q, want empty", got[3].SignedBy)
	}
	if !reflect.DeepEqual(got[2].Types, []string{"deb", "deb-src"}) || !reflect.DeepEqual(got[2].Suites, []string{"bookworm", "bookworm-updates"}) {
		t.Errorf("stanza 3 = %+v, want types deb deb-src, suites bookworm bookworm-updates", got[2])
	}
}

func TestSystemSources(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "etc", "apt", "sources.list.d")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	copyFixture := func(name, to string) {
		data, err := os.ReadFile(filepath.Join("..", "testdata", "lab", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// No sources.list; a .sources, a .list and a disabled file.
	copyFixture("sources/third-party-only.list", filepath.Join(d, "a-vendor.list"))
	copyFixture("sources/bookworm-snapshot.sources", filepath.Join(d, "debian.sources"))
	copyFixture("sources/bad.list", filepath.Join(d, "broken.list.disabled"))
	sources, err := SystemSources(root)
	if err != nil {
		t.Fatalf("SystemSources: %v", err)
	}
	if len(sources) != 4 {
		t.Errorf("SystemSources = %d sources, want 4 (2 from a-vendor.list, 2 from debian.sources)", len(sources))
	}
	m, err := FindMirror(sources)
	if err != nil || m.Archive != "http://deb.mirror.example/debian" {
		t.Errorf("FindMirror(system) = %+v, %v; want the archive of debian.sources", m, err)
	}
	copyFixture("sources/bad.list", filepath.Join(d, "broken.list"))
	if _, err := SystemSources(root); err == nil || !strings.Contains(err.Error(), "broken.list line 2") {
		t.Errorf("SystemSources with a malformed .list = %v, want an error naming broken.list line 2", err)
	}
}

func TestMirrorSourcesList(t *testing.T) {
	m := Mirror{Archive: "http://a/debian", Security: "http://s/debian-security", SignedBy: "/k.gpg"}
	want := "deb [signed-by=/k.gpg] http://a/debian trixie main\n" +
		"deb [signed-by=/k.gpg] http://a/debian trixie-updates main\n" +
		"deb [signed-by=/k.gpg] http://s/debian-security trixie-security main\n"
	if got := m.SourcesList("trixie"); got != want {
		t.Errorf("SourcesList =\n%s\nwant\n%s", got, want)
	}
	// What we write, we read back.
	sources, err := ParseSourcesList(strings.NewReader(want), "private")
	if err != nil {
		t.Fatal(err)
	}
	if back, err := FindMirror(sources); err != nil || back != m {
		t.Errorf("FindMirror(SourcesList) = %+v, %v; want %+v", back, err, m)
	}
	if got := (Mirror{Archive: "http://a/debian"}).SourcesList("bullseye"); strings.Contains(got, "security") || strings.Contains(got, "signed-by") {
		t.Errorf("SourcesList without security or keyring = %q", got)
	}
	// Unstable has no -updates and no -security suite: apt-get update
	// --error-on=any fails on a suite the archive lacks.
	for _, suite := range []string{"sid", "unstable"} {
		want := "deb [signed-by=/k.gpg] http://a/debian " + suite + " main\n"
		if got := m.SourcesList(suite); got != want {
			t.Errorf("SourcesList(%q) =\n%s\nwant\n%s", suite, got, want)
		}
	}
}
