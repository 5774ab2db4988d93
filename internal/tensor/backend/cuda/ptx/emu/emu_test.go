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

	"repro/internal/tensor/backend/cuda/ptx"
	"repro/internal/tensor/optim"
	"repro/internal/tensor/tensortest"
)

// The kernels must reproduce the Go operators bit for bit. The comparison
// with the operators' own code is package tensor's (kernelref_test.go: it
// reaches their intermediates); the tests here check AdamW against optim,
// the Kernels interface and a training step through the kernels, comparing
// float32 bit patterns (tensortest.Identical: any two NaNs are equal).

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
		p := tensortest.Normals(r, tc.n, 0.05)
		kp, km, kv := slices.Clone(p), make([]float32, tc.n), make([]float32, tc.n)
		for step := 1; step <= 6; step++ {
			g := tensortest.Normals(r, tc.n, 1e-2)
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
			tensortest.Identical(t, what+" p", kp, p)
			tensortest.Identical(t, what+" m", km, a.M[0])
			tensortest.Identical(t, what+" v", kv, a.V[0])
		}
	}
}

// TestKernelsInterface drives the emulation through backend.Kernels: its
// methods compute what the functions do (which package tensor's
// kernelref_test.go checks against the operators).
func TestKernelsInterface(t *testing.T) {
	var k Kernels
	x := []float32{-1, 0, 1}
	y, cdf := make([]float32, 3), make([]float32, 3)
	k.GELUForward(x, y, cdf)
	wantY, wantCdf := make([]float32, 3), make([]float32, 3)
	GELUForward(x, wantY, wantCdf)
	tensortest.Identical(t, "Kernels.GELUForward y", y, wantY)
	tensortest.Identical(t, "Kernels.GELUForward cdf", cdf, wantCdf)
}
