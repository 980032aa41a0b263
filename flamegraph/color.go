package flamegraph

import (
	"hash/fnv"
	"math"
	"strconv"

	"github.com/flamediff/flamediff/fold"
)

// rgb is a colour.
type rgb struct{ r, g, b uint8 }

func (c rgb) String() string {
	return "rgb(" + strconv.Itoa(int(c.r)) + "," + strconv.Itoa(int(c.g)) + "," + strconv.Itoa(int(c.b)) + ")"
}

// unit returns three numbers in [0, 1] from the FNV-1a hash of s.
func unit(s string) (float64, float64, float64) {
	h := fnv.New64a()
	h.Write([]byte(s))
	x := h.Sum64()
	f := func(v uint64) float64 { return float64(v&0xffff) / 0xffff }
	return f(x), f(x >> 16), f(x >> 32)
}

// seed is what a frame's colour is drawn from: its name with Options.Hash, so
// that every frame of a name has the same colour; otherwise the name and
// position, so that neighbours differ as in flamegraph.pl's random colours,
// but the same input still gives the same picture.
func (g *Graph) seed(f *Frame) string {
	if g.opts.Hash {
		return f.Name
	}
	return f.Name + "\x00" + strconv.Itoa(f.Depth) + "\x00" + strconv.FormatInt(f.Start, 10)
}

func scale8(base, span float64, v float64) uint8 {
	return uint8(base + math.Floor(span*v))
}

// paletteColor is flamegraph.pl's hot, mem and io palettes.
func paletteColor(p Palette, seed string) rgb {
	v1, v2, v3 := unit(seed)
	switch p {
	case PaletteMem:
		return rgb{0, scale8(190, 50, v2), scale8(0, 210, v1)}
	case PaletteIO:
		r := scale8(80, 60, v1)
		return rgb{r, r, scale8(190, 55, v1)}
	default:
		return rgb{scale8(205, 50, v3), scale8(0, 230, v1), scale8(0, 55, v2)}
	}
}

// subsystemHues are the subsystem palette's colours, in legend order; they
// repeat, lighter, past the tenth subsystem.
var subsystemHues = []rgb{
	{78, 121, 167}, {242, 142, 43}, {89, 161, 79}, {225, 87, 89}, {176, 122, 161},
	{237, 201, 72}, {118, 183, 178}, {255, 157, 167}, {156, 117, 95}, {140, 209, 125},
}

// otherColor is the colour of frames in no subsystem.
var otherColor = rgb{200, 200, 200}

// subsystemColor returns the colour of subsystem sub, varied a little by
// seed so that neighbouring frames stay apart.
func (g *Graph) subsystemColor(sub, seed string) rgb {
	base := otherColor
	for i, s := range g.opts.Subsystems {
		if s == sub && s != otherSubsystem {
			base = subsystemHues[i%len(subsystemHues)]
			if i >= len(subsystemHues) {
				base = lighten(base, 0.35)
			}
			break
		}
	}
	v, _, _ := unit(seed)
	return lighten(base, 0.25*v)
}

func lighten(c rgb, t float64) rgb {
	f := func(x uint8) uint8 { return uint8(math.Round(float64(x) + (255-float64(x))*t)) }
	return rgb{f(c.r), f(c.g), f(c.b)}
}

// Colours of the differential graph.
var (
	unchangedColor = rgb{245, 245, 245}
)

// diffColor returns red for growth, blue for shrinkage, saturated by
// |delta| / max; changes under min are unchanged.
func diffColor(delta, maxDelta, minDelta float64) rgb {
	a := math.Abs(delta)
	if a == 0 || a < minDelta || maxDelta == 0 {
		return unchangedColor
	}
	s := math.Min(a/maxDelta, 1)
	// From a faint tint (s near 0) to full colour: the light channels go
	// from 232 down to 40.
	light := uint8(math.Round(232 - 192*s))
	if delta > 0 {
		return rgb{255, light, light}
	}
	return rgb{light, light, 255}
}

// Colours of the leaves of a single off-CPU graph that say how the thread
// left the CPU: teal when it blocked (fold.OffCPUVoluntary), amber when it
// was preempted (fold.OffCPUInvoluntary). Both stand apart from the blues
// of PaletteIO and from the differential graph's red and blue.
var (
	voluntaryColor   = rgb{0, 150, 136}
	involuntaryColor = rgb{255, 179, 0}
)

// switchColor returns the colour of a frame that names the kind of a
// context switch in a single off-CPU graph, and whether it is one.
func (g *Graph) switchColor(name string) (rgb, bool) {
	if g.Diff || !g.offCPU {
		return rgb{}, false
	}
	switch name {
	case fold.OffCPUVoluntary:
		return voluntaryColor, true
	case fold.OffCPUInvoluntary:
		return involuntaryColor, true
	}
	return rgb{}, false
}

// switchSwatches returns the legend of the switch kinds drawn in a single
// off-CPU graph: one swatch for each kind that has a frame.
func (g *Graph) switchSwatches() []swatch {
	if g.Diff || !g.offCPU {
		return nil
	}
	var vol, invol bool
	for i := range g.Frames {
		switch g.Frames[i].Name {
		case fold.OffCPUVoluntary:
			vol = true
		case fold.OffCPUInvoluntary:
			invol = true
		}
	}
	var sw []swatch
	if vol {
		sw = append(sw, swatch{name: fold.OffCPUVoluntary + " blocked", color: voluntaryColor})
	}
	if invol {
		sw = append(sw, swatch{name: fold.OffCPUInvoluntary + " preempted", color: involuntaryColor})
	}
	return sw
}

// color returns the fill of frame f.
func (g *Graph) color(f *Frame) rgb {
	if g.Diff {
		return diffColor(f.Diff.Delta, g.MaxDelta, g.opts.MinDelta)
	}
	if c, ok := g.switchColor(f.Name); ok {
		return c
	}
	seed := g.seed(f)
	if g.opts.Palette == PaletteSubsystem {
		return g.subsystemColor(f.Subsystem, seed)
	}
	return paletteColor(g.opts.Palette, seed)
}
