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
	// GELUTanhForward sets t = tanh(sqrt(2/pi)*(x + 0.044715*x^3)) and
	// y = 0.5*x*(1+t), elementwise (tensor.GELUTanh's forward pass, with
	// its tanhf).
	GELUTanhForward(x, y, t []float32)
	// GELUTanhBackward sets gx to GELUTanh's input gradient for output
	// gradient gy, given x and the forward pass's t.
	GELUTanhBackward(x, t, gy, gx []float32)
	// ReLUForward sets y = max(x, 0) elementwise (tensor.ReLU).
	ReLUForward(x, y []float32)
	// ReLUBackward sets gx = gy where x > 0 and 0 elsewhere.
	ReLUBackward(x, gy, gx []float32)
	// RMSNormForward scales each row of the rows x cols matrix x by
	// 1/sqrt(mean(x^2)+eps) (float64 sum of squares) into xhat, sets
	// rstd[i] to that factor and y = xhat*g per column (tensor.RMSNorm's
	// forward pass).
	RMSNormForward(x, g []float32, rows, cols int, eps float32, y, xhat, rstd []float32)
	// RMSNormBackward sets gx to RMSNorm's gradient with respect to x,
	// given the output gradient gy, the gain g and the forward pass's xhat
	// and rstd (the gain's gradient is a column sum left to the caller).
	RMSNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32)
	// BiasMaskedSoftmaxRows is MaskedSoftmaxRows after adding a bias row
	// to the first visible[i] entries of each row i: row i gets the bias
	// row i mod biasRows of the biasRows x cols matrix bias
	// (tensor.Attention with AttentionSpec.Bias).
	BiasMaskedSoftmaxRows(x []float32, rows, cols int, visible []int32, bias []float32, biasRows int)
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
