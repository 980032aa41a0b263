//go:build linux

package capture

import (
	"errors"
	"testing"
)

func TestChooseEvent(t *testing.T) {
	tests := []struct {
		out   string
		err   error
		event string
	}{
		{"<not supported>,,cycles,0,100.00,,\n", nil, "cpu-clock"},
		{"<not counted>,,cycles,0,0.00,,\n", nil, "cpu-clock"},
		{"1234567,,cycles,512345,100.00,,\n", nil, "cycles"},
		{"", errors.New("exit status 1"), "cpu-clock"},
		{"garbage\n", nil, "cpu-clock"},
	}
	for _, tt := range tests {
		if got, why := chooseEvent(tt.out, tt.err); got != tt.event || why == "" {
			t.Errorf("chooseEvent(%q, %v) = %q, %q; want %q with a reason", tt.out, tt.err, got, why, tt.event)
		}
	}
}
