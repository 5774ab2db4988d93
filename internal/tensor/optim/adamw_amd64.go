//go:build amd64 && !purego

package optim

import "golang.org/x/sys/cpu"

//go:noescape
func adamwAVX2(p, gr, m, v *float32, n int, c adamwCoef, nodecay int)

func init() {
	if cpu.X86.HasAVX2 {
		adamwVec = adamwAVX2
	}
}
