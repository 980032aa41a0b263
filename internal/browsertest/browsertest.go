// Package browsertest runs pages in a headless Chromium for tests: start a
// browser with a fresh profile, evaluate JavaScript, keep screenshots as
// test artifacts. Without Chromium a test is skipped, or fails when CI
// requires every test to run (MARIADBTEST_REQUIRE, as for the tests that
// need a server).
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// RequireEnv turns the browser tests' skip into a failure: CI sets it.
const RequireEnv = "MARIADBTEST_REQUIRE"

// ChromiumEnv names another browser binary than /usr/bin/chromium.
const ChromiumEnv = "FLAMEDIFF_CHROMIUM"

// skipOrFail skips the test with the reason, or fails it when RequireEnv
// is set.
func skipOrFail(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv(RequireEnv) != "" {
		t.Fatalf("%s (and %s is set, so the browser test must run: apt-get install chromium)", reason, RequireEnv)
	}
	t.Skip(reason)
}

// Start starts a headless Chromium with a fresh profile and a window of
// width by height pixels, and returns a chromedp context for one tab,
// closed when the test ends; it skips the test without Chromium.
func Start(t testing.TB, width, height int) context.Context {
	t.Helper()
	exe := os.Getenv(ChromiumEnv)
	if exe == "" {
		exe = "/usr/bin/chromium"
	}
	if _, err := exec.LookPath(exe); err != nil {
		skipOrFail(t, fmt.Sprintf("no Chromium at %s (%v): install Debian's chromium or set %s", exe, err, ChromiumEnv))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	var log bytes.Buffer
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(exe),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
		chromedp.CombinedOutput(&log),
	)
	t.Cleanup(cancelAlloc)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(cancelTab)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start %s: %v\nbrowser output:\n%s", exe, err, log.String())
	}
	return tab
}

// Eval evaluates js in the tab and returns its value.
func Eval[T any](t testing.TB, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// Shot saves a screenshot of the page as the test artifact name (go test
// -artifacts -outputdir DIR keeps it under DIR; the path is logged) and
// returns its path.
func Shot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot is not a PNG")
	}
	p := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
	return p
}
