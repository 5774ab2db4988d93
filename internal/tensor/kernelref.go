package tensor

import (
	"fmt"
	"slices"

	"github.com/nlpodyssey/spago/mat"
)

// References for the backend kernels (backend.Kernels): each runs an
// operator's own code, unchanged, on plain slices and returns what it
// computes, so that a kernel can be checked bit for bit against the CPU
// (package backend/cuda/ptx/emu). Nothing in the operators calls these; the
// operators call backend.Kernels themselves when the backend offers them.

// ExpF is the float32 exp the operators use (Cephes' expf).
func ExpF(x float32) float32 { return expf(x) }

// ErfF is the float32 erf the operators use (Eigen's fast erf).
func ErfF(x float32) float32 { return erff(x) }

// gradLeaf is a rows x cols copy of data that requires a gradient.
func gradLeaf(rows, cols int, data []float32) *Matrix {
	return mat.NewDense[float32](mat.WithShape(rows, cols), mat.WithBacking(slices.Clone(data)), mat.WithGrad(true))
}

// RefGELUForward returns GELU's forward pass over x: y and the cdf Phi(x)
// it keeps for the backward pass.
func RefGELUForward(x []float32) (y, cdf []float32) {
	f := &geluFn{x: New(len(x), 1, x)}
	out, err := f.Forward()
	if err != nil {
		panic(err)
	}
	return Data(out), f.cdf
}

// RefGELUBackward returns GELU's input gradient for output gradient gy,
// given x and the cdf of the forward pass.
func RefGELUBackward(x, cdf, gy []float32) []float32 {
	xt := gradLeaf(len(x), 1, x)
	f := &geluFn{x: xt, cdf: cdf}
	if err := f.Backward(New(len(gy), 1, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// RefLayerNormForward returns LayerNorm's forward pass over the rows x
// cols matrix x: y, the normalised xhat and the per-row 1/std, the last
// two as kept for the backward pass.
func RefLayerNormForward(x, g, b []float32, rows, cols int, eps float32) (y, xhat, rstd []float32) {
	f := &layerNormFn{x: New(rows, cols, x), g: New(cols, 1, g), b: New(cols, 1, b), eps: eps}
	out, err := f.Forward()
	if err != nil {
		panic(err)
	}
	return Data(out), f.xhat, f.rstd
}

// RefLayerNormBackward returns LayerNorm's gradient with respect to x for
// output gradient gy, given the gain g and the forward pass's xhat and rstd.
func RefLayerNormBackward(gy, g, xhat, rstd []float32, rows, cols int) []float32 {
	if len(xhat) != rows*cols || len(rstd) != rows {
		panic(fmt.Sprintf("tensor.RefLayerNormBackward: xhat %d, rstd %d for %dx%d", len(xhat), len(rstd), rows, cols))
	}
	xt := gradLeaf(rows, cols, make([]float32, rows*cols)) // only its shape and flag are read
	f := &layerNormFn{x: xt, g: New(cols, 1, g), b: New(cols, 1, make([]float32, cols)), xhat: xhat, rstd: rstd}
	if err := f.Backward(New(rows, cols, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// RefMaskedSoftmaxRow is Attention's row softmax, in place: softmax over
// row[:vis], zeros after; vis <= 0 zeroes the row. vis must not exceed
// len(row).
func RefMaskedSoftmaxRow(row []float32, vis int) { maskedSoftmaxRow(row, vis) }

// TanhF is the float32 tanh the operators use (Cephes' tanhf).
func TanhF(x float32) float32 { return tanhf(x) }

// RefGELUTanhForward returns GELUTanh's forward pass over x: y and the tanh
// t it keeps for the backward pass.
func RefGELUTanhForward(x []float32) (y, t []float32) {
	f := &geluTanhFn{x: New(len(x), 1, x)}
	out, err := f.Forward()
	if err != nil {
		panic(err)
	}
	return Data(out), f.t
}

// RefGELUTanhBackward returns GELUTanh's input gradient for output
// gradient gy, given x and the t of the forward pass.
func RefGELUTanhBackward(x, t, gy []float32) []float32 {
	xt := gradLeaf(len(x), 1, x)
	f := &geluTanhFn{x: xt, t: t}
	if err := f.Backward(New(len(gy), 1, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// RefReLUForward returns ReLU(x).
func RefReLUForward(x []float32) []float32 {
	out, err := (&reluFn{x: New(len(x), 1, x)}).Forward()
	if err != nil {
		panic(err)
	}
	return Data(out)
}

// RefReLUBackward returns ReLU's input gradient for output gradient gy.
func RefReLUBackward(x, gy []float32) []float32 {
	xt := gradLeaf(len(x), 1, x)
	if err := (&reluFn{x: xt}).Backward(New(len(gy), 1, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// RefRMSNormForward returns RMSNorm's forward pass over the rows x cols
// matrix x: y, the scaled xhat and the per-row factor rstd, the last two as
// kept for the backward pass.
func RefRMSNormForward(x, g []float32, rows, cols int, eps float32) (y, xhat, rstd []float32) {
	f := &rmsNormFn{x: New(rows, cols, x), g: New(cols, 1, g), eps: eps}
	out, err := f.Forward()
	if err != nil {
		panic(err)
	}
	return Data(out), f.xhat, f.rstd
}

// RefRMSNormBackward returns RMSNorm's gradient with respect to x for
// output gradient gy, given the gain g and the forward pass's xhat and rstd.
func RefRMSNormBackward(gy, g, xhat, rstd []float32, rows, cols int) []float32 {
	if len(xhat) != rows*cols || len(rstd) != rows {
		panic(fmt.Sprintf("tensor.RefRMSNormBackward: xhat %d, rstd %d for %dx%d", len(xhat), len(rstd), rows, cols))
	}
	xt := gradLeaf(rows, cols, make([]float32, rows*cols)) // only its shape and flag are read
	f := &rmsNormFn{x: xt, g: New(cols, 1, g), xhat: xhat, rstd: rstd}
	if err := f.Backward(New(rows, cols, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// RefBiasMaskedSoftmaxRow is Attention's row softmax with a score bias, in
// place: bias added to row[:vis], then softmax over row[:vis], zeros after.
func RefBiasMaskedSoftmaxRow(row, bias []float32, vis int) {
	addBias(row, bias, vis)
	maskedSoftmaxRow(row, vis)
}
