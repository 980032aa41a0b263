package lab

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestLibraryDirs builds a tree like trixie's libc6: libraries in
// usr/lib/x86_64-linux-gnu, and usr/lib64 holding only an absolute
// symlink to the loader (which would be the host's).
func TestLibraryDirs(t *testing.T) {
	tree := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(tree, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	multi := "usr/lib/x86_64-linux-gnu"
	for _, f := range []string{"libc.so.6", "ld-linux-x86-64.so.2"} {
		if err := os.WriteFile(mk(filepath.Join(multi, f)), []byte("elf"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("libssl.so.3", mk(filepath.Join("lib/x86_64-linux-gnu", "libssl.so"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", mk("usr/lib64/ld-linux-x86-64.so.2")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(tree, "usr/lib/mysql/plugin"), 0o755); err != nil {
		t.Fatal(err)
	}
	got := libraryDirs(tree)
	want := []string{filepath.Join(tree, multi), filepath.Join(tree, "lib/x86_64-linux-gnu")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("libraryDirs = %q, want %q", got, want)
	}
	loader, err := findLoader(got)
	if err != nil || loader != filepath.Join(tree, multi, "ld-linux-x86-64.so.2") {
		t.Errorf("findLoader = %q, %v; want the regular file in %s", loader, err, multi)
	}
	if _, err := findLoader([]string{filepath.Join(tree, "usr/lib64")}); err == nil {
		t.Errorf("findLoader took the absolute symlink of usr/lib64")
	}
}

func TestMarkerRoundTrip(t *testing.T) {
	tree := t.TempDir()
	if _, err := loadMarker(tree); err == nil {
		t.Fatalf("loadMarker of a tree without marker succeeded")
	}
	if err := writeFileAtomic(filepath.Join(tree, markerName), []byte(`{"Suite":"trixie","Package":"p","Version":"11.8.9-MariaDB","Mariadbd":"/t/mariadbd","Loader":"/t/ld.so","LibraryPath":["/t/lib"],"ShareDir":"/t/share"}`)); err != nil {
		t.Fatal(err)
	}
	b, err := loadMarker(tree)
	if err != nil {
		t.Fatal(err)
	}
	// A marker written before the lab knew MySQL has no Kind: the
	// version says it.
	want := &Binary{Mariadbd: "/t/mariadbd", Kind: MariaDB, Loader: "/t/ld.so", LibraryPath: []string{"/t/lib"}, Root: tree, ShareDir: "/t/share", Version: "11.8.9-MariaDB", Suite: "trixie", Package: "p"}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("loadMarker = %+v, want %+v", b, want)
	}
	if err := writeFileAtomic(filepath.Join(tree, markerName), []byte(`{"Suite":"sid","Package":"mysql-server-core","Version":"9.7.4-2","Kind":"mysql","Mariadbd":"/t/mysqld"}`)); err != nil {
		t.Fatal(err)
	}
	if b, err := loadMarker(tree); err != nil || b.Kind != MySQL || b.Mariadbd != "/t/mysqld" {
		t.Errorf("loadMarker of MySQL's marker = %+v, %v; want Kind mysql, /t/mysqld", b, err)
	}
	entries, _ := os.ReadDir(tree)
	if len(entries) != 1 {
		t.Errorf("writeFileAtomic left %d files, want only the marker", len(entries))
	}
}

// TestFetchFailures checks that a server that cannot be fetched is an
// error wrapping ErrFetch that says why, and leaves no complete tree.
func TestFetchFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	f := &Fetcher{CacheDir: t.TempDir(), Mirror: Mirror{Archive: "http://127.0.0.1:9/debian"}}
	if _, err := f.Fetch(ctx, "jessie", ""); !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), `unknown suite "jessie"`) {
		t.Errorf("Fetch(jessie) = %v, want ErrFetch naming the suite", err)
	}
	requireRoot(t)
	requireTool(t, "apt-get")
	_, err := f.Fetch(ctx, "trixie", "")
	if !errors.Is(err, ErrFetch) || !strings.Contains(err.Error(), "apt-get update") || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("Fetch from an unreachable mirror = %v, want ErrFetch quoting apt-get update", err)
	}
	if _, err := loadMarker(f.TreeDir("trixie", ServerPackages["trixie"])); err == nil {
		t.Errorf("a failed Fetch left a marker")
	}
	// The private apt state is all under the cache directory.
	for _, p := range []string{"apt/trixie/sources.list", "apt/trixie/status"} {
		if _, err := os.Stat(filepath.Join(f.CacheDir, p)); err != nil {
			t.Errorf("private apt state: %v", err)
		}
	}
	data, err := os.ReadFile(filepath.Join(f.CacheDir, "apt/trixie/sources.list"))
	if err != nil || !strings.Contains(string(data), "http://127.0.0.1:9/debian trixie main") {
		t.Errorf("private sources.list = %q, %v; want the given mirror", data, err)
	}
}
