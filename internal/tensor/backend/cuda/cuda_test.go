//go:build cuda && gpu

package cuda

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"repro/internal/model/conformance"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/cuda/ptx/emu"
)

func randFloats(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func open(t testing.TB) *Backend {
	t.Helper()
	b, err := Open(0)
	if err != nil {
		t.Fatalf("Open(0): %v", err)
	}
	return b
}

// closeTo is the 1e-4 relative agreement required of every call.
func closeTo(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if d := math.Abs(float64(got[i] - want[i])); !(d <= 1e-4*math.Max(1, math.Abs(float64(want[i])))) {
			t.Fatalf("%s: C[%d] cuda %v, cpu %v", what, i, got[i], want[i])
		}
	}
}

// TestMatchesCPU compares every call with the CPU backend: random shapes,
// all transposes, alpha/beta (beta 0 with NaN in C), padded rows.
func TestMatchesCPU(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(1, 2))
	dims := []int{1, 3, 16, 17, 64, 129, 300}
	for trial := 0; trial < 48; trial++ {
		m, n, k := dims[r.IntN(len(dims))], dims[r.IntN(len(dims))], dims[r.IntN(len(dims))]
		tA, tB := trial&1 == 1, trial&2 == 2
		pad := trial % 3
		alpha, beta := []float32{1, -0.5, 2}[trial%3], []float32{0, 1, 0.25}[trial/3%3]
		lda, ldb, ldc := k+pad, n+pad, n+pad
		if tA {
			lda = m + pad
		}
		if tB {
			ldb = k + pad
		}
		a, b := randFloats(r, max(m, k)*lda), randFloats(r, max(n, k)*ldb)
		c := randFloats(r, m*ldc)
		if beta == 0 {
			for i := 0; i < m; i++ {
				for j := 0; j < n; j++ {
					c[i*ldc+j] = float32(math.NaN())
				}
			}
		}
		want, got := slices.Clone(c), slices.Clone(c)
		backend.CPU().Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
		g.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, got, ldc)
		closeTo(t, "random", got, want) // padding included: must be unchanged
	}
}

// TestKeep checks the resident-operand cache: a kept weight is used from
// the device, a host change is invisible until Changed, and Release forgets.
func TestKeep(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(3, 4))
	m, n, k := 64, 48, 80
	x, w := randFloats(r, m*k), randFloats(r, k*n)
	mul := func(be backend.Backend) []float32 {
		c := make([]float32, m*n)
		be.Sgemm(false, false, m, n, k, 1, x, k, w, n, 0, c, n)
		return c
	}
	g.Keep(w)
	defer g.Release(w)
	if g.Kept() != 1 {
		t.Fatalf("Kept() = %d after Keep", g.Kept())
	}
	closeTo(t, "kept", mul(g), mul(backend.CPU()))

	old := mul(backend.CPU())
	w[0] += 10 // host change without Changed: the device copy is used
	closeTo(t, "stale by design", mul(g), old)
	g.Changed(w)
	closeTo(t, "after Changed", mul(g), mul(backend.CPU()))

	g.Release(w)
	if g.Kept() != 0 {
		t.Fatalf("Kept() = %d after Release", g.Kept())
	}
	w[1] -= 3 // no longer kept: copied per call again
	closeTo(t, "released", mul(g), mul(backend.CPU()))
}

func TestByNameAndConcurrency(t *testing.T) {
	be, err := backend.ByName("cuda")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backend.ByName("cuda:x"); err == nil {
		t.Fatal("ByName(cuda:x) accepted")
	}
	if _, err := backend.ByName("cuda:99"); err == nil {
		t.Fatal("ByName(cuda:99) accepted")
	}
	r := rand.New(rand.NewPCG(5, 6))
	a, b := randFloats(r, 32*64), randFloats(r, 32*64)
	want := make([]float32, 32*32)
	backend.CPU().Sgemm(false, true, 32, 32, 64, 1, a, 64, b, 64, 0, want, 32)
	done := make(chan []float32)
	for i := 0; i < 8; i++ {
		go func() {
			c := make([]float32, 32*32)
			be.Sgemm(false, true, 32, 32, 64, 1, a, 64, b, 64, 0, c, 32)
			done <- c
		}()
	}
	for i := 0; i < 8; i++ {
		closeTo(t, "concurrent", <-done, want)
	}
}

// BenchmarkStep reports GFLOP/s of the step's largest product with the
// weight kept on the device (copies of X and C remain).
func BenchmarkStep(b *testing.B) {
	g := open(b)
	r := rand.New(rand.NewPCG(7, 8))
	m, n, k := 2048, 1024, 256
	x, w, c := randFloats(r, m*k), randFloats(r, k*n), make([]float32, m*n)
	g.Keep(w)
	defer g.Release(w)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		g.Sgemm(false, false, m, n, k, 1, x, k, w, n, 0, c, n)
	}
	b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// The kernels are compared with their CPU emulation (package ptx/emu: the
// same C, compiled by the host compiler without fused multiply-adds), whose
// own tests show it bit-identical to the Go operators on amd64. Comparing
// with the emulation rather than the operators keeps these tests valid on
// hosts where Go fuses multiply-adds (arm64).

// agree is the 1e-4 relative agreement required of the kernels (relative to
// max(1, |want|), as closeTo). It also logs how many values differ in any
// bit -- 0 is expected: the PTX does the emulation's IEEE operations in the
// same order -- and the largest difference. Two NaNs agree.
func agree(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	var maxRel float64
	differ, bad := 0, 0
	for i := range want {
		g, w := got[i], want[i]
		if math.Float32bits(g) == math.Float32bits(w) || (g != g && w != w) {
			continue
		}
		differ++
		rel := math.Abs(float64(g-w)) / math.Max(1, math.Abs(float64(w)))
		if !(rel <= 1e-4) {
			if bad++; bad <= 3 {
				t.Errorf("%s: [%d] cuda %v, emulation %v", what, i, g, w)
			}
			continue
		}
		maxRel = max(maxRel, rel)
	}
	t.Logf("%s: %d values, %d differ in bits from the emulation, max relative error %.3g", what, len(want), differ, maxRel)
	if bad > 0 {
		t.Errorf("%s: %d values beyond 1e-4 relative", what, bad)
	}
}

func scaled(r *rand.Rand, n int, scale float64) []float32 {
	x := randFloats(r, n)
	for i := range x {
		x[i] *= float32(scale)
	}
	return x
}

func TestKernelsOf(t *testing.T) {
	if _, ok := backend.KernelsOf(open(t)); !ok {
		t.Fatal("the CUDA backend does not implement backend.Kernels")
	}
}

// TestGELUKernels: 64x32 tokens of width 768, plus the edge cases (erff's
// clamp, exp underflow, huge values, infinities, NaN).
func TestGELUKernels(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(11, 12))
	x := scaled(r, 64*32*768, 2)
	for _, v := range []float32{0, 1e-40, 4, 5.656854, 5.6568546, 13.3, 20, 1e5, math.MaxFloat32, float32(math.Inf(1))} {
		x = append(x, v, -v)
	}
	x = append(x, float32(math.NaN()))
	n := len(x)
	wantY, wantCdf := make([]float32, n), make([]float32, n)
	emu.GELUForward(x, wantY, wantCdf)
	y, cdf := make([]float32, n), make([]float32, n)
	g.GELUForward(x, y, cdf)
	agree(t, "GELU forward y", y, wantY)
	agree(t, "GELU forward cdf", cdf, wantCdf)

	gy := randFloats(r, n)
	wantGx, gx := make([]float32, n), make([]float32, n)
	emu.GELUBackward(x, wantCdf, gy, wantGx)
	g.GELUBackward(x, wantCdf, gy, gx)
	agree(t, "GELU backward", gx, wantGx)
}

// TestLayerNormKernels: 64x32 tokens of width 768 (BERT's eps), one
// column, and a constant row (zero variance: rstd = 1/sqrt(eps)) in each.
func TestLayerNormKernels(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(13, 14))
	for _, s := range []struct {
		rows, cols int
		eps        float32
	}{{64 * 32, 768, 1e-12}, {1000, 1, 1e-12}, {3, 5, 1e-5}, {300, 256, 1e-5}} {
		rows, cols, n := s.rows, s.cols, s.rows*s.cols
		x := scaled(r, n, 3)
		for j := 0; j < cols; j++ {
			x[j] = 0.5
		}
		gain, bias := randFloats(r, cols), randFloats(r, cols)
		wantY, wantXhat, wantRstd := make([]float32, n), make([]float32, n), make([]float32, rows)
		emu.LayerNormForward(x, gain, bias, rows, cols, s.eps, wantY, wantXhat, wantRstd)
		y, xhat, rstd := make([]float32, n), make([]float32, n), make([]float32, rows)
		g.LayerNormForward(x, gain, bias, rows, cols, s.eps, y, xhat, rstd)
		agree(t, "LayerNorm forward y", y, wantY)
		agree(t, "LayerNorm forward xhat", xhat, wantXhat)
		agree(t, "LayerNorm forward rstd", rstd, wantRstd)

		gy := randFloats(r, n)
		wantGx, gx := make([]float32, n), make([]float32, n)
		emu.LayerNormBackward(gy, gain, wantXhat, wantRstd, rows, cols, wantGx)
		g.LayerNormBackward(gy, gain, wantXhat, wantRstd, rows, cols, gx)
		agree(t, "LayerNorm backward", gx, wantGx)
	}
}

// TestMaskedSoftmaxKernel: the attention probabilities of 64 sequences, 12
// heads, 32 positions, with padding (key lengths), causal rows, rows with
// no visible key and rows with all keys visible.
func TestMaskedSoftmaxKernel(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(15, 16))
	for _, cols := range []int{32, 1, 128} {
		rows := 64 * 12 * 32
		x := scaled(r, rows*cols, 4)
		visible := make([]int32, rows)
		for i := range visible {
			keyLen := int32(r.IntN(cols + 1))
			switch i % 4 {
			case 0:
				visible[i] = keyLen
			case 1:
				visible[i] = min(keyLen, int32(i/4%cols+1)) // causal
			case 2:
				visible[i] = int32(cols)
			case 3:
				visible[i] = int32(i%3) - 1 // -1, 0, 1
			}
		}
		want, got := slices.Clone(x), slices.Clone(x)
		emu.MaskedSoftmaxRows(want, rows, cols, visible)
		g.MaskedSoftmaxRows(got, rows, cols, visible)
		agree(t, "masked softmax", got, want)
	}
}

// TestAdamWKernel replays a few AdamW steps on a BERT-sized weight, with
// weight decay and without (decay == 1 skips the multiply), the scalars
// derived as optim.AdamW.Step derives them.
func TestAdamWKernel(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(17, 18))
	const beta1, beta2, eps = 0.9, 0.999, 1e-8
	for _, wd := range []float64{0.01, 0} {
		n, lr := 768*3072+5, 1e-4
		p := scaled(r, n, 0.05)
		m, v := make([]float32, n), make([]float32, n)
		gp, gm, gv := slices.Clone(p), slices.Clone(m), slices.Clone(v)
		for step := 1; step <= 4; step++ {
			grad := scaled(r, n, 1e-2)
			bc1 := 1 - math.Pow(beta1, float64(step))
			bc2 := 1 - math.Pow(beta2, float64(step))
			decay, stepSize, sqrtBC2 := float32(1-lr*wd), float32(lr/bc1), float32(math.Sqrt(bc2))
			emu.AdamW(p, grad, m, v, decay, beta1, beta2, stepSize, sqrtBC2, eps)
			g.AdamW(gp, grad, gm, gv, decay, beta1, beta2, stepSize, sqrtBC2, eps)
			agree(t, "AdamW p", gp, p)
			agree(t, "AdamW m", gm, m)
			agree(t, "AdamW v", gv, v)
		}
	}
}

// TestKernelsEmpty: empty operands launch nothing.
func TestKernelsEmpty(t *testing.T) {
	g := open(t)
	g.GELUForward(nil, nil, nil)
	g.GELUBackward(nil, nil, nil, nil)
	g.LayerNormForward(nil, []float32{1}, []float32{0}, 0, 1, 1e-12, nil, nil, nil)
	g.LayerNormBackward(nil, []float32{1}, nil, nil, 0, 1, nil)
	g.MaskedSoftmaxRows(nil, 0, 4, nil)
	g.AdamW(nil, nil, nil, nil, 1, 0.9, 0.999, 1e-3, 1, 1e-8)
}

// TestTrainingStepMatchesCPU runs the backends' conformance training run
// (encoder + tied decoder, SimCSE + token cross-entropy, AdamW; three
// steps) with every GEMM and kernel on the GPU and compares the losses and
// all weights with the CPU backend's to 1e-4 relative.
func TestTrainingStepMatchesCPU(t *testing.T) {
	defer backend.Use(backend.Current())
	backend.Use(backend.CPU())
	wantL, wantW, err := conformance.TrainSteps(3)
	if err != nil {
		t.Fatal(err)
	}
	backend.Use(open(t))
	gotL, gotW, err := conformance.TrainSteps(3)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("losses: cuda %v, cpu %v", gotL, wantL)
	closeTo(t, "losses", gotL, wantL)
	var worst float64
	for i := range wantW {
		closeTo(t, "weights", gotW[i], wantW[i])
		for j := range wantW[i] {
			worst = math.Max(worst, math.Abs(float64(gotW[i][j]-wantW[i][j])))
		}
	}
	t.Logf("largest weight difference after 3 steps: %.3g", worst)
}

// TestAdamWUpdatesKeptWeight: AdamW on a kept weight updates the device
// copy in place, so the next Sgemm with that weight sees the new values
// without Changed, and the host copy matches.
func TestAdamWUpdatesKeptWeight(t *testing.T) {
	g := open(t)
	r := rand.New(rand.NewPCG(21, 22))
	const rows, cols = 64, 48
	w := randFloats(r, rows*cols)
	g.Keep(w)
	defer g.Release(w)
	grad := randFloats(r, rows*cols)
	m, v := make([]float32, len(w)), make([]float32, len(w))
	g.AdamW(w, grad, m, v, 1, 0.9, 0.999, 0.1, float32(math.Sqrt(1-0.999)), 1e-8)
	host := slices.Clone(w) // the host copy AdamW wrote back
	x := randFloats(r, 8*rows)
	got := make([]float32, 8*cols)
	g.Sgemm(false, false, 8, cols, rows, 1, x, rows, w, cols, 0, got, cols)
	ref := make([]float32, 8*cols)
	backend.CPU().Sgemm(false, false, 8, cols, rows, 1, x, rows, host, cols, 0, ref, cols)
	closeTo(t, "Sgemm with the kept weight after AdamW", got, ref)
}
