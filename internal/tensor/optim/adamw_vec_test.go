package optim

import (
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// adamwRef is Step's scalar loop as it stood before the vector path (the
// body of its ParallelFor closure), kept verbatim as the reference.
func adamwRef(p, g, m, v []float32, decay, b1, b2, stepSize, sqrtBC2, eps float32) {
	for j := range p {
		if decay != 1 {
			p[j] *= decay
		}
		gj := g[j]
		m[j] = b1*m[j] + (1-b1)*gj
		v[j] = b2*v[j] + (1-b2)*gj*gj
		denom := float32(math.Sqrt(float64(v[j])))/sqrtBC2 + eps
		p[j] -= stepSize * m[j] / denom
	}
}

// coef builds Step's coefficients.
func coef(decay, b1, b2, stepSize, sqrtBC2, eps float32) adamwCoef {
	return adamwCoef{decay, b1, 1 - b1, b2, 1 - b2, stepSize, sqrtBC2, eps}
}

// specials are values a lane may meet: zeros, infinities, NaNs (quiet and
// signalling, both signs, with payloads), denormals and the extremes.
var specials = []float32{
	0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
	math.Float32frombits(0x7fc00000), math.Float32frombits(0xffc00000), math.Float32frombits(0x7fc12345),
	math.Float32frombits(0x7f800001), math.Float32frombits(0xff812345), math.Float32frombits(0x7fbfffff),
	math.Float32frombits(1), math.Float32frombits(0x80000001), math.Float32frombits(0x007fffff),
	math.Float32frombits(0x00800000), math.Float32frombits(0x80800000), math.MaxFloat32, -math.MaxFloat32,
	1, -1, 1e-20, 1e20,
}

// wide draws a float32 with a random sign and mantissa and an exponent
// uniform over [lo, hi] (biased exponents: 0 is denormal, 255 Inf/NaN);
// one value in 16 is a special.
func wide(r *rand.Rand, lo, hi int) float32 {
	if r.IntN(16) == 0 {
		return specials[r.IntN(len(specials))]
	}
	e := uint32(lo + r.IntN(hi-lo+1))
	return math.Float32frombits(r.Uint32()&0x807fffff | e<<23)
}

// fill sets p, g, m and v for one of the test's value distributions.
func fill(r *rand.Rand, kind int, p, g, m, v []float32) {
	for j := range p {
		switch kind {
		case 0: // training-like: moments consistent with the gradients
			p[j] = wide(r, 100, 135)
			g[j] = wide(r, 70, 130)
			m[j] = wide(r, 70, 130)
			v[j] = float32(math.Abs(float64(wide(r, 20, 130))))
		case 1: // every exponent, v of either sign
			p[j], g[j], m[j], v[j] = wide(r, 0, 255), wide(r, 0, 255), wide(r, 0, 255), wide(r, 0, 255)
		case 2: // near overflow and underflow
			p[j], g[j], m[j], v[j] = wide(r, 0, 30), wide(r, 0, 40), wide(r, 220, 254), wide(r, 0, 254)
		case 3: // any 32 bits
			p[j], g[j], m[j], v[j] = math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32()),
				math.Float32frombits(r.Uint32()), math.Float32frombits(r.Uint32())
		}
	}
}

// coefSets are (decay, b1, b2, stepSize, sqrtBC2, eps) sets: PyTorch's
// defaults early and late in training, other betas, and extremes (zero
// betas and eps, a denormal eps, huge and tiny steps, a decay of 0, a
// negative and a NaN decay). Each runs with its decay and with decay 1.
var coefSets = [][6]float32{
	{0.99999, 0.9, 0.999, 1e-3, float32(math.Sqrt(1 - 0.999)), 1e-8},
	{0.999, 0.9, 0.999, 1e-4 / (1 - 0.348678), float32(math.Sqrt(1 - 0.990045)), 1e-8},
	{0.9, 0.8, 0.98, 5e-5, 0.5, 1e-6},
	{0.5, 0, 0, 1, 1, 0},
	{0, 0.999999, 0.5, 1e30, 1e-20, 1e-45},
	{-1.5, 0.1, 0.9999, 1e-30, 3e20, 1e-3},
	{float32(math.NaN()), 0.9, 0.999, 1e-3, 0.03, 1e-8},
}

// TestAdamWVecBits: adamwUpdate (the AVX2 lanes plus the scalar tail)
// leaves p, m and v with adamwRef's bits, NaN payloads included, for every
// coefficient set, with and without decay, on lengths 0 to 40 and longer
// ones, from random (mostly not 32-byte aligned) offsets. Swapping two
// operations, an FMA, or the operands of the m sum (a NaN payload) fails it.
func TestAdamWVecBits(t *testing.T) {
	if adamwVec == nil {
		t.Log("no AVX2: only the scalar loop runs")
	}
	r := rand.New(rand.NewPCG(3, 8))
	var lens []int
	for n := 0; n <= 40; n++ {
		lens = append(lens, n)
	}
	lens = append(lens, 1000, 4099, 1<<15+5)
	for ci, cs := range coefSets {
		for _, decay := range []float32{cs[0], 1} {
			c := coef(decay, cs[1], cs[2], cs[3], cs[4], cs[5])
			for kind := 0; kind < 4; kind++ {
				for _, n := range lens {
					off := r.IntN(8)
					buf := make([][]float32, 7)
					for i := range buf {
						buf[i] = make([]float32, off+n)[off:]
					}
					p, g, m, v := buf[0], buf[1], buf[2], buf[3]
					fill(r, kind, p, g, m, v)
					want := [3][]float32{buf[4], buf[5], buf[6]}
					copy(want[0], p)
					copy(want[1], m)
					copy(want[2], v)
					in := [4][]float32{append([]float32(nil), p...), append([]float32(nil), g...),
						append([]float32(nil), m...), append([]float32(nil), v...)}
					adamwRef(want[0], g, want[1], want[2], decay, cs[1], cs[2], cs[3], cs[4], cs[5])
					adamwUpdate(p, g, m, v, c)
					for j := range p {
						for k, got := range [3][]float32{p, m, v} {
							if a, b := math.Float32bits(got[j]), math.Float32bits(want[k][j]); a != b {
								t.Fatalf("set %d decay %v kind %d n %d j %d: %c %#08x, scalar %#08x (in: p %#08x g %#08x m %#08x v %#08x)",
									ci, decay, kind, n, j, "pmv"[k], a, b, math.Float32bits(in[0][j]), math.Float32bits(in[1][j]),
									math.Float32bits(in[2][j]), math.Float32bits(in[3][j]))
							}
						}
						if math.Float32bits(g[j]) != math.Float32bits(in[1][j]) {
							t.Fatalf("g[%d] written", j)
						}
					}
				}
			}
		}
	}
}

//go:noinline
func sqrt64(x float64) float64 { return math.Sqrt(x) }

// TestAdamWVecSqrt: the square root. float32(math.Sqrt(float64(v))), which
// the compiler turns into SQRTSS on amd64 (VSQRTPS's scalar form), equals
// the float64 root rounded to float32 (rounding twice is innocuous for a
// square root), over a sweep of float32 bit patterns (every 4093rd of both
// signs, and those around the specials); and through adamwUpdate with
// coefficients that make p' = -(k/sqrt(v)), the lanes agree with adamwRef
// on them. REPRO_ADAMW_EXHAUSTIVE=1 takes every bit pattern instead (75 s).
func TestAdamWVecSqrt(t *testing.T) {
	const chunk = 1 << 20
	// each calls f on successive chunks of the values.
	each := func(f func(vs []float32)) {
		vs := make([]float32, 0, chunk)
		if os.Getenv("REPRO_ADAMW_EXHAUSTIVE") == "1" {
			for b := uint64(0); b < 1<<32; b++ {
				if vs = append(vs, math.Float32frombits(uint32(b))); len(vs) == chunk {
					f(vs)
					vs = vs[:0]
				}
			}
			return
		}
		for b := uint64(0); b < 1<<32; b += 4093 {
			vs = append(vs, math.Float32frombits(uint32(b)))
		}
		for _, s := range specials {
			for d := -40; d <= 40; d++ {
				b := int64(math.Float32bits(s)) + int64(d)
				if b >= 0 && b <= math.MaxUint32 {
					vs = append(vs, math.Float32frombits(uint32(b)))
				}
			}
		}
		for lo := 0; lo < len(vs); lo += chunk {
			f(vs[lo:min(lo+chunk, len(vs))])
		}
	}
	// p = 0, g = 0, m in {1, 3, 0.7}, b1 = b2 = 1: m' = m, v' = +0 + v,
	// denom = sqrt(v') (sqrtBC2 1, eps -0), p' = 0 - m/sqrt(v').
	c := coef(1, 1, 1, 1, 1, float32(math.Copysign(0, -1)))
	r := rand.New(rand.NewPCG(5, 5))
	p, g, m, v := make([]float32, chunk), make([]float32, chunk), make([]float32, chunk), make([]float32, chunk)
	wp, wm, wv := make([]float32, chunk), make([]float32, chunk), make([]float32, chunk)
	each(func(vs []float32) {
		for _, x := range vs {
			a := float32(math.Sqrt(float64(x))) // the compiler's SQRTSS on amd64
			b := float32(sqrt64(float64(x)))    // a float64 root rounded to float32
			if math.Float32bits(a) != math.Float32bits(b) {
				t.Fatalf("sqrt(%#08x): %#08x, through float64 %#08x", math.Float32bits(x), math.Float32bits(a), math.Float32bits(b))
			}
		}
		n := len(vs)
		for j := range n {
			p[j], g[j], m[j] = 0, 0, []float32{1, 3, 0.7}[r.IntN(3)]
		}
		copy(v, vs)
		copy(wp, p[:n])
		copy(wm, m[:n])
		copy(wv, v[:n])
		adamwRef(wp[:n], g[:n], wm[:n], wv[:n], c[0], c[1], c[3], c[5], c[6], c[7])
		adamwUpdate(p[:n], g[:n], m[:n], v[:n], c)
		for j := range n {
			if math.Float32bits(p[j]) != math.Float32bits(wp[j]) || math.Float32bits(v[j]) != math.Float32bits(wv[j]) {
				t.Fatalf("v %#08x: p' %#08x v' %#08x, scalar %#08x %#08x", math.Float32bits(vs[j]),
					math.Float32bits(p[j]), math.Float32bits(v[j]), math.Float32bits(wp[j]), math.Float32bits(wv[j]))
			}
		}
	})
}

// TestAdamWStepVecBits: Step on a parameter split by ParallelFor gives
// the same bits with and without the vector path.
func TestAdamWStepVecBits(t *testing.T) {
	const n = 3<<15 + 13
	run := func() []float32 {
		rr := rand.New(rand.NewPCG(7, 7))
		p, g := make([]float32, n), make([]float32, n)
		a, err := NewAdamW([]int{n, n}, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		q, h := make([]float32, n), make([]float32, n)
		for step := 0; step < 3; step++ {
			for j := range p {
				if step == 0 {
					p[j], q[j] = float32(rr.NormFloat64()), float32(rr.NormFloat64())
				}
				g[j], h[j] = float32(rr.NormFloat64())*1e-2, float32(rr.NormFloat64())
			}
			a.Step([][]float32{p, q}, [][]float32{g, h}, 1e-3, []float64{0.01, 0})
		}
		return append(append(append(p, q...), a.M[0]...), a.V[1]...)
	}
	got := run()
	saved := adamwVec
	adamwVec = nil
	want := run()
	adamwVec = saved
	for j := range got {
		if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
			t.Fatalf("element %d: %#08x, scalar %#08x", j, math.Float32bits(got[j]), math.Float32bits(want[j]))
		}
	}
}

// BenchmarkAdamWStep: one update of a 16M-element parameter (weight decay
// on), the CPU path, with the vector lanes (vec) and without (scalar).
func BenchmarkAdamWStep(b *testing.B) {
	const n = 1 << 24
	r := rand.New(rand.NewPCG(1, 2))
	p, g := make([]float32, n), make([]float32, n)
	for i := range p {
		p[i] = float32(r.NormFloat64())
		g[i] = float32(r.NormFloat64()) * 1e-3
	}
	a, err := NewAdamW([]int{n}, 0, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	saved := adamwVec
	defer func() { adamwVec = saved }()
	for _, name := range []string{"vec", "scalar"} {
		b.Run(name, func(b *testing.B) {
			adamwVec = saved
			if name == "scalar" {
				adamwVec = nil
			}
			b.SetBytes(n * 4)
			for range b.N {
				a.Step([][]float32{p}, [][]float32{g}, 1e-4, []float64{0.01})
			}
		})
	}
}
