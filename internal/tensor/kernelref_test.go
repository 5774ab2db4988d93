package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend/cuda/ptx/emu"
	"repro/internal/tensor/tensortest"
)

// The CUDA kernels (../backend/cuda/ptx/kernels.h, run on the CPU by
// package emu) against the operators' own code, bit for bit: each
// reference below runs an operator's forward or backward pass, unchanged,
// on plain slices and returns what it computes, intermediates included
// (GELU's cdf, a norm's xhat and rstd), which only this package can reach.
// The tests skip where Go fuses multiply-adds (the kernels never do; see
// needUnfusedDev).

// gradLeaf is a rows x cols copy of data that requires a gradient.
func gradLeaf(rows, cols int, data []float32) *Matrix {
	return mat.NewDense[float32](mat.WithShape(rows, cols), mat.WithBacking(slices.Clone(data)), mat.WithGrad(true))
}

// refGELUForward returns GELU's forward pass over x: y and the cdf Phi(x)
// it keeps for the backward pass.
func refGELUForward(x []float32) (y, cdf []float32) {
	f := &geluFn{x: New(len(x), 1, x)}
	out, err := f.Forward()
	if err != nil {
		panic(err)
	}
	return Data(out), f.cdf
}

// refGELUBackward returns GELU's input gradient for output gradient gy,
// given x and the cdf of the forward pass.
func refGELUBackward(x, cdf, gy []float32) []float32 {
	xt := gradLeaf(len(x), 1, x)
	f := &geluFn{x: xt, cdf: cdf}
	if err := f.Backward(New(len(gy), 1, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// refLayerNormForward returns LayerNorm's forward pass over the rows x
// cols matrix x: y, the normalised xhat and the per-row 1/std, the last
// two as kept for the backward pass.
func refLayerNormForward(x, g, b []float32, rows, cols int, eps float32) (y, xhat, rstd []float32) {
	f := &layerNormFn{x: New(rows, cols, x), g: New(cols, 1, g), b: New(cols, 1, b), eps: eps}
	out, err := f.Forward()
	if err != nil {
		panic(err)
	}
	return Data(out), f.xhat, f.rstd
}

// refLayerNormBackward returns LayerNorm's gradient with respect to x for
// output gradient gy, given the gain g and the forward pass's xhat and rstd.
func refLayerNormBackward(gy, g, xhat, rstd []float32, rows, cols int) []float32 {
	if len(xhat) != rows*cols || len(rstd) != rows {
		panic(fmt.Sprintf("refLayerNormBackward: xhat %d, rstd %d for %dx%d", len(xhat), len(rstd), rows, cols))
	}
	xt := gradLeaf(rows, cols, make([]float32, rows*cols)) // only its shape and flag are read
	f := &layerNormFn{x: xt, g: New(cols, 1, g), b: New(cols, 1, make([]float32, cols)), xhat: xhat, rstd: rstd}
	if err := f.Backward(New(rows, cols, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// refMaskedSoftmaxRow is Attention's row softmax, in place: softmax over
// row[:vis], zeros after; vis <= 0 zeroes the row. vis must not exceed
// len(row).
func refMaskedSoftmaxRow(row []float32, vis int) { maskedSoftmaxRow(row, vis) }

// refGELUTanhForward returns GELUTanh's forward pass over x: y and the tanh
// t it keeps for the backward pass.
func refGELUTanhForward(x []float32) (y, t []float32) {
	f := &geluTanhFn{x: New(len(x), 1, x)}
	out, err := f.Forward()
	if err != nil {
		panic(err)
	}
	return Data(out), f.t
}

// refGELUTanhBackward returns GELUTanh's input gradient for output
// gradient gy, given x and the t of the forward pass.
func refGELUTanhBackward(x, t, gy []float32) []float32 {
	xt := gradLeaf(len(x), 1, x)
	f := &geluTanhFn{x: xt, t: t}
	if err := f.Backward(New(len(gy), 1, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// refReLUForward returns ReLU(x).
func refReLUForward(x []float32) []float32 {
	out, err := (&reluFn{x: New(len(x), 1, x)}).Forward()
	if err != nil {
		panic(err)
	}
	return Data(out)
}

// refReLUBackward returns ReLU's input gradient for output gradient gy.
func refReLUBackward(x, gy []float32) []float32 {
	xt := gradLeaf(len(x), 1, x)
	if err := (&reluFn{x: xt}).Backward(New(len(gy), 1, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// refRMSNormForward returns RMSNorm's forward pass over the rows x cols
// matrix x: y, the scaled xhat and the per-row factor rstd, the last two as
// kept for the backward pass.
func refRMSNormForward(x, g []float32, rows, cols int, eps float32) (y, xhat, rstd []float32) {
	f := &rmsNormFn{x: New(rows, cols, x), g: New(cols, 1, g), eps: eps}
	out, err := f.Forward()
	if err != nil {
		panic(err)
	}
	return Data(out), f.xhat, f.rstd
}

// refRMSNormBackward returns RMSNorm's gradient with respect to x for
// output gradient gy, given the gain g and the forward pass's xhat and rstd.
func refRMSNormBackward(gy, g, xhat, rstd []float32, rows, cols int) []float32 {
	if len(xhat) != rows*cols || len(rstd) != rows {
		panic(fmt.Sprintf("refRMSNormBackward: xhat %d, rstd %d for %dx%d", len(xhat), len(rstd), rows, cols))
	}
	xt := gradLeaf(rows, cols, make([]float32, rows*cols)) // only its shape and flag are read
	f := &rmsNormFn{x: xt, g: New(cols, 1, g), xhat: xhat, rstd: rstd}
	if err := f.Backward(New(rows, cols, gy)); err != nil {
		panic(err)
	}
	return GradData(xt)
}

// refBiasMaskedSoftmaxRow is Attention's row softmax with a score bias, in
// place: bias added to row[:vis], then softmax over row[:vis], zeros after.
func refBiasMaskedSoftmaxRow(row, bias []float32, vis int) {
	addBias(row, bias, vis)
	maskedSoftmaxRow(row, vis)
}

// specials are the edge cases of the float32 line: signed zeros,
// subnormals, the thresholds of expf (overflow, underflow), erff's clamp at
// |x| = 4 (|x| = 4 sqrt 2 for GELU), where exp(-x*x/2) underflows, huge
// values, infinities and NaN.
func specials() []float32 {
	base := []float32{
		0, 1e-45, 1e-40, 1.1754944e-38, 1e-30, 1e-7, 0.5, 1, 2, 3.9999998, 4, 4.0000005,
		5.656854, 5.6568546, 6, 10, 13.2, 13.3, 20, 87.33654, 87.3366, 88.72283, 88.7229, 89,
		100, 1e5, 1e20, math.MaxFloat32, float32(math.Inf(1)),
	}
	var out []float32
	for _, v := range base {
		out = append(out, v, -v)
	}
	return append(out, float32(math.NaN()))
}

// TestKernelScalarFunctions: the kernels' expf, erff and tanhf against the
// operators' on the edge cases, random bit patterns and wide normals, and
// every 2^-10 of [-100, 100] (exp, erf), or around tanh's branch at 0.625
// and its saturation at 9.
func TestKernelScalarFunctions(t *testing.T) {
	needUnfusedDev(t)
	r := rand.New(rand.NewPCG(1, 1))
	wide := specials()
	for i := 0; i < 1<<18; i++ {
		wide = append(wide, math.Float32frombits(r.Uint32()), float32(r.NormFloat64()*30))
	}
	for x := float32(-100); x <= 100; x += 0.0009765625 { // every 2^-10
		wide = append(wide, x)
	}
	r = rand.New(rand.NewPCG(6, 6))
	tanhArgs := append(specials(), 0.625, -0.625, 0.62499994, 9, 9.000001, -9.000001)
	for i := 0; i < 1<<18; i++ {
		tanhArgs = append(tanhArgs, float32(r.NormFloat64()*3), float32(r.NormFloat64()*0.3))
	}
	for _, tc := range []struct {
		name       string
		kernel, op func(float32) float32
		xs         []float32
	}{
		{"expf", emu.ExpF, expf, wide},
		{"erff", emu.ErfF, erff, wide},
		{"tanhf", emu.TanhF, tanhf, tanhArgs},
	} {
		bad := 0
		for _, x := range tc.xs {
			if e, w := tc.kernel(x), tc.op(x); !tensortest.SameBits(e, w) {
				if bad++; bad <= 5 {
					t.Errorf("%s(%v) = %v, Go %v", tc.name, x, e, w)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%s differs on %d of %d arguments", tc.name, bad, len(tc.xs))
		}
	}
}

// TestKernelActivations: GELU, tanh GELU and ReLU, forward (with what the
// backward pass keeps: GELU's cdf, tanh GELU's t) and backward, on the edge
// cases and normals (the wide ones well past erff's clamp, exp's underflow
// and tanh's saturation).
func TestKernelActivations(t *testing.T) {
	needUnfusedDev(t)
	type input struct {
		name string
		x    []float32
	}
	// gelus are a GELU's inputs: the edge cases, normals, wide normals and
	// one value.
	gelus := func(r *rand.Rand, one float32) []input {
		return []input{{"specials", specials()}, {"normal", tensortest.Normals(r, 64*32*768/8, 1)},
			{"wide", tensortest.Normals(r, 100000, 8)}, {"one", []float32{one}}}
	}
	for _, tc := range []struct {
		name, aux string // aux: what the forward pass keeps ("": nothing)
		seed      uint64
		inputs    func(r *rand.Rand) []input
		// The operator's passes (reference) and the kernels'.
		refForward     func(x []float32) (y, aux []float32)
		kernelForward  func(x, y, aux []float32)
		refBackward    func(x, aux, gy []float32) []float32
		kernelBackward func(x, aux, gy, gx []float32)
	}{
		{"gelu", "cdf", 2, func(r *rand.Rand) []input { return gelus(r, 0.3) },
			refGELUForward, emu.GELUForward, refGELUBackward, emu.GELUBackward},
		{"gelu_tanh", "t", 7, func(r *rand.Rand) []input { return gelus(r, -0.3) },
			refGELUTanhForward, emu.GELUTanhForward, refGELUTanhBackward, emu.GELUTanhBackward},
		{"relu", "", 8, func(r *rand.Rand) []input {
			return []input{{"specials and normal", append(specials(), tensortest.Normals(r, 10000, 2)...)}}
		},
			func(x []float32) (y, aux []float32) { return refReLUForward(x), nil },
			func(x, y, aux []float32) { emu.ReLUForward(x, y) },
			func(x, aux, gy []float32) []float32 { return refReLUBackward(x, gy) },
			func(x, aux, gy, gx []float32) { emu.ReLUBackward(x, gy, gx) }},
	} {
		r := rand.New(rand.NewPCG(tc.seed, tc.seed))
		for _, in := range tc.inputs(r) {
			name := tc.name + " " + in.name
			n := len(in.x)
			gy := tensortest.Normals(r, n, 1)
			wantY, wantAux := tc.refForward(in.x)
			y, aux := make([]float32, n), make([]float32, n)
			tc.kernelForward(in.x, y, aux)
			tensortest.Identical(t, name+" forward y", y, wantY)
			if tc.aux != "" {
				tensortest.Identical(t, name+" forward "+tc.aux, aux, wantAux)
			}

			wantGx := tc.refBackward(in.x, wantAux, gy)
			gx := make([]float32, n)
			tc.kernelBackward(in.x, wantAux, gy, gx)
			tensortest.Identical(t, name+" backward", gx, wantGx)
		}
	}
}

func TestKernelLayerNorm(t *testing.T) {
	needUnfusedDev(t)
	r := rand.New(rand.NewPCG(3, 3))
	for _, tc := range []struct {
		rows, cols int
		eps        float32
		shift      float64 // added to every x: cancellation in the mean
	}{
		{64 * 32 / 4, 768, 1e-12, 0},
		{300, 768, 1e-5, 1000},
		{17, 1, 1e-12, 0}, // one column: xhat 0, rstd 1/sqrt(eps)
		{9, 3, 1e-5, 0},
		{40, 256, 1e-12, -3},
	} {
		rows, cols, n := tc.rows, tc.cols, tc.rows*tc.cols
		x := tensortest.Normals(r, n, 2)
		for i := range x {
			x[i] += float32(tc.shift)
		}
		// Special rows: constant (zero variance), zeros, huge.
		copy(x[0:cols], slices.Repeat([]float32{0.75}, cols))
		clear(x[cols : 2*cols])
		for j := 0; j < cols && rows > 2; j++ {
			x[2*cols+j] *= 1e18
		}
		g, b := tensortest.Normals(r, cols, 1), tensortest.Normals(r, cols, 1)
		name := func(s string) string { return fmt.Sprintf("%s %dx%d", s, rows, cols) }

		wantY, wantXhat, wantRstd := refLayerNormForward(x, g, b, rows, cols, tc.eps)
		y, xhat, rstd := make([]float32, n), make([]float32, n), make([]float32, rows)
		emu.LayerNormForward(x, g, b, rows, cols, tc.eps, y, xhat, rstd)
		tensortest.Identical(t, name("forward y"), y, wantY)
		tensortest.Identical(t, name("forward xhat"), xhat, wantXhat)
		tensortest.Identical(t, name("forward rstd"), rstd, wantRstd)

		gy := tensortest.Normals(r, n, 1)
		wantGx := refLayerNormBackward(gy, g, wantXhat, wantRstd, rows, cols)
		gx := make([]float32, n)
		emu.LayerNormBackward(gy, g, wantXhat, wantRstd, rows, cols, gx)
		tensortest.Identical(t, name("backward"), gx, wantGx)
	}
}

func TestKernelMaskedSoftmax(t *testing.T) {
	needUnfusedDev(t)
	r := rand.New(rand.NewPCG(4, 4))
	for _, cols := range []int{1, 2, 7, 32, 128} {
		rows := 64 * 8
		x := tensortest.Normals(r, rows*cols, 3)
		visible := make([]int32, rows)
		for i := range visible {
			switch i % 8 {
			case 0:
				visible[i] = 0
			case 1:
				visible[i] = -2
			case 2:
				visible[i] = int32(cols)
			case 3:
				visible[i] = 1
			default:
				visible[i] = int32(r.IntN(cols + 1))
			}
		}
		// Rows of equal values, large scores, signed zeros.
		for j := 0; j < cols; j++ {
			x[4*cols+j] = 2.5
			x[5*cols+j] = float32(r.NormFloat64() * 200)
			x[6*cols+j] = float32(math.Copysign(0, float64(j%2)-0.5))
		}
		want := slices.Clone(x)
		for i := 0; i < rows; i++ {
			refMaskedSoftmaxRow(want[i*cols:(i+1)*cols], int(visible[i]))
		}
		got := slices.Clone(x)
		emu.MaskedSoftmaxRows(got, rows, cols, visible)
		tensortest.Identical(t, fmt.Sprintf("softmax cols=%d", cols), got, want)
	}
}

func TestKernelRMSNorm(t *testing.T) {
	needUnfusedDev(t)
	r := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct {
		rows, cols int
		eps        float32
	}{
		{64 * 32 / 4, 512, 1e-6},
		{300, 768, 1e-5},
		{17, 1, 1e-6},
		{9, 3, 1e-6},
	} {
		rows, cols, n := tc.rows, tc.cols, tc.rows*tc.cols
		x := tensortest.Normals(r, n, 2)
		clear(x[:cols]) // a zero row: rstd 1/sqrt(eps)
		if rows > 2 {
			for j := 0; j < cols; j++ {
				x[cols+j] *= 1e18
			}
		}
		g := tensortest.Normals(r, cols, 1)
		name := func(s string) string { return fmt.Sprintf("%s %dx%d", s, rows, cols) }
		wantY, wantXhat, wantRstd := refRMSNormForward(x, g, rows, cols, tc.eps)
		y, xhat, rstd := make([]float32, n), make([]float32, n), make([]float32, rows)
		emu.RMSNormForward(x, g, rows, cols, tc.eps, y, xhat, rstd)
		tensortest.Identical(t, name("forward y"), y, wantY)
		tensortest.Identical(t, name("forward xhat"), xhat, wantXhat)
		tensortest.Identical(t, name("forward rstd"), rstd, wantRstd)

		gy := tensortest.Normals(r, n, 1)
		wantGx := refRMSNormBackward(gy, g, wantXhat, wantRstd, rows, cols)
		gx := make([]float32, n)
		emu.RMSNormBackward(gy, g, wantXhat, wantRstd, rows, cols, gx)
		tensortest.Identical(t, name("backward"), gx, wantGx)
	}
}

func TestKernelBiasMaskedSoftmax(t *testing.T) {
	needUnfusedDev(t)
	r := rand.New(rand.NewPCG(10, 10))
	for _, cols := range []int{1, 3, 32, 100} {
		for _, biasRows := range []int{1, 8, 64} {
			rows := 64
			x := tensortest.Normals(r, rows*cols, 3)
			bias := tensortest.Normals(r, biasRows*cols, 5)
			visible := make([]int32, rows)
			for i := range visible {
				switch i % 5 {
				case 0:
					visible[i] = 0
				case 1:
					visible[i] = int32(cols)
				default:
					visible[i] = int32(r.IntN(cols + 1))
				}
			}
			want := slices.Clone(x)
			for i := 0; i < rows; i++ {
				br := i % biasRows
				refBiasMaskedSoftmaxRow(want[i*cols:(i+1)*cols], bias[br*cols:(br+1)*cols], int(visible[i]))
			}
			got := slices.Clone(x)
			emu.BiasMaskedSoftmaxRows(got, rows, cols, visible, bias, biasRows)
			tensortest.Identical(t, fmt.Sprintf("bias softmax cols=%d biasRows=%d", cols, biasRows), got, want)
		}
	}
}
