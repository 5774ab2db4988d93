//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func colSumsAVX(out *float32, src *float32, rows, n, ld int)

func init() {
	if cpu.X86.HasAVX2 {
		colSumsVec = colSumsAVX
	}
}
