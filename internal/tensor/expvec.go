package tensor

import "math"

// expSub sets x[j] = expf(x[j] - m) for every j: the softmax's exponentials,
// eight lanes at a time where the CPU has AVX2 (expSubAVX2), each lane
// computing expf's operations in expf's order (range reduction, the
// polynomial, the scale, the three special cases), so every element has
// expf's bits; TestExpSubBits compares them over the float32 range.
func expSub(x []float32, m float32) { expSubTo(x, x, m) }

// expSubTo sets dst[j] = expf(src[j] - m), as expSub does in place.
func expSubTo(dst, src []float32, m float32) {
	src = src[:len(dst)]
	j := 0
	if expSubVec != nil && len(dst) >= 8 {
		j = len(dst) &^ 7
		expSubVec(&dst[0], &src[0], j, m, &expConsts)
	}
	for ; j < len(dst); j++ {
		dst[j] = expf(src[j] - m)
	}
}

// expSubVec, where the CPU has AVX2, is expSubTo on the first n (a
// multiple of 8, > 0) elements at dst and src (which may be the same).
var expSubVec func(dst, src *float32, n int, m float32, c *[16]float32)

// expConsts are expf's constants as the Go compiler rounds them to
// float32, in the order the assembly reads them.
var expConsts = [16]float32{
	88.72283,             // 0: above: +Inf
	-87.33654,            // 1: below: 0
	1.44269504088896341,  // 2: log2(e)
	0.5,                  // 3
	0.693359375,          // 4: ln 2, high part
	-2.12194440e-4,       // 5: ln 2, low part
	1.9875691500e-4,      // 6: the polynomial, highest degree first
	1.3981999507e-3,      // 7
	8.3334519073e-3,      // 8
	4.1665795894e-2,      // 9
	1.6666665459e-1,      // 10
	5.0000001201e-1,      // 11
	1,                    // 12
	2,                    // 13
	127,                  // 14: the largest n scaled in one factor
	float32(math.Inf(1)), // 15
}
