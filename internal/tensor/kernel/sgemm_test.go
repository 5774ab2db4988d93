package kernel

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// operands builds random stored operands for op(A) m x k and op(B) k x n with
// leading dimensions padded by pad (so strides differ from widths), and a C
// pre-filled with random values (or NaN, to prove beta == 0 never reads it).
type operands struct {
	transA, transB bool
	m, n, k        int
	lda, ldb, ldc  int
	a, b, c        []float32
}

func newOperands(r *rand.Rand, transA, transB bool, m, n, k, pad int, nanC bool) operands {
	o := operands{transA: transA, transB: transB, m: m, n: n, k: k}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	o.lda, o.ldb, o.ldc = max(1, ac)+pad, max(1, bc)+pad, max(1, n)+pad
	o.a = randSlice(r, ar*o.lda)
	o.b = randSlice(r, br*o.ldb)
	o.c = randSlice(r, m*o.ldc)
	if nanC {
		for i := range o.c {
			o.c[i] = float32(math.NaN())
		}
	}
	return o
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

func (o operands) at(x []float32, ld int, trans bool, i, j int) float64 {
	if trans {
		return float64(x[j*ld+i])
	}
	return float64(x[i*ld+j])
}

// reference computes the expected C in float64 and, per element, a bound on
// the float32 rounding error: (k+3) units of float32 roundoff times the sum
// of the magnitudes of the terms.
func (o operands) reference(alpha, beta float32) (want, bound []float64) {
	want = make([]float64, len(o.c))
	bound = make([]float64, len(o.c))
	const u = 1.0 / (1 << 24)
	for i := 0; i < o.m; i++ {
		for j := 0; j < o.n; j++ {
			var s, mag float64
			for p := 0; p < o.k; p++ {
				t := o.at(o.a, o.lda, o.transA, i, p) * o.at(o.b, o.ldb, o.transB, p, j)
				s += t
				mag += math.Abs(t)
			}
			w := float64(alpha) * s
			mag *= math.Abs(float64(alpha))
			if beta != 0 {
				cv := float64(beta) * float64(o.c[i*o.ldc+j])
				w += cv
				mag += math.Abs(cv)
			}
			want[i*o.ldc+j] = w
			bound[i*o.ldc+j] = float64(o.k+3)*u*mag + 1e-30
		}
	}
	return want, bound
}

func (o operands) run(alpha, beta float32) []float32 {
	c := append([]float32(nil), o.c...)
	Sgemm(o.transA, o.transB, o.m, o.n, o.k, alpha, o.a, o.lda, o.b, o.ldb, beta, c, o.ldc)
	return c
}

func checkAgainstReference(t *testing.T, o operands, alpha, beta float32) {
	t.Helper()
	got := o.run(alpha, beta)
	want, bound := o.reference(alpha, beta)
	bad := 0
	for i := 0; i < o.m; i++ {
		for j := 0; j < o.n; j++ {
			x := i*o.ldc + j
			if d := math.Abs(float64(got[x]) - want[x]); !(d <= bound[x]) {
				if bad < 3 {
					t.Errorf("tA=%v tB=%v m=%d n=%d k=%d alpha=%v beta=%v: C[%d,%d] = %v, want %v (bound %.3g)",
						o.transA, o.transB, o.m, o.n, o.k, alpha, beta, i, j, got[x], want[x], bound[x])
				}
				bad++
			}
		}
		// Padding beyond column n belongs to the caller and must be untouched.
		for j := o.n; j < o.ldc && i*o.ldc+j < len(got); j++ {
			x := i*o.ldc + j
			if math.Float32bits(got[x]) != math.Float32bits(o.c[x]) {
				t.Fatalf("m=%d n=%d k=%d: padding C[%d,%d] changed from %v to %v", o.m, o.n, o.k, i, j, o.c[x], got[x])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d elements wrong", bad, o.m*o.n)
	}
}

// eachKernel runs f with the assembly micro-kernel (when the CPU has one)
// and with the portable one, so both are tested on every machine that can.
func eachKernel(t *testing.T, f func(t *testing.T)) {
	saved, savedFMA := micro, microFMA
	defer func() { micro, microFMA = saved, savedFMA }()
	t.Run(microName, f)
	if microName != "go-6x16" {
		micro, microFMA = genericKernel, false
		t.Run("go-6x16", f)
	}
}

func TestSgemmRandomShapes(t *testing.T) {
	eachKernel(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		// Sizes straddle the tile (6x16), the small-path threshold and the
		// blocking (kc=256, mc=144), including a k spanning two k slices.
		dims := []int{1, 2, 5, 6, 7, 15, 16, 17, 31, 33, 64, 97, 150}
		scalars := [][2]float32{{1, 0}, {1, 1}, {-0.5, 2}, {2, 0.25}}
		for trial := 0; trial < 40; trial++ {
			m := dims[r.IntN(len(dims))]
			n := dims[r.IntN(len(dims))]
			k := dims[r.IntN(len(dims))]
			if trial%10 == 9 {
				k = 257 + r.IntN(300)
			}
			tA, tB := trial&1 == 1, trial&2 == 2
			ab := scalars[trial%len(scalars)]
			pad := r.IntN(3) * 3
			o := newOperands(r, tA, tB, m, n, k, pad, ab[1] == 0 && trial%3 == 0)
			checkAgainstReference(t, o, ab[0], ab[1])
		}
	})
}

func TestSgemmAllTransposesParallel(t *testing.T) {
	defer SetThreads(0)
	SetThreads(3) // odd count: bands of unequal size
	r := rand.New(rand.NewPCG(3, 4))
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			// Tall (split over rows) and wide (split over columns).
			checkAgainstReference(t, newOperands(r, tA, tB, 203, 45, 71, 5, false), 0.75, -1)
			checkAgainstReference(t, newOperands(r, tA, tB, 13, 301, 130, 1, true), 1.5, 0)
		}
	}
}

func TestSgemmDegenerate(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	// k == 0 and alpha == 0 scale C by beta without reading A or B.
	o := newOperands(r, false, false, 7, 9, 0, 2, false)
	checkAgainstReference(t, o, 1, 0.5)
	o = newOperands(r, true, false, 40, 40, 40, 0, true)
	checkAgainstReference(t, o, 0, 0)
	// m == 0 or n == 0: nothing to do, nil slices accepted.
	Sgemm(false, false, 0, 5, 3, 1, nil, 3, make([]float32, 15), 5, 0, nil, 5)
	Sgemm(false, false, 5, 0, 3, 1, make([]float32, 15), 3, nil, 1, 0, nil, 1)
}

func TestCheckErrors(t *testing.T) {
	a := make([]float32, 12)
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"negative", Check(false, false, -1, 2, 2, a, 2, a, 2, a, 2), "negative dimension"},
		{"lda", Check(false, false, 3, 4, 4, a, 3, a, 4, a, 4), "leading dimension of A is 3, want >= 4"},
		{"ldaT", Check(true, false, 5, 2, 2, a, 4, a, 2, a, 2), "leading dimension of A is 4, want >= 5"},
		{"shortB", Check(false, true, 2, 4, 3, a, 3, a[:11], 3, a, 4), "B has 11 elements, want >= 12"},
		{"shortC", Check(false, false, 3, 4, 1, a, 1, a, 4, a[:10], 4), "C has 10 elements, want >= 12"},
	}
	for _, c := range cases {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: got %v, want error containing %q", c.name, c.err, c.want)
		}
	}
	if err := Check(false, false, 3, 4, 1, a, 1, a, 4, a, 4); err != nil {
		t.Errorf("valid arguments rejected: %v", err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(error).Error(), "leading dimension of C") {
			t.Errorf("Sgemm with bad ldc: recovered %v", r)
		}
	}()
	Sgemm(false, false, 2, 2, 2, 1, a, 2, a, 2, 0, a, 1)
}

// TestSgemmDeterministic runs a product large enough to be parallel many
// times and with different goroutine counts; every bit must match.
func TestSgemmDeterministic(t *testing.T) {
	defer SetThreads(0)
	r := rand.New(rand.NewPCG(7, 8))
	m, n, k := 301, 263, 530 // edges in every direction, three k slices
	if testing.Short() {
		m, n, k = 131, 97, 300
	}
	for _, tr := range [][2]bool{{false, false}, {true, true}} {
		o := newOperands(r, tr[0], tr[1], m, n, k, 1, false)
		SetThreads(1)
		ref := o.run(1.25, 0.5)
		for rep := 0; rep < 6; rep++ {
			th := []int{2, 3, 4, 2, 7, 2}[rep]
			SetThreads(th)
			got := o.run(1.25, 0.5)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("run %d with %d goroutines: element %d = %x, single-goroutine %x", rep, th, i, math.Float32bits(got[i]), math.Float32bits(ref[i]))
				}
			}
		}
	}
}

// TestConcurrentCalls checks that Sgemm is safe from many goroutines at once
// (pooled workspaces must never be shared).
func TestConcurrentCalls(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	o := newOperands(r, false, true, 32, 32, 64, 0, false)
	want := o.run(1, 0)
	done := make(chan []float32)
	for g := 0; g < 8; g++ {
		go func() {
			var last []float32
			for i := 0; i < 20; i++ {
				last = o.run(1, 0)
			}
			done <- last
		}()
	}
	for g := 0; g < 8; g++ {
		got := <-done
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("concurrent result differs at %d", i)
			}
		}
	}
}

// FuzzSgemm checks random small products against the float64 reference
// (go test -fuzz FuzzSgemm explores beyond the seeds).
func FuzzSgemm(f *testing.F) {
	f.Add(uint8(7), uint8(17), uint8(5), uint8(0), uint64(1))
	f.Add(uint8(6), uint8(16), uint8(255), uint8(15), uint64(2))
	f.Add(uint8(1), uint8(40), uint8(3), uint8(6), uint64(3))
	f.Fuzz(func(t *testing.T, m, n, k, flags uint8, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 0))
		tA, tB := flags&1 != 0, flags&2 != 0
		beta := float32(flags>>2&3) * 0.5 // 0, 0.5, 1, 1.5
		o := newOperands(r, tA, tB, int(m%64)+1, int(n%64)+1, int(k)+1, int(flags>>4&3), beta == 0)
		checkAgainstReference(t, o, 1.5, beta)
	})
}

// TestRowBandsBits runs products split into row bands (B packed once for
// all bands) over two column blocks and two k slices, every transpose, with
// 2 and 3 goroutines: every bit must match the single-goroutine run.
func TestRowBandsBits(t *testing.T) {
	if testing.Short() {
		t.Skip("a large product")
	}
	defer SetThreads(0)
	r := rand.New(rand.NewPCG(11, 12))
	m, n, k := 1600, nc+29, kc+44
	for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
		o := newOperands(r, tr[0], tr[1], m, n, k, 0, false)
		SetThreads(1)
		ref := o.run(1, 0.5)
		for _, th := range []int{2, 3} {
			SetThreads(th)
			got := o.run(1, 0.5)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(ref[i]) {
					t.Fatalf("trans %v with %d goroutines: element %d = %x, single-goroutine %x", tr, th, i, math.Float32bits(got[i]), math.Float32bits(ref[i]))
				}
			}
		}
	}
}
