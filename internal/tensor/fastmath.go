package tensor

import "math"

// ExpF is the float32 exp the operators use (expf below), for code that
// must compute what they compute (sampling's softmax).
func ExpF(x float32) float32 { return expf(x) }

// expf is a float32 exp (Cephes' expf: range reduction by ln 2 and a
// degree-6 polynomial, relative error about 1e-7), several times faster
// than rounding math.Exp; softmax, cross-entropy and GELU spend most of
// their time here.
func expf(x float32) float32 {
	switch {
	case x > 88.72283:
		return float32(math.Inf(1))
	case x < -87.33654:
		return 0 // below the smallest normal float32
	case x != x:
		return x
	}
	n := float32(math.Floor(float64(x*1.44269504088896341 + 0.5)))
	r := x - n*0.693359375 - n*-2.12194440e-4
	z := r * r
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	p = p*z + r + 1
	if n > 127 { // 2^128 is not a float32: apply the scale in two factors
		return p * 2 * math.Float32frombits(uint32(int32(n)+126)<<23)
	}
	return p * math.Float32frombits(uint32(int32(n)+127)<<23)
}

// erff is a float32 erf: a rational approximation (odd degree-13
// numerator over even degree-8 denominator, Eigen's
// generic_fast_erf_float) on [-4, 4], beyond which erf is +-1 in float32.
func erff(x float32) float32 {
	x = min(max(x, -4), 4)
	x2 := x * x
	p := x2*-2.72614225801306e-10 + 2.77068142495902e-08
	p = x2*p + -2.10102402082508e-06
	p = x2*p + -5.69250639462346e-05
	p = x2*p + -7.34990630326855e-04
	p = x2*p + -2.95459980854025e-03
	p = x2*p + -1.60960333262415e-02
	p *= x
	q := x2*-1.45660718464996e-05 + -2.13374055278905e-04
	q = x2*q + -1.68282697438203e-03
	q = x2*q + -7.37332916720468e-03
	q = x2*q + -1.42647390514189e-02
	return p / q
}

// tanhf is a float32 tanh (Cephes' tanhf: an odd polynomial below
// |x| = 0.625, 1 - 2/(exp(2|x|)+1) above, +-1 beyond |x| = 9 where tanh
// rounds to 1 in float32); absolute error about 1e-7. The CUDA kernels
// compute the same function operation by operation (kernels.h, k_tanhf).
func tanhf(x float32) float32 {
	z := x
	if z < 0 {
		z = -z
	}
	switch {
	case x != x:
		return x
	case z > 9:
		if x > 0 {
			return 1
		}
		return -1
	case z >= 0.625:
		z = 1 - 2/(expf(z+z)+1)
		if x < 0 {
			z = -z
		}
		return z
	}
	s := x * x
	return ((((-5.70498872745e-3*s+2.06390887954e-2)*s-5.37397155531e-2)*s+1.33314422036e-1)*s-3.33332819422e-1)*s*x + x
}
