package emudev

import (
	"math"
	"math/rand/v2"
	"testing"

	"repro/internal/tensor/backend"
	"repro/internal/tensor/kernel"
)

// TestGemmStridedRuns: the emulated device runs a GEMM grid as its strided
// runs (what the GPU's strided-batched calls do) and gets, bit for bit,
// one CPU sgemm per (sequence, head) product: attention's three products,
// for grids split per head, per sequence and of a single stride.
func TestGemmStridedRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rf := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	d := New().Dev()
	for _, sh := range [][3]int{{5, 2, 3}, {2, 6, 4}, {4, 3, 1}} {
		B, H, T, K, dh := sh[0], sh[1], sh[2], 7, 8
		D := H * dh
		type gemm struct {
			tA, tB            bool
			m, n, k           int
			alpha             float32
			a, b              []float32
			lda, ldb, cn, ldc int
			outer, inner      [3]int
		}
		q, k, s := rf(B*T*D), rf(B*K*D), rf(B*H*T*K)
		for _, g := range []gemm{
			{false, true, T, K, dh, 0.5, q, k, D, D, B * H * T * K, K, [3]int{T * D, K * D, H * T * K}, [3]int{dh, dh, T * K}},
			{false, false, T, dh, K, 1, s, k, K, D, B * T * D, D, [3]int{H * T * K, K * D, T * D}, [3]int{T * K, dh, dh}},
			{true, false, K, dh, T, 1, s, q, K, D, B * K * D, D, [3]int{H * T * K, T * D, K * D}, [3]int{T * K, dh, dh}},
		} {
			batch := backend.GemmBatch{Count: B * H, Inner: H, Outer: g.outer, InnerStride: g.inner}
			want := make([]float32, g.cn)
			for i := 0; i < batch.Calls(); i++ {
				oa, ob, oc := batch.Offsets(i)
				kernel.Sgemm(g.tA, g.tB, g.m, g.n, g.k, g.alpha, g.a[oa:], g.lda, g.b[ob:], g.ldb, 0, want[oc:], g.ldc)
			}
			A, Bf, C := d.Alloc(len(g.a)), d.Alloc(len(g.b)), d.Alloc(g.cn)
			d.Upload(A, 0, g.a, "test")
			d.Upload(Bf, 0, g.b, "test")
			d.Gemm(g.tA, g.tB, g.m, g.n, g.k, g.alpha, A, 0, g.lda, Bf, 0, g.ldb, 0, C, 0, g.ldc, batch)
			got := make([]float32, g.cn)
			d.Download(got, C, 0, "test")
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("shape %v, product %+v: C[%d] = %v, per-product sgemm %v", sh, g.outer, i, got[i], want[i])
				}
			}
			for _, x := range []backend.Buffer{A, Bf, C} {
				d.Free(x)
			}
		}
	}
}
