package backend

// Kernels is implemented by backends that run the operators' non-GEMM
// kernels themselves (CUDA). The CPU and OpenBLAS backends do not: the
// operators in internal/tensor keep their own loops, which define the
// numerics. An implementation must compute exactly what those loops compute
// (the CUDA kernels are bit-identical to them in emulation), not merely
// something close:
//
//	if k, ok := backend.KernelsOf(backend.Current()); ok {
//		k.GELUForward(x, y, cdf)
//	} else {
//		... the operator's own loop ...
//	}
//
// All slices are host memory, row-major; outputs are overwritten. Lengths
// that disagree with the sizes given panic.
type Kernels interface {
	// GELUForward sets cdf = 0.5*(1+erf(x/sqrt 2)) and y = x*cdf,
	// elementwise (tensor.GELU's forward pass, with its erff).
	GELUForward(x, y, cdf []float32)
	// GELUBackward sets gx = gy*(cdf + x*exp(-x*x/2)/sqrt(2 pi)),
	// elementwise (tensor.GELU's backward pass, with its expf).
	GELUBackward(x, cdf, gy, gx []float32)
	// LayerNormForward normalises each row of the rows x cols matrix x
	// (float64 mean and biased variance, eps inside the square root) into
	// xhat, sets rstd[i] to row i's 1/sqrt(var+eps) and y = xhat*g + b per
	// column (tensor.LayerNorm's forward pass).
	LayerNormForward(x, g, b []float32, rows, cols int, eps float32, y, xhat, rstd []float32)
	// LayerNormBackward sets gx to the gradient with respect to x, given
	// the output gradient gy, the gain g and the forward pass's xhat and
	// rstd (tensor.LayerNorm's backward pass; the g and b gradients are
	// column sums left to the caller).
	LayerNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32)
	// MaskedSoftmaxRows replaces each row i of the rows x cols matrix x by
	// the softmax of its first visible[i] entries followed by zeros; a row
	// with visible[i] <= 0 becomes all zeros (tensor.Attention's masked
	// softmax). visible[i] must not exceed cols.
	MaskedSoftmaxRows(x []float32, rows, cols int, visible []int32)
	// AdamW updates one parameter p in place with its gradient g and
	// moments m, v (optim.AdamW.Step's inner loop): p *= decay (skipped
	// when decay is 1), m = b1*m + (1-b1)*g, v = b2*v + (1-b2)*g*g,
	// p -= stepSize*m / (sqrt(v)/sqrtBC2 + eps).
	AdamW(p, g, m, v []float32, decay, b1, b2, stepSize, sqrtBC2, eps float32)
}

// KernelsOf returns b's Kernels when it implements them.
func KernelsOf(b Backend) (Kernels, bool) {
	k, ok := b.(Kernels)
	return k, ok
}
