//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// directFMA4AVX2 is directFMA4 in AVX2 and FMA: a tile of 4 rows by 16
// columns in eight YMM accumulators, the B row loaded once for the four
// rows, each element's chain the 6x16 kernel's instruction for
// instruction.
//
//go:noescape
func directFMA4AVX2(k int, a0, a1, a2, a3 *float32, acs int, b *float32, ldb int, c *float32, ldc int, rows, n int, alpha float32, accum bool)

// directFMA4AVX512 is directFMA4AVX2 on tiles of 4 rows by 32 columns in
// ZMM accumulators, each element's instructions those of directFMA4AVX2,
// so the bits are the same.
//
//go:noescape
func directFMA4AVX512(k int, a0, a1, a2, a3 *float32, acs int, b *float32, ldb int, c *float32, ldc int, rows, n int, alpha float32, accum bool)

func init() {
	if hasAsmKernel {
		directFMA4Paths = append(directFMA4Paths, directFMA4Path{"avx2", directFMA4AVX2})
		// x/sys/cpu reports AVX-512 only when the OS saves the ZMM state.
		if cpu.X86.HasAVX512F {
			directFMA4Paths = append(directFMA4Paths, directFMA4Path{"avx512", directFMA4AVX512})
		}
		directFMA4 = directFMA4Paths[len(directFMA4Paths)-1].f
	}
}

// transpose8AVX transposes the 8 x 8*blocks band at src (row stride lds)
// into dst (8*blocks rows of 8, row stride ldd). blocks >= 1.
//
//go:noescape
func transpose8AVX(src *float32, lds int, dst *float32, ldd int, blocks int)

func init() {
	if hasAsmKernel {
		transpose8 = transpose8AVX
	}
}
