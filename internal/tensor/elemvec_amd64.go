//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func mulAVX(dst, a, b *float32, n int)

//go:noescape
func addAVX(dst, a, b *float32, n int)

//go:noescape
func reluMaskAVX(dst, x, v *float32, n int)

func init() {
	if cpu.X86.HasAVX2 {
		mulVec, addVec, reluMaskVec = mulAVX, addAVX, reluMaskAVX
	}
}
