//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// kernel6x16AVX2 computes the 6x16 tile C = alpha*(Ap*Bp) + beta*C from a
// packed A micro-panel (k columns of 6) and a packed B micro-panel (k rows of
// 16); ldc is C's row stride in elements. With beta == 0 C is only written.
//
//go:noescape
func kernel6x16AVX2(k int, a, b, c *float32, ldc int, alpha, beta float32)

func asmKernel(k int, a, b, c []float32, ldc int, alpha, beta float32) {
	kernel6x16AVX2(k, &a[0], &b[0], &c[0], ldc, alpha, beta)
}

// The AVX2 kernel also needs FMA and an OS that saves the YMM state; x/sys/cpu
// folds the OSXSAVE check into HasAVX/HasAVX2.
var hasAsmKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if hasAsmKernel {
		micro = asmKernel
		microName = "avx2-fma-6x16"
	}
}
