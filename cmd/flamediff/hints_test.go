package main

import (
	"testing"

	"github.com/flamediff/flamediff/diff"
)

func TestUnwindHint(t *testing.T) {
	tests := []struct {
		sampler, method string
		want            string
	}{
		{"bpf", "fp", "record with --stack-copy always"},
		{"perf", "fp", "record with --call-graph dwarf"},
		{"bpf", "cfi+fp", ""},
		{"perf", "dwarf", ""},
		{"", "fp", ""},
		{"bpf", "", ""},
	}
	for _, tt := range tests {
		if got := unwindHint(&diff.Unwinding{Sampler: tt.sampler, Method: tt.method}); got != tt.want {
			t.Errorf("unwindHint(sampler %q, method %q) = %q, want %q", tt.sampler, tt.method, got, tt.want)
		}
	}
	// Roots unnamed for want of symbols: debug files, whatever the method.
	if got := unwindHint(&diff.Unwinding{Sampler: "bpf", Method: "cfi+fp", UnnamedObject: "libc.so.6"}); got != "record with --debug-dir DIR holding its .build-id/xx/yyyy.debug" {
		t.Errorf("unwindHint(unnamed roots in libc.so.6) = %q, want the --debug-dir advice", got)
	}
}
