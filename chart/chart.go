// Package chart draws the bar charts of the bench report as SVG, with
// gonum/plot: grouped bars (relative QPS per microbenchmark and version,
// the per-op hardware ratios) with an optional reference line, and stacked
// bars whose parts may be negative (the change in CPU per operation of
// each version split by subsystem). The output is deterministic: the same
// Bars give the same bytes, so that a report can be compared with an
// earlier one. It reads nothing and knows nothing of servers or profiles.
package chart

import (
	"bytes"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Bars is one bar chart: a bar for each group (the x axis) and series
// (the legend), side by side in a group, or stacked when Stacked.
type Bars struct {
	Title, YLabel string
	// Groups are the x axis categories, in order.
	Groups []string
	// Series name the bars of a group (the legend), in order.
	Series []string
	// Values[s][g] is series s's value in group g; NaN for none (no bar
	// is drawn and the group is not left out).
	Values [][]float64
	// Ref, when not nil, draws a dashed horizontal line at *Ref (1.0 for
	// ratios).
	Ref *float64
	// Stacked stacks the series of a group into one bar: positive parts
	// upwards from 0, negative parts downwards, in series order.
	Stacked bool
	// Colors, when not nil, is each series' colour (so that a series has
	// the same colour in every chart of a page); else series i is
	// Color(i).
	Colors []color.Color
	// Width and Height are the image's size in points (1/72 inch); 0
	// means 540 by 300.
	Width, Height float64
}

// ErrShape is returned when Values does not have one row per series and
// one value per group.
var ErrShape = errors.New("chart: values do not match series and groups")

// SVG writes the chart as an SVG document to w.
func (b *Bars) SVG(w io.Writer) error {
	doc, err := b.render()
	if err != nil {
		return err
	}
	_, err = w.Write(doc)
	return err
}

// Element writes the chart as an <svg> element to put inside an HTML
// page: the document without its XML declaration and comment.
func (b *Bars) Element(w io.Writer) error {
	doc, err := b.render()
	if err != nil {
		return err
	}
	if i := bytes.Index(doc, []byte("<svg")); i >= 0 {
		doc = doc[i:]
	}
	_, err = w.Write(doc)
	return err
}

// fontFamily is the font the text is laid out with (gonum/plot measures
// with the Liberation fonts it carries), then the fonts with the same
// metrics a browser may have instead, so that names end where they were
// placed.
const fontFamily = "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;"

// render draws the chart and returns its SVG document.
func (b *Bars) render() ([]byte, error) {
	if len(b.Groups) == 0 || len(b.Series) == 0 {
		return nil, fmt.Errorf("chart %q: no groups or no series", b.Title)
	}
	if len(b.Values) != len(b.Series) {
		return nil, fmt.Errorf("chart %q: %w: %d rows for %d series", b.Title, ErrShape, len(b.Values), len(b.Series))
	}
	if b.Colors != nil && len(b.Colors) != len(b.Series) {
		return nil, fmt.Errorf("chart %q: %w: %d colours for %d series", b.Title, ErrShape, len(b.Colors), len(b.Series))
	}
	for s, row := range b.Values {
		if len(row) != len(b.Groups) {
			return nil, fmt.Errorf("chart %q: %w: series %q has %d values for %d groups", b.Title, ErrShape, b.Series[s], len(row), len(b.Groups))
		}
	}
	p := plot.New()
	legend := plot.NewLegend()
	for _, st := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle, &p.X.Tick.Label, &p.Y.Tick.Label, &legend.TextStyle} {
		st.Font.Variant = "Sans"
	}
	width, height := vg.Points(b.Width), vg.Points(b.Height)
	if width <= 0 {
		width = vg.Points(540)
	}
	if height <= 0 {
		height = vg.Points(300)
	}
	// The legend in a column of its own on the right, below the title's
	// height, so that it never covers a bar.
	legend.Top, legend.Left = true, true
	legendWidth := legend.ThumbnailWidth + 3*legend.TextStyle.Font.Size
	for _, name := range b.Series {
		// A quarter more than the name measures in Liberation Sans, for
		// the browser's sans-serif when that font is not installed.
		legendWidth = max(legendWidth, legend.ThumbnailWidth+legend.TextStyle.Width(name)*5/4+legend.TextStyle.Font.Size)
	}
	p.Title.Text = b.Title
	p.Y.Label.Text = b.YLabel
	p.NominalX(b.Groups...)
	// Each group in a cell of width 1 centred on its index, the reference
	// line across all of them.
	p.X.Min, p.X.Max, p.X.Padding = -0.5, float64(len(b.Groups))-0.5, 0
	// A group's share of the axis (60 points for the y axis).
	slot := (width - legendWidth - vg.Points(60)) / vg.Length(len(b.Groups))
	p.Add(plotter.NewGrid())
	if err := b.addBars(p, &legend, slot); err != nil {
		return nil, fmt.Errorf("chart %q: %w", b.Title, err)
	}
	if b.Ref != nil {
		ref := *b.Ref
		line := plotter.NewFunction(func(float64) float64 { return ref })
		line.Color = color.Gray{Y: 64}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		line.Width = vg.Points(1)
		p.Add(line)
		p.Y.Min = math.Min(p.Y.Min, ref)
		p.Y.Max = math.Max(p.Y.Max, ref)
	}
	// Room above the tallest bar, and below the lowest when one is
	// negative.
	pad := 0.06 * (p.Y.Max - p.Y.Min)
	p.Y.Max += pad
	if p.Y.Min < 0 {
		p.Y.Min -= pad
	}
	// Names wider than their group's share of the axis are slanted so
	// that they do not run into each other.
	for _, g := range b.Groups {
		if p.X.Tick.Label.Width(g)*5/4+p.X.Tick.Label.Font.Size/2 > slot {
			p.X.Tick.Label.Rotation = math.Pi / 6
			p.X.Tick.Label.XAlign = draw.XRight
			p.X.Tick.Label.YAlign = draw.YTop
			break
		}
	}
	canvas := vgsvg.New(width, height)
	dc := draw.New(canvas)
	p.Draw(draw.Crop(dc, 0, -legendWidth, 0, 0))
	legend.YOffs = -p.Title.TextStyle.Height(b.Title) - p.Title.Padding
	legend.Draw(draw.Crop(dc, width-legendWidth+legend.TextStyle.Font.Size/2, 0, 0, 0))
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("chart %q: %w", b.Title, err)
	}
	return bytes.ReplaceAll(buf.Bytes(), []byte("font-family:Liberation Sans;"), []byte(fontFamily)), nil
}

// addBars adds one bar chart per series (two when stacked: its positive
// and its negative parts) to p and legend, a group being slot wide.
func (b *Bars) addBars(p *plot.Plot, legend *plot.Legend, slot vg.Length) error {
	n := len(b.Series)
	// Bars fill four fifths of their group's share, side by side or one
	// stack, no wider than 40 points.
	barWidth := min(slot*4/5/vg.Length(n), vg.Points(40))
	if b.Stacked {
		barWidth = min(slot/2, vg.Points(40))
	}
	var pos, neg *plotter.BarChart
	for s, name := range b.Series {
		c := Color(s)
		if b.Colors != nil {
			c = b.Colors[s]
		}
		if !b.Stacked {
			bars, err := newBars(b.Values[s], func(v float64) float64 { return v }, barWidth, c)
			if err != nil {
				return err
			}
			bars.Offset = vg.Length(float64(s)-float64(n-1)/2) * barWidth
			p.Add(bars)
			legend.Add(name, bars)
			continue
		}
		up, err := newBars(b.Values[s], func(v float64) float64 { return math.Max(v, 0) }, barWidth, c)
		if err != nil {
			return err
		}
		down, err := newBars(b.Values[s], func(v float64) float64 { return math.Min(v, 0) }, barWidth, c)
		if err != nil {
			return err
		}
		if pos != nil {
			up.StackOn(pos)
			down.StackOn(neg)
		}
		pos, neg = up, down
		p.Add(up, down)
		legend.Add(name, up)
	}
	return nil
}

// newBars is a bar chart of f of each value (0 for NaN), in colour c,
// without outlines.
func newBars(values []float64, f func(float64) float64, width vg.Length, c color.Color) (*plotter.BarChart, error) {
	vs := make(plotter.Values, len(values))
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		vs[i] = f(v)
	}
	bars, err := plotter.NewBarChart(vs, width)
	if err != nil {
		return nil, err
	}
	bars.Color = c
	bars.LineStyle = draw.LineStyle{Width: 0}
	return bars, nil
}

// palette holds twelve colours told apart easily (Tableau's ten, then two
// darker ones), so that a report with many versions or subsystems does
// not reuse a colour before the thirteenth.
var palette = []color.RGBA{
	{0x4e, 0x79, 0xa7, 0xff}, {0xf2, 0x8e, 0x2b, 0xff}, {0xe1, 0x57, 0x59, 0xff}, {0x76, 0xb7, 0xb2, 0xff},
	{0x59, 0xa1, 0x4f, 0xff}, {0xed, 0xc9, 0x48, 0xff}, {0xb0, 0x7a, 0xa1, 0xff}, {0xff, 0x9d, 0xa7, 0xff},
	{0x9c, 0x75, 0x5f, 0xff}, {0xba, 0xb0, 0xac, 0xff}, {0x1f, 0x3a, 0x5f, 0xff}, {0x6b, 0x2d, 0x0c, 0xff},
}

// Color is the colour of the i-th series (from 0), the palette repeating
// after twelve.
func Color(i int) color.Color { return palette[i%len(palette)] }
