//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

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

// copyRows16AVX512 is copyRows16AVX with one ZMM per row.
//
//go:noescape
func copyRows16AVX512(dst, src *float32, lds, rows int)

// copyPanels6SSE is copyRows6SSE for panels adjacent micro-panels (src's
// 6 floats apart, dst's 6*rows floats apart), eight rows of every panel at
// a time. rows, panels >= 1.
//
//go:noescape
func copyPanels6SSE(dst, src *float32, lds, rows, panels int)

// copyPanels16x4AVX is copyRows16AVX for four adjacent micro-panels (dst's
// panels 16*rows floats apart), reading 64 contiguous floats per row.
// rows >= 1.
//
//go:noescape
func copyPanels16x4AVX(dst, src *float32, lds, rows int)

// copyPanels16x4AVX512 is copyRows16AVX512 for four adjacent micro-panels
// (dst's panels 16*rows floats apart), reading 64 contiguous floats per
// row. rows >= 1.
//
//go:noescape
func copyPanels16x4AVX512(dst, src *float32, lds, rows int)

// interleave6x16AVX512 is interleave6AVX sixteen columns at a time: six
// ZMM loads, an in-register 6x16 transpose of VPERMT2PS permutes and six
// ZMM stores of 96 contiguous floats per block. blocks >= 1.
//
//go:noescape
func interleave6x16AVX512(dst, src *float32, lds, blocks int)

func init() {
	packPaths = append(packPaths, packHelpers{name: "sse", copyPanels6: copyPanels6SSE})
	if hasAsmKernel {
		// The helpers before the copyPanels and 16-column ones, kept as
		// the benchmarks' baseline.
		packPaths = append(packPaths, packHelpers{name: "avx2-base",
			copyRows16: copyRows16AVX, copyRows6: copyRows6SSE,
			interleave6: interleave6AVX, transpose8: transpose8AVX})
		packPaths = append(packPaths, packHelpers{name: "avx2",
			copyRows16: copyRows16AVX, copyPanels6: copyPanels6SSE,
			copyPanels16x4: copyPanels16x4AVX,
			interleave6:    interleave6AVX, transpose8: transpose8AVX})
	}
	// x/sys/cpu reports AVX-512 only when the OS saves the ZMM state.
	if hasAsmKernel && cpu.X86.HasAVX512F {
		packPaths = append(packPaths, packHelpers{name: "avx512",
			copyRows16: copyRows16AVX512, copyPanels6: copyPanels6SSE,
			copyPanels16x4: copyPanels16x4AVX512,
			interleave6:    interleave6AVX, interleave6x16: interleave6x16AVX512,
			transpose8: transpose8AVX})
	}
	packPaths[len(packPaths)-1].use()
}
