package emudev

import (
	"math"
	"math/rand/v2"
	"testing"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/backend/cuda/ptx/emu"
	"repro/internal/tensor/kernel"
)

// TestRoundBF16MatchesKernel: backend.RoundBF16 (the emulated GEMMs'
// rounding) gives the bits of the CUDA conversion kernel for normal,
// subnormal, tie, overflowing, infinite and NaN inputs.
func TestRoundBF16MatchesKernel(t *testing.T) {
	xs := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 1.00390625, 1.01171875, 1.0078125 + 1.0/1024,
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 1e-40, float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffc12345), math.Float32frombits(0x3f808000), math.Float32frombits(0x3f818000)}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		xs = append(xs, math.Float32frombits(r.Uint32()))
	}
	got := emu.ToBF16(xs)
	for i, x := range xs {
		want := math.Float32bits(backend.RoundBF16(x))
		if want&0xffff != 0 || uint32(got[i])<<16 != want {
			t.Fatalf("%g (%#08x): kernel %#04x, RoundBF16 %#08x", x, math.Float32bits(x), got[i], want)
		}
	}
	if backend.RoundBF16(1.00390625) != 1 || backend.RoundBF16(1.01171875) != 1.015625 { // ties to even
		t.Error("bfloat16 ties are not rounded to even")
	}
	if backend.RoundTF32(1+1.0/2048) != 1 || backend.RoundTF32(1+3.0/2048) != 1+1.0/512 || backend.RoundTF32(1+1.0/4096) != 1 {
		t.Error("TF32 ties are not rounded to even")
	}
}

// TestGemmPrecision: in TF32 and BF16 the emulated GEMM is the CPU's sgemm
// of the rounded operands (bit for bit), and differs from FP32.
func TestGemmPrecision(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const m, n, k = 5, 7, 33
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	for i := range b {
		b[i] = float32(r.NormFloat64())
	}
	fp32 := make([]float32, m*n)
	kernel.Sgemm(false, false, m, n, k, 1, a, k, b, n, 0, fp32, n)
	for _, p := range []backend.Precision{backend.TF32, backend.BF16} {
		ra, rb := make([]float32, len(a)), make([]float32, len(b))
		for i := range a {
			ra[i] = p.Round(a[i])
		}
		for i := range b {
			rb[i] = p.Round(b[i])
		}
		want := make([]float32, m*n)
		kernel.Sgemm(false, false, m, n, k, 1, ra, k, rb, n, 0, want, n)
		d := New().NewDevice().(*Device)
		d.SetGemmPrecision(p)
		A, B, C := d.Alloc(len(a)), d.Alloc(len(b)), d.Alloc(m*n)
		d.Upload(A, 0, a, "test")
		d.Upload(B, 0, b, "test")
		d.Gemm(false, false, m, n, k, 1, A, 0, k, B, 0, n, 0, C, 0, n, backend.GemmBatch{})
		got := make([]float32, m*n)
		d.Download(got, C, 0, "test")
		differ := 0
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%v: C[%d] = %v, the sgemm of the rounded operands %v", p, i, got[i], want[i])
			}
			if got[i] != fp32[i] {
				differ++
			}
			if math.Abs(float64(got[i]-fp32[i])) > 0.05*math.Sqrt(k) {
				t.Errorf("%v: C[%d] = %v, FP32 %v", p, i, got[i], fp32[i])
			}
		}
		if differ == 0 {
			t.Errorf("%v: every value is FP32's", p)
		}
		// The operands in device memory are untouched: the FP32 master copy.
		back := make([]float32, len(a))
		d.Download(back, A, 0, "test")
		for i := range a {
			if back[i] != a[i] {
				t.Fatalf("%v: the GEMM changed its operand", p)
			}
		}
	}
}
