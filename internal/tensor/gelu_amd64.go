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

func init() {
	if cpu.X86.HasAVX2 {
		geluFwdVec, geluBwdVec = geluFwdAVX2, geluBwdAVX2
		geluTanhFwdVec, geluTanhBwdVec = geluTanhFwdAVX2, geluTanhBwdAVX2
	}
}
