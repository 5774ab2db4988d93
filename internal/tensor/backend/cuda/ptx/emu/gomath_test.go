package emu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"repro/internal/tensor/backend"
)

// goExpAsm is exp_amd64.s written in Go, both paths (math.FMA for each
// VFMADD/VFNMADD): the kernels' k_go_exp must compute it bit for bit on
// every input, whichever path this machine's math.Exp takes, and on this
// machine it must be math.Exp.
func goExpAsm(x float64, fma bool) float64 {
	const (
		ln2U  = 0.69314718055966295651160180568695068359375
		ln2L  = 0.28235290563031577122588448175013436025525412068e-12
		log2e = 1.4426950408889634073599246810018920
	)
	c := [...]float64{2.4801587301587301587e-5, 1.9841269841269841270e-4, 1.3888888888888888889e-3,
		8.3333333333333333333e-3, 4.1666666666666666667e-2, 1.6666666666666666667e-1, 0.5, 1.0}
	bx := math.Float64bits(x)
	if bx&^(1<<63) >= 0x7ff0000000000000 {
		if bx == 0xfff0000000000000 {
			return 0
		}
		return x
	}
	if x > 7.09782712893384e+02 {
		return math.Inf(1)
	}
	v := log2e * x
	k := int32(math.MinInt32)
	if v >= -2147483648.0 {
		k = int32(math.RoundToEven(v))
	}
	kd := float64(k)
	var r, p float64
	if fma {
		r = math.FMA(-kd, ln2U, x)
		r = math.FMA(-kd, ln2L, r)
		r *= 0.0625
		p = c[0]
		for _, ci := range c[1:] {
			p = math.FMA(p, r, ci)
		}
		r *= p
		for i := 0; i < 3; i++ {
			p = r + 2
			r *= p
		}
		p = r + 2
		r = math.FMA(r, p, 1)
	} else {
		r = x - kd*ln2U
		r = r - kd*ln2L
		r *= 0.0625
		p = c[0] * r
		for i, ci := range c[1:] {
			p += ci
			if i < len(c)-2 {
				p *= r
			}
		}
		r *= p
		for i := 0; i < 4; i++ {
			p = 2 + r
			r *= p
		}
		r += 1
	}
	e := k + 0x3ff
	if e <= 0 {
		if e < -52 {
			return 0
		}
		r *= math.Float64frombits(uint64(e+0x3fe) << 52)
		e = 1
	} else if e >= 0x7ff {
		return math.Inf(1)
	}
	return r * math.Float64frombits(uint64(e)<<52)
}

// mathInputs are arguments for exp, log and tanh: random over many scales,
// the boundaries of each branch, specials.
func mathInputs(r *rand.Rand) []float64 {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.625, -0.625, 0.6249999999999999, 44.014845965556525, 44.01484596555653,
		709.782712893384, 709.7827128933841, -708.3964185322641, -709.08956571282405, -744.44007192138126, -745.1332191019411, -746, -1e300, 1e300,
		math.Ln2 / 2, 1 / (1 << 28), -1 / (1 << 28), math.Sqrt2 / 2, 7.07106781186547524401e-01, math.Nextafter(math.Sqrt2/2, 1), math.Nextafter(math.Sqrt2/2, 0),
		math.SmallestNonzeroFloat64, 2.2250738585072014e-308, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN()}
	for i := 0; i < 20000; i++ {
		switch i % 4 {
		case 0:
			xs = append(xs, (r.Float64()*2-1)*20)
		case 1:
			xs = append(xs, (r.Float64()*2-1)*745)
		case 2:
			xs = append(xs, math.Ldexp(r.Float64(), r.IntN(80)-60)*float64(1-2*r.IntN(2)))
		default:
			xs = append(xs, float64(float32(r.NormFloat64()*3))) // float32 arguments, as the operators pass
		}
	}
	return xs
}

func sameF64(a, b float64) bool {
	return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
}

// TestGoMath: k_go_exp (both paths), k_go_log and k_go_tanh against
// exp_amd64.s in Go and against this machine's math.Exp, math.Log and
// math.Tanh, bit for bit.
func TestGoMath(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	xs := mathInputs(r)
	for _, fma := range []bool{false, true} {
		for _, x := range xs {
			if got, want := GoExp(x, fma), goExpAsm(x, fma); !sameF64(got, want) {
				t.Fatalf("k_go_exp(%v, fma=%v) = %v (%#x), exp_amd64.s in Go %v (%#x)", x, fma, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
	}
	if runtime.GOARCH != "amd64" {
		t.Skipf("math.Exp and math.Log are not exp_amd64.s and log_amd64.s on %s", runtime.GOARCH)
	}
	t.Logf("math.Exp takes the FMA path here: %v", backend.GoExpFMA)
	diff := 0
	for _, x := range xs {
		if got, want := GoExp(x, backend.GoExpFMA), math.Exp(x); !sameF64(got, want) {
			t.Fatalf("k_go_exp(%v) = %v, math.Exp %v", x, got, want)
		}
		if !sameF64(GoExp(x, true), GoExp(x, false)) {
			diff++
		}
		ax := math.Abs(x)
		if got, want := GoLog(ax), math.Log(ax); !sameF64(got, want) {
			t.Fatalf("k_go_log(%v) = %v, math.Log %v", ax, got, want)
		}
		if got, want := GoLog(x), math.Log(x); !sameF64(got, want) {
			t.Fatalf("k_go_log(%v) = %v, math.Log %v", x, got, want)
		}
		if got, want := GoTanh(x, backend.GoExpFMA), math.Tanh(x); !sameF64(got, want) {
			t.Fatalf("k_go_tanh(%v) = %v, math.Tanh %v", x, got, want)
		}
	}
	// The two paths do differ: the argument is not idle.
	t.Logf("exp's two paths differ on %d of %d inputs", diff, len(xs))
	if diff == 0 {
		t.Error("exp's FMA and plain paths never differ: the fma argument is not reaching the kernel")
	}
}
