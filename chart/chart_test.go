package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden SVGs under testdata/")

func ratio(v float64) *float64 { return &v }

// The charts the bench report draws, in shape: grouped ratios with the
// line at 1.0 (one version without a value for one workload), and stacked
// changes per subsystem with negative parts.
func grouped() Bars {
	return Bars{Title: "rQPS", YLabel: "QPS / QPS of 10.11",
		Groups: []string{"point-query", "update-nonindex", "random-points-100", "scan"},
		Series: []string{"10.5", "10.11", "11.8", "9.7"},
		Values: [][]float64{{0.9, 0.7, 1.1, 0.95}, {1, 1, 1, 1}, {0.83, math.NaN(), 1.2, 0.5}, {0.65, 0.73, 0.9, 1.3}},
		Ref:    ratio(1)}
}

func stacked() Bars {
	return Bars{Title: "update-nonindex: Δcpu/o by subsystem", YLabel: "µs/op", Stacked: true,
		Groups: []string{"10.5", "11.8", "9.7"},
		Series: []string{"commit", "innodb", "update", "other"},
		Values: [][]float64{{5, 1, 28}, {170, 10, 9}, {-3, 2, 10}, {4, -6, 9}}}
}

func render(t *testing.T, b Bars, element bool) []byte {
	t.Helper()
	var buf bytes.Buffer
	write := b.SVG
	if element {
		write = b.Element
	}
	if err := write(&buf); err != nil {
		t.Fatalf("%s: %v", b.Title, err)
	}
	return buf.Bytes()
}

// texts returns the SVG's root element name and its text nodes, failing
// the test when the document is not well-formed XML.
func texts(t *testing.T, doc []byte) (string, []string) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var root string
	var out []string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, doc)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			if s := strings.TrimSpace(string(tok)); s != "" {
				out = append(out, s)
			}
		}
	}
	return root, out
}

func TestSVG(t *testing.T) {
	for _, tc := range []struct {
		name string
		bars Bars
	}{{"grouped", grouped()}, {"stacked", stacked()}} {
		t.Run(tc.name, func(t *testing.T) {
			doc := render(t, tc.bars, false)
			if !bytes.HasPrefix(doc, []byte("<?xml")) {
				t.Errorf("SVG does not start with an XML declaration: %.40q", doc)
			}
			root, words := texts(t, doc)
			if root != "svg" {
				t.Errorf("root element %q, want svg", root)
			}
			// Every name a reader needs is written as text.
			all := strings.Join(words, "\n")
			for _, want := range append(append([]string{tc.bars.Title, tc.bars.YLabel}, tc.bars.Groups...), tc.bars.Series...) {
				if !strings.Contains(all, want) {
					t.Errorf("no text %q in the chart; texts: %q", want, words)
				}
			}
			// The reference line is dashed; nothing else is.
			if dashed := bytes.Contains(doc, []byte("stroke-dasharray")); dashed != (tc.bars.Ref != nil) {
				t.Errorf("dashed line drawn: %v, want %v", dashed, tc.bars.Ref != nil)
			}
			if !bytes.Contains(doc, []byte(fontFamily)) || bytes.Contains(doc, []byte("font-family:Liberation Serif")) {
				t.Errorf("text is not in %s", fontFamily)
			}
			// The same chart gives the same bytes.
			if again := render(t, tc.bars, false); !bytes.Equal(doc, again) {
				t.Errorf("two renderings of the same chart differ")
			}
			golden.Check(t, filepath.Join("testdata", tc.name+".svg"), doc, *update, "go test ./chart -update")

			elem := render(t, tc.bars, true)
			if !bytes.HasPrefix(elem, []byte("<svg")) || !bytes.HasSuffix(doc, elem) {
				t.Errorf("Element is not the document's <svg> element: %.60q", elem)
			}
			if root, _ := texts(t, elem); root != "svg" {
				t.Errorf("element's root %q, want svg", root)
			}
		})
	}
}

// TestStackedNegative checks that negative parts go below zero: the y
// axis reaches a tick below 0 when parts sum to -100 (-3 and -97), and
// none when the same parts are positive.
func TestStackedNegative(t *testing.T) {
	b := stacked()
	b.Values[3][0] = -97
	_, words := texts(t, render(t, b, false))
	if !hasNegativeTick(words) {
		t.Errorf("stacked chart with negative parts has no tick below 0; texts %q", words)
	}
	for s := range b.Values {
		for g := range b.Values[s] {
			b.Values[s][g] = math.Abs(b.Values[s][g])
		}
	}
	_, words = texts(t, render(t, b, false))
	if hasNegativeTick(words) {
		t.Errorf("stacked chart without negative parts has a tick below 0; texts %q", words)
	}
}

func hasNegativeTick(words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "−") {
			return true
		}
	}
	return false
}

// TestNaNDrawsNoBar checks that a missing value leaves its group in place
// and draws nothing taller than zero for it: the chart with a NaN is the
// chart with a 0 there.
func TestNaNDrawsNoBar(t *testing.T) {
	b := grouped()
	zero := grouped()
	zero.Values[2][1] = 0
	if !bytes.Equal(render(t, b, false), render(t, zero, false)) {
		t.Errorf("a NaN value is not drawn as no bar")
	}
	nonzero := grouped()
	nonzero.Values[2][1] = 0.5
	if bytes.Equal(render(t, b, false), render(t, nonzero, false)) {
		t.Errorf("the chart does not depend on the value (0.5 draws as NaN)")
	}
}

// TestColors checks that Colors gives each series its colour: the chart
// with the default colours given is the default chart, and with series 0
// and 1 given others their fills are those.
func TestColors(t *testing.T) {
	b := grouped()
	b.Colors = []color.Color{Color(0), Color(1), Color(2), Color(3)}
	plain := grouped()
	if !bytes.Equal(render(t, b, false), render(t, plain, false)) {
		t.Errorf("Colors with the default colours draws another chart")
	}
	b.Colors[0], b.Colors[1] = Color(5), Color(0)
	doc := string(render(t, b, false))
	for _, c := range []color.Color{Color(5), Color(0)} {
		r, g, bl, _ := c.RGBA()
		hex := fmt.Sprintf("fill:#%02X%02X%02X", r>>8, g>>8, bl>>8)
		if !strings.Contains(doc, hex) {
			t.Errorf("no %s in the chart with Colors %v", hex, b.Colors[:2])
		}
	}
	if doc == string(render(t, plain, false)) {
		t.Errorf("Colors has no effect")
	}
}

func TestShapeErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Bars)
		shape bool
	}{
		{"fewer rows than series", func(b *Bars) { b.Values = b.Values[:2] }, true},
		{"short row", func(b *Bars) { b.Values[1] = b.Values[1][:3] }, true},
		{"colours for fewer series", func(b *Bars) { b.Colors = []color.Color{Color(0)} }, true},
		{"no groups", func(b *Bars) { b.Groups = nil }, false},
		{"no series", func(b *Bars) { b.Series = nil; b.Values = nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := grouped()
			tc.edit(&b)
			var buf bytes.Buffer
			err := b.SVG(&buf)
			if err == nil {
				t.Fatalf("SVG() = nil error, want one")
			}
			if errors.Is(err, ErrShape) != tc.shape {
				t.Errorf("SVG() = %v, ErrShape %v, want %v", err, errors.Is(err, ErrShape), tc.shape)
			}
			if !strings.Contains(err.Error(), b.Title) {
				t.Errorf("error %q does not name the chart %q", err, b.Title)
			}
			if buf.Len() != 0 {
				t.Errorf("SVG wrote %d bytes before failing", buf.Len())
			}
		})
	}
}
