package kernel

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"repro/internal/tensor/tensortest"
)

// benchShape is one product of the reference training step (4 layers, width
// 256, 4 heads, FFN 1024, 64 x 32 tokens): M = 2048 token rows.
type benchShape struct {
	tA, tB  bool
	m, n, k int
}

func (s benchShape) String() string {
	f := func(t bool) string {
		if t {
			return "T"
		}
		return "N"
	}
	return fmt.Sprintf("%s%s_%dx%dx%d", f(s.tA), f(s.tB), s.m, s.n, s.k)
}

var stepShapes = []benchShape{
	// forward: projections and the two FFN layers
	{false, false, 2048, 256, 256},
	{false, false, 2048, 1024, 256},
	{false, false, 2048, 256, 1024},
	// backward, input gradient dX = dY * W^T
	{false, true, 2048, 256, 256},
	{false, true, 2048, 256, 1024},
	{false, true, 2048, 1024, 256},
	// backward, weight gradient dW = X^T * dY
	{true, false, 256, 256, 2048},
	{true, false, 256, 1024, 2048},
	{true, false, 1024, 256, 2048},
}

func benchOperands(s benchShape) operands {
	return newOperands(rand.New(rand.NewPCG(1, 1)), s.tA, s.tB, s.m, s.n, s.k, 0, false)
}

// BenchmarkSgemm reports GFLOP/s for the step's shapes with the default
// goroutine count (GOMAXPROCS; use -cpu 1,2 to compare).
func BenchmarkSgemm(b *testing.B) {
	for _, s := range stepShapes {
		b.Run(s.String(), func(b *testing.B) {
			o := benchOperands(s)
			var cpu tensortest.CPUTimer
			b.ResetTimer()
			cpu.Start()
			for i := 0; i < b.N; i++ {
				Sgemm(o.transA, o.transB, o.m, o.n, o.k, 1, o.a, o.lda, o.b, o.ldb, 0, o.c, o.ldc)
			}
			b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			cpu.Report(b)
		})
	}
}

// BenchmarkAttention runs the per-head products of one attention layer
// (64 sequences x 4 heads, 32 tokens, head width 64) as the fused attention
// operator would: heads split over GOMAXPROCS goroutines, each product
// single-threaded inside Sgemm.
func BenchmarkAttention(b *testing.B) {
	shapes := []benchShape{
		{false, true, 32, 32, 64},  // S = Q K^T, and dP = dO V^T
		{false, false, 32, 64, 32}, // O = P V, and dQ = dS K
		{true, false, 32, 64, 32},  // dV = P^T dO, dK = dS^T Q
	}
	const heads = 64 * 4
	for _, s := range shapes {
		b.Run(s.String(), func(b *testing.B) {
			ops := make([]operands, heads)
			r := rand.New(rand.NewPCG(2, 2))
			for h := range ops {
				ops[h] = newOperands(r, s.tA, s.tB, s.m, s.n, s.k, 0, false)
			}
			workers := Threads()
			var cpu tensortest.CPUTimer
			b.ResetTimer()
			cpu.Start()
			for i := 0; i < b.N; i++ {
				var wg sync.WaitGroup
				for w := 0; w < workers; w++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for h := w; h < heads; h += workers {
							o := ops[h]
							Sgemm(o.transA, o.transB, o.m, o.n, o.k, 1, o.a, o.lda, o.b, o.ldb, 0, o.c, o.ldc)
						}
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(2*float64(heads*s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			cpu.Report(b)
		})
	}
}

// BenchmarkAttentionDirect is BenchmarkAttention's products through
// Direct (rows of 4 against unpacked B, as the fused attention calls it),
// with the same bits; the NT product includes transposing B once. One
// sub-benchmark per directFMA4 the CPU has (avx2, avx512).
func BenchmarkAttentionDirect(b *testing.B) {
	shapes := []benchShape{
		{false, true, 32, 32, 64},
		{false, false, 32, 64, 32},
		{true, false, 32, 64, 32},
	}
	const heads = 64 * 4
	saved := directFMA4
	defer func() { directFMA4 = saved }()
	paths := directFMA4Paths
	if len(paths) == 0 {
		paths = []directFMA4Path{{"go", nil}}
	}
	for _, p := range paths {
		for _, s := range shapes {
			b.Run(p.name+"/"+s.String(), func(b *testing.B) {
				directFMA4 = p.f
				ops := make([]operands, heads)
				r := rand.New(rand.NewPCG(2, 2))
				for h := range ops {
					ops[h] = newOperands(r, s.tA, s.tB, s.m, s.n, s.k, 0, false)
				}
				ar := ArithOf(s.m, s.n, s.k)
				workers := Threads()
				var cpu tensortest.CPUTimer
				b.ResetTimer()
				cpu.Start()
				for i := 0; i < b.N; i++ {
					var wg sync.WaitGroup
					for w := 0; w < workers; w++ {
						wg.Add(1)
						go func() {
							defer wg.Done()
							bt := make([]float32, s.k*s.n)
							for h := w; h < heads; h += workers {
								o := ops[h]
								bm, ldb := o.b, o.ldb
								if o.transB {
									Transpose(bt, o.n, o.b, o.ldb, o.n, o.k)
									bm, ldb = bt, o.n
								}
								Direct(ar, o.transA, o.m, o.n, o.k, 1, o.a, o.lda, bm, ldb, o.c, o.ldc)
							}
						}()
					}
					wg.Wait()
				}
				b.ReportMetric(2*float64(heads*s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				cpu.Report(b)
			})
		}
	}
}

// BenchmarkSgemmPack runs BenchmarkSgemm's shapes with each set of packing
// helpers the CPU has, so that packing changes compare in one run.
func BenchmarkSgemmPack(b *testing.B) {
	for _, s := range stepShapes {
		for _, h := range packPaths {
			b.Run(s.String()+"/"+h.name, func(b *testing.B) {
				o := benchOperands(s)
				withPack(h, func() {
					var cpu tensortest.CPUTimer
					b.ResetTimer()
					cpu.Start()
					for i := 0; i < b.N; i++ {
						Sgemm(o.transA, o.transB, o.m, o.n, o.k, 1, o.a, o.lda, o.b, o.ldb, 0, o.c, o.ldc)
					}
					b.ReportMetric(2*float64(s.m*s.n*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
					cpu.Report(b)
				})
			})
		}
	}
}
