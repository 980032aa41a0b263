//go:build linux

package capture

import (
	"bufio"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flamediff/flamediff/capture/symtab"
)

// cacheVDSO puts the running kernel's vDSO into perf's build-id cache
// layout under dir ([vdso]/ID/vdso, and .build-id/xx/yyyy linking to it)
// unless dir has that build id already. perf record runs with -N (no
// build-id cache: it writes nothing outside the run), so perf script finds
// the vDSO, which exists in no file, only where some other perf run cached
// it; without it, it cannot unwind out of the vDSO, and every sample taken
// there is a lone [[vdso]] frame. Every process of this kernel and
// architecture maps the same vDSO, so this process's is the target's.
func cacheVDSO(dir string) error {
	img, err := readVDSO("/proc/self/maps", "/proc/self/mem")
	if err != nil {
		return err
	}
	id, err := elfBuildID(img)
	if err != nil {
		return fmt.Errorf("vdso: %w", err)
	}
	link := filepath.Join(dir, ".build-id", id[:2], id[2:])
	if _, err := os.Lstat(link); err == nil {
		return nil
	}
	obj := filepath.Join(dir, "[vdso]", id)
	if err := os.MkdirAll(obj, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(obj, "vdso"), img, 0o644); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	return os.Symlink(obj, link)
}

// readVDSO reads the [vdso] mapping of maps (a /proc/PID/maps file) from
// mem (its /proc/PID/mem).
func readVDSO(maps, mem string) ([]byte, error) {
	f, err := os.Open(maps)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	start, end, err := vdsoRange(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", maps, err)
	}
	m, err := os.Open(mem)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	img := make([]byte, end-start)
	if _, err := m.ReadAt(img, int64(start)); err != nil {
		return nil, fmt.Errorf("%s: read the vdso at %#x: %w", mem, start, err)
	}
	return img, nil
}

// vdsoRange finds the [vdso] line of a /proc/PID/maps text.
func vdsoRange(r io.Reader) (start, end uint64, err error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[5] != "[vdso]" {
			continue
		}
		lo, hi, ok := strings.Cut(fields[0], "-")
		if !ok {
			return 0, 0, fmt.Errorf("bad range %q", fields[0])
		}
		if start, err = strconv.ParseUint(lo, 16, 64); err == nil {
			end, err = strconv.ParseUint(hi, 16, 64)
		}
		if err != nil || end <= start || end-start > 1<<20 {
			return 0, 0, fmt.Errorf("bad range %q", fields[0])
		}
		return start, end, nil
	}
	if err := sc.Err(); err != nil {
		return 0, 0, err
	}
	return 0, 0, errors.New("no [vdso] mapping")
}

// elfBuildID is the GNU build id of an ELF image, in hex.
func elfBuildID(img []byte) (string, error) {
	ef, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		return "", err
	}
	if id := symtab.BuildID(ef); id != "" {
		return id, nil
	}
	return "", errors.New("no GNU build id note")
}
