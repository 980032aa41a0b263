package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"dirty commit", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-12-03T08:00:00Z"}, {Key: "vcs.modified", Value: "true"},
		}}, "v1.2.3, commit 0123456789ab+dirty of 2026-12-03T08:00:00Z, go1.26.8"},
		{"clean commit without time", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123abc"}, {Key: "vcs.modified", Value: "false"},
		}}, "v1.2.3, commit 0123abc, go1.26.8"},
		{"no module version, no vcs", debug.BuildInfo{GoVersion: "go1.26.8"}, "(devel), go1.26.8"},
	}
	for _, tt := range tests {
		if got := Format(&tt.bi); got != tt.want {
			t.Errorf("%s: Format() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestString(t *testing.T) {
	// A test binary carries build information: at least the Go version.
	if got := String(); !strings.Contains(got, "go1.") {
		t.Errorf("String() = %q, want the Go version in it", got)
	}
}
