package suggest

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/flamediff/flamediff/fold"
)

// TestSuggestYAMLOrder parses the rules YAML prints and checks they come
// in the order its header states: elide rules, then rename rules, each
// best first (equal scores in the order found, #N), every proposal once.
// The MariaDB captures find proposals out of score order (update-non-index:
// #2 0.70 before #3 0.71) and with equal scores.
func TestSuggestYAMLOrder(t *testing.T) {
	mariadb := func(workload string) func(t *testing.T) *Suggestions {
		return func(t *testing.T) *Suggestions {
			ps := [2]*fold.Profile{readRun(t, "mariadb-10.11-"+workload, "10.11"), readRun(t, "mariadb-11.8-"+workload, "11.8")}
			s, err := Compute(nil, ps[0], ps[1], Options{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	}
	made := func(kinds string, scores ...float64) func(t *testing.T) *Suggestions {
		return func(t *testing.T) *Suggestions {
			s := &Suggestions{BaseLabel: "1.0", TargetLabel: "2.0", Options: Options{MinShare: 0.5, MinScore: 0.3}}
			for i, sc := range scores {
				p := Proposal{Kind: Rename, Score: sc, Side: Target, Label: "2.0", Names: []string{fmt.Sprintf("f%d", i)},
					Shares: []float64{1}, From: []string{fmt.Sprintf("f%d", i)}, To: fmt.Sprintf("g%d", i), ToShare: 1}
				if kinds[i] == 'e' {
					p.Kind, p.To, p.ToShare = Elide, "", 0
				}
				s.Proposals = append(s.Proposals, p)
			}
			return s
		}
	}
	tests := []struct {
		name string
		make func(t *testing.T) *Suggestions
	}{
		{"mariadb update-non-index", mariadb("update-non-index")},
		{"mariadb update-index", mariadb("update-index")},
		{"found out of order", made("rere", 0.5, 0.9, 0.7, 0.8)},
		{"equal scores", made("rrrr", 0.6, 0.6, 0.9, 0.6)},
		{"one", made("e", 0.4)},
		{"none", made("")},
	}
	rule := regexp.MustCompile(`^  # #(\d+) (\w+), score (\d\.\d\d):`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.make(t)
			out := string(s.YAML(true))
			n := len(s.Proposals)
			header := fmt.Sprintf("# %d proposals scoring at least 0.30: elide rules, then rename rules, each best first (#N: order found).\n", n)
			switch n {
			case 0:
				header = "# 0 proposals scoring at least 0.30.\n"
			case 1:
				header = "# 1 proposal scoring at least 0.30.\n"
			}
			if !strings.Contains(out, header) {
				t.Errorf("YAML() header does not say %q:\n%s", header, out)
			}
			var order []int // proposal indexes as printed
			section := ""
			for _, line := range strings.Split(out, "\n") {
				if line == "elide:" || line == "rename:" {
					if section == "rename:" {
						t.Errorf("YAML() has %s after rename:", line)
					}
					section = line
				}
				m := rule.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				i, _ := strconv.Atoi(m[1])
				if i < 1 || i > n {
					t.Fatalf("YAML() prints proposal #%d of %d", i, n)
				}
				p := s.Proposals[i-1]
				if want := p.Kind.String(); (section == "elide:") != (want == "elide") || m[2] != want {
					t.Errorf("YAML() prints #%d (%s) as %s under %s", i, want, m[2], section)
				}
				if m[3] != fmt.Sprintf("%.2f", p.Score) {
					t.Errorf("YAML() prints #%d with score %s, want %.2f", i, m[3], p.Score)
				}
				if len(order) > 0 {
					prev := s.Proposals[order[len(order)-1]]
					sameSection := (prev.Kind == Elide) == (p.Kind == Elide)
					if sameSection && (prev.Score < p.Score || prev.Score == p.Score && order[len(order)-1] > i-1) {
						t.Errorf("YAML() prints #%d (score %v) after #%d (score %v): not best first", i, p.Score, order[len(order)-1]+1, prev.Score)
					}
				}
				order = append(order, i-1)
			}
			if got := slices.Sorted(slices.Values(order)); len(got) != n || len(slices.Compact(got)) != n {
				t.Errorf("YAML() prints proposals %v, want each of the %d once", order, n)
			}
			if best := s.BestFirst(); !slices.Equal(best, order) {
				var elides, renames []int
				for _, i := range best {
					if s.Proposals[i].Kind == Elide {
						elides = append(elides, i)
					} else {
						renames = append(renames, i)
					}
				}
				if want := append(elides, renames...); !slices.Equal(want, order) {
					t.Errorf("YAML() order %v, want BestFirst %v split into elide and rename rules", order, want)
				}
			}
		})
	}
}

// TestBestFirst checks the order on its own: highest score first, equal
// scores in the order found.
func TestBestFirst(t *testing.T) {
	tests := []struct {
		scores []float64
		want   []int
	}{
		{nil, []int{}},
		{[]float64{0.5}, []int{0}},
		{[]float64{0.5, 0.9, 0.7}, []int{1, 2, 0}},
		{[]float64{0.6, 0.6, 0.9, 0.6}, []int{2, 0, 1, 3}},
	}
	for _, tt := range tests {
		s := &Suggestions{}
		for _, sc := range tt.scores {
			s.Proposals = append(s.Proposals, Proposal{Score: sc})
		}
		if got := s.BestFirst(); !slices.Equal(got, tt.want) {
			t.Errorf("BestFirst(%v) = %v, want %v", tt.scores, got, tt.want)
		}
	}
}

func TestYAMLScalar(t *testing.T) {
	names := []string{
		"mysql_update", "Sql_cmd_dml::execute", "operator new(unsigned long)", "a: b", "true", "No",
		"-x", "#x", "[libc]", `a"b\c`, "std::vector<int>::push_back", "x,y", "tab\there", "ü::f", "1abc", "f:", "::f", "~T", ".hidden", "1.5", "0x10", "y", "A::~A", "a.b",
	}
	for _, n := range names {
		var got struct{ A []string }
		src := "a: [" + yamlScalar(n) + "]\n"
		if err := yaml.Unmarshal([]byte(src), &got); err != nil || len(got.A) != 1 || got.A[0] != n {
			t.Errorf("yamlScalar(%q) = %s, which reads back as %q (err %v)", n, yamlScalar(n), got.A, err)
		}
	}
}
