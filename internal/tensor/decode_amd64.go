//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func axpy4AVX(a *[4]float32, x0, x1, x2, x3, y *float32, n int)

//go:noescape
func dotKeysAVX(q *float32, dh int, kt *float32, blocks int, scale float32, out *float32)

func init() {
	if cpu.X86.HasAVX2 {
		axpy4Vec, dotKeysVec = axpy4AVX, dotKeysAVX
	}
}
