package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FetchEnv turns on TestFetchAndStart, which downloads about 100 MB
// (about 90 s on this VM's network, cold; a few seconds when cached).
const FetchEnv = "FLAMEDIFF_LAB_FETCH"

// CacheEnv overrides the cache directory of the integration tests.
const CacheEnv = "FLAMEDIFF_LAB_CACHE"

func testCacheDir(t *testing.T) string {
	t.Helper()
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	d, err := DefaultCacheDir()
	if err != nil {
		t.Fatalf("DefaultCacheDir: %v", err)
	}
	return d
}

// TestFetchAndStart fetches 11.8 from trixie and 10.5 from bullseye,
// checks their versions, and starts each through the lab lifecycle.
func TestFetchAndStart(t *testing.T) {
	if os.Getenv(FetchEnv) != "1" {
		t.Skipf("downloads ~100 MB from the Debian mirror; set %s=1 to run", FetchEnv)
	}
	requireRoot(t)
	for _, tool := range []string{"apt-get", "apt-cache", "dpkg"} {
		requireTool(t, tool)
	}
	f, err := NewFetcher(testCacheDir(t), &logWriter{t: t})
	if err != nil {
		t.Fatalf("NewFetcher: %v", err)
	}
	for _, tc := range []struct {
		suite, want string
		loader      bool
	}{
		{"trixie", "11.8.", true},
		{"bullseye", "10.5.", false},
	} {
		t.Run(tc.suite, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
			defer cancel()
			start := time.Now()
			b, err := f.Fetch(ctx, tc.suite, "")
			if err != nil {
				t.Fatalf("Fetch(%s): %v", tc.suite, err)
			}
			t.Logf("fetch %s: %s in %v; packages %v; loader %q; libc %s; debug %s", tc.suite, b.Version, time.Since(start).Round(time.Second), b.Packages, b.Loader, b.Libc, b.LibcDebugDir)
			if !strings.HasPrefix(b.Version, tc.want) {
				t.Errorf("Fetch(%s).Version = %q, want %s*", tc.suite, b.Version, tc.want)
			}
			if (b.Loader != "") != tc.loader {
				t.Errorf("Fetch(%s).Loader = %q, want a loader: %v", tc.suite, b.Loader, tc.loader)
			}
			if tc.loader && (b.LibcDebugDir == "" || !strings.HasPrefix(b.LibcDebugDir, b.Root)) {
				t.Errorf("Fetch(%s).LibcDebugDir = %q, want the suite's .build-id under %s", tc.suite, b.LibcDebugDir, b.Root)
			}
			if dbg, err := b.LibcDebugFile(); err != nil || !strings.HasSuffix(dbg, ".debug") {
				t.Errorf("LibcDebugFile() = %q, %v; want the debug file of %s", dbg, err, b.Libc)
			} else if id, err := BuildID(dbg); err != nil || !strings.Contains(dbg, id[2:]) {
				t.Errorf("BuildID(%s) = %q, %v; want the build-id the file is named after", dbg, id, err)
			}
			if _, err := os.Stat(filepath.Join(b.Root, markerName)); err != nil {
				t.Errorf("no marker after Fetch: %v", err)
			}
			// Cached: a second Fetch reuses the tree without apt.
			again, err := f.Fetch(ctx, tc.suite, "")
			if err != nil || again.Mariadbd != b.Mariadbd || again.Version != b.Version {
				t.Errorf("second Fetch(%s) = %+v, %v; want the cached %s", tc.suite, again, err, b.Mariadbd)
			}
			srv := startServer(t, ctx, b, "")
			ver, err := srv.Version(ctx)
			if err != nil || !strings.HasPrefix(ver, tc.want) {
				t.Errorf("SELECT VERSION() = %q, %v; want %s*", ver, err, tc.want)
			}
			if err := srv.Stop(); err != nil {
				t.Errorf("Stop: %v", err)
			}
		})
	}
}
