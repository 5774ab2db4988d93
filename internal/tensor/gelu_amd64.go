//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func geluFwdAVX2(x, y, cdf *float32, n int, c *[32]float32) int

//go:noescape
func geluBwdAVX2(x, cdf, gy, gx *float32, n int, c *[32]float32, e *[16]float32) int

//go:noescape
func geluTanhFwdAVX2(x, y, t *float32, n int, c *[32]float32, e *[16]float32) int

//go:noescape
func geluTanhBwdAVX2(x, t, gy, gx *float32, n int, c *[32]float32) int

// The AVX-512 routines: sixteen lanes, each with the AVX2 routine's
// operations and bits.

//go:noescape
func geluFwdAVX512(x, y, cdf *float32, n int, c *[32]float32) int

//go:noescape
func geluBwdAVX512(x, cdf, gy, gx *float32, n int, c *[32]float32, e *[16]float32) int

//go:noescape
func geluTanhFwdAVX512(x, y, t *float32, n int, c *[32]float32, e *[16]float32) int

//go:noescape
func geluTanhBwdAVX512(x, t, gy, gx *float32, n int, c *[32]float32) int

func init() {
	if cpu.X86.HasAVX2 {
		geluPaths = append(geluPaths, geluPath{"avx2", geluFwdAVX2, geluBwdAVX2, geluTanhFwdAVX2, geluTanhBwdAVX2})
	}
	// x/sys/cpu reports AVX-512 only when the OS saves the ZMM state.
	if cpu.X86.HasAVX512F {
		geluPaths = append(geluPaths, geluPath{"avx512", geluFwdAVX512, geluBwdAVX512, geluTanhFwdAVX512, geluTanhBwdAVX512})
	}
	if len(geluPaths) > 0 {
		geluPaths[len(geluPaths)-1].use()
	}
}
