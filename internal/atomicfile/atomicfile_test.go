//go:build unix

package atomicfile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.txt")
	for _, content := range []string{"first\n", "second, longer\n"} {
		if err := Write(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Errorf("after Write(%q): %q, %v", content, got, err)
		}
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v (%v), want 0640", st.Mode().Perm(), err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries, want only the file (no temporary left)", len(ents))
	}
	err := Write(filepath.Join(dir, "missing", "f.txt"), []byte("x"), 0o644)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "missing", "f.txt")) {
		t.Errorf("Write into a missing directory = %v, want an error naming the path", err)
	}
}

// checkWrite is Check then Write, as commands use them.
func checkWrite(t *testing.T, path string, data string) error {
	t.Helper()
	o, err := Check(path)
	if err != nil {
		return err
	}
	return o.Write(nil, []byte(data))
}

func TestNewFileModeFollowsUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  fs.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		old := syscall.Umask(tc.umask)
		path := filepath.Join(t.TempDir(), "out.txt")
		err := checkWrite(t, path, "x\n")
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != tc.want {
			t.Errorf("umask %04o: new file mode %04o (%v), want %04o", tc.umask, st.Mode().Perm(), err, tc.want)
		}
	}
}

func TestExistingFileKeepsMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(path, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o751); err != nil {
		t.Fatal(err)
	}
	if err := checkWrite(t, path, "new\n"); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	got, _ := os.ReadFile(path)
	if st.Mode().Perm() != 0o751 || string(got) != "new\n" {
		t.Errorf("after replacing a 0751 file: mode %04o, contents %q; want 0751, %q", st.Mode().Perm(), got, "new\n")
	}
}

func TestSymlinkStaysALink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.txt")
	link := filepath.Join(dir, "link.txt")
	if err := os.WriteFile(real, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.txt", link); err != nil {
		t.Fatal(err)
	}
	if err := checkWrite(t, link, "new\n"); err != nil {
		t.Fatal(err)
	}
	lst, err := os.Lstat(link)
	if err != nil || lst.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symbolic link (%v, %v)", link, lst.Mode(), err)
	}
	if got, _ := os.ReadFile(real); string(got) != "new\n" {
		t.Errorf("link target holds %q, want %q", got, "new\n")
	}
	if dest, _ := os.Readlink(link); dest != "real.txt" {
		t.Errorf("link points to %q, want real.txt", dest)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("directory holds %d entries, want the file and the link", len(ents))
	}
	// A dangling link is refused with its target named.
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink("nowhere/x", dangling); err != nil {
		t.Fatal(err)
	}
	err = checkWrite(t, dangling, "x")
	if err == nil || !strings.Contains(err.Error(), "nowhere/x") || !strings.Contains(err.Error(), dangling) {
		t.Errorf("Check(dangling link) = %v, want an error naming the link and its target", err)
	}
}

func TestFIFOWrittenThrough(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(f)
		_ = f.Close()
		got <- b.Bytes()
	}()
	o, err := Check(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if o.Kind != Through {
		t.Errorf("Check(FIFO).Kind = %v, want Through", o.Kind)
	}
	if err := o.Write(nil, []byte("through the pipe\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if string(b) != "through the pipe\n" {
			t.Errorf("reader got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reader got nothing")
	}
	st, err := os.Lstat(fifo)
	if err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v %v", fifo, st.Mode(), err)
	}
}

func TestDeviceWrittenThrough(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod of a character device needs root")
	}
	dev := filepath.Join(t.TempDir(), "null")
	// 1,3 is /dev/null.
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		t.Skipf("mknod: %v (a container without CAP_MKNOD?)", err)
	}
	for _, path := range []string{dev, "/dev/null"} {
		o, err := Check(path)
		if err != nil {
			t.Fatal(err)
		}
		if o.Kind != Through {
			t.Errorf("Check(%s).Kind = %v, want Through", path, o.Kind)
		}
		if err := o.Write(nil, []byte("gone\n")); err != nil {
			t.Fatal(err)
		}
		st, err := os.Lstat(path)
		if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Errorf("%s is no longer a character device: %v %v", path, st.Mode(), err)
		}
	}
}

func TestDescriptors(t *testing.T) {
	for _, tc := range []struct {
		path string
		fd   int
	}{{"/dev/stdout", 1}, {"/dev/stderr", 2}, {"/dev/fd/1", 1}, {"/dev/fd/63", 63}, {"/proc/self/fd/5", 5}} {
		o, err := Check(tc.path)
		if err != nil {
			t.Fatalf("Check(%s): %v", tc.path, err)
		}
		if o.Kind != FD || o.Descriptor != tc.fd {
			t.Errorf("Check(%s) = kind %v fd %d, want FD %d", tc.path, o.Kind, o.Descriptor, tc.fd)
		}
	}
	// Written to the caller's stream for it: nothing replaced.
	var b bytes.Buffer
	o, _ := Check("/dev/stdout")
	if err := o.Write(&b, []byte("x\n")); err != nil || b.String() != "x\n" {
		t.Errorf("Write to /dev/stdout: %q, %v", b.String(), err)
	}
	// A real descriptor: a pipe, as a process substitution gives.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	o, err = Check("/dev/fd/" + strconv.Itoa(int(w.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Write(nil, []byte("piped\n")); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	got := make([]byte, 64)
	n, _ := r.Read(got)
	if string(got[:n]) != "piped\n" {
		t.Errorf("pipe reader got %q", got[:n])
	}
}

func TestCheckRefuses(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"missing directory", filepath.Join(dir, "nope", "out.svg"), "directory " + filepath.Join(dir, "nope") + " does not exist"},
		{"a directory", sub, sub + ": is a directory"},
		{"a directory name", sub + "/new/", "is a directory name"},
		{"empty", "", "empty file name"},
	} {
		_, err := Check(tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check(%q) = %v, want an error with %q", tc.name, tc.path, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), ".tmp") {
			t.Errorf("%s: error names a temporary file: %v", tc.name, err)
		}
	}
}

func TestSameAs(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.folded")
	other := filepath.Join(dir, "other.folded")
	link := filepath.Join(dir, "link.folded")
	for _, p := range []string{in, other} {
		if err := os.WriteFile(p, []byte("a;b 1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	o, err := Check(link)
	if err != nil {
		t.Fatal(err)
	}
	if err := o.SameAs(in); !errors.Is(err, ErrSameFile) || !strings.Contains(err.Error(), in) {
		t.Errorf("SameAs(the link's target) = %v, want ErrSameFile naming %s", err, in)
	}
	if err := o.SameAs(other); err != nil {
		t.Errorf("SameAs(another file) = %v, want nil", err)
	}
	if err := o.SameAs(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("SameAs(missing input) = %v, want nil (the reader reports it)", err)
	}
	n, err := Check(filepath.Join(dir, "new.folded"))
	if err != nil || n.SameAs(in) != nil {
		t.Errorf("a new file is no input: %v", err)
	}
}

// TestReadOnlyAsUser runs the check as user nobody: a 0444 file is refused
// as the shell's > would refuse it; root may write it (as the shell lets root).
func TestReadOnlyAsUser(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.txt")
	if err := os.WriteFile(ro, []byte("keep\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("ATOMICFILE_AS_USER") != "" {
		return // the child's work is in TestHelperAsUser
	}
	if os.Geteuid() == 0 {
		// Root: the shell's > writes a 0444 file, and so do we.
		if err := checkWrite(t, ro, "root wrote\n"); err != nil {
			t.Errorf("as root, Check+Write(0444 file) = %v, want success like the shell's >", err)
		}
		st, _ := os.Stat(ro)
		if st.Mode().Perm() != 0o444 {
			t.Errorf("mode after root's write = %04o, want 0444 kept", st.Mode().Perm())
		}
		runAsNobody(t)
		return
	}
	err := checkWrite(t, ro, "x")
	if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), ro) || !strings.Contains(err.Error(), "0444") {
		t.Errorf("as uid %d, Check(0444 file) = %v, want ErrNotWritable naming the file and its mode", os.Geteuid(), err)
	}
}

// runAsNobody runs TestHelperAsUser in a copy of the test binary as user
// nobody, where the refusals of an unprivileged user can be seen.
func runAsNobody(t *testing.T) {
	t.Helper()
	dir, err := os.MkdirTemp("", "atomicfile-nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "test.bin")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestHelperAsUser$", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "ATOMICFILE_AS_USER=1", "ATOMICFILE_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestHelperAsUser") {
		t.Fatalf("as nobody, the helper did not run:\n%s", out)
	}
}

// TestHelperAsUser is run by runAsNobody as an unprivileged user.
func TestHelperAsUser(t *testing.T) {
	if os.Getenv("ATOMICFILE_AS_USER") == "" || os.Geteuid() == 0 {
		t.Skip("run by TestReadOnlyAsUser as an unprivileged user")
	}
	dir := os.Getenv("ATOMICFILE_DIR")
	ro := filepath.Join(dir, "ro.txt")
	if err := os.WriteFile(ro, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ro, 0o444); err != nil {
		t.Fatal(err)
	}
	err := checkWrite(t, ro, "x")
	if !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), ro) || !strings.Contains(err.Error(), "0444") {
		t.Errorf("Check(0444 file) = %v, want ErrNotWritable naming the file and its mode", err)
	}
	if got, _ := os.ReadFile(ro); string(got) != "keep\n" {
		t.Errorf("the refused file holds %q, want it untouched", got)
	}
	// A directory the user may not write: a new file is refused at once.
	locked := filepath.Join(dir, "locked")
	if err := os.Mkdir(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	if _, err := Check(filepath.Join(locked, "new.txt")); !errors.Is(err, ErrNotWritable) || !strings.Contains(err.Error(), locked) {
		t.Errorf("Check(new file in a 0555 directory) = %v, want ErrNotWritable naming the directory", err)
	}
	// A file the user may write in a directory it may not: written in place.
	if err := os.Chmod(locked, 0o755); err != nil {
		t.Fatal(err)
	}
	inPlace := filepath.Join(locked, "w.txt")
	if err := os.WriteFile(inPlace, []byte("old contents\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	o, err := Check(inPlace)
	if err != nil || o.Kind != InPlace {
		t.Fatalf("Check(writable file in a 0555 directory) = %v, %v; want InPlace", o, err)
	}
	if err := o.Write(nil, []byte("new\n")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(inPlace); string(got) != "new\n" {
		t.Errorf("in-place write left %q", got)
	}
	_ = os.Chmod(locked, 0o755)
}

func TestMakeDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(dir, "a", "b")
	if err := MakeDir(nested); err != nil {
		t.Fatalf("MakeDir(%s) = %v", nested, err)
	}
	if st, err := os.Stat(nested); err != nil || !st.IsDir() {
		t.Errorf("%s not made: %v", nested, err)
	}
	if err := MakeDir(nested); err != nil {
		t.Errorf("MakeDir(existing) = %v", err)
	}
	for _, tc := range []struct{ path, want string }{
		{file, file + ": is a file, not a directory"},
		{filepath.Join(file, "sub"), filepath.Join(file, "sub") + ": " + file + " is not a directory"},
	} {
		if err := MakeDir(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("MakeDir(%s) = %v, want %q", tc.path, err, tc.want)
		}
	}
}
