package emu

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"repro/internal/tensor"
	"repro/internal/tensor/backend/cuda/ptx"
	"repro/internal/tensor/optim"
)

// The kernels must reproduce the Go operators bit for bit: every test
// below compares float32 bit patterns, except that any two NaNs count as
// equal (which NaN payload Go's min/max or a 0*Inf produce is not the
// point, and no operator passes a NaN on).

// TestSourcesCurrent makes sure this package was compiled from the current
// ../kernels.h (see sources.go).
func TestSourcesCurrent(t *testing.T) {
	h := sha256.New()
	for _, name := range []string{"kernels.h", "kernels.cu"} {
		b, err := os.ReadFile(filepath.Join("..", name))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != sourcesSHA256 || got != ptx.SourceHash() {
		t.Fatalf("kernels.h+kernels.cu hash %s, sources.go %s, kernels.ptx %s: run ../gen.sh", got, sourcesSHA256, ptx.SourceHash())
	}
}

// mulAdd is compiled like the operators' a*b + c.
//
//go:noinline
func mulAdd(a, b, c float32) float32 { return a*b + c }

// goFuses reports whether this Go build fuses a*b + c into one rounding
// (arm64, ppc64, s390x, riscv64; amd64 with GOAMD64=v3 or above): then the
// operators' arithmetic is not the kernels', which never fuse (the GPU's
// must agree with amd64's default build, on which the baselines were
// recorded), and bit-identity cannot hold.
func goFuses() bool {
	a := float32(1 + 1.0/4096) // a*a = 1 + 2^-11 + 2^-24: a tie, rounded to 1 + 2^-11
	return mulAdd(a, a, -(1+1.0/2048)) != 0
}

// needUnfused skips t where Go fuses multiply-adds.
func needUnfused(t *testing.T) {
	t.Helper()
	if goFuses() {
		t.Skipf("skipped: this Go build (GOARCH=%s) fuses multiply-adds, so the CPU operators do not compute what the kernels compute; the bit-for-bit comparison needs amd64 below GOAMD64=v3", runtime.GOARCH)
	}
}

func same(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// identical fails unless got and want agree bit for bit.
func identical(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad, first := 0, -1
	for i := range want {
		if !same(got[i], want[i]) {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d values differ; first [%d]: kernel %v (%#08x), Go %v (%#08x)", what, bad, len(want),
			first, got[first], math.Float32bits(got[first]), want[first], math.Float32bits(want[first]))
	}
}

func normals(r *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64() * scale)
	}
	return x
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

func TestExpErf(t *testing.T) {
	needUnfused(t)
	r := rand.New(rand.NewPCG(1, 1))
	xs := specials()
	for i := 0; i < 1<<18; i++ {
		xs = append(xs, math.Float32frombits(r.Uint32()), float32(r.NormFloat64()*30))
	}
	for x := float32(-100); x <= 100; x += 0.0009765625 { // every 2^-10
		xs = append(xs, x)
	}
	var badExp, badErf int
	for _, x := range xs {
		if e, w := ExpF(x), tensor.ExpF(x); !same(e, w) {
			if badExp++; badExp <= 5 {
				t.Errorf("expf(%v) = %v, Go %v", x, e, w)
			}
		}
		if e, w := ErfF(x), tensor.ErfF(x); !same(e, w) {
			if badErf++; badErf <= 5 {
				t.Errorf("erff(%v) = %v, Go %v", x, e, w)
			}
		}
	}
	if badExp+badErf > 0 {
		t.Errorf("of %d arguments, expf differs on %d, erff on %d", len(xs), badExp, badErf)
	}
}

func TestGELU(t *testing.T) {
	needUnfused(t)
	r := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct {
		name string
		x    []float32
	}{
		{"specials", specials()},
		{"normal", normals(r, 64*32*768/8, 1)},
		{"wide", normals(r, 100000, 8)}, // well past the erff clamp and the exp underflow
		{"one", []float32{0.3}},
	} {
		n := len(tc.x)
		gy := normals(r, n, 1)
		wantY, wantCdf := tensor.RefGELUForward(tc.x)
		y, cdf := make([]float32, n), make([]float32, n)
		GELUForward(tc.x, y, cdf)
		identical(t, tc.name+" forward y", y, wantY)
		identical(t, tc.name+" forward cdf", cdf, wantCdf)

		wantGx := tensor.RefGELUBackward(tc.x, wantCdf, gy)
		gx := make([]float32, n)
		GELUBackward(tc.x, wantCdf, gy, gx)
		identical(t, tc.name+" backward", gx, wantGx)
	}
}

func TestLayerNorm(t *testing.T) {
	needUnfused(t)
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
		x := normals(r, n, 2)
		for i := range x {
			x[i] += float32(tc.shift)
		}
		// Special rows: constant (zero variance), zeros, huge.
		copy(x[0:cols], slices.Repeat([]float32{0.75}, cols))
		clear(x[cols : 2*cols])
		for j := 0; j < cols && rows > 2; j++ {
			x[2*cols+j] *= 1e18
		}
		g, b := normals(r, cols, 1), normals(r, cols, 1)
		name := func(s string) string { return fmt.Sprintf("%s %dx%d", s, rows, cols) }

		wantY, wantXhat, wantRstd := tensor.RefLayerNormForward(x, g, b, rows, cols, tc.eps)
		y, xhat, rstd := make([]float32, n), make([]float32, n), make([]float32, rows)
		LayerNormForward(x, g, b, rows, cols, tc.eps, y, xhat, rstd)
		identical(t, name("forward y"), y, wantY)
		identical(t, name("forward xhat"), xhat, wantXhat)
		identical(t, name("forward rstd"), rstd, wantRstd)

		gy := normals(r, n, 1)
		wantGx := tensor.RefLayerNormBackward(gy, g, wantXhat, wantRstd, rows, cols)
		gx := make([]float32, n)
		LayerNormBackward(gy, g, wantXhat, wantRstd, rows, cols, gx)
		identical(t, name("backward"), gx, wantGx)
	}
}

func TestMaskedSoftmax(t *testing.T) {
	needUnfused(t)
	r := rand.New(rand.NewPCG(4, 4))
	for _, cols := range []int{1, 2, 7, 32, 128} {
		rows := 64 * 8
		x := normals(r, rows*cols, 3)
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
			tensor.RefMaskedSoftmaxRow(want[i*cols:(i+1)*cols], int(visible[i]))
		}
		got := slices.Clone(x)
		MaskedSoftmaxRows(got, rows, cols, visible)
		identical(t, fmt.Sprintf("softmax cols=%d", cols), got, want)
	}
}

// adamwScalars derives the per-parameter scalars of the kernel for update
// number step (1-based) exactly as optim.AdamW.Step does.
func adamwScalars(a *optim.AdamW, step int, lr, wd float64) (decay, b1, b2, stepSize, sqrtBC2, eps float32) {
	bc1 := 1 - math.Pow(a.Beta1, float64(step))
	bc2 := 1 - math.Pow(a.Beta2, float64(step))
	return float32(1 - lr*wd), float32(a.Beta1), float32(a.Beta2), float32(lr / bc1), float32(math.Sqrt(bc2)), float32(a.Eps)
}

func TestAdamW(t *testing.T) {
	needUnfused(t)
	r := rand.New(rand.NewPCG(5, 5))
	for _, tc := range []struct {
		name   string
		n      int
		lr, wd float64
	}{
		{"decay", 1000, 1e-3, 0.01},
		{"decay==1", 1000, 1e-3, 0},
		{"decay rounds to 1", 1000, 1e-9, 0.01},
		{"parallel", 1<<15 + 77, 5e-5, 0.01}, // optim splits the range across goroutines
		{"one", 1, 0.1, 0.5},
	} {
		a, err := optim.NewAdamW([]int{tc.n}, 0, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		p := normals(r, tc.n, 0.05)
		kp, km, kv := slices.Clone(p), make([]float32, tc.n), make([]float32, tc.n)
		for step := 1; step <= 6; step++ {
			g := normals(r, tc.n, 1e-2)
			switch step {
			case 2: // zero, tiny (g*g underflows) and huge gradients
				for i := 0; i < tc.n; i += 3 {
					g[i] = []float32{0, 1e-30, 1e10, -1e-23}[i/3%4]
				}
			case 3:
				clear(g)
			}
			decay, b1, b2, stepSize, sqrtBC2, eps := adamwScalars(a, step, tc.lr, tc.wd)
			a.Step([][]float32{p}, [][]float32{slices.Clone(g)}, tc.lr, []float64{tc.wd})
			AdamW(kp, g, km, kv, decay, b1, b2, stepSize, sqrtBC2, eps)
			what := fmt.Sprintf("%s step %d", tc.name, step)
			identical(t, what+" p", kp, p)
			identical(t, what+" m", km, a.M[0])
			identical(t, what+" v", kv, a.V[0])
		}
	}
}

// TestKernelsInterface drives the emulation through backend.Kernels.
func TestKernelsInterface(t *testing.T) {
	needUnfused(t)
	var k Kernels
	x := []float32{-1, 0, 1}
	y, cdf := make([]float32, 3), make([]float32, 3)
	k.GELUForward(x, y, cdf)
	wantY, _ := tensor.RefGELUForward(x)
	identical(t, "Kernels.GELUForward", y, wantY)
}
