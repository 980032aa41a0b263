package diff

import (
	"errors"
	"slices"

	"github.com/flamediff/flamediff/fold"
)

// Off-CPU profiles (fold.Profile.IsOffCPU) end each stack with a leaf
// frame that says the kind of switch, fold.OffCPUVoluntary or
// fold.OffCPUInvoluntary. Shares, subsystems and breakdowns leave that
// frame out (a function's self value is the time, or the switches, it
// left the CPU from) and count the two kinds apart: the Voluntary and
// Involuntary fields of FunctionShare, SubsystemShare and RunFigures.

// ErrMixed is wrapped by Compute's error when the profiles do not measure
// the same quantity (fold.Profile.Quantity): CPU beside off-CPU time, or
// off-CPU time beside switches.
var ErrMixed = errors.New("profiles of different quantities")

// switchKind is the kind of an off-CPU stack, from its leaf.
type switchKind int

const (
	kindNone switchKind = iota
	kindVoluntary
	kindInvoluntary
)

// stackKind returns the frames of a stack without its switch-kind leaf,
// and the kind; for a profile that is not off-CPU, or a stack without
// such a leaf, the frames as they are and kindNone. Frames of that name
// elsewhere than the leaf (never written by the sampler, but possible in
// folded text) are left out too, but for the first (the thread), as
// WithoutSwitchKind leaves them out: no function is named by the kind.
func stackKind(offCPU bool, frames []string) ([]string, switchKind) {
	if !offCPU || len(frames) == 0 {
		return frames, kindNone
	}
	kind := kindNone
	switch frames[len(frames)-1] {
	case fold.OffCPUVoluntary:
		frames, kind = frames[:len(frames)-1], kindVoluntary
	case fold.OffCPUInvoluntary:
		frames, kind = frames[:len(frames)-1], kindInvoluntary
	}
	for i := 1; i < len(frames); i++ {
		if isKindFrame(frames[i]) {
			out := slices.Clone(frames[:i])
			for _, f := range frames[i+1:] {
				if !isKindFrame(f) {
					out = append(out, f)
				}
			}
			return out, kind
		}
	}
	return frames, kind
}

// isKindFrame reports whether name is a switch-kind frame.
func isKindFrame(name string) bool {
	return name == fold.OffCPUVoluntary || name == fold.OffCPUInvoluntary
}

// kinds adds v to the voluntary or involuntary count of kind k.
func kinds(k switchKind, v int64, vol, invol *int64) {
	switch k {
	case kindVoluntary:
		*vol += v
	case kindInvoluntary:
		*invol += v
	}
}

// WithoutSwitchKind returns an off-CPU profile without the leaf frames
// that say the kind of switch, stacks that become the same merged; any
// other profile is returned as it is.
func WithoutSwitchKind(p *fold.Profile) *fold.Profile {
	if !p.IsOffCPU() {
		return p
	}
	return p.MapFrames(func(i int, name string) (string, bool) {
		return name, i == 0 || !isKindFrame(name)
	})
}

// perOp is what the whole profile amounts to per operation
// (fold.Profile.PerOp: CPU µs, off-CPU µs or switches), 0 when unknown.
func perOp(p *fold.Profile) float64 {
	v, _ := p.PerOp()
	return v
}
