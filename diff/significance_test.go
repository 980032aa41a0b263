package diff

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func closeTo(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestStudentTwoSided(t *testing.T) {
	// Critical values of Student's t (two-sided 5% and 1%), from tables.
	for _, tt := range []struct{ t, df, want float64 }{
		{12.706, 1, 0.05}, {4.303, 2, 0.05}, {2.228, 10, 0.05}, {2.086, 20, 0.05},
		{1.95996, 1e7, 0.05}, {3.169, 10, 0.01}, {0, 5, 1},
	} {
		if got := studentTwoSided(tt.t, tt.df); !closeTo(got, tt.want, 2e-4) {
			t.Errorf("studentTwoSided(%g, %g) = %.6f, want %.4f", tt.t, tt.df, got, tt.want)
		}
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name         string
		base, target []float64
		welch, perm  float64 // want, -1: don't check
		minPerm      float64
		significant  bool
		medB, medT   float64
	}{
		// R: t.test(1:5, 6:10) -> t = -5, df = 8, p-value = 0.001053.
		// Permutation: 2 of C(10,5) = 252 labellings are as extreme.
		{"separated", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0.001053, 2.0 / 252, 2.0 / 252, true, 3, 8},
		// The same values: no difference.
		{"same", []float64{5, 6, 7}, []float64{5, 6, 7}, 1, 1, 0.1, false, 6, 6},
		// Three repeats cannot be significant by permutation below 0.1,
		// but fully separated ones reach that floor.
		{"three repeats", []float64{100, 101, 102}, []float64{90, 91, 92}, -1, 0.1, 0.1, true, 101, 91},
		// Overlapping noise.
		{"noise", []float64{100, 95, 105, 98}, []float64{101, 97, 103, 99}, -1, -1, 2.0 / 70, false, 99, 100},
		{"one value", []float64{1}, []float64{2}, 1, 1, 1, false, 1, 2},
		{"no variance", []float64{3, 3}, []float64{4, 4}, 0, 1.0 / 3, 1.0 / 3, true, 3, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Compare(tt.base, tt.target, 0)
			if tt.welch >= 0 && !closeTo(s.WelchP, tt.welch, 1e-5) {
				t.Errorf("WelchP = %.6f, want %.6f", s.WelchP, tt.welch)
			}
			if tt.perm >= 0 && !closeTo(s.PermutationP, tt.perm, 1e-9) {
				t.Errorf("PermutationP = %.6f, want %.6f", s.PermutationP, tt.perm)
			}
			if !closeTo(s.MinPermutationP, tt.minPerm, 1e-9) {
				t.Errorf("MinPermutationP = %.6f, want %.6f", s.MinPermutationP, tt.minPerm)
			}
			if s.Significant != tt.significant {
				t.Errorf("Significant = %v, want %v (%+v)", s.Significant, tt.significant, s)
			}
			if s.Base.Median != tt.medB || s.Target.Median != tt.medT {
				t.Errorf("medians %g, %g, want %g, %g", s.Base.Median, s.Target.Median, tt.medB, tt.medT)
			}
		})
	}
}

// Large samples take random relabellings: repeatable, and close to the
// exact answer.
func TestComparePermutationSampled(t *testing.T) {
	var a, b []float64
	for i := range 12 {
		a = append(a, float64(i))
		b = append(b, float64(i)+2.5)
	}
	s1, s2 := Compare(a, b, 0), Compare(a, b, 0)
	if s1.PermutationP != s2.PermutationP {
		t.Errorf("sampled permutation p not repeatable: %g, %g", s1.PermutationP, s2.PermutationP)
	}
	// t = 2.5 / sqrt(2 × 13/12) = 1.698 with 22 degrees of freedom: Welch p
	// 0.1035 (t tables: 0.10 at t = 1.717); the permutation p is close to it.
	if !closeTo(s1.WelchP, 0.1035, 0.001) || !closeTo(s1.PermutationP, s1.WelchP, 0.02) || s1.Significant {
		t.Errorf("Welch p %.4f, permutation p %.4f, significant %v: want ~0.1035, close, not significant", s1.WelchP, s1.PermutationP, s1.Significant)
	}
}

func TestSampleOf(t *testing.T) {
	s := SampleOf([]float64{4, 1, 3, 2})
	if s.N != 4 || s.Median != 2.5 || s.Mean != 2.5 || s.Min != 1 || s.Max != 4 || !closeTo(s.StdDev, 1.2909944, 1e-6) {
		t.Errorf("SampleOf = %+v", s)
	}
	if z := SampleOf(nil); z != (Sample{}) {
		t.Errorf("SampleOf(nil) = %+v, want zero", z)
	}
}

func TestFamily(t *testing.T) {
	five := Sample{N: 5}
	sig := func(welch, perm float64) *Significance {
		return &Significance{Base: five, Target: five, WelchP: welch, PermutationP: perm, MinPermutationP: 0.0079}
	}
	judged := func(fam []*Significance) []bool {
		var out []bool
		for _, s := range fam {
			out = append(out, s.Significant)
		}
		return out
	}
	for _, tt := range []struct {
		name   string
		fam    []*Significance
		want   []bool
		cutoff float64
	}{
		// m = 5 at 0.05: the 3rd smallest p (0.029) is below 3*0.01, the
		// 4th (0.045) not below 0.04 nor the 5th below 0.05.
		{"textbook", []*Significance{sig(0.01, 0.008), sig(0.045, 0.008), sig(0.029, 0.008), sig(0.005, 0.008), sig(0.2, 0.008)},
			[]bool{true, false, true, true, false}, 0.03},
		// Step-up: no p is below its own rank's level but the largest,
		// which takes the smaller ones with it.
		{"step up", []*Significance{sig(0.03, 0.008), sig(0.035, 0.008), sig(0.04, 0.008)}, []bool{true, true, true}, 0.05},
		// Within the cutoff, a permutation p above it keeps a comparison
		// out; the other one stays.
		{"permutation", []*Significance{sig(0.001, 0.5), sig(0.002, 0.008)}, []bool{false, true}, 0.05},
		{"none", []*Significance{sig(0.3, 0.008), sig(0.6, 0.008)}, []bool{false, false}, 0.025},
	} {
		Family(tt.fam, 0.05)
		if got := judged(tt.fam); !slices.Equal(got, tt.want) {
			t.Errorf("%s: significant %v, want %v", tt.name, got, tt.want)
		}
		for _, s := range tt.fam {
			if math.Abs(s.Level-tt.cutoff) > 1e-12 || s.Family != len(tt.fam) || s.Alpha != 0.05 {
				t.Errorf("%s: level %g of %d at %g, want %g of %d at 0.05", tt.name, s.Level, s.Family, s.Alpha, tt.cutoff, len(tt.fam))
			}
		}
	}
	// A family of one is Compare's own judgement.
	one := Compare([]float64{1, 2, 3, 4}, []float64{11, 12, 13, 14}, 0.05)
	alone := one
	Family([]*Significance{&one}, 0.05)
	if one.Significant != alone.Significant || !one.Significant || one.Level != 0.05 || one.Family != 1 {
		t.Errorf("family of one: %+v, want %+v", one, alone)
	}
}

// TestFamilyAA simulates A/A reports: families of 30 comparisons of normal
// noise, 4 repeats a side. Judged alone at 0.05, most families hold a
// false alarm; judged as a family, at most about 5% do.
func TestFamilyAA(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const families, size = 400, 30
	alone, together := 0, 0
	for range families {
		fam := make([]*Significance, size)
		anyAlone := false
		for i := range fam {
			a, b := make([]float64, 4), make([]float64, 4)
			for j := range a {
				a[j], b[j] = rng.NormFloat64(), rng.NormFloat64()
			}
			s := Compare(a, b, 0.05)
			anyAlone = anyAlone || s.Significant
			fam[i] = &s
		}
		Family(fam, 0.05)
		anyFam := false
		for _, s := range fam {
			anyFam = anyFam || s.Significant
		}
		if anyAlone {
			alone++
		}
		if anyFam {
			together++
		}
	}
	t.Logf("families with a false alarm: %d of %d alone, %d of %d judged as a family", alone, families, together, families)
	if float64(alone)/families < 0.3 {
		t.Errorf("alone, %d of %d families had a false alarm; want many (the simulation is too weak to show anything)", alone, families)
	}
	if float64(together)/families > 0.08 {
		t.Errorf("judged as a family, %d of %d families had a false alarm; want at most about 5%%", together, families)
	}
}
