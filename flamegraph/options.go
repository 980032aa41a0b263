package flamegraph

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/flamediff/flamediff/fold"
)

// ParseMinWidth parses a minimum frame width as a user writes it: pixels
// ("0.1"; "0" draws every frame) or a percentage of the total ("0.5%",
// under 100), white space around it ignored. It returns the width as
// Options.MinWidth and Options.MinWidthPercent take it: pixels (-1 for
// "0"), or a percentage with pixels 0. The error quotes s and says what is
// wanted; a command prefixes it with its flag.
func ParseMinWidth(s string) (px, percent float64, err error) {
	t := strings.TrimSpace(s)
	isPct := strings.HasSuffix(t, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
	if err != nil || v < 0 || math.IsNaN(v) || isPct && v >= 100 {
		return 0, 0, fmt.Errorf("%q: want pixels (0.1) or a percentage of the total (0.5%%)", s)
	}
	switch {
	case isPct && v > 0:
		return 0, v, nil
	case v == 0:
		return -1, 0, nil // draw every frame
	}
	return v, 0, nil
}

// AutoNormalize is how a differential graph of base and target compares
// them when the data decides: NormalizePerOp when both profiles have
// per-op figures (fold.Profile.PerOp: run metadata with CPU seconds and
// operations, or operations alone for an off-CPU profile), else
// NormalizeShare.
func AutoNormalize(base, target *fold.Profile) Normalize {
	_, b := base.PerOp()
	_, t := target.PerOp()
	if b && t {
		return NormalizePerOp
	}
	return NormalizeShare
}

// DefaultPalette is the palette a single graph of p gets when
// Options.Palette is empty: PaletteIO, blue and cold, for an off-CPU
// profile (fold.Profile.IsOffCPU), as off-CPU flame graphs are customarily
// drawn so that they are not taken for CPU; PaletteHot otherwise. A command
// passes it, or leaves Palette empty, when the user chose no palette.
func DefaultPalette(p *fold.Profile) Palette {
	if p.IsOffCPU() {
		return PaletteIO
	}
	return PaletteHot
}
