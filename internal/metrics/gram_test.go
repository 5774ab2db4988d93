package metrics

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// The per-pair implementations that gram.go replaced, kept as references:
// each similarity a separate float64 dot product of normalised vectors.

func refDot(a, b []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func refUniformity(x [][]float32) float64 {
	n := len(x)
	xn := make([][]float64, n)
	for i, v := range x {
		xn[i] = normalize(v)
	}
	var sum float64
	for i := 0; i < n; i++ {
		var s float64
		for j := i + 1; j < n; j++ {
			s += math.Exp(-2 * sqDist(xn[i], xn[j]))
		}
		sum += s
	}
	return math.Log(sum / (float64(n) * float64(n-1) / 2))
}

func refRanks(q, c [][]float32, class []int) []int {
	cn := make([][]float64, len(c))
	for j, v := range c {
		cn[j] = normalize(v)
	}
	ranks := make([]int, len(q))
	scores := make([]float64, len(c))
	for i, v := range q {
		qn := normalize(v)
		for j := range cn {
			scores[j] = refDot(qn, cn[j])
		}
		ranks[i] = pessimisticRank(scores, i, class)
	}
	return ranks
}

// sparseVectors returns n vectors of dim dimensions with about nz non-zero
// counts-like entries each (a bag of words), some of them repeated rows and
// one all zero, so that ties and zero vectors are exercised.
func sparseVectors(n, dim, nz int, seed uint64) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([][]float32, n)
	for i := range out {
		out[i] = make([]float32, dim)
		switch {
		case i == 3:
			continue // a sentence of unknown words
		case i%17 == 5:
			copy(out[i], out[i-1]) // a duplicate
			continue
		}
		for k := 0; k < 1+rng.IntN(nz); k++ {
			out[i][rng.IntN(dim)] += float32(1+rng.IntN(3)) * float32(0.5+rng.Float64())
		}
	}
	return out
}

// allSims returns the full similarity matrix through simStrips with the
// given path and micro-kernel.
func allSims(t *testing.T, a, b [][]float32, path simPath, kernel func(a, b []float64, acc *[mr * nr]float64)) [][]float64 {
	t.Helper()
	defer func(p simPath, k func(a, b []float64, acc *[mr * nr]float64)) { forcePath, micro = p, k }(forcePath, micro)
	forcePath, micro = path, kernel
	ua, err := newUnitRows(a, "vector")
	if err != nil {
		t.Fatal(err)
	}
	ub, err := newUnitRows(b, "vector")
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(a))
	simStrips(ua, ub, false, func(i0, i1 int, s []float64, ld, j0 int) {
		for i := i0; i < i1; i++ {
			out[i] = append([]float64(nil), s[(i-i0)*ld:(i-i0+1)*ld]...)
		}
	})
	return out
}

// TestSimilarityPaths checks that the dense and sparse paths give the same
// bits, that both are within rounding of the per-pair dot products, and
// that identical rows get identical scores wherever they sit (shapes not
// multiples of the block sizes, dimensions spanning several panels).
// Serial: it sets forcePath, micro and prepackBytes, which every other
// test reads (the parallel ones run after it).
func TestSimilarityPaths(t *testing.T) {
	for _, sh := range []struct{ m, n, dim, nz int }{
		{1, 1, 1, 1}, {2, 3, 5, 2}, {67, 131, 300, 6}, {150, 257, 520, 40}, {70, 130, 33, 33},
	} {
		a := sparseVectors(sh.m, sh.dim, sh.nz, 1)
		b := sparseVectors(sh.n, sh.dim, sh.nz, 2)
		copy(b[len(b)-1], a[0]) // the same row on both sides
		dense := allSims(t, a, b, pathDense, micro)
		goDense := allSims(t, a, b, pathDense, kernel4x8Go)
		sparse := allSims(t, a, b, pathSparse, micro)
		saved := prepackBytes
		prepackBytes = 0 // pack B tile by tile
		tiled := allSims(t, a, b, pathDense, micro)
		prepackBytes = saved
		for i := range a {
			ai := normalize(a[i])
			for j := range b {
				if dense[i][j] != sparse[i][j] || dense[i][j] != goDense[i][j] || dense[i][j] != tiled[i][j] {
					t.Fatalf("%v: S[%d][%d]: dense (%s) %v, dense (go) %v, dense (tiles packed per strip) %v, sparse %v", sh, i, j, microName, dense[i][j], goDense[i][j], tiled[i][j], sparse[i][j])
				}
				if want := refDot(ai, normalize(b[j])); math.Abs(dense[i][j]-want) > 1e-14 {
					t.Fatalf("%v: S[%d][%d] = %v, per-pair dot %v", sh, i, j, dense[i][j], want)
				}
				// Row j of b equals row j-1 (i%17 == 5): same scores, to the bit.
				if j%17 == 5 && j > 0 && dense[i][j] != dense[i][j-1] {
					t.Fatalf("%v: duplicate rows %d and %d of b score %v and %v", sh, j-1, j, dense[i][j-1], dense[i][j])
				}
			}
		}
		if sh.m > 3 && dense[3][0] != 0 {
			t.Fatalf("%v: zero vector scores %v", sh, dense[3][0])
		}
		if got := dense[0][sh.n-1]; math.Abs(got-1) > 1e-15 {
			t.Fatalf("%v: a row with itself scores %v", sh, got)
		}
	}
}

// TestGramMatchesPerPair compares Uniformity and Retrieval with the per-pair
// implementations they replaced, on dense and on sparse data, through both
// paths, with duplicates, a zero vector and duplicate classes. Serial: it
// sets forcePath.
func TestGramMatchesPerPair(t *testing.T) {
	defer func(p simPath) { forcePath = p }(forcePath)
	sets := map[string][2][][]float32{
		"dense":  {randomVectors(203, 70, 5), randomVectors(203, 70, 6)},
		"sparse": {sparseVectors(203, 400, 12, 5), sparseVectors(203, 400, 12, 6)},
	}
	class := make([]int, 203)
	for i := range class {
		class[i] = i
		if i%10 == 9 {
			class[i] = i - 1
		}
	}
	ks := []int{1, 5, 10, 20}
	for name, s := range sets {
		q, c := s[0], s[1]
		c[7] = append([]float32(nil), c[8]...) // a tie between two candidates
		wantU := refUniformity(q)
		for _, cl := range [][]int{nil, class} {
			want := refRanks(q, c, cl)
			for _, path := range []simPath{pathAuto, pathDense, pathSparse} {
				forcePath = path
				u, err := Uniformity(q)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(u-wantU) > 1e-12 {
					t.Errorf("%s path %d: uniformity %.15g, per-pair %.15g", name, path, u, wantU)
				}
				res, err := Retrieval(q, c, ks, cl)
				if err != nil {
					t.Fatal(err)
				}
				var sum float64
				for _, r := range want {
					sum += float64(r)
				}
				if res.MeanRank != sum/float64(len(want)) {
					t.Errorf("%s path %d classes %v: mean rank %v, per-pair %v", name, path, cl != nil, res.MeanRank, sum/float64(len(want)))
				}
				for _, k := range ks {
					hits := 0
					for _, r := range want {
						if r <= k {
							hits++
						}
					}
					if res.Recall[k] != 100*float64(hits)/float64(len(want)) {
						t.Errorf("%s path %d: recall@%d %v, per-pair %v", name, path, k, res.Recall[k], 100*float64(hits)/float64(len(want)))
					}
				}
			}
		}
	}
}

// TestGramDeterministic checks that the number of goroutines does not change
// a single bit. Serial: it sets GOMAXPROCS.
func TestGramDeterministic(t *testing.T) {
	x := randomVectors(300, 96, 9)
	sx := sparseVectors(300, 500, 10, 9)
	run := func() [4]float64 {
		u1, _ := Uniformity(x)
		u2, _ := Uniformity(sx)
		r1, _ := Retrieval(x, sx, []int{1}, nil)
		r2, _ := Retrieval(sx, sx, []int{1}, nil)
		return [4]float64{u1, u2, r1.MeanRank, r2.MeanRank}
	}
	want := run()
	for _, procs := range []int{1, 3} {
		old := runtime.GOMAXPROCS(procs)
		got := run()
		runtime.GOMAXPROCS(old)
		if got != want {
			t.Errorf("GOMAXPROCS %d: %v, with %d: %v", procs, got, old, want)
		}
	}
}

func TestGramErrors(t *testing.T) {
	t.Parallel()
	if _, err := Uniformity([][]float32{{1, 2}, {1}}); err == nil || err.Error() != "uniformity: vector 1 has 1 dimensions, vector 0 has 2" {
		t.Errorf("ragged uniformity: %v", err)
	}
	if _, err := Retrieval([][]float32{{1, 2}, {3, 4}}, [][]float32{{1}, {2}}, []int{1}, nil); err == nil || err.Error() != "retrieval: queries have 2 dimensions, candidates 1" {
		t.Errorf("mismatched retrieval: %v", err)
	}
	if _, err := Retrieval([][]float32{{1, 2}, {3}}, [][]float32{{1, 2}, {2, 1}}, []int{1}, nil); err == nil || err.Error() != "retrieval: query 1 has 1 dimensions, query 0 has 2" {
		t.Errorf("ragged queries: %v", err)
	}
}

// BenchmarkUniformitySparse is uniformity over 2,700 TF-IDF-like vectors
// (8192 dimensions, about 10 non-zeros each), the evaluate.sts case that
// took 42 s with per-pair dot products.
func BenchmarkUniformitySparse(b *testing.B) {
	x := sparseVectors(2700, 8192, 20, 1)
	for b.Loop() {
		if _, err := Uniformity(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUniformityDense8192 is uniformity over 1,000 dense 8192-d
// vectors (the dense path at TF-IDF width; 0.5M pairs).
func BenchmarkUniformityDense8192(b *testing.B) {
	x := randomVectors(1000, 8192, 1)
	for b.Loop() {
		if _, err := Uniformity(x); err != nil {
			b.Fatal(err)
		}
	}
}
