//go:build amd64 && !purego

package kernel

// copyRows16AVX copies rows rows of 16 floats, src's rows lds elements
// apart, to dst contiguously (packB's layout of a full micro-panel of a
// non-transposed B). rows >= 1.
//
//go:noescape
func copyRows16AVX(dst, src *float32, lds, rows int)

// copyRows6SSE copies rows rows of 6 floats, src's rows lds elements apart,
// to dst contiguously (packA's layout of a full micro-panel of a transposed
// A). rows >= 1.
//
//go:noescape
func copyRows6SSE(dst, src *float32, lds, rows int)

// interleave6AVX writes, for p in [0, 8*blocks), the six values
// src[i*lds+p] (i = 0..5) to dst[6*p : 6*p+6] (packA's layout of a full
// micro-panel of a non-transposed A), eight columns at a time through the
// 8x8 transpose network of transpose8AVX. blocks >= 1.
//
//go:noescape
func interleave6AVX(dst, src *float32, lds, blocks int)

func init() {
	copyRows6 = copyRows6SSE
	if hasAsmKernel {
		copyRows16 = copyRows16AVX
		interleave6 = interleave6AVX
	}
}
