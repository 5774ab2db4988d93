package emu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"repro/internal/tensor"
)

// The kernels of the language-model operators (tanh GELU, ReLU, RMS norm,
// the attention softmax with a score bias), bit for bit against the Go
// operators, like the tests in emu_test.go.

func TestTanhF(t *testing.T) {
	needUnfused(t)
	r := rand.New(rand.NewPCG(6, 6))
	xs := specials()
	xs = append(xs, 0.625, -0.625, 0.62499994, 9, 9.000001, -9.000001)
	for i := 0; i < 1<<18; i++ {
		xs = append(xs, float32(r.NormFloat64()*3), float32(r.NormFloat64()*0.3))
	}
	bad := 0
	for _, x := range xs {
		if e, w := TanhF(x), tensor.TanhF(x); !same(e, w) {
			if bad++; bad <= 5 {
				t.Errorf("tanhf(%v) = %v, Go %v", x, e, w)
			}
		}
	}
	if bad > 0 {
		t.Errorf("tanhf differs on %d of %d arguments", bad, len(xs))
	}
}

func TestGELUTanh(t *testing.T) {
	needUnfused(t)
	r := rand.New(rand.NewPCG(7, 7))
	for _, tc := range []struct {
		name string
		x    []float32
	}{
		{"specials", specials()},
		{"normal", normals(r, 64*32*768/8, 1)},
		{"wide", normals(r, 100000, 8)}, // past the tanh saturation
		{"one", []float32{-0.3}},
	} {
		n := len(tc.x)
		gy := normals(r, n, 1)
		wantY, wantT := tensor.RefGELUTanhForward(tc.x)
		y, tt := make([]float32, n), make([]float32, n)
		GELUTanhForward(tc.x, y, tt)
		identical(t, tc.name+" forward y", y, wantY)
		identical(t, tc.name+" forward t", tt, wantT)

		wantGx := tensor.RefGELUTanhBackward(tc.x, wantT, gy)
		gx := make([]float32, n)
		GELUTanhBackward(tc.x, wantT, gy, gx)
		identical(t, tc.name+" backward", gx, wantGx)
	}
}

func TestReLU(t *testing.T) {
	needUnfused(t)
	r := rand.New(rand.NewPCG(8, 8))
	x := append(specials(), normals(r, 10000, 2)...)
	gy := normals(r, len(x), 1)
	y := make([]float32, len(x))
	ReLUForward(x, y)
	identical(t, "relu forward", y, tensor.RefReLUForward(x))
	gx := make([]float32, len(x))
	ReLUBackward(x, gy, gx)
	identical(t, "relu backward", gx, tensor.RefReLUBackward(x, gy))
}

func TestRMSNorm(t *testing.T) {
	needUnfused(t)
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
		x := normals(r, n, 2)
		clear(x[:cols]) // a zero row: rstd 1/sqrt(eps)
		if rows > 2 {
			for j := 0; j < cols; j++ {
				x[cols+j] *= 1e18
			}
		}
		g := normals(r, cols, 1)
		name := func(s string) string { return fmt.Sprintf("%s %dx%d", s, rows, cols) }
		wantY, wantXhat, wantRstd := tensor.RefRMSNormForward(x, g, rows, cols, tc.eps)
		y, xhat, rstd := make([]float32, n), make([]float32, n), make([]float32, rows)
		RMSNormForward(x, g, rows, cols, tc.eps, y, xhat, rstd)
		identical(t, name("forward y"), y, wantY)
		identical(t, name("forward xhat"), xhat, wantXhat)
		identical(t, name("forward rstd"), rstd, wantRstd)

		gy := normals(r, n, 1)
		wantGx := tensor.RefRMSNormBackward(gy, g, wantXhat, wantRstd, rows, cols)
		gx := make([]float32, n)
		RMSNormBackward(gy, g, wantXhat, wantRstd, rows, cols, gx)
		identical(t, name("backward"), gx, wantGx)
	}
}

func TestBiasMaskedSoftmax(t *testing.T) {
	needUnfused(t)
	r := rand.New(rand.NewPCG(10, 10))
	for _, cols := range []int{1, 3, 32, 100} {
		for _, biasRows := range []int{1, 8, 64} {
			rows := 64
			x := normals(r, rows*cols, 3)
			bias := normals(r, biasRows*cols, 5)
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
				tensor.RefBiasMaskedSoftmaxRow(want[i*cols:(i+1)*cols], bias[br*cols:(br+1)*cols], int(visible[i]))
			}
			got := slices.Clone(x)
			BiasMaskedSoftmaxRows(got, rows, cols, visible, bias, biasRows)
			identical(t, fmt.Sprintf("bias softmax cols=%d biasRows=%d", cols, biasRows), got, want)
		}
	}
}
