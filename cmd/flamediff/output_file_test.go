package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The rules of README "Outputs", through the commands as a user types them.

const smallFolded = "mariadbd;do_command;dispatch_command 7\nmariadbd;do_command;mysql_update 2\n"

// writeInput writes a small folded profile and returns its path.
func writeInput(t *testing.T, dir string) string {
	t.Helper()
	in := filepath.Join(dir, "in.folded")
	if err := os.WriteFile(in, []byte(smallFolded), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// everyOutputCommand is each command that writes -o, with its arguments for
// one input; "OUT" and "IN" are replaced.
var everyOutputCommand = [][]string{
	{"fold", "-o", "OUT", "IN"},
	{"report", "-o", "OUT", "IN"},
	{"diff", "-o", "OUT", "IN", "IN2"},
	{"svg", "-o", "OUT", "IN"},
	{"html", "-o", "OUT", "IN"},
	{"map", "suggest", "-o", "OUT", "IN", "IN2"},
	{"map", "suggest", "--apply", "OUT", "IN", "IN2"},
}

func expand(args []string, out, in, in2 string) []string {
	r := make([]string, len(args))
	for i, a := range args {
		switch a {
		case "OUT":
			a = out
		case "IN":
			a = in
		case "IN2":
			a = in2
		}
		r[i] = a
	}
	return r
}

func TestOutputDeviceKept(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mknod needs root")
	}
	dir := t.TempDir()
	in := writeInput(t, dir)
	in2 := filepath.Join(dir, "in2.folded")
	if err := os.WriteFile(in2, []byte(smallFolded), 0o644); err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err != nil {
		t.Skipf("mknod: %v", err)
	}
	for _, args := range everyOutputCommand {
		for _, out := range []string{dev, "/dev/null"} {
			a := expand(args, out, in, in2)
			code, _, errOut := runArgs(a...)
			if code != exitOK {
				t.Errorf("flamediff %v: exit %d: %s", a, code, errOut)
			}
			st, err := os.Lstat(out)
			if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
				t.Fatalf("after flamediff %v, %s is %v (%v), want the character device kept", a, out, st.Mode(), err)
			}
		}
	}
}

func TestOutputFIFO(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- string(b)
	}()
	if code, _, errOut := runArgs("fold", "-o", fifo, in); code != exitOK {
		t.Fatalf("fold -o FIFO: exit %d: %s", code, errOut)
	}
	select {
	case s := <-got:
		if s != smallFolded {
			t.Errorf("the FIFO's reader got %q, want %q", s, smallFolded)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing came out of the FIFO")
	}
	if st, err := os.Lstat(fifo); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("%s is no longer a FIFO: %v %v", fifo, st.Mode(), err)
	}
}

func TestOutputDevStdout(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir)
	for _, path := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		code, out, errOut := runArgs("fold", "-o", path, in)
		if code != exitOK || out != smallFolded {
			t.Errorf("fold -o %s: exit %d, stdout %q (%s); want the profile on stdout", path, code, out, errOut)
		}
	}
	if st, err := os.Lstat("/dev/stdout"); err == nil && st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("/dev/stdout is no longer a symbolic link: %v", st.Mode())
	}
}

func TestOutputSymlink(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir)
	real := filepath.Join(dir, "real.folded")
	link := filepath.Join(dir, "link.folded")
	if err := os.WriteFile(real, []byte("old\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.folded", link); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runArgs("fold", "-o", link, in); code != exitOK {
		t.Fatalf("fold -o LINK: exit %d: %s", code, errOut)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("%s is no longer a link", link)
	}
	b, _ := os.ReadFile(real)
	st, _ := os.Stat(real)
	if string(b) != smallFolded || st.Mode().Perm() != 0o640 {
		t.Errorf("link target: %q mode %04o; want the profile, mode 0640 kept", b, st.Mode().Perm())
	}
}

func TestOutputUmask(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir)
	for _, tc := range []struct {
		umask int
		want  fs.FileMode
	}{{0o022, 0o644}, {0o077, 0o600}} {
		out := filepath.Join(dir, "out"+strings.Repeat("x", tc.umask%7)+".folded")
		old := syscall.Umask(tc.umask)
		code, _, errOut := runArgs("fold", "-o", out, in)
		syscall.Umask(old)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if st, err := os.Stat(out); err != nil || st.Mode().Perm() != tc.want {
			t.Errorf("umask %04o: -o made mode %04o (%v), want %04o", tc.umask, st.Mode().Perm(), err, tc.want)
		}
	}
}

// TestOutputRefused: each wrong output fails at once, names the path the
// user gave, reads no input and leaves existing files alone.
func TestOutputRefused(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir)
	in2 := filepath.Join(dir, "in2.folded")
	if err := os.WriteFile(in2, []byte(smallFolded), 0o644); err != nil {
		t.Fatal(err)
	}
	run1 := filepath.Join(dir, "run")
	if err := os.MkdirAll(run1, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run1, "stacks.folded"), []byte(smallFolded), 0o644); err != nil {
		t.Fatal(err)
	}
	// "missing" does not exist: had it been read first, the error would name it.
	missing := filepath.Join(dir, "missing.folded")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing directory", []string{"fold", "-o", filepath.Join(dir, "no", "out.folded"), missing}, "-o " + filepath.Join(dir, "no", "out.folded") + ": directory " + filepath.Join(dir, "no") + " does not exist"},
		{"a directory", []string{"svg", "-o", dir, missing}, "-o " + dir + ": is a directory"},
		{"output is the input", []string{"fold", "-o", in, in}, "-o " + in + ": output is one of the inputs"},
		{"output is the second input", []string{"diff", "-o", in2, in, in2}, "output is one of the inputs"},
		{"output is a run directory's file", []string{"report", "-o", filepath.Join(run1, "stacks.folded"), run1}, "output is one of the inputs"},
		{"output is the map", []string{"report", "--map", in2, "-o", in2, in}, "output is one of the inputs"},
	} {
		code, _, errOut := runArgs(tc.args...)
		if code != exitError || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: flamediff %v: exit %d, stderr %q; want exit 1 and %q", tc.name, tc.args, code, errOut, tc.want)
		}
		if strings.Contains(errOut, ".tmp") {
			t.Errorf("%s: the message names a temporary file: %s", tc.name, errOut)
		}
	}
	if b, _ := os.ReadFile(in); string(b) != smallFolded {
		t.Errorf("an input was changed: %q", b)
	}
}

// TestEmptyInputIsAnError: every command that reads profiles fails on an
// input without samples, names it, and leaves an existing output untouched.
func TestEmptyInputIsAnError(t *testing.T) {
	dir := t.TempDir()
	in := writeInput(t, dir)
	empty := filepath.Join(dir, "empty.folded")
	comments := filepath.Join(dir, "comments.folded")
	zero := filepath.Join(dir, "zero.folded")
	emptyRun := filepath.Join(dir, "emptyrun")
	for p, s := range map[string]string{empty: "", comments: "# nothing\n\n", zero: "a;b 0\n"} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(emptyRun, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(emptyRun, "stacks.folded"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		input, reason string
	}{
		{empty, "the input is empty"},
		{comments, "blank lines and comments, no stack"},
		{zero, "1 stack, every count 0"},
		{emptyRun, "the input is empty"},
	} {
		name := c.input
		if c.input == emptyRun {
			name = filepath.Join(emptyRun, "stacks.folded")
		}
		for _, args := range everyOutputCommand {
			if err := os.WriteFile(out, []byte("old output\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, order := range [][2]string{{c.input, in}, {in, c.input}} {
				a := expand(args, out, order[0], order[1])
				if !strings.Contains(strings.Join(a, " "), c.input) {
					continue // a one-input command with the good input first
				}
				code, _, errOut := runArgs(a...)
				want := name + ": no samples (" + c.reason
				if code != exitError || !strings.Contains(errOut, want) {
					t.Errorf("flamediff %v: exit %d, stderr %q; want exit 1 and %q", a, code, errOut, want)
				}
				if b, _ := os.ReadFile(out); string(b) != "old output\n" {
					t.Errorf("flamediff %v changed the existing output: %q", a, b)
				}
			}
		}
	}
	// Standard input too.
	var errOut strings.Builder
	if code := run([]string{"report", "-"}, strings.NewReader(""), &strings.Builder{}, &errOut); code != exitError || !strings.Contains(errOut.String(), "stdin: no samples (the input is empty)") {
		t.Errorf("report - with empty stdin: exit %d, %q", code, errOut.String())
	}
}

// TestOutputsAsUser runs flamediff as user nobody: a 0444 file of its own
// is refused as the shell's > would refuse it and left as it was; a new
// file gets the umask's mode; a directory it may not write fails at once.
// (As root, the shell's > writes a 0444 file, and so does flamediff:
// TestOutputReadOnlyAsRoot.)
func TestOutputsAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run flamediff as user nobody")
	}
	dir, err := os.MkdirTemp("", "flamediff-nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "flamediff")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	in := writeInput(t, dir)
	ro := filepath.Join(dir, "ro.folded")
	locked := filepath.Join(dir, "locked")
	if err := os.WriteFile(ro, []byte("keep\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, in, ro} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func(args ...string) (int, string) {
		cmd := exec.Command("sh", "-c", `umask 022; exec "$@"`, "sh")
		cmd.Args = append(cmd.Args, append([]string{bin}, args...)...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(out)
	}
	if code, out := asNobody("fold", "-o", ro, in); code != exitError || !strings.Contains(out, "-o "+ro+": not writable: its mode is 0444") {
		t.Errorf("as nobody, fold -o <own 0444 file>: exit %d, %q; want refused naming the mode", code, out)
	}
	if b, _ := os.ReadFile(ro); string(b) != "keep\n" {
		t.Errorf("the refused file now holds %q", b)
	}
	if code, out := asNobody("fold", "-o", filepath.Join(locked, "x.folded"), in); code != exitError || !strings.Contains(out, "you may not create files in directory "+locked) {
		t.Errorf("as nobody, fold -o <file in a 0555 directory>: exit %d, %q", code, out)
	}
	newFile := filepath.Join(dir, "new.folded")
	if code, out := asNobody("fold", "-o", newFile, in); code != exitOK {
		t.Fatalf("as nobody, fold -o new file: exit %d, %s", code, out)
	}
	if st, err := os.Stat(newFile); err != nil || st.Mode().Perm() != 0o644 || st.Sys().(*syscall.Stat_t).Uid != 65534 {
		t.Errorf("as nobody under umask 022, -o made %v (%v); want mode 0644 owned by nobody", st.Mode(), err)
	}
}

func TestOutputReadOnlyAsRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("as root only: the shell's > lets root write a 0444 file")
	}
	dir := t.TempDir()
	in := writeInput(t, dir)
	ro := filepath.Join(dir, "ro.folded")
	if err := os.WriteFile(ro, []byte("old\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runArgs("fold", "-o", ro, in); code != exitOK {
		t.Fatalf("as root, fold -o <0444 file>: exit %d: %s", code, errOut)
	}
	st, _ := os.Stat(ro)
	if b, _ := os.ReadFile(ro); string(b) != smallFolded || st.Mode().Perm() != 0o444 {
		t.Errorf("as root: %q, mode %04o; want the profile, mode 0444 kept", b, st.Mode().Perm())
	}
}
