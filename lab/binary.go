package lab

import (
	"bytes"
	"context"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Binary is a mariadbd or mysqld that can be run: an installed one (see
// Installed) or one unpacked from Debian packages into the cache (see
// Fetcher.Fetch).
type Binary struct {
	// Mariadbd is the path of the server binary (mysqld for MySQL).
	Mariadbd string
	// Kind is MariaDB or MySQL, from Version (KindOf).
	Kind Kind
	// Loader is the dynamic loader to run Mariadbd through (with
	// --library-path LibraryPath); empty when Mariadbd runs directly.
	Loader string
	// LibraryPath are the directories of the unpacked libraries, searched
	// before the system's; empty for an installed server.
	LibraryPath []string
	// Root is the tree the server's files are under: "/" when installed,
	// the unpacked tree in the cache when fetched.
	Root string
	// ShareDir holds the error messages (english/errmsg.sys) and
	// charsets, and MariaDB's system-table SQL.
	ShareDir string
	// LibcDebugDir is the .build-id directory with the debug files of the
	// libc the server runs with; empty when there are none.
	LibcDebugDir string
	// Libc is the path of the libc the server runs with.
	Libc string
	// Version is what `mariadbd --version` says ("11.8.9-MariaDB-0+deb13u1",
	// "9.7.4").
	Version string
	// Suite and Package say where a fetched server came from; Packages
	// lists every unpacked package as "name=version". Empty when installed.
	Suite, Package string
	Packages       []string
}

// Command returns the argv that runs the server with args: Mariadbd and
// args, or, with a Loader, the loader with --library-path and --argv0.
func (b *Binary) Command(args ...string) []string {
	if b.Loader == "" {
		return append([]string{b.Mariadbd}, args...)
	}
	argv := []string{b.Loader, "--library-path", strings.Join(b.LibraryPath, ":"), "--argv0", b.Mariadbd, b.Mariadbd}
	return append(argv, args...)
}

// Env returns the environment the server runs with: this process's, with
// LD_LIBRARY_PATH set to LibraryPath when the server runs directly but
// needs unpacked libraries.
func (b *Binary) Env() []string {
	env := os.Environ()
	if b.Loader != "" || len(b.LibraryPath) == 0 {
		return env
	}
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, "LD_LIBRARY_PATH=") {
			out = append(out, e)
		}
	}
	return append(out, "LD_LIBRARY_PATH="+strings.Join(b.LibraryPath, ":"))
}

// versionTimeout bounds `mariadbd --version` and `ld.so --list`.
const versionTimeout = 30 * time.Second

// CheckVersion runs `mariadbd --version`, stores the version in b.Version
// and its kind in b.Kind, and returns the version. A server the loader
// cannot start gives an error wrapping a *MissingLibraryError (and
// ErrMissingLibrary) naming the library.
func (b *Binary) CheckVersion(ctx context.Context) (string, error) {
	out, err := b.output(ctx, "--version")
	if err != nil {
		if m := ParseLoaderError(out); m != nil {
			return "", fmt.Errorf("%s --version: %w", b.Mariadbd, m)
		}
		return "", fmt.Errorf("%s --version: %w: %s", b.Mariadbd, err, firstLine(out))
	}
	v, err := ParseVersionOutput(out)
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", b.Mariadbd, err)
	}
	b.Version, b.Kind = v, KindOf(v)
	return v, nil
}

// CheckLibraries asks the loader to list the server's libraries
// (`ld.so --list`, as ldd does) and returns an error wrapping a
// *MissingLibraryError for the first one it does not find.
func (b *Binary) CheckLibraries(ctx context.Context) error {
	loader := b.Loader
	if loader == "" {
		interp, err := Interpreter(b.Mariadbd)
		if err != nil {
			return err
		}
		loader = interp
	}
	args := []string{loader}
	if len(b.LibraryPath) > 0 {
		args = append(args, "--library-path", strings.Join(b.LibraryPath, ":"))
	}
	args = append(args, "--list", b.Mariadbd)
	out, err := runOutput(ctx, args, os.Environ())
	if m := ParseLoaderError(out); m != nil {
		if m.RequiredBy == "" {
			m.RequiredBy = b.Mariadbd
		}
		return fmt.Errorf("%s: %w", b.Mariadbd, m)
	}
	if err != nil {
		return fmt.Errorf("%s --list %s: %w: %s", loader, b.Mariadbd, err, firstLine(out))
	}
	return nil
}

func (b *Binary) output(ctx context.Context, args ...string) ([]byte, error) {
	return runOutput(ctx, b.Command(args...), b.Env())
}

// runOutput runs argv in a process group of its own, killed with its
// group when ctx is done or after versionTimeout, and returns its
// combined output.
func runOutput(ctx context.Context, argv []string, env []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = env
	ownGroup(cmd, true)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// Installed returns the Binary of an installed mariadbd or mysqld (such as
// /usr/sbin/mariadbd, or a self-built bin/mysqld) after checking that it
// runs (--version), which says its kind. Its share directory is found
// beside it (../share/mariadb or ../share/mysql, or ../share for a MySQL
// installed under a prefix of its own); its libc debug files are the
// system's (/usr/lib/debug/.build-id) when they match its libc.
func Installed(ctx context.Context, path string) (*Binary, error) {
	if err := platform(); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("installed server %s: path is not absolute", path)
	}
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("installed server %w", describePath(path, err, false))
	} else if fi.IsDir() {
		return nil, fmt.Errorf("installed server %s: is a directory, not the mariadbd program", path)
	}
	b := &Binary{Mariadbd: path, Root: "/"}
	if _, err := b.CheckVersion(ctx); err != nil {
		return nil, fmt.Errorf("installed server: %w", err)
	}
	prefix := filepath.Dir(filepath.Dir(path))
	share, err := findShareDir(prefix, b.Kind)
	if err != nil {
		return nil, fmt.Errorf("installed server %s: %w", path, err)
	}
	b.ShareDir = share
	b.Libc, b.LibcDebugDir = hostLibcDebug(ctx, b)
	return b, nil
}

// systemTableFiles are the SQL files a datadir is bootstrapped from, in
// order, without their "mysql_" or "mariadb_" prefix.
var systemTableFiles = []string{"system_tables.sql", "performance_tables.sql", "system_tables_data.sql"}

// findShareDir returns the directory under prefix (/usr) with the
// server's system-table SQL (MariaDB) or error messages (MySQL, whose
// system tables are built into mysqld).
func findShareDir(prefix string, k Kind) (string, error) {
	if k == MySQL {
		var tried []string
		for _, d := range []string{"share/mysql", "share"} {
			dir := filepath.Join(prefix, d)
			tried = append(tried, dir)
			if _, err := os.Stat(filepath.Join(dir, "english", "errmsg.sys")); err == nil {
				return dir, nil
			}
		}
		return "", fmt.Errorf("no error messages (english/errmsg.sys) in %s", strings.Join(tried, " or "))
	}
	var tried []string
	for _, d := range []string{"share/mariadb", "share/mysql"} {
		dir := filepath.Join(prefix, d)
		tried = append(tried, dir)
		if _, err := systemTableSQL(dir); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("no system-table SQL (mysql_system_tables.sql) in %s", strings.Join(tried, " or "))
}

// systemTableSQL returns the paths of the system-table SQL files in dir.
func systemTableSQL(dir string) ([]string, error) {
	var out []string
	for _, f := range systemTableFiles {
		found := ""
		for _, prefix := range []string{"mariadb_", "mysql_"} {
			p := filepath.Join(dir, prefix+f)
			if _, err := os.Stat(p); err == nil {
				found = p
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("no mysql_%s or mariadb_%s in %s", f, f, dir)
		}
		out = append(out, found)
	}
	return out, nil
}

// Interpreter returns the PT_INTERP (dynamic loader) of an ELF executable.
func Interpreter(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("read loader of %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			data := make([]byte, p.Filesz)
			if _, err := p.ReadAt(data, 0); err != nil {
				return "", fmt.Errorf("read loader of %s: %w", path, err)
			}
			return string(bytes.TrimRight(data, "\x00")), nil
		}
	}
	return "", fmt.Errorf("read loader of %s: not dynamically linked", path)
}

// BuildID returns the GNU build-id of an ELF file in hex.
func BuildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("build-id of %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			return "", fmt.Errorf("build-id of %s: %w", path, err)
		}
		if id, ok := parseBuildIDNote(data, f.ByteOrder); ok {
			return id, nil
		}
	}
	return "", fmt.Errorf("build-id of %s: %w", path, errNoBuildID)
}

var errNoBuildID = errors.New("no build-id note")

// parseBuildIDNote finds an NT_GNU_BUILD_ID note ("GNU\0", type 3).
func parseBuildIDNote(data []byte, bo interface{ Uint32([]byte) uint32 }) (string, bool) {
	for len(data) >= 12 {
		namesz, descsz, typ := bo.Uint32(data), bo.Uint32(data[4:]), bo.Uint32(data[8:])
		name := (int(namesz) + 3) &^ 3
		desc := (int(descsz) + 3) &^ 3
		if 12+name+desc > len(data) || name < 0 || desc < 0 {
			return "", false
		}
		if typ == 3 && namesz == 4 && string(data[12:15]) == "GNU" {
			return hex.EncodeToString(data[12+name : 12+name+int(descsz)]), true
		}
		data = data[12+name+desc:]
	}
	return "", false
}

// LibcDebugFile returns the debug file (from libc6-dbg) of the libc the
// server runs with: LibcDebugDir/ab/cdef....debug for Libc's build-id.
// It is an error when there is none. perf resolves libc frames of a
// fetched libc when this file is placed as "debug" beside the libc's
// entry in its build-id cache (~/.debug/.build-id/ab/cdef.../debug).
func (b *Binary) LibcDebugFile() (string, error) {
	if b.Libc == "" || b.LibcDebugDir == "" {
		return "", fmt.Errorf("libc debug file of %s: no libc debug directory (libc %q)", b.Mariadbd, b.Libc)
	}
	id, err := BuildID(b.Libc)
	if err != nil {
		return "", fmt.Errorf("libc debug file of %s: %w", b.Mariadbd, err)
	}
	f := DebugFile(b.LibcDebugDir, id)
	if _, err := os.Stat(f); err != nil {
		return "", fmt.Errorf("libc debug file of %s: %w", b.Mariadbd, describePath(f, err, false))
	}
	return f, nil
}

// DebugFile returns the path of the debug file of build-id id under a
// .build-id directory: DIR/ab/cdef....debug.
func DebugFile(buildIDDir, id string) string {
	if len(id) < 3 {
		return ""
	}
	return filepath.Join(buildIDDir, id[:2], id[2:]+".debug")
}

// hostLibcDebug returns the libc b runs with and the system's .build-id
// directory when it holds that libc's debug file (libc6-dbg installed at
// the libc's version); else an empty directory.
func hostLibcDebug(ctx context.Context, b *Binary) (libc, debugDir string) {
	libc = findLibc(ctx, b)
	if libc == "" {
		return "", ""
	}
	return libc, debugDirFor(libc, "/usr/lib/debug/.build-id")
}

// debugDirFor returns dir when it has the debug file of libc, else "".
func debugDirFor(libc, dir string) string {
	id, err := BuildID(libc)
	if err != nil {
		return ""
	}
	if _, err := os.Stat(DebugFile(dir, id)); err != nil {
		return ""
	}
	return dir
}

// findLibc asks the loader which libc.so.6 the server loads.
func findLibc(ctx context.Context, b *Binary) string {
	loader := b.Loader
	if loader == "" {
		var err error
		if loader, err = Interpreter(b.Mariadbd); err != nil {
			return ""
		}
	}
	args := []string{loader}
	if len(b.LibraryPath) > 0 {
		args = append(args, "--library-path", strings.Join(b.LibraryPath, ":"))
	}
	out, err := runOutput(ctx, append(args, "--list", b.Mariadbd), os.Environ())
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == "libc.so.6" && f[1] == "=>" {
			if p, err := filepath.EvalSymlinks(f[2]); err == nil {
				return p
			}
			return f[2]
		}
	}
	return ""
}
