package backend

import (
	"fmt"

	"repro/internal/tensor/kernel"
)

// cpuBackend is the default backend: the packed, cache-blocked sgemm of
// package kernel (Go assembly micro-kernel on amd64 with AVX2+FMA, pure Go
// elsewhere), parallel over kernel.Threads() goroutines with a fixed
// partition of C, so results are bit-identical run after run.
type cpuBackend struct{}

// CPU returns the pure-Go backend. It needs no system library.
func CPU() Backend { return cpuBackend{} }

func (cpuBackend) Name() string { return "cpu" }

// Sgemm panics with kernel.Check's message on inconsistent arguments (a
// programming error in the calling operator).
func (cpuBackend) Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	kernel.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// SgemmBias is BiasSgemm's, through kernel.SgemmBias.
func (cpuBackend) SgemmBias(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int) {
	kernel.SgemmBias(transA, transB, m, n, k, alpha, a, lda, b, ldb, bias, c, ldc)
}

func init() {
	Register("cpu", "", func(arg string) (Backend, error) {
		if arg != "" {
			return nil, fmt.Errorf("the cpu backend takes no argument, got %q", arg)
		}
		return CPU(), nil
	})
}
