package workload

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseSuperSmack(t *testing.T) {
	tests := []struct {
		file        string
		want        *SuperSmackReport
		errContains string
	}{
		{
			file: "hidba-2011-my-smack.supersmack",
			want: &SuperSmackReport{Barrels: []SuperSmackBarrel{{
				Client:  "smacker",
				Connect: &SuperSmackConnect{MaxMs: 3, MinMs: 0, AvgMs: 0, Clients: 10},
				Queries: []SuperSmackQuery{
					{Type: "select_akey", Count: 1000, MaxMs: 16, MinMs: 2, QPS: 497.42},
					{Type: "select_by_id", Count: 10000, QPS: 4974.16},
					{Type: "select_userid_aid", Count: 5000, QPS: 2487.08},
					{Type: "update_by_id", Count: 1500, MaxMs: 4, QPS: 746.12},
				},
			}}},
		},
		{
			file: "update-select-layout.supersmack",
			want: &SuperSmackReport{Barrels: []SuperSmackBarrel{{
				Client:  "smacker1",
				Connect: &SuperSmackConnect{MaxMs: 4, MinMs: 0, AvgMs: 1, Clients: 10},
				Queries: []SuperSmackQuery{
					{Type: "select_index", Count: 20000, MaxMs: 2, QPS: 8530.64},
					{Type: "update_index", Count: 20000, MaxMs: 9, QPS: 8530.64},
				},
			}}},
		},
		{file: "cut.supersmack", errContains: `the report of line 1 has no "Query_type" header`},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "supersmack", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseSuperSmack(bytes.NewReader(data))
			if tt.errContains != "" {
				if !errors.Is(err, ErrNoSuperSmackReport) || !strings.Contains(err.Error(), tt.errContains) {
					t.Fatalf("ParseSuperSmack(%s) error = %v, want ErrNoSuperSmackReport containing %q", tt.file, err, tt.errContains)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSuperSmack(%s): %v", tt.file, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSuperSmack(%s) =\n%+v\nwant\n%+v", tt.file, got, tt.want)
			}
		})
	}
}

func TestSuperSmackTotal(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "supersmack", "hidba-2011-my-smack.supersmack"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ParseSuperSmack(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	n, qps := rep.Barrels[0].Total()
	if n != 17500 || qps < 8704.77 || qps > 8704.79 {
		t.Errorf("Total() = %d, %v, want 17500, 8704.78", n, qps)
	}
}

func TestParseSuperSmackText(t *testing.T) {
	const head = "Query Barrel Report for client c\nQuery_type\tnum_queries\tmax_time\tmin_time\tq_per_s\n"
	tests := []struct {
		name, text string
		want       *SuperSmackReport // nil: an error containing errContains
		errIs      error
		errContain string
	}{
		{name: "empty", text: "", errIs: ErrNoSuperSmackReport, errContain: "no \"Query Barrel Report for client\" line"},
		{name: "no connect line, n/a rate, then other output",
			text: "starting\n" + head + "select key\t5\t1\t0\tn/a\nDone.\nignored\t1\t1\t1\t1\n",
			want: &SuperSmackReport{Barrels: []SuperSmackBarrel{{Client: "c", Queries: []SuperSmackQuery{{Type: "select key", Count: 5, MaxMs: 1, NoRate: true}}}}}},
		{name: "two clients", text: head + "a\t1\t0\t0\t1.5\n" + strings.Replace(head, "client c", "client d", 1) + "b\t2\t0\t0\t3\n",
			want: &SuperSmackReport{Barrels: []SuperSmackBarrel{
				{Client: "c", Queries: []SuperSmackQuery{{Type: "a", Count: 1, QPS: 1.5}}},
				{Client: "d", Queries: []SuperSmackQuery{{Type: "b", Count: 2, QPS: 3}}},
			}}},
		{name: "empty table", text: head, want: &SuperSmackReport{Barrels: []SuperSmackBarrel{{Client: "c"}}}},
		{name: "negative count", text: head + "a\t-1\t0\t0\t1\n", errContain: "line 3: query type \"a\": negative num_queries -1"},
		{name: "infinite rate", text: head + "a\t1\t0\t0\tInf\n", errContain: "line 3: query type \"a\": q_per_s Inf is not a rate"},
		{name: "type twice", text: head + "a\t1\t0\t0\t1\na\t1\t0\t0\t1\n", errContain: "line 4: query type \"a\" twice"},
		{name: "second report cut", text: head + "a\t1\t0\t0\t1\nQuery Barrel Report for client d\nQuery Barrel Report for client e\n", errIs: ErrNoSuperSmackReport, errContain: "line 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSuperSmack(strings.NewReader(tt.text))
			if tt.want == nil {
				if err == nil || !strings.Contains(err.Error(), tt.errContain) || (tt.errIs != nil && !errors.Is(err, tt.errIs)) {
					t.Fatalf("ParseSuperSmack(%q) = %+v, %v; want an error containing %q", tt.text, got, err, tt.errContain)
				}
				if got != nil {
					t.Fatalf("ParseSuperSmack(%q) returned a report with its error", tt.text)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSuperSmack(%q): %v", tt.text, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseSuperSmack(%q) =\n%+v\nwant\n%+v", tt.text, got, tt.want)
			}
		})
	}
}
