package tensor

import "math"

// mulVec, addVec and reluMaskVec, where the CPU has AVX2, are mulInto,
// addInto and reluMaskInto on a positive multiple of 8 elements.
var mulVec, addVec, reluMaskVec func(dst, a, b *float32, n int)

// mulInto sets dst[i] = a[i] * b[i] (dropout's forward and backward: the
// input or the gradient times the mask).
func mulInto(dst, a, b []float32) {
	i := 0
	if mulVec != nil && len(dst) >= 8 {
		i = len(dst) &^ 7
		mulVec(&dst[0], &a[0], &b[0], i)
	}
	for ; i < len(dst); i++ {
		dst[i] = a[i] * b[i]
	}
}

// addInto sets dst[i] = a[i] + b[i] (a gradient summed into another).
func addInto(dst, a, b []float32) {
	i := 0
	if addVec != nil && len(dst) >= 8 {
		i = len(dst) &^ 7
		addVec(&dst[0], &a[0], &b[0], i)
	}
	for ; i < len(dst); i++ {
		dst[i] = a[i] + b[i]
	}
}

// reluMaskInto sets dst[i] = v[i] where x[i] > 0 and +0 elsewhere, NaN x
// included (ReLU's forward with v = x, its backward with v = the output
// gradient), by masking v's bits.
func reluMaskInto(dst, x, v []float32) {
	i := 0
	if reluMaskVec != nil && len(dst) >= 8 {
		i = len(dst) &^ 7
		reluMaskVec(&dst[0], &x[0], &v[0], i)
	}
	for ; i < len(dst); i++ {
		dst[i] = math.Float32frombits(math.Float32bits(v[i]) & positiveMask(x[i]))
	}
}
