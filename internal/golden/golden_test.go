package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records failures instead of stopping.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.msgs = append(r.msgs, "E:"+sprintf(format, a...))
}
func (r *recorder) Fatalf(format string, a ...any) {
	r.msgs = append(r.msgs, "F:"+sprintf(format, a...))
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "x.golden")
	r := &recorder{TB: t}
	Check(r, path, []byte("a\nb\n"), false, "HINT")
	if len(r.msgs) != 1 || !strings.HasPrefix(r.msgs[0], "F:") || !strings.Contains(r.msgs[0], "HINT") {
		t.Errorf("missing golden file: %q, want one fatal naming the hint", r.msgs)
	}
	r.msgs = nil
	Check(r, path, []byte("a\nb\n"), true, "HINT")
	if data, err := os.ReadFile(path); err != nil || string(data) != "a\nb\n" || len(r.msgs) != 0 {
		t.Errorf("update: file %q (%v), messages %q", data, err, r.msgs)
	}
	Check(r, path, []byte("a\nb\n"), false, "HINT")
	if len(r.msgs) != 0 {
		t.Errorf("same bytes: %q, want no message", r.msgs)
	}
	Check(r, path, []byte("a\nc\n"), false, "HINT")
	if len(r.msgs) != 1 || !strings.Contains(r.msgs[0], "line 2") || !strings.Contains(r.msgs[0], "got: c") {
		t.Errorf("a changed line: %q, want its number and text", r.msgs)
	}
	r.msgs = nil
	Check(r, path, []byte("a\nb"), false, "HINT")
	if len(r.msgs) != 1 || !strings.Contains(r.msgs[0], "2 lines, want 3") {
		t.Errorf("a lost newline: %q, want the line counts", r.msgs)
	}
}
func sprintf(f string, a ...any) string { return fmt.Sprintf(f, a...) }
