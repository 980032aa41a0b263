package workload

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSocketDSN(t *testing.T) {
	tests := []struct {
		socket, user, password, want string
	}{
		{"/run/mysqld/mysqld.sock", "root", "", "root@unix(/run/mysqld/mysqld.sock)/"},
		{"/tmp/s.sock", "", "", "root@unix(/tmp/s.sock)/"},
		{"/tmp/s.sock", "bench", "secret", "bench:secret@unix(/tmp/s.sock)/"},
	}
	for _, tt := range tests {
		if got := SocketDSN(tt.socket, tt.user, tt.password); got != tt.want {
			t.Errorf("SocketDSN(%q, %q, %q) = %q, want %q", tt.socket, tt.user, tt.password, got, tt.want)
		}
	}
}

func TestSimilarNames(t *testing.T) {
	known := []string{"Questions", "Queries", "Com_update", "Com_update_multi", "Com_select", "Innodb_rows_updated", "Uptime", "Threads_running"}
	tests := []struct {
		name string
		want []string
	}{
		{"Questoins", []string{"Questions"}},
		{"questions", []string{"Questions"}},
		{"Com_updat", []string{"Com_update", "Com_update_multi"}},
		{"update", []string{"Com_update", "Com_update_multi", "Innodb_rows_updated"}},
		{"Threads", []string{"Threads_running"}},
		{"zzzzzzzz", nil},
	}
	for _, tt := range tests {
		got := similarNames(tt.name, known, 5)
		if len(got) == 0 && len(tt.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("similarNames(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestOpenServerErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tests := []struct {
		name, dsn, want string
	}{
		{name: "bad dsn", dsn: "root@unix(/x", want: "open server"},
		{name: "no server", dsn: SocketDSN(filepath.Join(t.TempDir(), "none.sock"), "root", "hunter2"), want: "connect to server root@unix("},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := OpenServer(ctx, tt.dsn)
			if err == nil {
				_ = s.Close()
				t.Fatalf("OpenServer(%q) succeeded, want an error", tt.dsn)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("OpenServer(%q) error = %q, want it to contain %q", tt.dsn, err, tt.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("OpenServer error %q shows the password", err)
			}
		})
	}
}
