//go:build amd64 && !purego

package kernel

// directFMA4AVX2 is directFMA4 in AVX2 and FMA: a tile of 4 rows by 16
// columns in eight YMM accumulators, the B row loaded once for the four
// rows, each element's chain the 6x16 kernel's instruction for
// instruction.
//
//go:noescape
func directFMA4AVX2(k int, a0, a1, a2, a3 *float32, acs int, b *float32, ldb int, c *float32, ldc int, rows, n int, alpha float32, accum bool)

func init() {
	if hasAsmKernel {
		directFMA4 = directFMA4AVX2
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
