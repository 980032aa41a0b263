package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/flamediff/flamediff/internal/atomicfile"
)

// ErrFetch is wrapped by Fetch's errors: the server could not be
// downloaded, unpacked or started.
var ErrFetch = errors.New("fetch server")

// ServerPackages are the server-core packages of each suite, fetched when
// a ServerSpec names none.
var ServerPackages = map[string]string{
	"bullseye": "mariadb-server-core-10.5",
	"bookworm": "mariadb-server-core",
	"trixie":   "mariadb-server-core",
	"sid":      "mariadb-server-core",
}

// markerName is the file written last, atomically, into a complete tree.
const markerName = ".flamediff-fetched.json"

// DefaultCacheDir returns ~/.cache/flamediff (or $XDG_CACHE_HOME/flamediff).
func DefaultCacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("cache directory: %w", err)
	}
	return filepath.Join(dir, "flamediff"), nil
}

// Fetcher downloads MariaDB and MySQL servers from Debian suites into a
// cache directory, with a private apt state per suite under CacheDir/apt
// (the system's apt configuration, lists and status are never used or
// changed), and unpacks them under CacheDir/servers.
type Fetcher struct {
	// CacheDir holds everything the Fetcher writes.
	CacheDir string
	// Mirror is where packages come from.
	Mirror Mirror
	// Log receives progress lines (may be nil).
	Log io.Writer
	// Refresh fetches again even when a complete tree is cached.
	Refresh bool
	// HostStatus is the dpkg status file of this machine, read to skip
	// libraries it has ("/var/lib/dpkg/status" when empty).
	HostStatus string
}

// NewFetcher returns a Fetcher for cacheDir whose mirror is derived from
// this machine's apt sources (see SystemSources and FindMirror).
func NewFetcher(cacheDir string, log io.Writer) (*Fetcher, error) {
	if err := platform(); err != nil {
		return nil, err
	}
	sources, err := SystemSources("/")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFetch, err)
	}
	m, err := FindMirror(sources)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFetch, err)
	}
	return &Fetcher{CacheDir: cacheDir, Mirror: m, Log: log}, nil
}

// ErrKind is wrapped by Resolve's error when the binary is not of the
// kind the spec names.
var ErrKind = errors.New("server of another kind")

// Resolve returns the Binary of spec: Installed for a path, Fetch for a
// suite (f may be nil when no spec names a suite), of the spec's package
// or else the suite's package of the spec's kind (DefaultPackage). When
// the spec names a kind, a binary of another kind is an error wrapping
// ErrKind.
func Resolve(ctx context.Context, f *Fetcher, spec ServerSpec) (*Binary, error) {
	var b *Binary
	var err error
	switch {
	case spec.Path != "":
		b, err = Installed(ctx, spec.Path)
	case f == nil:
		return nil, fmt.Errorf("%w %s: no fetcher for suite %s", ErrFetch, spec.Label, spec.Suite)
	default:
		pkg := spec.Package
		if pkg == "" {
			if pkg, err = DefaultPackage(spec.Suite, spec.Kind); err != nil {
				return nil, fmt.Errorf("%w %s: %w", ErrFetch, spec.Label, err)
			}
		}
		b, err = f.Fetch(ctx, spec.Suite, pkg)
	}
	if err != nil {
		return nil, err
	}
	if spec.Kind != "" && b.Kind != spec.Kind {
		return nil, fmt.Errorf("server %s: %w: the config says %s, but %s is %s %s", spec.Label, ErrKind, spec.Kind, b.Mariadbd, b.Kind, b.Version)
	}
	return b, nil
}

func (f *Fetcher) logf(format string, a ...any) {
	if f.Log != nil {
		fmt.Fprintf(f.Log, format+"\n", a...)
	}
}

// marker is the content of markerName.
type marker struct {
	Suite, Package, Version string
	Kind                    Kind
	Packages                []string
	Mariadbd, Loader        string
	LibraryPath             []string
	ShareDir                string
	Libc, LibcDebugDir      string
	Fetched                 time.Time
}

// TreeDir returns the directory the server package pkg of suite is
// unpacked into.
func (f *Fetcher) TreeDir(suite, pkg string) string {
	return filepath.Join(f.CacheDir, "servers", suite+"-"+pkg)
}

// Fetch returns the server package pkg (ServerPackages[suite], MariaDB's,
// when empty) of suite, unpacked with the libraries it needs that this
// machine lacks, and checked to run (`mariadbd --version` or
// `mysqld --version`, which says its kind). A tree fetched before is
// reused without network access unless Refresh is set; an incomplete one
// (no marker) is fetched again. Concurrent Fetches of the same tree, in
// this or other processes, wait for each other. Errors wrap ErrFetch; a
// server that cannot start for lack of a library wraps a
// *MissingLibraryError naming it.
func (f *Fetcher) Fetch(ctx context.Context, suite, pkg string) (*Binary, error) {
	if !slices.Contains(Suites, suite) {
		return nil, fmt.Errorf("%w: unknown suite %q (known: %s)", ErrFetch, suite, strings.Join(Suites, ", "))
	}
	if pkg == "" {
		pkg = ServerPackages[suite]
	}
	tree := f.TreeDir(suite, pkg)
	if err := os.MkdirAll(filepath.Dir(tree), 0o755); err != nil {
		return nil, fmt.Errorf("%w: cache directory %w", ErrFetch, describePath(filepath.Dir(tree), err, true))
	}
	unlock, err := lockFile(ctx, tree+".lock")
	if err != nil {
		return nil, fmt.Errorf("%w %s/%s: %w", ErrFetch, suite, pkg, err)
	}
	defer unlock()

	if !f.Refresh {
		if b, err := loadMarker(tree); err == nil {
			if _, err := b.CheckVersion(ctx); err != nil {
				return nil, fmt.Errorf("%w %s/%s (cached in %s; remove it to fetch again): %w", ErrFetch, suite, pkg, tree, err)
			}
			f.logf("fetch %s/%s: cached in %s (%s)", suite, pkg, tree, b.Version)
			return b, nil
		}
	}
	start := time.Now()
	b, err := f.fetch(ctx, suite, pkg, tree)
	if err != nil {
		return nil, fmt.Errorf("%w %s/%s: %w", ErrFetch, suite, pkg, err)
	}
	f.logf("fetch %s/%s: %s ready in %s (%.0fs)", suite, pkg, b.Version, tree, time.Since(start).Seconds())
	return b, nil
}

func loadMarker(tree string) (*Binary, error) {
	data, err := os.ReadFile(filepath.Join(tree, markerName))
	if err != nil {
		return nil, err
	}
	var m marker
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", markerName, err)
	}
	if m.Kind == "" { // written before the lab knew MySQL
		m.Kind = KindOf(m.Version)
	}
	return &Binary{Mariadbd: m.Mariadbd, Kind: m.Kind, Loader: m.Loader, LibraryPath: m.LibraryPath, Root: tree,
		ShareDir: m.ShareDir, Libc: m.Libc, LibcDebugDir: m.LibcDebugDir, Version: m.Version,
		Suite: m.Suite, Package: m.Package, Packages: m.Packages}, nil
}

// apt runs apt-get or apt-cache with the private state of one suite.
type apt struct {
	dir string // CacheDir/apt/SUITE
}

func (a *apt) opts() []string {
	return []string{
		"-o", "Dir::State=" + filepath.Join(a.dir, "state"),
		"-o", "Dir::State::status=" + filepath.Join(a.dir, "status"),
		"-o", "Dir::Cache=" + filepath.Join(a.dir, "cache"),
		"-o", "Dir::Etc::SourceList=" + filepath.Join(a.dir, "sources.list"),
		"-o", "Dir::Etc::SourceParts=/dev/null",
		"-o", "Dir::Etc::Preferences=/dev/null",
		"-o", "Dir::Etc::PreferencesParts=/dev/null",
		"-o", "APT::Sandbox::User=root",
		"-o", "Acquire::Languages=none",
		"-o", "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled=false",
		"-o", "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled=false",
		"-o", "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled=false",
		"-o", "Acquire::IndexTargets::deb::CNF::DefaultEnabled=false",
		"-o", "Debug::NoLocking=true",
	}
}

// setup writes the private sources.list and an empty status file.
func (a *apt) setup(sourcesList string) error {
	for _, d := range []string{"state/lists/partial", "cache/archives/partial", "debs"} {
		if err := os.MkdirAll(filepath.Join(a.dir, d), 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(a.dir, "sources.list"), []byte(sourcesList), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(a.dir, "status"), nil, 0o644)
}

func (a *apt) run(ctx context.Context, dir, tool string, args ...string) ([]byte, error) {
	argv := append([]string{tool}, a.opts()...)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, tool, argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive")
	ownGroup(cmd, true)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("%s %s: %w: %s", tool, strings.Join(args, " "), err, lastLinesOf(stderr.Bytes(), 5))
	}
	return stdout.Bytes(), nil
}

// show returns the control fields of the candidate version of pkg.
func (a *apt) show(ctx context.Context, pkg string) (Paragraph, error) {
	out, err := a.run(ctx, a.dir, "apt-cache", "show", "--no-all-versions", pkg)
	if err != nil {
		return nil, err
	}
	paras, err := ParseParagraphs(bytes.NewReader(out))
	if err != nil || len(paras) == 0 {
		return nil, fmt.Errorf("apt-cache show %s: no package record", pkg)
	}
	return paras[0], nil
}

// download fetches name=version into dir and returns the .deb's path.
func (a *apt) download(ctx context.Context, name, version, arch string) (string, error) {
	dir := filepath.Join(a.dir, "debs")
	file := filepath.Join(dir, fmt.Sprintf("%s_%s_%s.deb", name, strings.ReplaceAll(version, ":", "%3a"), arch))
	if _, err := os.Stat(file); err == nil {
		return file, nil
	}
	if _, err := a.run(ctx, dir, "apt-get", "download", "-q", name+"="+version); err != nil {
		return "", err
	}
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("apt-get download %s=%s: %w", name, version, err)
	}
	return file, nil
}

// pkgInfo is a package chosen for unpacking.
type pkgInfo struct {
	name, version, arch string
}

func (f *Fetcher) fetch(ctx context.Context, suite, pkg, tree string) (*Binary, error) {
	a := &apt{dir: filepath.Join(f.CacheDir, "apt", suite)}
	if err := a.setup(f.Mirror.SourcesList(suite)); err != nil {
		return nil, err
	}
	f.logf("fetch %s/%s: apt-get update from %s (private state in %s)", suite, pkg, f.Mirror.Archive, a.dir)
	if _, err := a.run(ctx, a.dir, "apt-get", "update", "-q", "--error-on=any"); err != nil {
		return nil, err
	}
	host, err := f.hostPackages()
	if err != nil {
		return nil, err
	}

	// The server package, then the libraries of its Depends (and theirs)
	// that the host lacks or has too old.
	chosen := map[string]pkgInfo{}
	var order []string
	queue := []string{pkg}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		p, err := a.show(ctx, name)
		if err != nil {
			return nil, err
		}
		info := pkgInfo{name: p.Get("Package"), version: p.Get("Version"), arch: p.Get("Architecture")}
		chosen[name] = info
		order = append(order, name)
		deps, err := ParseDepends(joinFields(p.Get("Pre-Depends"), p.Get("Depends")))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for _, group := range deps {
			if need := f.needed(group, host, chosen, queue); need != "" {
				f.logf("fetch %s/%s: %s needs %s (%s)", suite, pkg, name, need, hostHas(group, host))
				queue = append(queue, need)
			}
		}
	}
	// The debug files of the libc the server will run with: the suite's
	// when its libc is fetched (the host's are found in /usr/lib/debug).
	if libc, ok := chosen["libc6"]; ok {
		dbg, err := a.show(ctx, "libc6-dbg")
		if err != nil {
			return nil, err
		}
		if v := dbg.Get("Version"); v != libc.version {
			return nil, fmt.Errorf("libc6-dbg %s does not match libc6 %s", v, libc.version)
		}
		chosen["libc6-dbg"] = pkgInfo{name: "libc6-dbg", version: libc.version, arch: dbg.Get("Architecture")}
		order = append(order, "libc6-dbg")
	}

	if err := os.RemoveAll(tree); err != nil {
		return nil, fmt.Errorf("cache directory %w", describePath(tree, err, true))
	}
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return nil, fmt.Errorf("cache directory %w", describePath(tree, err, true))
	}
	var packages []string
	for _, name := range order {
		p := chosen[name]
		f.logf("fetch %s/%s: download %s %s", suite, pkg, p.name, p.version)
		deb, err := a.download(ctx, p.name, p.version, p.arch)
		if err != nil {
			return nil, err
		}
		unpack := exec.CommandContext(ctx, "dpkg", "-x", deb, tree)
		ownGroup(unpack, true)
		if out, err := unpack.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("dpkg -x %s: %w: %s", deb, err, lastLinesOf(out, 5))
		}
		packages = append(packages, p.name+"="+p.version)
	}

	b := &Binary{Root: tree, Suite: suite, Package: pkg, Packages: packages}
	for _, p := range []string{"usr/sbin/mariadbd", "usr/sbin/mysqld"} {
		if _, err := os.Stat(filepath.Join(tree, p)); err == nil {
			b.Mariadbd = filepath.Join(tree, p)
			break
		}
	}
	if b.Mariadbd == "" {
		return nil, fmt.Errorf("%s has no usr/sbin/mariadbd or usr/sbin/mysqld", pkg)
	}
	b.LibraryPath = libraryDirs(tree)
	if _, ok := chosen["libc6"]; ok {
		if b.Loader, err = findLoader(b.LibraryPath); err != nil {
			return nil, err
		}
	}
	if err := b.CheckLibraries(ctx); err != nil {
		return nil, err
	}
	if _, err := b.CheckVersion(ctx); err != nil {
		return nil, err
	}
	if b.ShareDir, err = findShareDir(filepath.Join(tree, "usr"), b.Kind); err != nil {
		return nil, err
	}
	b.Libc = findLibc(ctx, b)
	if _, ok := chosen["libc6"]; ok {
		b.LibcDebugDir = debugDirFor(b.Libc, filepath.Join(tree, "usr/lib/debug/.build-id"))
		if b.LibcDebugDir == "" {
			f.logf("fetch %s/%s: warning: libc6-dbg has no debug file for %s", suite, pkg, b.Libc)
		}
	} else if b.Libc != "" {
		b.LibcDebugDir = debugDirFor(b.Libc, "/usr/lib/debug/.build-id")
		if b.LibcDebugDir == "" {
			f.logf("fetch %s/%s: note: the host's libc %s has no debug files (apt-get install libc6-dbg)", suite, pkg, b.Libc)
		}
	}
	m := marker{Suite: suite, Package: pkg, Version: b.Version, Kind: b.Kind, Packages: packages, Mariadbd: b.Mariadbd,
		Loader: b.Loader, LibraryPath: b.LibraryPath, ShareDir: b.ShareDir, Libc: b.Libc,
		LibcDebugDir: b.LibcDebugDir, Fetched: time.Now().UTC()}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(filepath.Join(tree, markerName), append(data, '\n')); err != nil {
		return nil, err
	}
	return b, nil
}

// needed returns the package to fetch for a dependency group, or "" when
// the host or the packages already chosen satisfy it, or when it is not a
// library (only shared libraries are needed to run an unpacked server).
func (f *Fetcher) needed(group []Dep, host map[string]string, chosen map[string]pkgInfo, queue []string) string {
	for _, d := range group {
		if v, ok := host[d.Name]; ok && d.Satisfied(v) {
			return ""
		}
		if _, ok := chosen[d.Name]; ok {
			return ""
		}
		if slices.Contains(queue, d.Name) {
			return ""
		}
	}
	for _, d := range group {
		if strings.HasPrefix(d.Name, "lib") && !strings.HasSuffix(d.Name, "-common") && !strings.HasSuffix(d.Name, "-data") {
			return d.Name
		}
	}
	return ""
}

// hostHas describes what the host has of a dependency group.
func hostHas(group []Dep, host map[string]string) string {
	var parts []string
	for _, d := range group {
		if v, ok := host[d.Name]; ok {
			parts = append(parts, fmt.Sprintf("host has %s %s, want %s", d.Name, v, d))
		}
	}
	if len(parts) == 0 {
		return "not on the host"
	}
	return strings.Join(parts, "; ")
}

func (f *Fetcher) hostPackages() (map[string]string, error) {
	path := f.HostStatus
	if path == "" {
		path = "/var/lib/dpkg/status"
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dpkg status %w", describePath(path, err, false))
	}
	defer fd.Close()
	return InstalledPackages(fd)
}

func joinFields(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ", " + b
}

// libraryDirs returns the directories of tree that hold shared libraries,
// multiarch directories first.
func libraryDirs(tree string) []string {
	var dirs []string
	for _, pat := range []string{"usr/lib/*-linux-gnu", "lib/*-linux-gnu", "usr/lib", "lib", "lib64", "usr/lib64"} {
		matches, _ := filepath.Glob(filepath.Join(tree, pat))
		sort.Strings(matches)
		for _, d := range matches {
			if hasOwnLibraries(d) && !slices.Contains(dirs, d) {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// hasOwnLibraries reports whether dir holds a shared library that is a
// file of the tree: a regular file or a relative symlink (an absolute one,
// such as trixie's lib64/ld-linux-x86-64.so.2, points at the host's).
func hasOwnLibraries(dir string) bool {
	libs, _ := filepath.Glob(filepath.Join(dir, "*.so*"))
	for _, l := range libs {
		fi, err := os.Lstat(l)
		if err != nil {
			continue
		}
		if fi.Mode().IsRegular() {
			return true
		}
		if target, err := os.Readlink(l); err == nil && !filepath.IsAbs(target) {
			return true
		}
	}
	return false
}

// findLoader returns the unpacked dynamic loader (a regular file, not a
// symlink that may point out of the tree).
func findLoader(dirs []string) (string, error) {
	for _, d := range dirs {
		matches, _ := filepath.Glob(filepath.Join(d, "ld-linux*.so.*"))
		for _, m := range matches {
			if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() {
				return m, nil
			}
		}
	}
	return "", fmt.Errorf("no dynamic loader (ld-linux*.so.*) in %s", strings.Join(dirs, ", "))
}

// writeFileAtomic writes data to path atomically (0600).
func writeFileAtomic(path string, data []byte) error {
	return atomicfile.Write(path, data, 0o600)
}

// lastLinesOf returns the last n non-empty lines of out, joined by " | ".
func lastLinesOf(out []byte, n int) string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "(no output)"
	}
	return strings.Join(lines, " | ")
}
