package capture

import (
	"strings"
	"testing"
)

func TestParseCallGraph(t *testing.T) {
	tests := []struct {
		in      string
		want    CallGraph
		perfArg string // String(): what perf record gets
		wantErr string
	}{
		{in: "", want: CallGraph{Method: "fp"}, perfArg: "fp"},
		{in: "fp", want: CallGraph{Method: "fp"}, perfArg: "fp"},
		{in: "dwarf", want: CallGraph{Method: "dwarf", StackBytes: 32768}, perfArg: "dwarf,32768"},
		{in: "dwarf,4096", want: CallGraph{Method: "dwarf", StackBytes: 4096}, perfArg: "dwarf,4096"},
		{in: "dwarf,8", want: CallGraph{Method: "dwarf", StackBytes: 8}, perfArg: "dwarf,8"},
		{in: "dwarf,65528", want: CallGraph{Method: "dwarf", StackBytes: 65528}, perfArg: "dwarf,65528"},
		{in: "lbr", wantErr: `"lbr": want fp or dwarf`},
		{in: "dwarff", wantErr: `"dwarff": want fp or dwarf`},
		{in: "DWARF", wantErr: `"DWARF": want fp or dwarf`},
		{in: ",4096", wantErr: `",4096": want fp or dwarf`},
		{in: "fp,32", wantErr: `"fp,32": fp takes no size`},
		{in: "dwarf,", wantErr: `"dwarf,": stack size "" is not a number of bytes`},
		{in: "dwarf,32k", wantErr: `stack size "32k" is not a number of bytes`},
		{in: "dwarf,0x8000", wantErr: `stack size "0x8000" is not a number of bytes`},
		{in: "dwarf,4096,1", wantErr: `stack size "4096,1" is not a number of bytes`},
		{in: "dwarf,0", wantErr: `"dwarf,0": stack size 0: want 8 to 65528 bytes`},
		{in: "dwarf,-8", wantErr: "stack size -8: want 8 to 65528 bytes"},
		{in: "dwarf,65536", wantErr: "stack size 65536: want 8 to 65528 bytes"},
		{in: "dwarf,65529", wantErr: "stack size 65529: want 8 to 65528 bytes"},
		{in: "dwarf,4100", wantErr: `"dwarf,4100": stack size 4100 is not a multiple of 8 bytes (perf's unit): use 4104`},
		{in: "dwarf,65527", wantErr: "use 65528"},
	}
	for _, tt := range tests {
		got, err := ParseCallGraph(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseCallGraph(%q) = %+v, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseCallGraph(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			continue
		}
		if s := got.String(); s != tt.perfArg {
			t.Errorf("ParseCallGraph(%q).String() = %q, want %q", tt.in, s, tt.perfArg)
		}
	}
}

// FuzzParseCallGraph: any setting either fails or parses to a method perf
// takes with a size within perf's limits, and its String parses back to
// itself.
func FuzzParseCallGraph(f *testing.F) {
	for _, s := range []string{"", "fp", "dwarf", "dwarf,4096", "dwarf,65529", "fp,32", "dwarf,+8", "dwarf,00016"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := ParseCallGraph(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), `"`) {
				t.Fatalf("ParseCallGraph(%q): error %q does not start with the quoted setting", s, err)
			}
			return
		}
		switch {
		case g.Method == CallGraphFP && g.StackBytes == 0:
		case g.Method == CallGraphDwarf && g.StackBytes >= 8 && g.StackBytes <= MaxDwarfStackBytes && g.StackBytes%8 == 0:
		default:
			t.Fatalf("ParseCallGraph(%q) = %+v: not a setting perf takes", s, g)
		}
		if back, err := ParseCallGraph(g.String()); err != nil || back != g {
			t.Fatalf("ParseCallGraph(%q) = %+v, but its String %q parses to %+v, %v", s, g, g.String(), back, err)
		}
	})
}
