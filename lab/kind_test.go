package lab

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestKindOf(t *testing.T) {
	for _, tc := range []struct {
		out     string
		version string
		kind    Kind
	}{
		{"mysqld  Ver 9.7.4 for Linux on x86_64 (Debian)\n", "9.7.4", MySQL},
		{"/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n", "10.11.19-MariaDB-0+deb12u1", MariaDB},
		{"mysqld  Ver 10.5.29-MariaDB-0+deb11u1 for debian-linux-gnu on x86_64 (Debian 11)\n", "10.5.29-MariaDB-0+deb11u1", MariaDB},
		{"/opt/mysql/bin/mysqld  Ver 8.0.36-0ubuntu0.22.04.1 for Linux on x86_64 ((Ubuntu))\n", "8.0.36-0ubuntu0.22.04.1", MySQL},
		{"/usr/sbin/mysqld  Ver 8.0.35-27 for Linux on x86_64 (Percona Server (GPL), Release 27, Revision 2f8eeab2)\n", "8.0.35-27", MySQL},
	} {
		v, err := ParseVersionOutput([]byte(tc.out))
		if err != nil || v != tc.version {
			t.Errorf("ParseVersionOutput(%q) = %q, %v; want %q", tc.out, v, err, tc.version)
		}
		if k := KindOf(v); k != tc.kind {
			t.Errorf("KindOf(%q) = %s, want %s", v, k, tc.kind)
		}
	}
}

func TestDefaultPackage(t *testing.T) {
	for _, tc := range []struct {
		suite string
		kind  Kind
		want  string
		err   string
	}{
		{"bullseye", "", "mariadb-server-core-10.5", ""},
		{"trixie", MariaDB, "mariadb-server-core", ""},
		{"sid", MariaDB, "mariadb-server-core", ""},
		{"sid", MySQL, "mysql-server-core", ""},
		{"bookworm", MySQL, "", "suite bookworm has no MySQL server package (suites with one: sid)"},
	} {
		got, err := DefaultPackage(tc.suite, tc.kind)
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("DefaultPackage(%s, %q) = %q, %v; want %q, %q", tc.suite, tc.kind, got, err, tc.want, tc.err)
		}
	}
	// Every suite the config takes has a MariaDB server.
	for _, s := range Suites {
		if _, err := DefaultPackage(s, MariaDB); err != nil {
			t.Errorf("DefaultPackage(%s, MariaDB): %v", s, err)
		}
	}
}

func TestErrorLines(t *testing.T) {
	log := []string{
		"2026-12-05T08:20:01.000001Z 0 [System] [MY-010116] [Server] /c/usr/sbin/mysqld (mysqld 9.7.4) starting as process 42",
		"2026-12-05T08:20:01.000002Z 0 [ERROR] [MY-000067] [Server] unknown variable 'innodb_fast_shutdown_x=1'.",
		"2026-12-05T08:20:01.000003Z 0 [ERROR] [MY-010119] [Server] Aborting",
		"2026-12-05  8:20:01 0 [ERROR] mariadbd: unknown variable 'aria_x=1'",
		"2026-12-05  8:20:01 0 [ERROR] Aborting",
	}
	got := errorLines(log, 3)
	want := []string{
		"[MY-000067] unknown variable 'innodb_fast_shutdown_x=1'.",
		"[MY-010119] Aborting",
		"mariadbd: unknown variable 'aria_x=1'",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errorLines =\n%q\nwant\n%q", got, want)
	}
}

// TestMyCnfMySQL checks MySQL's settings: its tree's paths, no binary
// log (on by default in MySQL), no X Protocol, an empty secure-file-priv,
// and none of MariaDB's options.
func TestMyCnfMySQL(t *testing.T) {
	tree := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tree, "usr/lib/mysql/plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := &Binary{Kind: MySQL, Root: tree, Mariadbd: filepath.Join(tree, "usr/sbin/mysqld"), ShareDir: filepath.Join(tree, "usr/share/mysql")}
	s := &Server{Binary: b, Dir: "/w", DataDir: "/w/data", Socket: "/w/mysqld.sock", ErrorLog: "/w/error.log",
		cfg: ServerConfig{BufferPool: "1G", Options: []string{"performance_schema=OFF"}}}
	got := s.myCnf()
	want := []string{"[mysqld]\n", "datadir=/w/data\n", "socket=/w/mysqld.sock\n", "pid-file=/w/mysqld.pid\n", "tmpdir=/w/tmp\n",
		"skip-networking\n", "disable-log-bin\n", "mysqlx=OFF\n", "secure-file-priv=\n", "innodb_buffer_pool_size=1G\n",
		"basedir=" + tree + "/usr\n", "lc-messages-dir=" + tree + "/usr/share/mysql\n",
		"character-sets-dir=" + tree + "/usr/share/mysql/charsets\n", "plugin-dir=" + tree + "/usr/lib/mysql/plugin\n"}
	if os.Geteuid() == 0 {
		want = append(want, "user=root\n")
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("myCnf lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "skip-log-bin") {
		t.Errorf("myCnf of MySQL has MariaDB's skip-log-bin:\n%s", got)
	}
	if !strings.HasSuffix(got, "performance_schema=OFF\n") {
		t.Errorf("myCnf does not end with the options:\n%s", got)
	}
	// And MariaDB gets none of MySQL's.
	m := &Server{Binary: &Binary{Kind: MariaDB, Root: "/"}, Socket: "/w/mariadbd.sock"}
	for _, o := range []string{"mysqlx", "disable-log-bin", "secure-file-priv"} {
		if c := m.myCnf(); strings.Contains(c, o) {
			t.Errorf("myCnf of MariaDB has MySQL's %s:\n%s", o, c)
		}
	}
}
