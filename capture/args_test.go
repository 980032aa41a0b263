//go:build linux

package capture

import (
	"strings"
	"testing"
)

func TestSystemWideArgs(t *testing.T) {
	o := Options{FrequencyHz: 99, CallGraph: "fp", Event: "cpu-clock", SystemWide: true}
	rec := strings.Join(recordArgs(o, 42, "p.data"), " ")
	if !strings.Contains(rec, " -a ") || strings.Contains(rec, "-p 42") {
		t.Errorf("recordArgs(system-wide) = %q, want -a and no -p", rec)
	}
	scr := strings.Join(scriptArgs(o, 42, "p.data"), " ")
	if !strings.HasSuffix(scr, "--pid 42") {
		t.Errorf("scriptArgs(system-wide) = %q, want it to keep pid 42 only", scr)
	}
	o.SystemWide = false
	if scr := strings.Join(scriptArgs(o, 42, "p.data"), " "); strings.Contains(scr, "--pid") {
		t.Errorf("scriptArgs(per-thread) = %q, want no --pid filter", scr)
	}
	if rec := strings.Join(recordArgs(o, 42, "p.data"), " "); !strings.Contains(rec, "-p 42") {
		t.Errorf("recordArgs(per-thread) = %q, want -p 42", rec)
	}
}
