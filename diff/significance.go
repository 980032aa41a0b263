package diff

import (
	"math"
	"math/rand/v2"
	"sort"
)

// DefaultAlpha is the significance level Significance uses when none is
// given: a difference with a p-value below it is called significant.
const DefaultAlpha = 0.05

// permutationExactLimit bounds the number of relabellings a permutation
// test enumerates; beyond it, permutationSamples random ones are drawn
// (with a fixed seed, so results are repeatable).
const (
	permutationExactLimit = 200000
	permutationSamples    = 100000
)

// Sample summarises repeated measurements of one figure.
type Sample struct {
	N      int
	Median float64
	Mean   float64
	// Min and Max bound the measurements; StdDev is the sample standard
	// deviation (n-1), 0 for fewer than 2 values.
	Min, Max, StdDev float64
}

// SampleOf returns the summary of xs (zero for none).
func SampleOf(xs []float64) Sample {
	s := Sample{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	sorted := append([]float64(nil), xs...)
	sort.Float64s(sorted)
	s.Min, s.Max = sorted[0], sorted[len(sorted)-1]
	if n := len(sorted); n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.StdDev = math.Sqrt(ss / float64(len(xs)-1))
	}
	return s
}

// Significance says whether two sets of repeated measurements (a base and
// a target, say the QPS of two server versions over N runs each) differ
// by more than their noise.
type Significance struct {
	Base, Target Sample
	// WelchP is the two-sided p-value of Welch's t-test (unequal
	// variances); 1 when it cannot be computed (fewer than 2 values on a
	// side, or no variance and equal means), 0 when both sides have no
	// variance and different means.
	WelchP float64
	// PermutationP is the two-sided p-value of a permutation test of the
	// difference of means: exact for small samples, else from 100,000
	// random relabellings with a fixed seed. With n values a side its
	// smallest possible value is 2/C(2n, n) (0.1 for n = 3, 0.0286 for
	// n = 4, 0.0079 for n = 5): below that no test of so few repeats can
	// go. MinPermutationP says what it is for these sample sizes.
	PermutationP, MinPermutationP float64
	// Alpha is the significance level. Significant is set when both tests
	// call the difference more than noise: WelchP < Alpha, and
	// PermutationP at most Alpha or, when so few repeats cannot go below
	// Alpha, at most MinPermutationP (every base value beyond every target
	// value).
	Alpha       float64
	Significant bool
	// Level is the level this comparison was judged at: Alpha alone, the
	// family's cutoff when judged with others (Family, func).
	Level float64
	// Family is the number of comparisons judged together with this one
	// (Family, func); 1 alone.
	Family int
}

// Compare tests base against target at level alpha (DefaultAlpha when 0).
func Compare(base, target []float64, alpha float64) Significance {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	s := Significance{Base: SampleOf(base), Target: SampleOf(target), Alpha: alpha, Level: alpha, Family: 1}
	s.WelchP = welchP(s.Base, s.Target)
	s.PermutationP, s.MinPermutationP = permutationP(base, target)
	s.Significant = s.at(alpha)
	return s
}

// at applies Compare's rule at level: Welch's p below it, and the
// permutation p at most it or, when so few repeats cannot go that low, at
// its floor.
func (s Significance) at(level float64) bool {
	return s.Base.N >= 2 && s.Target.N >= 2 && s.WelchP < level && s.PermutationP <= math.Max(level, s.MinPermutationP)
}

// Family judges a family of comparisons together (the Benjamini-Hochberg
// procedure), where Compare's level holds for each alone: a report of 40
// subtree rows at 0.05 each flags about two of them when nothing differs.
// When nothing differs, the chance that Family calls any comparison of the
// family significant stays at most alpha (DefaultAlpha when 0), however
// many it holds; when some differ, at most a fraction alpha of those it
// calls significant are expected not to. Ordered by Welch's p, the cutoff
// is k*alpha/m for the largest k whose k-th smallest p (from 1) of m is
// below k*alpha/m (none: alpha/m); the comparisons up to k are significant
// when their permutation p is also at most the cutoff, or at its floor when
// so few repeats cannot go that low (Compare's rule at the cutoff). Family
// sets every comparison's Level (the cutoff), Family and Significant.
func Family(family []*Significance, alpha float64) {
	if alpha <= 0 {
		alpha = DefaultAlpha
	}
	m := len(family)
	order := make([]*Significance, m)
	copy(order, family)
	sort.SliceStable(order, func(i, j int) bool { return order[i].WelchP < order[j].WelchP })
	k := 0
	for i, s := range order {
		if s.WelchP < float64(i+1)*alpha/float64(m) {
			k = i + 1
		}
	}
	cutoff := float64(max(k, 1)) * alpha / float64(m)
	for i, s := range order {
		s.Alpha, s.Family, s.Level = alpha, m, cutoff
		s.Significant = i < k && s.at(cutoff)
	}
}

// welchP is the two-sided p-value of Welch's t-test.
func welchP(a, b Sample) float64 {
	if a.N < 2 || b.N < 2 {
		return 1
	}
	va, vb := a.StdDev*a.StdDev/float64(a.N), b.StdDev*b.StdDev/float64(b.N)
	se := math.Sqrt(va + vb)
	if se == 0 {
		if a.Mean == b.Mean {
			return 1
		}
		return 0
	}
	t := (a.Mean - b.Mean) / se
	// Welch–Satterthwaite degrees of freedom.
	df := (va + vb) * (va + vb) / (va*va/float64(a.N-1) + vb*vb/float64(b.N-1))
	return studentTwoSided(t, df)
}

// studentTwoSided returns P(|T| >= |t|) for Student's t with df degrees of
// freedom: I_{df/(df+t²)}(df/2, 1/2).
func studentTwoSided(t, df float64) float64 {
	x := df / (df + t*t)
	return regIncBeta(df/2, 0.5, x)
}

// regIncBeta is the regularised incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes (betacf), accurate to ~1e-12.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	lbeta, _ := math.Lgamma(a + b)
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	front := math.Exp(lbeta - la - lb + a*math.Log(x) + b*math.Log(1-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const (
		maxIter = 300
		eps     = 1e-14
		tiny    = 1e-300
	)
	qab, qap, qam := a+b, a+1, a-1
	c, d := 1.0, 1-qab*x/qap
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= maxIter; m++ {
		fm := float64(m)
		m2 := 2 * fm
		aa := fm * (b - fm) * x / ((qam + m2) * (a + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		h *= d * c
		aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
		d = 1 + aa*d
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = 1 + aa/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}

// permutationP is the two-sided permutation test of the difference of
// means, and the smallest p-value it can give for these sizes.
func permutationP(a, b []float64) (p, minP float64) {
	na, nb := len(a), len(b)
	if na == 0 || nb == 0 {
		return 1, 1
	}
	all := append(append([]float64(nil), a...), b...)
	n := na + nb
	var total float64
	for _, x := range all {
		total += x
	}
	observed := math.Abs(meanOf(a) - meanOf(b))
	// A relabelling is at least as extreme when its difference is not
	// smaller than the observed one (with a relative tolerance for
	// rounding, so that the observed labelling always counts).
	tol := 1e-9 * math.Max(1, observed)
	extreme := func(sumA float64) bool {
		d := math.Abs(sumA/float64(na) - (total-sumA)/float64(nb))
		return d >= observed-tol
	}
	combos := binomial(n, na)
	minP = 2 / combos
	if na != nb {
		minP = 1 / combos
	}
	minP = math.Min(1, minP)
	if combos <= permutationExactLimit {
		var hits, count float64
		idx := make([]int, na)
		for i := range idx {
			idx[i] = i
		}
		for {
			var sum float64
			for _, i := range idx {
				sum += all[i]
			}
			count++
			if extreme(sum) {
				hits++
			}
			// Next combination of na indices out of n.
			i := na - 1
			for i >= 0 && idx[i] == n-na+i {
				i--
			}
			if i < 0 {
				break
			}
			idx[i]++
			for j := i + 1; j < na; j++ {
				idx[j] = idx[j-1] + 1
			}
		}
		return hits / count, minP
	}
	rng := rand.New(rand.NewPCG(1, 2))
	perm := make([]int, n)
	hits := 1.0 // the observed labelling
	for range permutationSamples {
		for i := range perm {
			perm[i] = i
		}
		var sum float64
		for i := 0; i < na; i++ {
			j := i + rng.IntN(n-i)
			perm[i], perm[j] = perm[j], perm[i]
			sum += all[perm[i]]
		}
		if extreme(sum) {
			hits++
		}
	}
	return hits / (permutationSamples + 1), math.Max(minP, 1/float64(permutationSamples+1))
}

func meanOf(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// binomial returns C(n, k) as a float64.
func binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}
