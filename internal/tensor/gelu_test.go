package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The GELU loops' scalar code as activation.go had it before gelu.go, the
// reference the vector routines must match bit for bit.
func refGELUF(x float32) (y, cdf float32) {
	cdf = 0.5 * (1 + erff(x*invSqrt2))
	return x * cdf, cdf
}

func refGELUB(x, cdf, g float32) float32 {
	return g * (cdf + x*invSqrt2Pi*expf(-0.5*x*x))
}

func refGELUTanhF(x float32) (y, t float32) {
	t = tanhf(geluTanhC * (x + geluTanhA*x*x*x))
	return 0.5 * x * (1 + t), t
}

func refGELUTanhB(x, t, g float32) float32 {
	return g * (0.5*(1+t) + 0.5*x*(1-t*t)*geluTanhC*(1+3*geluTanhA*x*x))
}

// geluTestInputs: every 4093rd float32 bit pattern of both signs (every
// binade many times, NaNs included), and 40 bit patterns either side of
// the special values and of the branch points: erff's clamp (|x|/sqrt 2 =
// 4), tanhf's 0.625 and 9 (in the argument u of tanh, found by bisection
// on x), expf's cut-offs in the backward's -x*x/2; shuffled, so NaN lanes
// share blocks with finite ones.
func geluTestInputs() []float32 {
	var xs []float32
	for b := uint32(0); b < 0xff800000; b += 4093 {
		xs = append(xs, math.Float32frombits(b))
		if b < 0x7f800000 {
			xs = append(xs, math.Float32frombits(b|0x80000000))
		}
	}
	tanhArg := func(x float32) float32 { return geluTanhC * (x + geluTanhA*x*x*x) }
	// crossing returns the least x > 0 with tanhArg(x) >= u.
	crossing := func(u float32) float32 {
		lo, hi := uint32(0), math.Float32bits(100)
		for lo < hi {
			mid := lo + (hi-lo)/2
			if tanhArg(math.Float32frombits(mid)) >= u {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return math.Float32frombits(lo)
	}
	edges := append(specials(), 4, 4/invSqrt2, 0.625, 9, crossing(0.625), crossing(9),
		float32(math.Sqrt(2*87.33654)), float32(math.Sqrt(2*88.72283)))
	for _, e := range edges {
		for _, s := range []float32{1, -1} {
			for d := -40; d <= 40; d++ {
				b := int64(math.Float32bits(s*e)) + int64(d)
				if b >= 0 && b <= math.MaxUint32 {
					xs = append(xs, math.Float32frombits(uint32(b)))
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(3, 8))
	r.Shuffle(len(xs), func(i, j int) { xs[i], xs[j] = xs[j], xs[i] })
	return xs
}

// geluTestGrads: n output gradients, normals with a special value (NaN,
// infinities, zeros, subnormals, huge) at every 53rd place.
func geluTestGrads(n int) []float32 {
	r := rand.New(rand.NewPCG(5, 5))
	sp := specials()
	g := make([]float32, n)
	for i := range g {
		g[i] = float32(r.NormFloat64())
		if i%53 == 0 {
			g[i] = sp[r.IntN(len(sp))]
		}
	}
	return g
}

// sameBitsAt returns the first index where got and want differ in their
// bits (NaNs included), or -1.
func sameBitsAt(got, want []float32) int {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i
		}
	}
	return -1
}

// TestGELUBits: geluForward, geluBackward, geluTanhForward and
// geluTanhBackward, through each set of vector routines the CPU has (AVX2,
// AVX-512) and through the scalar loops alone, give the scalar code's
// bits, NaNs' included, for every input of geluTestInputs, on the whole
// sweep, in ParallelFor-like bands, and on every length 0-40 at several
// offsets (the scalar tail, the AVX-512 routines' last block of eight and
// the blocks' NaN fallback).
func TestGELUBits(t *testing.T) {
	defer geluPath{"", geluFwdVec, geluBwdVec, geluTanhFwdVec, geluTanhBwdVec}.use()
	if len(geluPaths) == 0 {
		t.Log("no AVX2: only the scalar loops ran")
	}
	for _, p := range append([]geluPath{{name: "scalar"}}, geluPaths...) {
		t.Run(p.name, func(t *testing.T) {
			p.use()
			testGELUBits(t)
		})
	}
}

func testGELUBits(t *testing.T) {
	xs := geluTestInputs()
	gs := geluTestGrads(len(xs))
	n := len(xs)
	wantY, wantCdf, wantGx := make([]float32, n), make([]float32, n), make([]float32, n)
	wantTY, wantT, wantTGx := make([]float32, n), make([]float32, n), make([]float32, n)
	for i, x := range xs {
		wantY[i], wantCdf[i] = refGELUF(x)
		wantGx[i] = refGELUB(x, wantCdf[i], gs[i])
		wantTY[i], wantT[i] = refGELUTanhF(x)
		wantTGx[i] = refGELUTanhB(x, wantT[i], gs[i])
	}
	y, aux, gx := make([]float32, n), make([]float32, n), make([]float32, n)
	check := func(what string, lo, hi int, got, want [3][]float32) {
		t.Helper()
		for k, name := range [3]string{"y", "aux", "gx"} {
			if i := sameBitsAt(got[k][lo:hi], want[k][lo:hi]); i >= 0 {
				x, v, w := xs[lo+i], got[k][lo+i], want[k][lo+i]
				t.Fatalf("%s, %s: x=%v (%#08x) g=%v: got %v (%#08x), want %v (%#08x)", what, name, x,
					math.Float32bits(x), gs[lo+i], v, math.Float32bits(v), w, math.Float32bits(w))
			}
		}
	}
	// poison marks [lo, hi) of the outputs, so that an element left
	// unwritten fails the check.
	poison := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			y[i], aux[i], gx[i] = math.Float32frombits(0xdeadbeef), math.Float32frombits(0xdeadbeef), math.Float32frombits(0xdeadbeef)
		}
	}
	run := func(what string, lo, hi int) {
		t.Helper()
		poison(lo, hi)
		geluForward(xs[lo:hi], y[lo:hi], aux[lo:hi])
		geluBackward(xs[lo:hi], wantCdf[lo:hi], gs[lo:hi], gx[lo:hi])
		check("gelu "+what, lo, hi, [3][]float32{y, aux, gx}, [3][]float32{wantY, wantCdf, wantGx})
		poison(lo, hi)
		geluTanhForward(xs[lo:hi], y[lo:hi], aux[lo:hi])
		geluTanhBackward(xs[lo:hi], wantT[lo:hi], gs[lo:hi], gx[lo:hi])
		check("gelu_tanh "+what, lo, hi, [3][]float32{y, aux, gx}, [3][]float32{wantTY, wantT, wantTGx})
	}
	run("whole", 0, n)
	for lo := 0; lo < n; lo += 4099 {
		run("band", lo, min(lo+4099, n))
	}
	for l := 0; l <= 40; l++ {
		for _, off := range []int{0, 1, 3, 8, 1001, n - l} {
			run(fmt.Sprintf("len %d at %d", l, off), off, off+l)
		}
	}
	// Every length on the special values alone: NaN in most blocks.
	sp := append(specials(), specials()...)
	copy(xs, sp)
	for i, x := range sp {
		wantY[i], wantCdf[i] = refGELUF(x)
		wantGx[i] = refGELUB(x, wantCdf[i], gs[i])
		wantTY[i], wantT[i] = refGELUTanhF(x)
		wantTGx[i] = refGELUTanhB(x, wantT[i], gs[i])
	}
	for l := 0; l <= 40; l++ {
		run(fmt.Sprintf("specials, len %d", l), 0, l)
		run(fmt.Sprintf("specials, len %d at 40", l), 40, 40+l)
	}
}

// BenchmarkGELU: forward and backward of GELU and tanh GELU over 4M
// elements in ParallelFor bands, as the operators run them, with the
// vector routines (avx2 and avx512, where present) and without (scalar:
// the loops the operators had before gelu.go).
func BenchmarkGELU(b *testing.B) {
	const n = 4 << 20
	r := rand.New(rand.NewPCG(1, 2))
	x, g := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], g[i] = float32(r.NormFloat64()*2), float32(r.NormFloat64())
	}
	y, aux, gx := make([]float32, n), make([]float32, n), make([]float32, n)
	defer geluPath{"", geluFwdVec, geluBwdVec, geluTanhFwdVec, geluTanhBwdVec}.use()
	for _, p := range append([]geluPath{{name: "scalar"}}, geluPaths...) {
		p.use()
		name := p.name
		b.Run("erf/"+name, func(b *testing.B) {
			for b.Loop() {
				ParallelFor(n, 4096, func(lo, hi int) { geluForward(x[lo:hi], y[lo:hi], aux[lo:hi]) })
				ParallelFor(n, 4096, func(lo, hi int) { geluBackward(x[lo:hi], aux[lo:hi], g[lo:hi], gx[lo:hi]) })
			}
		})
		b.Run("tanh/"+name, func(b *testing.B) {
			for b.Loop() {
				ParallelFor(n, 4096, func(lo, hi int) { geluTanhForward(x[lo:hi], y[lo:hi], aux[lo:hi]) })
				ParallelFor(n, 4096, func(lo, hi int) { geluTanhBackward(x[lo:hi], aux[lo:hi], g[lo:hi], gx[lo:hi]) })
			}
		})
	}
}
