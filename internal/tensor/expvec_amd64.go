//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func expSubAVX2(dst, src *float32, n int, m float32, c *[16]float32)

func init() {
	if cpu.X86.HasAVX2 {
		expSubVec = expSubAVX2
	}
}
