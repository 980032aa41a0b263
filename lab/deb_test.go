package lab

import (
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestParseDepends(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want [][]Dep
		err  string
	}{
		{"", nil, ""},
		{"libc6 (>= 2.38), libssl3t64 (>= 3.0.0)", [][]Dep{{{"libc6", ">=", "2.38"}}, {{"libssl3t64", ">=", "3.0.0"}}}, ""},
		{"debconf (>= 0.5) | debconf-2.0, perl:any", [][]Dep{{{"debconf", ">=", "0.5"}, {"debconf-2.0", "", ""}}, {{"perl", "", ""}}}, ""},
		{"libc6 (= 2.41-12+deb13u5)", [][]Dep{{{"libc6", "=", "2.41-12+deb13u5"}}}, ""},
		{"zlib1g(>=1:1.2.0)", [][]Dep{{{"zlib1g", ">=", "1:1.2.0"}}}, ""},
		{"old (< 2)", [][]Dep{{{"old", "<=", "2"}}}, ""},
		{"libc6 (>= 2.38", nil, "unclosed relation"},
		{"libc6 (~ 2)", nil, "bad relation"},
		{"Bad_Name", nil, "is not a package"},
	} {
		got, err := ParseDepends(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseDepends(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseDepends(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"2.36-9+deb12u14", "2.38", -1},
		{"2.41-12+deb13u5", "2.38", 1},
		{"1:1.2.13.dfsg-1", "1:1.2.0", 1},
		{"1:1.2.13.dfsg-1", "1.2.0", 1}, // epoch wins
		{"1.0~rc1", "1.0", -1},
		{"1.0", "1.0-0", 0},
		{"1.0+b1", "1.0", 1},
		{"12.2.0-14+deb12u1", "14", -1},
		{"1.5.4+dfsg2-5", "1.5.5", -1},
		{"10", "9", 1},
		{"1.01", "1.1", 0},
		{"a", "B", 1}, // letters compare by ASCII
		{"1.0a", "1.0+", -1},
		{"3.0.19-1~deb12u2", "3.0.19-1", -1},
		{"2.41", "2.41", 0},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := CompareVersions(tc.b, tc.a); got != -tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
		// Agree with dpkg where it is installed.
		if dpkg, err := exec.LookPath("dpkg"); err == nil {
			op := map[int]string{-1: "lt", 0: "eq", 1: "gt"}[tc.want]
			if err := exec.Command(dpkg, "--compare-versions", tc.a, op, tc.b).Run(); err != nil {
				t.Errorf("dpkg --compare-versions %s %s %s: false, but the table says so", tc.a, op, tc.b)
			}
		}
	}
}

func TestDepSatisfied(t *testing.T) {
	for _, tc := range []struct {
		dep     Dep
		version string
		want    bool
	}{
		{Dep{"libc6", ">=", "2.38"}, "2.36-9+deb12u14", false},
		{Dep{"libc6", ">=", "2.34"}, "2.36-9+deb12u14", true},
		{Dep{"x", "<<", "2"}, "2", false},
		{Dep{"x", "<=", "2"}, "2", true},
		{Dep{"x", "=", "2"}, "2-0", true},
		{Dep{"x", ">>", "2"}, "2.0.1", true},
		{Dep{"x", "", ""}, "0", true},
	} {
		if got := tc.dep.Satisfied(tc.version); got != tc.want {
			t.Errorf("%s.Satisfied(%q) = %v, want %v", tc.dep, tc.version, got, tc.want)
		}
	}
}

func TestInstalledPackages(t *testing.T) {
	got, err := InstalledPackages(openFixture(t, "dpkg-status"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"libc6": "2.36-9+deb12u14", "libgcc-s1": "12.2.0-14+deb12u1", "libgcc1": "1:12.2.0-14+deb12u1",
		"libssl3": "3.0.19-1~deb12u2", "libstdc++6": "12.2.0-14+deb12u1", "libzstd1": "1.5.4+dfsg2-5",
		"mawk": "1.3.4.20200120-3.1", "awk": "1.3.4.20200120-3.1", "zlib1g": "1:1.2.13.dfsg-1", "libz1": "1:1.2.13.dfsg-1",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("InstalledPackages =\n%v\nwant\n%v (libssl1.1 is only config-files)", got, want)
	}
}

// TestNeeded resolves trixie's 11.8 and bullseye's 10.5 server-core
// dependencies against this VM's (bookworm) dpkg status.
func TestNeeded(t *testing.T) {
	host, err := InstalledPackages(openFixture(t, "dpkg-status"))
	if err != nil {
		t.Fatal(err)
	}
	// libnuma1, libpcre2-8-0, libcrypt1, libsystemd0, liburing2 and libaio1
	// are on a real bookworm host; the fixture holds a few packages only.
	for _, p := range []string{"libnuma1", "libpcre2-8-0", "libcrypt1", "libsystemd0", "liburing2", "libaio1", "liblz4-1", "libsnappy1v5"} {
		host[p] = "9:99" // above any version asked
	}
	for _, tc := range []struct {
		name, depends string
		want          []string
	}{
		{"trixie 11.8", "mariadb-common (>= 1:11.8.9+ds-0+deb13u1), libaio1t64 (>= 0.3.93), libc6 (>= 2.38), libcrypt1 (>= 1:4.1.0), libgcc-s1 (>= 3.0), libnuma1 (>= 2.0.11), libpcre2-8-0 (>= 10.22), libssl3t64 (>= 3.0.0), libstdc++6 (>= 14), libsystemd0 (>= 227), liburing2 (>= 2.3), zlib1g (>= 1:1.2.0)",
			[]string{"libaio1t64", "libc6", "libssl3t64", "libstdc++6"}},
		{"bullseye 10.5", "mariadb-common (>= 1:10.5.29-0+deb11u1), libaio1 (>= 0.3.93), libc6 (>= 2.30), libcrypt1 (>= 1:4.1.0), liblz4-1 (>= 0.0~r130), libpcre2-8-0 (>= 10.22), libsnappy1v5 (>= 1.1.8), libssl1.1 (>= 1.1.1), libstdc++6 (>= 9), libsystemd0, zlib1g (>= 1:1.2.0)",
			[]string{"libssl1.1"}},
		{"alternatives", "debconf | debconf-2.0, libfoo1 | libfoo1t64, awk", []string{"libfoo1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			deps, err := ParseDepends(tc.depends)
			if err != nil {
				t.Fatal(err)
			}
			f := &Fetcher{}
			chosen := map[string]pkgInfo{}
			var got []string
			for _, g := range deps {
				if n := f.needed(g, host, chosen, got); n != "" {
					got = append(got, n)
				}
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("needed = %q, want %q", got, tc.want)
			}
		})
	}
}
