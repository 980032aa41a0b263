package lab

import "testing"

func TestFailedError(t *testing.T) {
	tests := []struct {
		name    string
		failed  []Failure
		servers int
		want    string
	}{
		{"none", nil, 3, ""},
		{"one of one", []Failure{{Server: "10.5", Reason: "server did not start: exit 1"}}, 1,
			"1 of 1 server failed (the report shows their cells as missing): 10.5: server did not start: exit 1"},
		{"first lines", []Failure{{Server: "a", Reason: "fetch: no\nmore"}, {Server: "b", Reason: "server died: killed"}}, 3,
			"2 of 3 servers failed (the report shows their cells as missing): a: fetch: no …; b: server died: killed"},
	}
	for _, tc := range tests {
		err := FailedError(tc.failed, tc.servers)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%s: FailedError = %q, want %q", tc.name, got, tc.want)
		}
	}
}
