package tensor

import "math"

// expSum is sum over j, in order, of math.Exp(float64(x[j] - mx)): the
// log-softmax's normaliser. Where the CPU has AVX2 and FMA (math.Exp's
// FMA path then runs), expSumVec computes four exponentials at a time,
// each lane doing exactly math.Exp's operations, and adds them to the sum
// one by one in element order, so the sum has the scalar loop's bits; a
// group of four with a lane outside the range where the lanes match
// math.Exp (NaN, above 700, in [-750, -700)) goes through math.Exp.
// TestExpSumBits compares it with the scalar loop.
func expSum(x []float32, mx float32) float64 {
	var sum float64
	j := 0
	if expSumVec != nil {
		for len(x)-j >= 4 {
			n := (len(x) - j) &^ 3
			var done int
			sum, done = expSumVec(&x[j], n, mx, &expSumConsts, sum)
			j += done
			if done == n {
				break
			}
			for _, v := range x[j : j+4] {
				sum += math.Exp(float64(v - mx))
			}
			j += 4
		}
	}
	for _, v := range x[j:] {
		sum += math.Exp(float64(v - mx))
	}
	return sum
}

// expSumVec, where the CPU has AVX2 and FMA, adds math.Exp(float64(x[j] -
// mx)) to sum for j < n (n a positive multiple of 4) in order, and stops
// at the first group of four holding a lane it cannot compute with
// math.Exp's bits; done is the number of elements added (a multiple of 4).
var expSumVec func(x *float32, n int, mx float32, c *[16][4]float64, sum float64) (s float64, done int)

// expSumConsts are math.Exp's constants (math/exp_amd64.s) and the range
// limits, each repeated in four lanes, in the order the assembly reads
// them.
var expSumConsts = func() (c [16][4]float64) {
	for i, v := range [16]float64{
		700,                                  // 0: the largest argument computed in the lanes
		-700,                                 // 1: the smallest
		-750,                                 // 2: below: math.Exp is 0 (an ignored lane)
		1.4426950408889634073599246810018920, // 3: LOG2E
		0.69314718055966295651160180568695068359375,           // 4: LN2U
		0.28235290563031577122588448175013436025525412068e-12, // 5: LN2L
		0.0625,                   // 6
		2.4801587301587301587e-5, // 7: the Taylor series, highest degree first
		1.9841269841269841270e-4, // 8
		1.3888888888888888889e-3, // 9
		8.3333333333333333333e-3, // 10
		4.1666666666666666667e-2, // 11
		1.6666666666666666667e-1, // 12
		0.5,                      // 13
		1,                        // 14
		2,                        // 15
	} {
		c[i] = [4]float64{v, v, v, v}
	}
	return c
}()

// maxVec, where the CPU has AVX2, is the max of x[0..n) (n a positive
// multiple of 8) by VMAXPS, and whether a NaN was among them (m is then
// meaningless). Without a NaN VMAXPS gives the larger value, but of +0
// and -0 its second operand: only a zero result can differ from Go's max.
var maxVec func(x *float32, n int) (m float32, nan bool)

// subVec, where the CPU has AVX2, sets dst[j] = src[j] - s for j < n (n a
// positive multiple of 8): VSUBPS rounds as SUBSS, and with src[j] as
// the first operand a NaN operand's payload is the scalar code's.
var subVec func(dst, src *float32, n int, s float32)

// scaleVec, where the CPU has AVX2, sets dst[j] = src[j] * g for j < n (n a
// positive multiple of 8), src[j] the first operand: with two NaN
// operands VMULPS, like MULSS, returns the first, quieted.
var scaleVec func(dst, src *float32, n int, g float32)

// subScalar sets dst[j] = src[j] - s.
func subScalar(dst, src []float32, s float32) {
	src = src[:len(dst)]
	j := 0
	if subVec != nil && len(dst) >= 8 {
		j = len(dst) &^ 7
		subVec(&dst[0], &src[0], j, s)
	}
	for ; j < len(dst); j++ {
		dst[j] = src[j] - s
	}
}

// mulScalar sets dst[j] = g * src[j], a NaN src[j] giving itself, quieted,
// whatever g: the bits of the scalar loop before the vector path, which the
// compiler made MULSS with src[j] first (the operand order of a Go product
// varies, so the tail says it explicitly).
func mulScalar(dst, src []float32, g float32) {
	src = src[:len(dst)]
	j := 0
	if scaleVec != nil && len(dst) >= 8 {
		j = len(dst) &^ 7
		scaleVec(&dst[0], &src[0], j, g)
	}
	for ; j < len(dst); j++ {
		if v := src[j]; v == v {
			dst[j] = g * v
		} else {
			dst[j] = math.Float32frombits(math.Float32bits(v) | 1<<22)
		}
	}
}
