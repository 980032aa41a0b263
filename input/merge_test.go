package input

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flamediff/flamediff/fold"
)

func TestMerge(t *testing.T) {
	files := map[string]string{"a": "main;f 2\n", "b": "main;f 3\nmain;g 1\n"}
	load := func(arg string, _ fold.ParseOptions) (*fold.Profile, error) {
		return fold.ParseFolded(strings.NewReader(files[arg]), true)
	}
	var seen []string
	p, err := Merge(context.Background(), load, []string{"a", "b"}, fold.ParseOptions{}, func(arg string, _ *fold.Profile) { seen = append(seen, arg) })
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := fold.WriteFolded(&b, p); err != nil {
		t.Fatal(err)
	}
	if want := "main;f 5\nmain;g 1\n"; b.String() != want {
		t.Errorf("merged %q, want %q", b.String(), want)
	}
	if strings.Join(seen, ",") != "a,b" {
		t.Errorf("each saw %v, want [a b]", seen)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Merge(ctx, load, []string{"a"}, fold.ParseOptions{}, nil); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "before a") {
		t.Errorf("cancelled: %v, want context.Canceled naming a", err)
	}
}
