//go:build amd64 && !purego

package metrics

import "golang.org/x/sys/cpu"

// kernel4x8AVX2 is kernel4x8Go in AVX2: the same products and additions,
// four lanes at a time (VMULPD then VADDPD, deliberately not FMA, so every
// output has the bits of the pure-Go kernel and of the sparse path). acc is
// loaded, k dimensions are added, and acc is stored.
//
//go:noescape
func kernel4x8AVX2(k int, a, b *float64, acc *[mr * nr]float64)

func asmKernel(a, b []float64, acc *[mr * nr]float64) {
	k := min(len(a)/mr, len(b)/nr)
	if k == 0 {
		return
	}
	kernel4x8AVX2(k, &a[0], &b[0], acc)
}

// x/sys/cpu folds the check that the OS saves the YMM state into HasAVX2.
func init() {
	if cpu.X86.HasAVX2 {
		micro = asmKernel
		microName = "avx2-4x8"
	}
}
