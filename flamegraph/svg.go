package flamegraph

import (
	"bufio"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/flamediff/flamediff/fold"
)

//go:embed script.js
var script string

//go:embed style.css
var style string

// Layout constants in pixels, as flamegraph.pl's.
const (
	titleSize  = 17.0
	lineHeight = 18.0 // of each header line below the title
	ypadBottom = DefaultFontSize*2 + 10
	thinWidth  = 4.0 // frames narrower than this get no outline
)

// Render lays out and draws the flame graph of p (see Layout, WriteSVG).
func Render(w io.Writer, p *fold.Profile, opts Options) error {
	g, err := Layout(p, opts)
	if err != nil {
		return err
	}
	return g.WriteSVG(w)
}

// RenderDiff lays out and draws the differential flame graph of base and
// target (see LayoutDiff, WriteSVG).
func RenderDiff(w io.Writer, base, target *fold.Profile, opts Options) error {
	g, err := LayoutDiff(base, target, opts)
	if err != nil {
		return err
	}
	return g.WriteSVG(w)
}

// geometry is where things go in the picture.
type geometry struct {
	width, height float64
	fh            float64
	top, bottom   float64 // the frames' band: top of the first row, bottom of the last
	scale         float64 // pixels per value unit
	headLines     []headLine
	detailsY      float64
	controlY      float64
	textDY        float64 // text baseline below a frame's top
	charW         float64
	inverted      bool
	maxDepth      int
	frameRectH    float64
	titleY        float64
}

// headLine is one line under the title: plain text, or a legend of swatches.
type headLine struct {
	text   string
	legend []swatch
}

type swatch struct {
	name  string
	color rgb
	mark  bool // dashed outline (only in one profile)
}

func (g *Graph) geometry() geometry {
	o := g.opts
	ge := geometry{
		width:    float64(o.Width),
		fh:       float64(o.FrameHeight),
		inverted: o.Inverted,
		maxDepth: g.MaxDepth,
		charW:    DefaultFontSize * fontWidth,
		titleY:   24,
		controlY: 24,
	}
	ge.headLines = g.headLines()
	ypad1 := ge.titleY + lineHeight*float64(len(ge.headLines)) + 14
	ge.height = ypad1 + float64(g.MaxDepth+1)*ge.fh + ypadBottom
	ge.top = ypad1
	ge.bottom = ge.height - ypadBottom
	ge.detailsY = ge.height - 17
	ge.scale = (ge.width - 2*xpad) / float64(g.Total)
	ge.frameRectH = ge.fh - 1
	ge.textDY = ge.fh/2 + 4
	return ge
}

// frameY returns the top of a frame row at depth d.
func (ge *geometry) frameY(d int) float64 {
	if ge.inverted {
		return ge.top + float64(d)*ge.fh
	}
	return ge.bottom - float64(d+1)*ge.fh
}

// Title returns the graph's title: Options.Title, else the default, which
// names an off-CPU graph's quantity: "Off-CPU Time Flame Graph", "Context
// Switches Icicle Graph", "Differential Off-CPU Time Flame Graph".
func (g *Graph) Title() string {
	if g.opts.Title != "" {
		return g.opts.Title
	}
	t := "Flame Graph"
	if g.opts.Inverted && !g.Diff {
		t = "Icicle Graph"
	}
	switch g.Quantity {
	case quantityOffCPUTime:
		t = "Off-CPU Time " + t
	case quantitySwitches:
		t = "Context Switches " + t
	}
	if g.Diff {
		t = "Differential " + t
	}
	return t
}

// The quantities of off-CPU profiles, as fold.Profile.Quantity names them.
const (
	quantityOffCPUTime = "off-CPU time"
	quantitySwitches   = "context switches"
)

// perOpName names the per-op figure in the note: "CPU µs/op", "off-CPU
// µs/op" or "context switches per op, cs/op".
func (g *Graph) perOpName() string {
	switch g.Quantity {
	case quantityOffCPUTime:
		return "off-CPU " + g.PerOpUnit
	case quantitySwitches:
		return "context switches per op, " + g.PerOpUnit
	}
	return "CPU " + g.PerOpUnit
}

// counted names what a profile's counts add up, for the note and
// tooltips: "samples", "off-CPU time" or "context switches".
func (g *Graph) counted() string {
	if g.offCPU {
		return g.Quantity
	}
	return "samples"
}

// Note returns the sentence saying how a differential graph compares and
// colours (drawn under the subtitle); "" for a single graph.
func (g *Graph) Note() string {
	if !g.Diff {
		return ""
	}
	o := g.opts
	var b strings.Builder
	if g.Normalize == NormalizePerOp {
		fmt.Fprintf(&b, "normalized per operation: %s (%s %s, %s %s)",
			g.perOpName(), g.BaseLabel, f2(g.BasePerOp), g.TargetLabel, f2(g.TargetPerOp))
	} else {
		fmt.Fprintf(&b, "normalized by share: %% of all %s, changes in percentage points (pp)", g.counted())
	}
	if o.ColorBy == ColorBySelf {
		own := "samples"
		switch g.Quantity {
		case quantityOffCPUTime:
			own = "time"
		case quantitySwitches:
			own = "switches"
		}
		b.WriteString("; colour: change of the frame's own " + own)
	} else {
		b.WriteString("; colour: change of the frame's whole subtree")
	}
	if o.MinDelta > 0 {
		fmt.Fprintf(&b, " (changes under %g %s shown as none)", o.MinDelta, g.deltaUnit())
	}
	widths := g.TargetLabel
	if o.Negate {
		widths = g.BaseLabel
	}
	fmt.Fprintf(&b, "; widths: %s", widths)
	return b.String()
}

// TotalNote returns, for a single off-CPU graph, the sentence giving its
// total and, with run metadata, the total per operation (drawn under the
// subtitle): "10.5: 1,200 µs off the CPU, 12.00 µs/op" or "10.5: 50
// context switches, 0.50 cs/op". It is "" for any other graph.
func (g *Graph) TotalNote() string {
	if g.Diff || !g.offCPU {
		return ""
	}
	var b strings.Builder
	if g.TargetLabel != "" {
		b.WriteString(g.TargetLabel + ": ")
	}
	b.WriteString(thousands(g.TargetTotal))
	if g.Quantity == quantitySwitches {
		b.WriteString(" context switches")
	} else {
		b.WriteString(" µs off the CPU")
	}
	if g.TargetPerOp > 0 {
		fmt.Fprintf(&b, ", %s %s", f2(g.TargetPerOp), g.PerOpUnit)
	}
	return b.String()
}

func (g *Graph) deltaUnit() string {
	if g.Normalize == NormalizePerOp {
		return g.PerOpUnit
	}
	return "pp"
}

func (g *Graph) headLines() []headLine {
	o := g.opts
	var lines []headLine
	sub := o.Subtitle
	if sub == "" && g.Diff {
		sub = g.BaseLabel + " (base) → " + g.TargetLabel + " (target)"
	}
	if sub != "" {
		lines = append(lines, headLine{text: sub})
	}
	if n := g.TotalNote(); n != "" {
		lines = append(lines, headLine{text: n})
	}
	if n := g.CutNote(); n != "" {
		lines = append(lines, headLine{text: n})
	}
	if g.Diff {
		lines = append(lines, headLine{text: g.Note()})
		only := "only in " + g.TargetLabel
		if o.Negate {
			only = "only in " + g.BaseLabel
		}
		lines = append(lines, headLine{legend: []swatch{
			{name: "grew", color: diffColor(1, 1, 0)},
			{name: "shrank", color: diffColor(-1, 1, 0)},
			{name: "unchanged", color: unchangedColor},
			{name: only, color: unchangedColor, mark: true},
		}})
	} else {
		var sw []swatch
		if o.Palette == PaletteSubsystem {
			for _, s := range o.Subsystems {
				sw = append(sw, swatch{name: s, color: g.subsystemColor(s, "")})
			}
		}
		sw = append(sw, g.switchSwatches()...)
		if len(sw) > 0 {
			lines = append(lines, headLine{legend: sw})
		}
	}
	return lines
}

// config is what the script needs to know, written as JSON into it.
type config struct {
	Width     float64 `json:"width"`
	Xpad      float64 `json:"xpad"`
	FH        float64 `json:"fh"`
	Top       float64 `json:"top"`
	Bottom    float64 `json:"bottom"`
	Inverted  bool    `json:"inverted"`
	CharW     float64 `json:"charw"`
	TextDY    float64 `json:"textdy"`
	Total     int64   `json:"total"`
	CountName string  `json:"countname"`
	Thin      float64 `json:"thin"`
}

// WriteSVG draws the graph as one standalone SVG document (UTF-8, valid
// XML, no external references). The script inside gives hover details,
// click to zoom (with a reset control), search by regular expression (the
// Search control or Ctrl-F; it highlights matching frames and shows their
// share of the total, counting nested matches once) and keeps zoom and
// search in the URL fragment (#zoom=N&search=RE, N the frame's index in
// document order). For scripting, the script sets the <svg> element's
// property flamegraph to {zoom(i), unzoom(), search(re), clearSearch(), frames}.
// Only write errors of w are returned.
func (g *Graph) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n")
	g.writeSVG(bw)
	return bw.Flush()
}

// writeSVG writes the <svg> element (no XML declaration), for inline use.
func (g *Graph) writeSVG(bw *bufio.Writer) {
	o := g.opts
	ge := g.geometry()
	var num []byte
	fl := func(x float64, prec int) {
		num = strconv.AppendFloat(num[:0], x, 'f', prec, 64)
		bw.Write(num)
	}
	fmt.Fprintf(bw, `<svg version="1.1" width="%d" height="%s" viewBox="0 0 %d %s" xmlns="http://www.w3.org/2000/svg" class="flamegraph">`+"\n",
		o.Width, ff(ge.height, 0), o.Width, ff(ge.height, 0))
	bw.WriteString("<style>\n" + style + "</style>\n")
	bg := [2]string{"#eeeeee", "#eeeeb0"}
	switch {
	case g.Diff:
		bg = [2]string{"#f8f8f8", "#e4e4e4"}
	case o.Palette == PaletteMem:
		bg = [2]string{"#eeeeee", "#e0ffe0"}
	case o.Palette == PaletteIO:
		bg = [2]string{"#f8f8f8", "#e8e8e8"}
	}
	fmt.Fprintf(bw, `<defs><linearGradient id="fg-background" y1="0" y2="1" x1="0" x2="0"><stop stop-color="%s" offset="5%%"/><stop stop-color="%s" offset="95%%"/></linearGradient></defs>`+"\n", bg[0], bg[1])
	fmt.Fprintf(bw, `<rect x="0" y="0" width="%d" height="%s" fill="url(#fg-background)"/>`+"\n", o.Width, ff(ge.height, 0))
	fmt.Fprintf(bw, `<text class="title" x="%s" y="%s">%s</text>`+"\n", ff(ge.width/2, 1), ff(ge.titleY, 0), esc(g.Title()))
	for i, l := range ge.headLines {
		y := ge.titleY + lineHeight*float64(i+1)
		if l.legend == nil {
			fmt.Fprintf(bw, `<text class="subtitle" x="%s" y="%s">%s</text>`+"\n", ff(ge.width/2, 1), ff(y, 0), esc(l.text))
			continue
		}
		g.writeLegend(bw, l.legend, y, ge.width)
	}
	fmt.Fprintf(bw, `<text class="unzoom hide" x="%s" y="%s">Reset Zoom</text>`+"\n", ff(xpad, 0), ff(ge.controlY, 0))
	fmt.Fprintf(bw, `<text class="search" x="%s" y="%s">Search</text>`+"\n", ff(ge.width-xpad, 0), ff(ge.controlY, 0))
	fmt.Fprintf(bw, `<text class="details" x="%s" y="%s"> </text>`+"\n", ff(xpad, 0), ff(ge.detailsY, 0))
	fmt.Fprintf(bw, `<text class="matched" x="%s" y="%s"> </text>`+"\n", ff(ge.width-xpad, 0), ff(ge.detailsY, 0))
	bw.WriteString(`<g class="frames">` + "\n")
	for i := range g.Frames {
		f := &g.Frames[i]
		x := xpad + float64(f.Start)*ge.scale
		wd := float64(f.Value) * ge.scale
		y := ge.frameY(f.Depth)
		name := Clean(f.Name)
		bw.WriteString(`<g`)
		if f.Diff != nil && f.Diff.OnlyIn() != "" {
			// The dashed outline of a frame in one profile only would
			// cover a narrow frame: "thin" drops it (the script updates
			// it on zoom); the tooltip still says so.
			bw.WriteString(` class="only`)
			if wd < thinWidth {
				bw.WriteString(` thin`)
			}
			bw.WriteString(`"`)
		}
		bw.WriteString(` data-v="`)
		num = strconv.AppendInt(num[:0], f.Value, 10)
		bw.Write(num)
		bw.WriteString(`"><title>`)
		bw.WriteString(escaper.Replace(g.tooltip(f, name)))
		bw.WriteString(`</title><rect x="`)
		fl(x, 2)
		bw.WriteString(`" y="`)
		fl(y, 0)
		bw.WriteString(`" width="`)
		fl(wd, 2)
		bw.WriteString(`" height="`)
		fl(ge.frameRectH, 0)
		bw.WriteString(`" fill="`)
		bw.WriteString(g.color(f).String())
		bw.WriteString(`"/>`)
		if l := label(name, wd, ge.charW); l != "" {
			bw.WriteString(`<text x="`)
			fl(x+3, 2)
			bw.WriteString(`" y="`)
			fl(y+ge.textDY, 0)
			bw.WriteString(`">`)
			bw.WriteString(escaper.Replace(l))
			bw.WriteString(`</text>`)
		}
		bw.WriteString("</g>\n")
	}
	bw.WriteString("</g>\n")
	cfg := config{Width: ge.width, Xpad: xpad, FH: ge.fh, Top: ge.top, Bottom: ge.bottom, Inverted: ge.inverted,
		CharW: ge.charW, TextDY: ge.textDY, Total: g.Total, CountName: o.CountName, Thin: thinWidth}
	js, _ := json.Marshal(cfg) // plain fields: cannot fail; <, > and & come out as \u003c...
	bw.WriteString("<script><![CDATA[\n(function (cfg) {\n")
	bw.WriteString(script)
	bw.WriteString("})(")
	bw.Write(js)
	bw.WriteString(");\n]]></script>\n</svg>\n")
}

// writeLegend draws a centred row of coloured swatches with their names.
func (g *Graph) writeLegend(bw *bufio.Writer, sw []swatch, y, width float64) {
	const box, gap = 12.0, 16.0
	charW := DefaultFontSize * fontWidth
	total := 0.0
	for _, s := range sw {
		total += box + 4 + float64(utf8.RuneCountInString(Clean(s.name)))*charW + gap
	}
	x := math.Max(xpad, (width-total)/2)
	bw.WriteString(`<g class="legend">`)
	for _, s := range sw {
		cls := ""
		if s.mark {
			cls = ` class="only"`
		}
		fmt.Fprintf(bw, `<g%s><rect x="%s" y="%s" width="%s" height="%s" fill="%s"/><text x="%s" y="%s">%s</text></g>`,
			cls, ff(x, 1), ff(y-box+2, 0), ff(box, 0), ff(box, 0), s.color, ff(x+box+4, 1), ff(y, 0), esc(s.name))
		x += box + 4 + float64(utf8.RuneCountInString(Clean(s.name)))*charW + gap
	}
	bw.WriteString("</g>\n")
}

// label returns what fits of name in a frame w pixels wide: all of it, or
// its start and "..", or "" when not even three characters fit. The script
// does the same when zooming.
func label(name string, w, charW float64) string {
	n := int(math.Floor((w - 3) / charW))
	if n < 3 {
		return ""
	}
	if utf8.RuneCountInString(name) <= n {
		return name
	}
	i, k := 0, 0
	for i = range name {
		if k == n-2 {
			break
		}
		k++
	}
	return name[:i] + ".."
}

// tooltip returns the frame's hover text: its name on the first line (the
// script reads it from there), then its figures.
func (g *Graph) tooltip(f *Frame, name string) string {
	o := g.opts
	var b strings.Builder
	b.WriteString(name)
	count := Clean(o.CountName)
	if !g.Diff {
		fmt.Fprintf(&b, "\n%s %s, %s%%", thousands(f.Value), count, f2(pct(f.Value, g.Total)))
		if g.offCPU {
			fmt.Fprintf(&b, " of %s", g.Quantity)
		}
		if g.TargetPerOp > 0 {
			fmt.Fprintf(&b, ", %s %s", f2(pct(f.Value, g.Total)/100*g.TargetPerOp), g.PerOpUnit)
		}
		if f.Depth > 0 && f.Self > 0 {
			fmt.Fprintf(&b, "\nself: %s%%", f2(pct(f.Self, g.Total)))
		}
		if f.Subsystem != "" {
			fmt.Fprintf(&b, "\nsubsystem: %s", Clean(f.Subsystem))
		}
		return b.String()
	}
	d := f.Diff
	bl, tl := Clean(g.BaseLabel), Clean(g.TargetLabel)
	if g.Normalize == NormalizePerOp {
		u := g.PerOpUnit
		fmt.Fprintf(&b, "\n%s (base): %s %s, %s%%, %s %s", bl, f2(d.BaseFig), u, f2(pct(d.Base, g.BaseTotal)), thousands(d.Base), count)
		fmt.Fprintf(&b, "\n%s (target): %s %s, %s%%, %s %s", tl, f2(d.TargetFig), u, f2(pct(d.Target, g.TargetTotal)), thousands(d.Target), count)
	} else {
		fmt.Fprintf(&b, "\n%s (base): %s%%, %s %s", bl, f2(d.BaseFig), thousands(d.Base), count)
		fmt.Fprintf(&b, "\n%s (target): %s%%, %s %s", tl, f2(d.TargetFig), thousands(d.Target), count)
	}
	u := g.deltaUnit()
	fmt.Fprintf(&b, "\nchange: %s %s (%s)", sf2(d.TargetFig-d.BaseFig), u, relative(d.BaseFig, d.TargetFig))
	if f.Depth > 0 {
		fmt.Fprintf(&b, "\nself: %s → %s %s (%s %s)", f2(d.BaseSelfFig), f2(d.TargetSelfFig), u, sf2(d.TargetSelfFig-d.BaseSelfFig), u)
	}
	switch d.OnlyIn() {
	case "target":
		fmt.Fprintf(&b, "\nonly in %s", tl)
	case "base":
		fmt.Fprintf(&b, "\nonly in %s", bl)
	}
	if f.Subsystem != "" {
		fmt.Fprintf(&b, "\nsubsystem: %s", Clean(f.Subsystem))
	}
	return b.String()
}

// relative formats the relative change from b to t: "+21.6%", "new", "gone".
func relative(b, t float64) string {
	switch {
	case b == 0 && t == 0:
		return "none"
	case b == 0:
		return "new"
	case t == 0:
		return "gone"
	}
	r := ff((t/b-1)*100, 1)
	if r == "-0.0" {
		r = "0.0"
	}
	if r[0] != '-' {
		r = "+" + r
	}
	return r + "%"
}

func pct(v, total int64) float64 {
	if total == 0 {
		return 0
	}
	return float64(v) * 100 / float64(total)
}

// ff formats x with prec decimals.
func ff(x float64, prec int) string { return strconv.FormatFloat(x, 'f', prec, 64) }

func f2(x float64) string { return ff(x, 2) }

// sf2 formats x with a sign and two decimals; -0.00 prints as +0.00.
func sf2(x float64) string {
	s := ff(x, 2)
	if s == "-0.00" {
		s = "0.00"
	}
	if s[0] != '-' {
		s = "+" + s
	}
	return s
}

// thousands formats n with commas: 1,234,567.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
