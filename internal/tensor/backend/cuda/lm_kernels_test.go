//go:build cuda && gpu

package cuda

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"repro/internal/tensor/backend/cuda/ptx/emu"
)

// The language-model kernels (tanh GELU, ReLU, RMS norm, the attention
// softmax with a score bias) on the GPU against their emulation, which
// matches the Go operators bit for bit (ptx/emu). Not yet run on a GPU: no
// GPU was available where they were written.

func TestGELUTanhKernels(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(21, 22))
	x := scaled(r, 32*24*1536, 2)
	for _, v := range []float32{0, 1e-40, 0.625, 9, 20, 1e5, math.MaxFloat32, float32(math.Inf(1))} {
		x = append(x, v, -v)
	}
	n := len(x)
	wantY, wantT := make([]float32, n), make([]float32, n)
	emu.GELUTanhForward(x, wantY, wantT)
	y, tt := make([]float32, n), make([]float32, n)
	g.GELUTanhForward(x, y, tt)
	agree(t, "GELUTanh forward y", y, wantY)
	agree(t, "GELUTanh forward t", tt, wantT)

	gy := randFloats(r, n)
	wantGx, gx := make([]float32, n), make([]float32, n)
	emu.GELUTanhBackward(x, wantT, gy, wantGx)
	g.GELUTanhBackward(x, wantT, gy, gx)
	agree(t, "GELUTanh backward", gx, wantGx)
}

func TestReLUKernels(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(23, 24))
	x := scaled(r, 100000, 2)
	n := len(x)
	want, y := make([]float32, n), make([]float32, n)
	emu.ReLUForward(x, want)
	g.ReLUForward(x, y)
	agree(t, "ReLU forward", y, want)
	gy := randFloats(r, n)
	emu.ReLUBackward(x, gy, want)
	g.ReLUBackward(x, gy, y)
	agree(t, "ReLU backward", y, want)
}

func TestRMSNormKernels(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(25, 26))
	for _, s := range []struct {
		rows, cols int
		eps        float32
	}{{32 * 64, 512, 1e-6}, {1000, 1, 1e-6}, {3, 5, 1e-6}} {
		rows, cols, n := s.rows, s.cols, s.rows*s.cols
		x := scaled(r, n, 3)
		clear(x[:cols])
		gain := randFloats(r, cols)
		wantY, wantXhat, wantRstd := make([]float32, n), make([]float32, n), make([]float32, rows)
		emu.RMSNormForward(x, gain, rows, cols, s.eps, wantY, wantXhat, wantRstd)
		y, xhat, rstd := make([]float32, n), make([]float32, n), make([]float32, rows)
		g.RMSNormForward(x, gain, rows, cols, s.eps, y, xhat, rstd)
		agree(t, "RMSNorm forward y", y, wantY)
		agree(t, "RMSNorm forward xhat", xhat, wantXhat)
		agree(t, "RMSNorm forward rstd", rstd, wantRstd)

		gy := randFloats(r, n)
		wantGx, gx := make([]float32, n), make([]float32, n)
		emu.RMSNormBackward(gy, gain, wantXhat, wantRstd, rows, cols, wantGx)
		g.RMSNormBackward(gy, gain, wantXhat, wantRstd, rows, cols, gx)
		agree(t, "RMSNorm backward", gx, wantGx)
	}
}

func TestBiasMaskedSoftmaxKernel(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(27, 28))
	const heads, qlen, batch = 8, 32, 16
	for _, cols := range []int{32, 1, 64} {
		rows := batch * heads * qlen
		for _, biasRows := range []int{heads * qlen, rows} {
			x := scaled(r, rows*cols, 4)
			bias := scaled(r, biasRows*cols, 4)
			visible := make([]int32, rows)
			for i := range visible {
				visible[i] = int32(r.IntN(cols + 1))
			}
			want, got := slices.Clone(x), slices.Clone(x)
			emu.BiasMaskedSoftmaxRows(want, rows, cols, visible, bias, biasRows)
			g.BiasMaskedSoftmaxRows(got, rows, cols, visible, bias, biasRows)
			agree(t, "bias masked softmax", got, want)
		}
	}
}
