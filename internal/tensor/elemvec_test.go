package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// elemValues are float32s over many exponents with the special values
// (signed zeros, infinities, NaN, denormals) mixed in.
func elemValues(r *rand.Rand, n int) []float32 {
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), 1e-45, -1e-45, 1e-40, -1e-40, math.MaxFloat32, -math.MaxFloat32}
	x := make([]float32, n)
	for i := range x {
		if r.IntN(6) == 0 {
			x[i] = specials[r.IntN(len(specials))]
		} else {
			x[i] = float32(r.NormFloat64() * math.Pow(2, float64(r.IntN(200)-100)))
		}
	}
	return x
}

// TestElemVecBits: mulInto, addInto and reluMaskInto give the scalar loops' bits
// (a NaN product matching any NaN: which operand's payload x86 keeps
// depends on the compiled order) at every length around the vector width.
func TestElemVecBits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 9))
	for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 127, 128, 129, 1000, 8197} {
		a, b, x := elemValues(r, n), elemValues(r, n), elemValues(r, n)
		got := make([]float32, n)
		mulInto(got, a, b)
		for i := range got {
			want := a[i] * b[i]
			if !(want != want && got[i] != got[i]) && math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("n %d: mul %v * %v = %v (%#08x), scalar %v (%#08x)", n, a[i], b[i], got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
		addInto(got, a, b)
		for i := range got {
			want := a[i] + b[i]
			if !(want != want && got[i] != got[i]) && math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("n %d: add %v + %v = %v (%#08x), scalar %v (%#08x)", n, a[i], b[i], got[i], math.Float32bits(got[i]), want, math.Float32bits(want))
			}
		}
		for _, v := range [][]float32{x, b} { // forward (v = x) and backward
			reluMaskInto(got, x, v)
			for i := range got {
				want := math.Float32frombits(math.Float32bits(v[i]) & positiveMask(x[i]))
				if math.Float32bits(got[i]) != math.Float32bits(want) {
					t.Fatalf("n %d: relu mask of %v by x %v = %#08x, scalar %#08x", n, v[i], x[i], math.Float32bits(got[i]), math.Float32bits(want))
				}
			}
		}
	}
}

// TestGatherSliceBackwardBits: Gather's backward, split by columns over
// the cores, sums every element's rows in index order (repeated indexes
// included), and SliceCols' backward zero-fills around the slice: both
// against the serial loops, bit for bit, on shapes large enough to split.
func TestGatherSliceBackwardBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	rows, cols := 300, 96
	x := param(rng, rows, cols, 1)
	idx := make([]int, 2000)
	for i := range idx {
		idx[i] = rng.IntN(rows / 10) // many repeats
	}
	g := Gather(x, idx)
	s := SliceCols(g, 17, 80)
	w := param(rng, len(idx), 80-17, 1e3)
	if err := Backward(Sum(Mul(s, w))); err != nil {
		t.Fatal(err)
	}
	W := Data(w)
	want := make([]float32, rows*cols)
	for p, i := range idx {
		for j := 17; j < 80; j++ {
			want[i*cols+j] += W[p*(80-17)+j-17] // d Sum(s*w)/ds = w, in index order
		}
	}
	got := GradData(x)
	for k := range want {
		if math.Float32bits(got[k]) != math.Float32bits(want[k]) {
			t.Fatalf("gradient element %d (row %d col %d) = %v, serial sum %v", k, k/cols, k%cols, got[k], want[k])
		}
	}
}
