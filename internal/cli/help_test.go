package cli

import (
	"testing"
	"testing/fstest"
)

func TestHelp(t *testing.T) {
	h := Help{Dir: "help", FS: fstest.MapFS{
		"help/map_check.txt": {Data: []byte("Checks a map.\n-- example --\n  flamediff map check m.yaml\n")},
		"help/nomark.txt":    {Data: []byte("no examples\n")},
	}}
	if got := h.Long("map check"); got != "Checks a map." {
		t.Errorf("Long = %q", got)
	}
	if got := h.Example("map check"); got != "  flamediff map check m.yaml" {
		t.Errorf("Example = %q", got)
	}
	for _, name := range []string{"nomark", "absent"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Text(%q) did not panic", name)
				}
			}()
			h.Text(name)
		}()
	}
}
