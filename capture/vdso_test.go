//go:build linux

package capture

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestVDSORange(t *testing.T) {
	for _, tt := range []struct {
		maps       string
		start, end uint64
		err        string
	}{
		{"7ffd1c5f2000-7ffd1c5f4000 r-xp 00000000 00:00 0                          [vdso]\n", 0x7ffd1c5f2000, 0x7ffd1c5f4000, ""},
		{"55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234 /usr/bin/x\n7ffd1c5ee000-7ffd1c5f2000 r--p 00000000 00:00 0 [vvar]\n7ffd1c5f2000-7ffd1c5f4000 r-xp 00000000 00:00 0 [vdso]\n", 0x7ffd1c5f2000, 0x7ffd1c5f4000, ""},
		{"55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234 /usr/bin/x\n", 0, 0, "no [vdso] mapping"},
		{"7ffd1c5f4000-7ffd1c5f2000 r-xp 00000000 00:00 0 [vdso]\n", 0, 0, "bad range"},
	} {
		start, end, err := vdsoRange(strings.NewReader(tt.maps))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want %q", tt.maps, err, tt.err)
			}
			continue
		}
		if err != nil || start != tt.start || end != tt.end {
			t.Errorf("%q: %#x-%#x, %v; want %#x-%#x", tt.maps, start, end, err, tt.start, tt.end)
		}
	}
}

// elfBuildID against readelf -n, on a program built here with a build id
// and on this process's vDSO (written out as cacheVDSO writes it).
func TestELFBuildID(t *testing.T) {
	readelf, err := exec.LookPath("readelf")
	if err != nil {
		t.Skip("no readelf (binutils)")
	}
	want := func(path string) string {
		out, err := exec.Command(readelf, "-n", path).CombinedOutput()
		if err != nil {
			t.Fatalf("readelf -n %s: %v: %s", path, err, out)
		}
		m := regexp.MustCompile(`Build ID: ([0-9a-f]+)`).FindSubmatch(out)
		if m == nil {
			t.Fatalf("readelf -n %s: no build id in\n%s", path, out)
		}
		return string(m[1])
	}
	dir := t.TempDir()
	if _, err := exec.LookPath("gcc"); err == nil {
		writeSources(t, dir, map[string]string{"b.c": "int main(void) { return 0; }\n"})
		gccRun(t, dir, []string{"-Wl,--build-id=sha1", "-o", "b", "b.c"})
		img, err := os.ReadFile(filepath.Join(dir, "b"))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := elfBuildID(img); err != nil || got != want(filepath.Join(dir, "b")) {
			t.Errorf("program: build id %q, %v; want %q", got, err, want(filepath.Join(dir, "b")))
		}
	}
	cache := t.TempDir()
	if err := cacheVDSO(cache); err != nil {
		t.Fatal(err)
	}
	objs, _ := filepath.Glob(filepath.Join(cache, "[[]vdso]", "*", "vdso"))
	if len(objs) != 1 {
		t.Fatalf("cacheVDSO wrote %q, want one [vdso]/ID/vdso", objs)
	}
	id := filepath.Base(filepath.Dir(objs[0]))
	if w := want(objs[0]); id != w {
		t.Errorf("vdso build id %s, readelf says %s", id, w)
	}
	if target, err := filepath.EvalSymlinks(filepath.Join(cache, ".build-id", id[:2], id[2:])); err != nil || target != filepath.Dir(objs[0]) {
		t.Errorf(".build-id link to %q, %v; want %q", target, err, filepath.Dir(objs[0]))
	}
	// A second call finds it there and writes nothing.
	if err := cacheVDSO(cache); err != nil {
		t.Errorf("second cacheVDSO: %v", err)
	}
}
