package tensor

// The CPU loops of GELU and tanh GELU, eight lanes at a time where the CPU
// has AVX2, sixteen where it has AVX-512 (gelu_amd64.s): every lane
// computes the scalar code's operations in the scalar code's order (erff,
// expf, tanhf; no FMA, as the Go compiler emits none here), so every
// element has the scalar bits, whichever the vector width;
// TestGELUBits compares them over the float32 range. A block of eight
// whose result holds a NaN is redone by the scalar code, since which NaN
// an operation with two NaN operands returns depends on operand order the
// compiler picks; the tail of fewer than eight is scalar too.

// geluForward sets cdf[i] = Phi(x[i]) = 0.5*(1 + erff(x[i]/sqrt 2)) and
// y[i] = x[i]*cdf[i] for every i < len(x).
func geluForward(x, y, cdf []float32) {
	i := 0
	if n := len(x) &^ 7; geluFwdVec != nil && n > 0 {
		y, cdf = y[:len(x)], cdf[:len(x)]
		for i < n {
			i += geluFwdVec(&x[i], &y[i], &cdf[i], n-i, &geluConsts)
			if i < n {
				geluForwardScalar(x[i:i+8], y[i:i+8], cdf[i:i+8])
				i += 8
			}
		}
	}
	geluForwardScalar(x[i:], y[i:], cdf[i:])
}

func geluForwardScalar(x, y, cdf []float32) {
	for i := range x {
		c := 0.5 * (1 + erff(x[i]*invSqrt2))
		cdf[i] = c
		y[i] = x[i] * c
	}
}

// geluBackward sets gx[i] = g[i] * (cdf[i] + x[i]*phi(x[i])), the exact
// GELU's derivative times the incoming gradient.
func geluBackward(x, cdf, g, gx []float32) {
	i := 0
	if n := len(x) &^ 7; geluBwdVec != nil && n > 0 {
		cdf, g, gx = cdf[:len(x)], g[:len(x)], gx[:len(x)]
		for i < n {
			i += geluBwdVec(&x[i], &cdf[i], &g[i], &gx[i], n-i, &geluConsts, &expConsts)
			if i < n {
				geluBackwardScalar(x[i:i+8], cdf[i:i+8], g[i:i+8], gx[i:i+8])
				i += 8
			}
		}
	}
	geluBackwardScalar(x[i:], cdf[i:], g[i:], gx[i:])
}

func geluBackwardScalar(x, cdf, g, gx []float32) {
	for i := range x {
		x := x[i]
		gx[i] = g[i] * (cdf[i] + x*invSqrt2Pi*expf(-0.5*x*x))
	}
}

// geluTanhForward sets t[i] = tanhf(sqrt(2/pi) (x + 0.044715 x^3)) and
// y[i] = 0.5 x (1 + t[i]).
func geluTanhForward(x, y, t []float32) {
	i := 0
	if n := len(x) &^ 7; geluTanhFwdVec != nil && n > 0 {
		y, t = y[:len(x)], t[:len(x)]
		for i < n {
			i += geluTanhFwdVec(&x[i], &y[i], &t[i], n-i, &geluConsts, &expConsts)
			if i < n {
				geluTanhForwardScalar(x[i:i+8], y[i:i+8], t[i:i+8])
				i += 8
			}
		}
	}
	geluTanhForwardScalar(x[i:], y[i:], t[i:])
}

func geluTanhForwardScalar(x, y, t []float32) {
	for i := range x {
		x := x[i]
		tt := tanhf(geluTanhC * (x + geluTanhA*x*x*x))
		t[i] = tt
		y[i] = 0.5 * x * (1 + tt)
	}
}

// geluTanhBackward sets gx[i] = g[i] times the tanh GELU's derivative at
// x[i], given t[i] from the forward pass.
func geluTanhBackward(x, t, g, gx []float32) {
	i := 0
	if n := len(x) &^ 7; geluTanhBwdVec != nil && n > 0 {
		t, g, gx = t[:len(x)], g[:len(x)], gx[:len(x)]
		for i < n {
			i += geluTanhBwdVec(&x[i], &t[i], &g[i], &gx[i], n-i, &geluConsts)
			if i < n {
				geluTanhBackwardScalar(x[i:i+8], t[i:i+8], g[i:i+8], gx[i:i+8])
				i += 8
			}
		}
	}
	geluTanhBackwardScalar(x[i:], t[i:], g[i:], gx[i:])
}

func geluTanhBackwardScalar(x, t, g, gx []float32) {
	for i := range x {
		x, t := x[i], t[i]
		gx[i] = g[i] * (0.5*(1+t) + 0.5*x*(1-t*t)*geluTanhC*(1+3*geluTanhA*x*x))
	}
}

// The vector routines, where the CPU has AVX2 or AVX-512: each handles
// the first n (a positive multiple of 8) elements and returns how many it
// wrote, a multiple of 8, less than n when the block of eight after them
// has a NaN result (which it leaves unwritten).
var (
	geluFwdVec     func(x, y, cdf *float32, n int, c *[32]float32) int
	geluBwdVec     func(x, cdf, g, gx *float32, n int, c *[32]float32, e *[16]float32) int
	geluTanhFwdVec func(x, y, t *float32, n int, c *[32]float32, e *[16]float32) int
	geluTanhBwdVec func(x, t, g, gx *float32, n int, c *[32]float32) int
)

// geluPath is one set of the vector routines; geluPaths holds those the
// CPU has, the one in use last, for the tests and benchmarks to compare.
type geluPath struct {
	name    string
	fwd     func(x, y, cdf *float32, n int, c *[32]float32) int
	bwd     func(x, cdf, g, gx *float32, n int, c *[32]float32, e *[16]float32) int
	tanhFwd func(x, y, t *float32, n int, c *[32]float32, e *[16]float32) int
	tanhBwd func(x, t, g, gx *float32, n int, c *[32]float32) int
}

var geluPaths []geluPath

// use makes p's routines the ones the GELU loops call (nil: the scalar
// loops).
func (p geluPath) use() {
	geluFwdVec, geluBwdVec, geluTanhFwdVec, geluTanhBwdVec = p.fwd, p.bwd, p.tanhFwd, p.tanhBwd
}

// geluConsts are the GELUs' constants as the Go compiler rounds them to
// float32, at the offsets (4 bytes each) gelu_amd64.s reads them.
var geluConsts = [32]float32{
	invSqrt2, // 0
	-4, 4,    // 1, 2: erff's clamp
	// 3-9: erff's numerator, highest degree first
	-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
	-7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02,
	// 10-14: erff's denominator
	-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
	-1.42647390514189e-02,
	1, 0.5, invSqrt2Pi, -0.5, // 15-18
	geluTanhA, geluTanhC, 9, 0.625, 2, 3 * geluTanhA, // 19-24
	// 25-29: tanhf's polynomial, highest degree first (the third and fifth
	// subtracted)
	-5.70498872745e-3, 2.06390887954e-2, 5.37397155531e-2, 1.33314422036e-1, 3.33332819422e-1,
}
