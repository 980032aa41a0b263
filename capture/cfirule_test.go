//go:build linux

package capture

import (
	"testing"

	"github.com/flamediff/flamediff/bpf"
	"github.com/flamediff/flamediff/capture/unwind"
)

// TestCFIRule checks how CFI rows become the off-CPU walk's rules: the
// rows a glibc function's body and prologue give, a frame-pointer
// function, the thread's root, and rows the walk cannot follow.
func TestCFIRule(t *testing.T) {
	ra := unwind.Rule{Kind: unwind.Offset, Offset: -8}
	cfa := func(reg uint64, off int64) unwind.Rule {
		return unwind.Rule{Kind: unwind.RegOffset, Reg: reg, Offset: off}
	}
	unsupported := bpf.CFIRule{CFA: bpf.CFAUnsupported}
	for _, tc := range []struct {
		name string
		row  unwind.Row
		want bpf.CFIRule
	}{
		{"entry: CFA rsp+8, rbp unchanged", unwind.Row{CFA: cfa(unwind.RegSP, 8), RA: ra, BP: unwind.Rule{Kind: unwind.SameValue}},
			bpf.CFIRule{CFA: bpf.CFASP, CFAOffset: 8}},
		{"body: CFA rsp+48, rbp pushed", unwind.Row{CFA: cfa(unwind.RegSP, 48), RA: ra, BP: unwind.Rule{Kind: unwind.Offset, Offset: -16}},
			bpf.CFIRule{CFA: bpf.CFASP, CFAOffset: 48, BPSaved: true, BPOffset: -16}},
		{"frame pointer: CFA rbp+16", unwind.Row{CFA: cfa(unwind.RegBP, 16), RA: ra, BP: unwind.Rule{Kind: unwind.Offset, Offset: -16}},
			bpf.CFIRule{CFA: bpf.CFABP, CFAOffset: 16, BPSaved: true, BPOffset: -16}},
		{"rbp not said", unwind.Row{CFA: cfa(unwind.RegSP, 16), RA: ra},
			bpf.CFIRule{CFA: bpf.CFASP, CFAOffset: 16}},
		{"root: return address undefined", unwind.Row{CFA: cfa(unwind.RegSP, 8), RA: unwind.Rule{Kind: unwind.Undefined}},
			bpf.CFIRule{CFA: bpf.CFARoot}},
		{"CFA by expression (PLT)", unwind.Row{CFA: unwind.Rule{Kind: unwind.Expression, Expr: []byte{0x77, 8}}, RA: ra}, unsupported},
		{"CFA in another register", unwind.Row{CFA: cfa(3, 8), RA: ra}, unsupported},
		{"signal frame", unwind.Row{Signal: true, CFA: cfa(unwind.RegSP, 8), RA: ra}, unsupported},
		{"return address elsewhere", unwind.Row{CFA: cfa(unwind.RegSP, 16), RA: unwind.Rule{Kind: unwind.Offset, Offset: -16}}, unsupported},
		{"rbp in a register", unwind.Row{CFA: cfa(unwind.RegSP, 16), RA: ra, BP: unwind.Rule{Kind: unwind.Register, Reg: 3}}, unsupported},
		{"CFA offset beyond 32 bits", unwind.Row{CFA: cfa(unwind.RegSP, 1<<40), RA: ra}, unsupported},
	} {
		if got := cfiRule(tc.row); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
