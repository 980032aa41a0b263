package flamegraph

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flamediff/flamediff/fold"
	goldenfile "github.com/flamediff/flamediff/internal/golden"
)

// update rewrites the golden files: go test ./flamegraph -run Golden -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// markup are frame names that must render as text.
var markup = []string{
	"operator<<(std::ostream&, T const&)",
	"</text><script>window.pwned=1</script>",
	`"><img src=x onerror="window.pwned=2">`,
	"]]><script>window.pwned=3</script>",
	"bad\xffutf8\x00ctl",
}

func smallProfiles(t testing.TB) (single, base, target *fold.Profile) {
	single = profile(t,
		"mariadbd;do_command;dispatch_command;mysql_execute_command;mysql_update 40",
		"mariadbd;do_command;dispatch_command;mysql_execute_command;trans_commit_stmt;ha_commit_trans 30",
		"mariadbd;do_command;dispatch_command 5",
		"mariadbd;do_command;my_net_read_packet;vio_read 15",
		"ib_tpool_worker;tpool::worker_main;"+markup[0]+" 6",
		"ib_tpool_worker;tpool::worker_main;"+markup[1]+" 2",
		"ib_tpool_worker;"+markup[2]+" 1",
		"ib_tpool_worker;"+markup[3]+";"+markup[4]+" 1",
	)
	base = profile(t,
		"mariadbd;do_command;dispatch_command;mysql_update 40",
		"mariadbd;do_command;dispatch_command;trans_commit_stmt;ha_commit_trans 30",
		"mariadbd;do_command;dispatch_command;old_path 10",
		"mariadbd;do_command;my_net_read_packet 20",
	)
	target = profile(t,
		"mariadbd;do_command;dispatch_command;mysql_update 45",
		"mariadbd;do_command;dispatch_command;trans_commit_stmt;ha_commit_trans 45",
		"mariadbd;do_command;dispatch_command;new_path 5",
		"mariadbd;do_command;my_net_read_packet 5",
		"mariadbd;"+markup[1]+" 2",
	)
	base.Meta = &fold.Meta{Label: "10.11", CPUSecondsTotal: 2, Operations: 20000}
	target.Meta = &fold.Meta{Label: "11.8", CPUSecondsTotal: 3, Operations: 20000}
	return single, base, target
}

func classify(frames []string) string {
	for _, f := range frames {
		switch {
		case strings.Contains(f, "commit"):
			return "commit"
		case strings.Contains(f, "update"):
			return "update"
		case strings.Contains(f, "net_"):
			return "network"
		}
	}
	return "other"
}

func TestSVGGolden(t *testing.T) {
	single, base, target := smallProfiles(t)
	subs := []string{"commit", "update", "network", "other"}
	tests := []struct {
		name string
		diff bool
		opts Options
	}{
		{"single-hot", false, Options{}},
		{"single-hash-inverted", false, Options{Hash: true, Inverted: true, Title: "Icicle <&> test", Subtitle: "sub'title\""}},
		{"single-mem-reverse", false, Options{Palette: PaletteMem, Reverse: true, CountName: "bytes", Width: 800, FrameHeight: 20}},
		{"single-io-minwidth", false, Options{Palette: PaletteIO, MinWidthPercent: 5}},
		{"single-subsystem", false, Options{Palette: PaletteSubsystem, Subsystem: classify, Subsystems: subs, Hash: true}},
		{"diff-subtree-share", true, Options{}},
		{"diff-self-share", true, Options{ColorBy: ColorBySelf}},
		{"diff-negate-mindelta", true, Options{Negate: true, MinDelta: 3}},
		{"diff-per-op", true, Options{Normalize: NormalizePerOp, Subsystem: classify, Subsystems: subs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			var err error
			if tt.diff {
				err = RenderDiff(&out, base, target, tt.opts)
			} else {
				err = Render(&out, single, tt.opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			checkXML(t, out.Bytes())
			checkScript(t, out.Bytes())
			golden(t, tt.name+".svg", out.Bytes())
		})
	}
}

// TestGoldenFilesAreXML checks every golden SVG, including any a person
// added by hand or that -update rewrote, is well-formed XML.
func TestGoldenFilesAreXML(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no golden SVG under testdata/ (go test -update writes them)")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(f), func(t *testing.T) { checkXML(t, data) })
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Check(t, filepath.Join("testdata", name), got, *update, "go test ./flamegraph -run Golden -update (look at the SVG first)")
}

// checkXML fails unless data is one well-formed XML document whose root is
// <svg>, and returns the text of every <title>.
func checkXML(t testing.TB, data []byte) []string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var titles []string
	var stack []string
	var text strings.Builder
	roots := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				roots++
				if e.Name.Local != "svg" {
					t.Fatalf("root element <%s>, want <svg>", e.Name.Local)
				}
			}
			if e.Name.Local == "script" && len(stack) != 1 {
				t.Errorf("a <script> element inside <%s>: only the one script at the top level may exist", stack[len(stack)-1])
			}
			stack = append(stack, e.Name.Local)
			text.Reset()
		case xml.CharData:
			text.Write(e)
		case xml.EndElement:
			if e.Name.Local == "title" {
				titles = append(titles, text.String())
			}
			stack = stack[:len(stack)-1]
		}
	}
	if roots != 1 || len(stack) != 0 {
		t.Fatalf("%d root elements, %d left open; want one closed <svg>", roots, len(stack))
	}
	return titles
}

// checkScript checks the SVG has exactly one script, the one we wrote.
func checkScript(t testing.TB, data []byte) {
	t.Helper()
	if n := bytes.Count(data, []byte("<script")); n != 1 {
		t.Errorf("%d <script in the SVG, want 1 (a frame name got out of its text)", n)
	}
	if strings.Contains(script, "]]>") {
		t.Errorf("script.js contains ]]>, which would end its CDATA section")
	}
}

func TestNamesRenderAsText(t *testing.T) {
	single, base, target := smallProfiles(t)
	var out bytes.Buffer
	if err := Render(&out, single, Options{}); err != nil {
		t.Fatal(err)
	}
	titles := checkXML(t, out.Bytes())
	for _, name := range markup {
		want := Clean(name)
		found := false
		for _, ti := range titles {
			if strings.HasPrefix(ti, want+"\n") {
				found = true
			}
		}
		if !found {
			t.Errorf("no frame title starts with %q: the name did not survive as text", want)
		}
	}
	out.Reset()
	if err := RenderDiff(&out, base, target, Options{BaseLabel: "<b>", TargetLabel: "</title><script>x()</script>"}); err != nil {
		t.Fatal(err)
	}
	checkXML(t, out.Bytes())
	checkScript(t, out.Bytes())
}

func TestDeterministic(t *testing.T) {
	single, base, target := smallProfiles(t)
	render := func() []byte {
		var b bytes.Buffer
		if err := Render(&b, single, Options{}); err != nil {
			t.Fatal(err)
		}
		if err := RenderDiff(&b, base, target, Options{}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	first := render()
	for range 3 {
		if !bytes.Equal(render(), first) {
			t.Fatal("two renders of the same profiles differ")
		}
	}
}

func TestTooltips(t *testing.T) {
	_, base, target := smallProfiles(t)
	g, err := LayoutDiff(base, target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := frameNamed(t, g, "trans_commit_stmt")
	got := g.tooltip(f, f.Name)
	// 30 of 100 base samples, 45 of 102 target samples.
	for _, want := range []string{"trans_commit_stmt\n", "10.11 (base): 30.00%, 30 samples", "11.8 (target): 44.12%, 45 samples", "change: +14.12 pp (+47.1%)"} {
		if !strings.Contains(got, want) {
			t.Errorf("tooltip %q lacks %q", got, want)
		}
	}
	if got := g.tooltip(frameNamed(t, g, "new_path"), "new_path"); !strings.Contains(got, "only in 11.8") || !strings.Contains(got, "(new)") {
		t.Errorf("tooltip of a new frame %q: want (new) and only in 11.8", got)
	}
}

func TestWritePage(t *testing.T) {
	_, base, target := smallProfiles(t)
	g, err := LayoutDiff(base, target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = WritePage(&out, Page{
		Title: "Diff <b>",
		Graph: g,
		Tables: template.HTML(`<h2>Functions</h2>
<table><tr><td class="num">12.00</td></tr></table>
`),
		Notes: []string{"note: <i>"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"<title>Diff &lt;b&gt;</title>", "&lt;/text&gt;&lt;script&gt;window.pwned=1&lt;/script&gt;", "<h2>Functions</h2>\n<table><tr><td class=\"num\">12.00</td></tr></table>\n<p class=\"note\">note: &lt;i&gt;</p>", `<svg version="1.1"`} {
		if !strings.Contains(s, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if n := strings.Count(s, "<script"); n != 1 {
		t.Errorf("page has %d <script, want 1 (the graph's)", n)
	}
	if strings.Contains(s, "<?xml") {
		t.Error("page holds an XML declaration: the SVG must be inlined without it")
	}
	if strings.Count(s, "http://") != strings.Count(s, "http://www.w3.org/2000/svg") || strings.Contains(s, "https://") || strings.Contains(s, "url(http") {
		t.Error("page refers to something on the network (beyond the SVG namespace name)")
	}
}

// TestInvalidUTF8 checks that frame names holding invalid UTF-8 come out of
// the SVG and the HTML page as names.Clean makes them (one U+FFFD per run
// of bad bytes), and that both stay valid UTF-8 and the SVG well-formed.
func TestInvalidUTF8(t *testing.T) {
	bad := "bad\xffname"
	truncated := "trunc\xe2\x82ated" // the first two bytes of "€"
	p := profile(t, "t;"+bad+";leaf 5", "t;"+truncated+" 3", "t;ok 2")
	q := profile(t, "t;"+bad+";leaf 2", "t;"+truncated+" 6", "t;ok 2")
	want := []string{"bad\uFFFDname", "trunc\uFFFDated"}
	tests := []struct {
		name   string
		render func(io.Writer) error
		page   bool
	}{
		{"svg", func(w io.Writer) error { return Render(w, p, Options{}) }, false},
		{"diff svg", func(w io.Writer) error { return RenderDiff(w, p, q, Options{}) }, false},
		{"html page", func(w io.Writer) error {
			g, err := Layout(p, Options{})
			if err != nil {
				return err
			}
			return WritePage(w, Page{Title: "page " + bad, Graph: g, Notes: []string{"note " + bad}})
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := tt.render(&out); err != nil {
				t.Fatal(err)
			}
			if !utf8.Valid(out.Bytes()) {
				t.Fatal("output is not valid UTF-8")
			}
			s := out.String()
			for _, w := range want {
				if !strings.Contains(s, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if strings.Contains(s, "\uFFFD\uFFFD") {
				t.Error("output holds two U+FFFD in a row: a run of bad bytes became more than one")
			}
			if tt.page {
				for _, w := range []string{"<title>page bad\uFFFDname</title>", "note bad\uFFFDname"} {
					if !strings.Contains(s, w) {
						t.Errorf("page lacks %q", w)
					}
				}
				return
			}
			titles := checkXML(t, out.Bytes())
			for _, w := range want {
				found := false
				for _, ti := range titles {
					found = found || strings.HasPrefix(ti, w+"\n")
				}
				if !found {
					t.Errorf("no frame title starts with %q", w+"\n")
				}
			}
		})
	}
}
