//go:build linux

package capture

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// fakeProc is one process of a fake proc tree.
type fakeProc struct {
	pid     int
	comm    string
	cmdline string // NUL-separated, as in /proc
	state   byte   // 'S' when 0
}

func writeProcTree(t *testing.T, procs []fakeProc) string {
	t.Helper()
	root := t.TempDir()
	for _, p := range procs {
		dir := filepath.Join(root, strconv.Itoa(p.pid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		st := p.state
		if st == 0 {
			st = 'S'
		}
		files := map[string]string{
			"comm":    p.comm + "\n",
			"cmdline": p.cmdline,
			"stat":    strconv.Itoa(p.pid) + " (" + p.comm + ") " + string(st) + " 1 1 1 0 -1",
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Entries that are not processes.
	for _, name := range []string{"self", "sys", "0"} {
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "uptime"), []byte("1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

var (
	pMariadbd = fakeProc{pid: 4242, comm: "mariadbd", cmdline: "/usr/sbin/mariadbd\x00--datadir=/var/lib/mysql\x00"}
	pMysqld   = fakeProc{pid: 77, comm: "mysqld", cmdline: "/opt/mysql/bin/mysqld\x00--port=3307\x00"}
	// argv[0] matches, comm does not (a renamed thread-group leader).
	pArgv0 = fakeProc{pid: 900, comm: "one_connection", cmdline: "/usr/local/bin/mariadbd\x00--skip-grant\x00"}
	// Neither: the wrapper script, a client, a zombie, a kernel thread.
	pSafe    = fakeProc{pid: 10, comm: "mysqld_safe", cmdline: "/bin/sh\x00/usr/bin/mysqld_safe\x00"}
	pClient  = fakeProc{pid: 11, comm: "mariadb", cmdline: "mariadb\x00-e\x00select 1\x00"}
	pZombie  = fakeProc{pid: 12, comm: "mariadbd", cmdline: "", state: 'Z'}
	pZombie2 = fakeProc{pid: 13, comm: "mysqld", cmdline: "/usr/sbin/mysqld\x00", state: 'Z'}
	pKthread = fakeProc{pid: 2, comm: "mysqld", cmdline: ""}
)

func pids(ps []Process) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p.PID)
	}
	return out
}

func TestFindProcesses(t *testing.T) {
	noise := []fakeProc{pSafe, pClient, pZombie, pZombie2, pKthread}
	tests := []struct {
		name  string
		procs []fakeProc
		names []string
		want  []int
	}{
		{"none", noise, []string{"mariadbd", "mysqld"}, nil},
		{"one by comm", append([]fakeProc{pMariadbd}, noise...), []string{"mariadbd", "mysqld"}, []int{4242}},
		{"two, sorted by pid", append([]fakeProc{pMariadbd, pMysqld}, noise...), []string{"mariadbd", "mysqld"}, []int{77, 4242}},
		{"argv[0] base name", append([]fakeProc{pArgv0}, noise...), []string{"mariadbd"}, []int{900}},
		{"comm only", []fakeProc{pArgv0, pMariadbd}, []string{"one_connection"}, []int{900}},
		{"other name", append([]fakeProc{pMariadbd}, noise...), []string{"mysqld_safe"}, []int{10}},
		{"no names", []fakeProc{pMariadbd}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeProcTree(t, tt.procs)
			got, err := FindProcesses(root, tt.names...)
			if err != nil {
				t.Fatalf("FindProcesses(%v) error: %v", tt.names, err)
			}
			if !reflect.DeepEqual(pids(got), tt.want) {
				t.Errorf("FindProcesses(%v) = %v, want PIDs %v", tt.names, got, tt.want)
			}
		})
	}
}

func TestFindProcessesFields(t *testing.T) {
	root := writeProcTree(t, []fakeProc{pMariadbd})
	got, err := FindProcesses(root, "mariadbd")
	if err != nil {
		t.Fatal(err)
	}
	want := []Process{{PID: 4242, Comm: "mariadbd", Cmdline: []string{"/usr/sbin/mariadbd", "--datadir=/var/lib/mysql"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FindProcesses = %+v, want %+v", got, want)
	}
	if _, err := FindProcesses(filepath.Join(root, "missing"), "x"); err == nil {
		t.Error("FindProcesses(missing root) = nil error, want one")
	}
}

func TestFindServer(t *testing.T) {
	tests := []struct {
		name     string
		procs    []fakeProc
		wantPID  int
		wantErr  error
		contains []string
	}{
		{"none", []fakeProc{pSafe, pClient, pZombie}, 0, ErrNoProcess, []string{"no mariadbd or mysqld process"}},
		{"mariadbd", []fakeProc{pSafe, pMariadbd, pClient}, 4242, nil, nil},
		{"mysqld", []fakeProc{pMysqld, pZombie}, 77, nil, nil},
		{"by argv[0]", []fakeProc{pArgv0}, 900, nil, nil},
		{"two", []fakeProc{pMariadbd, pMysqld, pSafe}, 0, ErrAmbiguous,
			[]string{"2 server processes", "77: /opt/mysql/bin/mysqld --port=3307", "4242: /usr/sbin/mariadbd --datadir=/var/lib/mysql"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FindServer(writeProcTree(t, tt.procs))
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("FindServer() error = %v, want %v", err, tt.wantErr)
			}
			if got.PID != tt.wantPID {
				t.Errorf("FindServer() = %+v, want PID %d", got, tt.wantPID)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("FindServer() error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestReadPIDFile(t *testing.T) {
	// A process that has certainly exited (and been reaped).
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	gonePID := gone.Process.Pid
	self := os.Getpid()
	dir := t.TempDir()
	tests := []struct {
		name     string
		content  *string // nil: no file
		want     int
		wantErr  error
		contains string
	}{
		{"missing", nil, 0, os.ErrNotExist, "does not exist"},
		{"self", ptr(strconv.Itoa(self) + "\n"), self, nil, ""},
		{"self with spaces", ptr("  " + strconv.Itoa(self) + "  \n\n"), self, nil, ""},
		{"empty", ptr(""), 0, nil, "is not a process ID"},
		{"word", ptr("mariadbd\n"), 0, nil, `"mariadbd" is not a process ID`},
		{"negative", ptr("-5\n"), 0, nil, "is not a process ID"},
		{"two numbers", ptr("12 13\n"), 0, nil, "is not a process ID"},
		{"gone", ptr(strconv.Itoa(gonePID) + "\n"), 0, ErrProcessGone, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".pid")
			if tt.content != nil {
				if err := os.WriteFile(path, []byte(*tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ReadPIDFile(path)
			if got != tt.want {
				t.Errorf("ReadPIDFile(%q) = %d, want %d", path, got, tt.want)
			}
			if tt.contains == "" {
				if err != nil {
					t.Errorf("ReadPIDFile(%q) error: %v", path, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.contains) || !strings.Contains(err.Error(), path) {
				t.Errorf("ReadPIDFile(%q) error = %v, want one naming the file and saying %q", path, err, tt.contains)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("ReadPIDFile(%q) error = %v, want errors.Is %v", path, err, tt.wantErr)
			}
		})
	}
}

func ptr(s string) *string { return &s }
