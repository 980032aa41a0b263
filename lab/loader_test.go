package lab

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseLoaderError(t *testing.T) {
	const tree = "/CACHE/servers/trixie-mariadb-server-core/usr/sbin/mariadbd"
	for _, tc := range []struct {
		file string // under testdata/lab/loader, captured on this VM
		want *MissingLibraryError
	}{
		{"bullseye-no-libssl.txt", &MissingLibraryError{Library: "libssl.so.1.1", RequiredBy: "/CACHE/servers/bullseye-mariadb-server-core-10.5/usr/sbin/mariadbd"}},
		{"bullseye-ldd.txt", &MissingLibraryError{Library: "libssl.so.1.1"}},
		{"trixie-host-libc.txt", &MissingLibraryError{Library: "libaio.so.1t64", RequiredBy: tree}},
		{"trixie-ldd.txt", &MissingLibraryError{Library: "/lib/x86_64-linux-gnu/libm.so.6", Version: "GLIBC_2.38", RequiredBy: tree}},
		{"trixie-list-missing.txt", &MissingLibraryError{Library: "libaio.so.1t64", RequiredBy: tree}},
		{"trixie-ok.txt", nil},
	} {
		t.Run(tc.file, func(t *testing.T) {
			data, err := io.ReadAll(openFixture(t, filepath.Join("loader", tc.file)))
			if err != nil {
				t.Fatal(err)
			}
			got := ParseLoaderError(data)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
				t.Errorf("ParseLoaderError(%s) = %+v, want %+v", tc.file, got, tc.want)
			}
		})
	}
}

func TestParseLoaderErrorInline(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want string // Error() of the result; empty for nil
	}{
		{"", ""},
		{"mariadbd: unknown option '--foo'\n", ""},
		{"./x: /lib/libc.so.6: version `GLIBC_2.99' not found\n", "missing shared library: /lib/libc.so.6 lacks version GLIBC_2.99"},
		{"\tlibcrypto.so.1.1 => not found\r\n", "missing shared library libcrypto.so.1.1"},
		{"x: error while loading shared libraries: libnuma.so.1: cannot open shared object file: No such file or directory", "missing shared library libnuma.so.1 (required by x)"},
	} {
		got := ParseLoaderError([]byte(tc.out))
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("ParseLoaderError(%q) = %v, want nil", tc.out, got)
		case tc.want != "" && (got == nil || got.Error() != tc.want):
			t.Errorf("ParseLoaderError(%q) = %v, want %q", tc.out, got, tc.want)
		case got != nil && !errors.Is(got, ErrMissingLibrary):
			t.Errorf("ParseLoaderError(%q) does not wrap ErrMissingLibrary", tc.out)
		}
	}
}

func TestParseVersionOutput(t *testing.T) {
	ok, err := os.ReadFile(filepath.Join("..", "testdata", "lab", "loader", "trixie-ok.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		out, want, err string
	}{
		{string(ok), "11.8.9-MariaDB-0+deb13u1", ""},
		{"/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n", "10.11.19-MariaDB-0+deb12u1", ""},
		{"mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)", "8.0.36", ""},
		{"Segmentation fault\n", "", `no version in "Segmentation fault"`},
	} {
		got, err := ParseVersionOutput([]byte(tc.out))
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseVersionOutput(%q) = %q, %v; want %q, %q", tc.out, got, err, tc.want, tc.err)
		}
	}
}

func TestBuildIDNote(t *testing.T) {
	// A real note section: namesz 4, descsz 20, type 3, "GNU\0", 20 bytes.
	id := "0123456789abcdef0123456789abcdef01234567"
	note := []byte{4, 0, 0, 0, 20, 0, 0, 0, 3, 0, 0, 0, 'G', 'N', 'U', 0}
	for i := 0; i < 20; i++ {
		var b byte
		fmt.Sscanf(id[2*i:2*i+2], "%02x", &b)
		note = append(note, b)
	}
	// Another note first (type 1, "GNU", 16 bytes of ABI tag).
	abi := append([]byte{4, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0, 'G', 'N', 'U', 0}, make([]byte, 16)...)
	got, ok := parseBuildIDNote(append(abi, note...), binary.LittleEndian)
	if !ok || got != id {
		t.Errorf("parseBuildIDNote = %q, %v; want %q", got, ok, id)
	}
	if _, ok := parseBuildIDNote(note[:20], binary.LittleEndian); ok {
		t.Errorf("parseBuildIDNote of a cut note succeeded")
	}
	if got, want := DebugFile("/d", id), "/d/01/23456789abcdef0123456789abcdef01234567.debug"; got != want {
		t.Errorf("DebugFile = %q, want %q", got, want)
	}
}

func TestCommandAndEnv(t *testing.T) {
	direct := &Binary{Mariadbd: "/t/usr/sbin/mariadbd", LibraryPath: []string{"/t/usr/lib/x86_64-linux-gnu"}}
	if got := direct.Command("--version"); strings.Join(got, " ") != "/t/usr/sbin/mariadbd --version" {
		t.Errorf("Command without loader = %q", got)
	}
	env := direct.Env()
	if n := countPrefix(env, "LD_LIBRARY_PATH="); n != 1 || env[len(env)-1] != "LD_LIBRARY_PATH=/t/usr/lib/x86_64-linux-gnu" {
		t.Errorf("Env without loader has %d LD_LIBRARY_PATH, last %q; want one, the tree's", n, env[len(env)-1])
	}
	loaded := &Binary{Mariadbd: "/t/mariadbd", Loader: "/t/ld.so", LibraryPath: []string{"/a", "/b"}}
	want := "/t/ld.so --library-path /a:/b --argv0 /t/mariadbd /t/mariadbd --defaults-file=x"
	if got := loaded.Command("--defaults-file=x"); strings.Join(got, " ") != want {
		t.Errorf("Command with loader = %q, want %q", got, want)
	}
	if countPrefix(loaded.Env(), "LD_LIBRARY_PATH=/a") != 0 {
		t.Errorf("Env with a loader sets LD_LIBRARY_PATH; the loader's --library-path is enough")
	}
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}
