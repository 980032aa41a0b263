package flamegraph

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/flamediff/flamediff/internal/browsertest"
)

// browser starts a headless Chromium for the tests of this file.
func browser(t *testing.T) context.Context { return browsertest.Start(t, 1200, 760) }

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	return browsertest.Eval[T](t, ctx, js)
}

// rectOf returns the on-screen centre of frame i and its width attribute.
type rectInfo struct {
	X, Y, W float64
	Hidden  bool
}

func frameRect(t *testing.T, ctx context.Context, i int) rectInfo {
	t.Helper()
	return eval[rectInfo](t, ctx, fmt.Sprintf(`(() => {
		const g = document.querySelectorAll(".frames > g")[%d], r = g.querySelector("rect"), b = r.getBoundingClientRect();
		return {X: b.x + b.width / 2, Y: b.y + b.height / 2, W: +r.getAttribute("width"), Hidden: getComputedStyle(g).display === "none"};
	})()`, i))
}

func indexOf(t *testing.T, g *Graph, name string) int {
	t.Helper()
	for i, f := range g.Frames {
		if f.Name == name {
			return i
		}
	}
	t.Fatalf("no frame %q", name)
	return -1
}

// expectedMatch returns the indices of frames matching re and the share of
// the total they hold, nested matches counted once: what the script must show.
func expectedMatch(g *Graph, re *regexp.Regexp) ([]int, float64) {
	var idx []int
	var sum int64
	in := make([]bool, len(g.Frames))
	for i, f := range g.Frames {
		inside := f.Parent >= 0 && in[f.Parent]
		in[i] = inside
		if re.MatchString(Clean(f.Name)) {
			idx = append(idx, i)
			if !inside {
				sum += f.Value
			}
			in[i] = true
		}
	}
	return idx, float64(sum) * 100 / float64(g.Total)
}

// TestBrowser loads generated SVGs (and an HTML page) in headless Chromium
// and checks what a person would: frames are drawn, Ctrl-F search
// highlights the right frames and reports their share, a click zooms and
// Reset Zoom restores, the URL fragment restores zoom and search, hover
// shows details, and frame names full of markup stay text. It saves a
// screenshot as a test artifact: go test ./flamegraph -run Browser
// -artifacts -outputdir DIR keeps it under DIR (the path is logged).
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	single, base, target := smallProfiles(t)
	dir := t.TempDir()

	g, err := Layout(single, Options{Hash: true})
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := g.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	svgPath := filepath.Join(dir, "graph.svg")
	if err := os.WriteFile(svgPath, svg.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	svgURL := (&url.URL{Scheme: "file", Path: svgPath}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(svgURL), chromedp.WaitVisible(chromedp.CSS(".frames"))); err != nil {
		t.Fatalf("load %s: %v", svgURL, err)
	}

	t.Run("frames drawn", func(t *testing.T) {
		if n := eval[int](t, ctx, `document.querySelectorAll(".frames > g").length`); n != len(g.Frames) {
			t.Errorf("%d frames in the page, want %d", n, len(g.Frames))
		}
		root := frameRect(t, ctx, 0)
		if math.Abs(root.W-1180) > 0.01 || root.Hidden {
			t.Errorf("root frame width %v (hidden %v), want 1180", root.W, root.Hidden)
		}
		// The page draws the frames: the root's box is on screen and the
		// element under its centre is its rectangle.
		hit := eval[string](t, ctx, fmt.Sprintf(`document.elementFromPoint(%f, %f).parentNode.querySelector("title").textContent.split("\n")[0]`, root.X, root.Y))
		if hit != "all" {
			t.Errorf("element at the root frame's centre belongs to %q, want all", hit)
		}
	})

	t.Run("markup in names does not execute", func(t *testing.T) {
		if v := eval[string](t, ctx, `typeof window.pwned`); v != "undefined" {
			t.Errorf("window.pwned is %s: a frame name ran as script", v)
		}
		if n := eval[int](t, ctx, `document.getElementsByTagName("script").length`); n != 1 {
			t.Errorf("%d script elements, want 1", n)
		}
		if n := eval[int](t, ctx, `document.getElementsByTagName("img").length`); n != 0 {
			t.Errorf("%d img elements: a frame name became markup", n)
		}
		names := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".frames title"), e => e.textContent.split("\n")[0])`)
		for _, m := range markup {
			found := false
			for _, n := range names {
				found = found || n == Clean(m)
			}
			if !found {
				t.Errorf("no frame shows %q as its name", Clean(m))
			}
		}
	})

	t.Run("hover shows details", func(t *testing.T) {
		i := indexOf(t, g, "mysql_update")
		r := frameRect(t, ctx, i)
		if err := chromedp.Do(ctx, chromedp.MouseEvent("mouseMoved", r.X, r.Y)); err != nil {
			t.Fatal(err)
		}
		got := eval[string](t, ctx, `document.querySelector(".details").textContent`)
		if !strings.HasPrefix(got, "mysql_update · 40 samples, 40.00%") {
			t.Errorf("details after hovering mysql_update: %q", got)
		}
	})

	t.Run("ctrl-f search", func(t *testing.T) {
		const expr = `^(mysql_update|trans_commit_stmt|ha_commit_trans)$`
		wantIdx, wantShare := expectedMatch(g, regexp.MustCompile(expr))
		if len(wantIdx) != 3 || math.Abs(wantShare-70) > 1e-9 {
			t.Fatalf("test profile changed: %d matches, %.2f%%; want 3 and 70%% (ha_commit_trans inside trans_commit_stmt counts once)", len(wantIdx), wantShare)
		}
		// Subscribe before pressing the key: the prompt is modal, so the key
		// event does not return until someone answers it, and a subscription
		// made later (in the goroutine, under load) missed it and hung the test.
		dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
		prompts := make(chan string, 1)
		go func() {
			for ev, err := range dialogs {
				if err != nil {
					return
				}
				prompts <- ev.Message
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true, PromptText: expr})
				return
			}
		}()
		keyCtx, cancelKey := context.WithTimeout(ctx, 30*time.Second)
		defer cancelKey()
		if err := chromedp.Do(keyCtx, chromedp.KeyEvent("f", chromedp.KeyModifiers(chromedp.ModifierCtrl))); err != nil {
			t.Fatalf("Ctrl-F: %v (a prompt nobody answered keeps the key event waiting)", err)
		}
		select {
		case msg := <-prompts:
			if !strings.Contains(msg, "regular expression") {
				t.Errorf("Ctrl-F opened a prompt saying %q", msg)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Ctrl-F opened no search prompt")
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector(".matched").textContent.startsWith("Matched")`)); err != nil {
			t.Fatalf("no match count after the search: %v", err)
		}
		got := eval[[]int](t, ctx, `Array.from(document.querySelectorAll(".frames > g")).flatMap((g, i) => g.classList.contains("match") ? [i] : [])`)
		if fmt.Sprint(got) != fmt.Sprint(wantIdx) {
			t.Errorf("highlighted frames %v, want %v", got, wantIdx)
		}
		fill := eval[string](t, ctx, fmt.Sprintf(`getComputedStyle(document.querySelectorAll(".frames > g")[%d].querySelector("rect")).fill`, wantIdx[0]))
		if fill != "rgb(230, 0, 230)" {
			t.Errorf("a matched frame is filled %s, want the highlight rgb(230, 0, 230)", fill)
		}
		text := eval[string](t, ctx, `document.querySelector(".matched").textContent`)
		if want := fmt.Sprintf("Matched: %.2f%% (3 frames)", wantShare); text != want {
			t.Errorf("match text %q, want %q", text, want)
		}
		if h := eval[string](t, ctx, `location.hash`); h != "#search="+url.QueryEscape(expr) && h != "#search="+jsEncode(expr) {
			t.Errorf("URL fragment %q does not keep the search", h)
		}
	})

	zoomOn := indexOf(t, g, "dispatch_command")
	t.Run("click zooms, reset restores", func(t *testing.T) {
		before := make([]rectInfo, len(g.Frames))
		for i := range g.Frames {
			before[i] = frameRect(t, ctx, i)
		}
		r := before[zoomOn]
		if err := chromedp.Do(ctx, chromedp.MouseClickXY(r.X, r.Y)); err != nil {
			t.Fatal(err)
		}
		scale := 1180 / r.W
		child := indexOf(t, g, "mysql_execute_command")
		other := indexOf(t, g, "vio_read")
		if z := frameRect(t, ctx, zoomOn); math.Abs(z.W-1180) > 0.01 {
			t.Errorf("zoomed frame width %.2f, want 1180", z.W)
		}
		if c := frameRect(t, ctx, child); math.Abs(c.W-before[child].W*scale) > 0.02 || c.Hidden {
			t.Errorf("child width %.2f after zoom, want %.2f (×%.3f)", c.W, before[child].W*scale, scale)
		}
		if o := frameRect(t, ctx, other); !o.Hidden {
			t.Errorf("vio_read, outside the zoomed frame, is still shown")
		}
		if p := eval[bool](t, ctx, fmt.Sprintf(`document.querySelectorAll(".frames > g")[%d].classList.contains("parent")`, g.Frames[zoomOn].Parent)); !p {
			t.Errorf("the zoomed frame's ancestor is not drawn as a parent")
		}
		if h := eval[string](t, ctx, `location.hash`); !strings.Contains(h, fmt.Sprintf("zoom=%d", zoomOn)) {
			t.Errorf("URL fragment %q does not keep the zoom", h)
		}
		shot(t, ctx, "zoomed-search.png")
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".unzoom"))); err != nil {
			t.Fatal(err)
		}
		for i := range g.Frames {
			if a := frameRect(t, ctx, i); math.Abs(a.W-before[i].W) > 1e-9 || a.Hidden != before[i].Hidden {
				t.Errorf("frame %d after reset: width %.2f hidden %v, want %.2f %v", i, a.W, a.Hidden, before[i].W, before[i].Hidden)
			}
		}
		if eval[bool](t, ctx, `!document.querySelector(".unzoom").classList.contains("hide")`) {
			t.Error("Reset Zoom still shown after the reset")
		}
	})

	t.Run("URL fragment restores zoom and search", func(t *testing.T) {
		u := svgURL + fmt.Sprintf("#zoom=%d&search=%s", zoomOn, url.QueryEscape("^vio_"))
		if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(u), chromedp.WaitVisible(chromedp.CSS(".frames"))); err != nil {
			t.Fatal(err)
		}
		if z := frameRect(t, ctx, zoomOn); math.Abs(z.W-1180) > 0.01 {
			t.Errorf("frame %d width %.2f after loading %s, want 1180 (zoomed)", zoomOn, z.W, u)
		}
		wantIdx, share := expectedMatch(g, regexp.MustCompile("^vio_"))
		text := eval[string](t, ctx, `document.querySelector(".matched").textContent`)
		if want := fmt.Sprintf("Matched: %.2f%% (%d frames)", share, len(wantIdx)); text != want {
			t.Errorf("match text %q after loading the fragment, want %q", text, want)
		}
	})

	t.Run("differential graph", func(t *testing.T) {
		dg, err := LayoutDiff(base, target, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := dg.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "diff.svg")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: p}).String()), chromedp.WaitVisible(chromedp.CSS(".frames"))); err != nil {
			t.Fatal(err)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll(".frames > g").length`); n != len(dg.Frames) {
			t.Errorf("%d frames drawn, want %d", n, len(dg.Frames))
		}
		if v := eval[string](t, ctx, `typeof window.pwned`); v != "undefined" {
			t.Errorf("window.pwned is %s in the differential graph", v)
		}
		// trans_commit_stmt grew: red; my_net_read_packet shrank: blue.
		for name, want := range map[string]string{"trans_commit_stmt": "red", "my_net_read_packet": "blue"} {
			fill := eval[string](t, ctx, fmt.Sprintf(`getComputedStyle(document.querySelectorAll(".frames > g")[%d].querySelector("rect")).fill`, indexOf(t, dg, name)))
			var r, gg, bb int
			if _, err := fmt.Sscanf(fill, "rgb(%d, %d, %d)", &r, &gg, &bb); err != nil {
				t.Fatalf("fill %q: %v", fill, err)
			}
			if got := map[bool]string{true: "red", false: "blue"}[r > bb]; got != want {
				t.Errorf("%s is filled %s (%s), want %s", name, fill, got, want)
			}
		}
		shot(t, ctx, "diff.png")
	})

	t.Run("html page", func(t *testing.T) {
		var b bytes.Buffer
		err := WritePage(&b, Page{Title: "Report " + markup[1], Graph: g,
			Tables: template.HTML("<table><tr><td>" + template.HTMLEscapeString(markup[2]) + "</td><td>1.00</td></tr></table>\n")}) // #nosec G203 -- escaped
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "page.html")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: p}).String()), chromedp.WaitVisible(chromedp.CSS(".frames"))); err != nil {
			t.Fatal(err)
		}
		if v := eval[string](t, ctx, `typeof window.pwned`); v != "undefined" {
			t.Errorf("window.pwned is %s in the HTML page", v)
		}
		if got := eval[string](t, ctx, `document.querySelector("td").textContent`); got != markup[2] {
			t.Errorf("table cell shows %q, want the name as text %q", got, markup[2])
		}
		i := indexOf(t, g, "dispatch_command")
		ok := eval[bool](t, ctx, fmt.Sprintf(`document.querySelector("svg").flamegraph.zoom(%d), Math.abs(+document.querySelectorAll(".frames > g")[%d].querySelector("rect").getAttribute("width") - 1180) < 0.01`, i, i))
		if !ok {
			t.Error("zoom does not work in the HTML page")
		}
	})

	t.Run("off-CPU graph", func(t *testing.T) {
		time, _, base, target := offCPUProfiles(t)
		og, err := Layout(time, Options{})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		err = WritePage(&b, Page{Title: "Off-CPU time of 10.5", Graph: og})
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "offcpu.html")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: p}).String()), chromedp.WaitVisible(chromedp.CSS(".frames"))); err != nil {
			t.Fatal(err)
		}
		if n := eval[int](t, ctx, `document.querySelectorAll(".frames > g").length`); n != len(og.Frames) {
			t.Errorf("%d frames drawn, want %d", n, len(og.Frames))
		}
		if got := eval[string](t, ctx, `document.querySelector("text.title").textContent`); got != "Off-CPU Time Flame Graph" {
			t.Errorf("title %q", got)
		}
		if got := eval[string](t, ctx, `document.querySelector("text.subtitle").textContent`); got != "10.5: 1,200 µs off the CPU, 12.00 µs/op" {
			t.Errorf("total line %q, want 1,200 µs over 100 operations", got)
		}
		legend := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".legend > g"), g => getComputedStyle(g.querySelector("rect")).fill + " " + g.textContent)`)
		if want := []string{"rgb(0, 150, 136) [voluntary] blocked", "rgb(255, 179, 0) [involuntary] preempted"}; fmt.Sprint(legend) != fmt.Sprint(want) {
			t.Errorf("legend %q, want %q", legend, want)
		}
		fills := eval[[]string](t, ctx, `Array.from(document.querySelectorAll(".frames > g"), g => g.querySelector("title").textContent.split("\n")[0] + " " + getComputedStyle(g.querySelector("rect")).fill)`)
		kinds := 0
		for _, f := range fills {
			name, fill, _ := strings.Cut(f, " ")
			var want string
			switch name {
			case "[voluntary]":
				want = "rgb(0, 150, 136)"
			case "[involuntary]":
				want = "rgb(255, 179, 0)"
			default:
				var r, gg, bb int
				if _, err := fmt.Sscanf(fill, "rgb(%d, %d, %d)", &r, &gg, &bb); err != nil || r != gg || bb < 190 {
					t.Errorf("%s is filled %s, want the io palette's blue", name, fill)
				}
				continue
			}
			kinds++
			if fill != want {
				t.Errorf("%s is filled %s, want %s", name, fill, want)
			}
		}
		if kinds != 4 {
			t.Errorf("%d switch-kind leaves drawn, want 4 (3 voluntary, 1 involuntary)", kinds)
		}
		r := frameRect(t, ctx, indexOf(t, og, "vio_read"))
		if err := chromedp.Do(ctx, chromedp.MouseEvent("mouseMoved", r.X, r.Y)); err != nil {
			t.Fatal(err)
		}
		// 600 of 1,200 µs, 100 operations.
		if got := eval[string](t, ctx, `document.querySelector(".details").textContent`); got != "vio_read · 600 us, 50.00% of off-CPU time, 6.00 µs/op" {
			t.Errorf("details after hovering vio_read: %q", got)
		}
		// The voluntary leaves hold 600+400+150 of 1,200 µs.
		if ok := eval[bool](t, ctx, `document.querySelector("svg").flamegraph.search("^\\[voluntary\\]$")`); !ok {
			t.Fatal("search refused the expression")
		}
		if got := eval[string](t, ctx, `document.querySelector(".matched").textContent`); got != "Matched: 95.83% (3 frames)" {
			t.Errorf("match text %q, want 95.83%% (1,150 of 1,200 µs) in 3 frames", got)
		}
		shot(t, ctx, "offcpu.png")

		dg, err := LayoutDiff(base, target, Options{Normalize: NormalizePerOp})
		if err != nil {
			t.Fatal(err)
		}
		b.Reset()
		if err := dg.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		p = filepath.Join(dir, "offcpu-diff.svg")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Navigate((&url.URL{Scheme: "file", Path: p}).String()), chromedp.WaitVisible(chromedp.CSS(".frames"))); err != nil {
			t.Fatal(err)
		}
		// Per op: mysql_update 0.05 → 0.10 cs/op grew, os_event_wait 0.15 →
		// 0.05 shrank, vio_read 0.20 → 0.20 unchanged.
		for name, want := range map[string]string{"mysql_update": "red", "os_event_wait": "blue", "vio_read": "unchanged"} {
			fill := eval[string](t, ctx, fmt.Sprintf(`getComputedStyle(document.querySelectorAll(".frames > g")[%d].querySelector("rect")).fill`, indexOf(t, dg, name)))
			var r, gg, bb int
			if _, err := fmt.Sscanf(fill, "rgb(%d, %d, %d)", &r, &gg, &bb); err != nil {
				t.Fatalf("fill %q: %v", fill, err)
			}
			got := "unchanged"
			switch {
			case r > bb:
				got = "red"
			case bb > r:
				got = "blue"
			}
			if got != want {
				t.Errorf("%s is filled %s (%s), want %s", name, fill, got, want)
			}
		}
		r = frameRect(t, ctx, indexOf(t, dg, "os_event_wait"))
		if err := chromedp.Do(ctx, chromedp.MouseEvent("mouseMoved", r.X, r.Y)); err != nil {
			t.Fatal(err)
		}
		if got := eval[string](t, ctx, `document.querySelector(".details").textContent`); !strings.Contains(got, "10.5 (base): 0.15 cs/op, 30.00%, 15 switches · 10.11 (target): 0.05 cs/op, 12.50%, 10 switches · change: -0.10 cs/op (-66.7%)") {
			t.Errorf("details after hovering os_event_wait: %q", got)
		}
		shot(t, ctx, "offcpu-diff.png")
	})
}

// jsEncode is encodeURIComponent, for comparing fragments.
func jsEncode(s string) string {
	return strings.NewReplacer("+", "%20", "%28", "(", "%29", ")", "%21", "!", "%27", "'", "%2A", "*", "%7E", "~").Replace(url.QueryEscape(s))
}

// shot saves a screenshot of the page as a test artifact.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	browsertest.Shot(t, ctx, name)
}
