//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// kernel6x16AVX2 computes the 6x16 tile C = alpha*(Ap*Bp) + beta*C from a
// packed A micro-panel (k columns of 6) and a packed B micro-panel (k rows of
// 16); ldc is C's row stride in elements. With beta == 0 C is only written.
// The beta*C term reads cin (row stride ldcin), which is c and ldc except
// for a bias folded into the first k slice: the bias row with stride 0.
//
//go:noescape
func kernel6x16AVX2(k int, a, b, c *float32, ldc int, cin *float32, ldcin int, alpha, beta float32)

func asmKernel(k int, a, b, c []float32, ldc int, cin []float32, ldcin int, alpha, beta float32) {
	kernel6x16AVX2(k, &a[0], &b[0], &c[0], ldc, &cin[0], ldcin, alpha, beta)
}

// kernel6x32AVX512 computes two horizontally adjacent 6x16 tiles at once
// (C is 6x32) from one packed A micro-panel and two packed B micro-panels,
// with the contract of kernel6x16AVX2. Every element gets the same FMA
// sequence as in the 6x16 kernel (the vector width changes how many lanes
// run at once, not what one lane computes), so results are bit-identical
// with AVX2 hosts; it exists for the throughput of 32 accumulator lanes per
// FMA pair on AVX-512 hosts.
//
//go:noescape
func kernel6x32AVX512(k int, a, b0, b1, c *float32, ldc int, cin *float32, ldcin int, alpha, beta float32)

func asmKernelWide(k int, a, b0, b1, c []float32, ldc int, cin []float32, ldcin int, alpha, beta float32) {
	kernel6x32AVX512(k, &a[0], &b0[0], &b1[0], &c[0], ldc, &cin[0], ldcin, alpha, beta)
}

// kernel12x32AVX512 computes four 6x16 tiles at once (C is 12x32) from two
// consecutive packed A micro-panels (a0: rows 0-5, a1: rows 6-11) and two
// packed B micro-panels, with the contract and the per-element FMA sequence
// of kernel6x32AVX512, so the bits are the same. Its 24 accumulators load
// each B row once for twelve rows instead of six.
//
//go:noescape
func kernel12x32AVX512(k int, a0, a1, b0, b1, c *float32, ldc int, cin *float32, ldcin int, alpha, beta float32)

func asmKernelTall(k int, a0, a1, b0, b1, c []float32, ldc int, cin []float32, ldcin int, alpha, beta float32) {
	kernel12x32AVX512(k, &a0[0], &a1[0], &b0[0], &b1[0], &c[0], ldc, &cin[0], ldcin, alpha, beta)
}

// The AVX2 kernel also needs FMA and an OS that saves the YMM state; x/sys/cpu
// folds the OSXSAVE check into HasAVX/HasAVX2.
var hasAsmKernel = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if hasAsmKernel {
		micro = asmKernel
		microName = "avx2-fma-6x16"
		microFMA = true
	}
	// x/sys/cpu reports AVX-512 only when the OS saves the ZMM state.
	if hasAsmKernel && cpu.X86.HasAVX512F {
		microWide = asmKernelWide
		microTall = asmKernelTall
		microName = "avx512-12x32+6x32+avx2-fma-6x16"
	}
}
