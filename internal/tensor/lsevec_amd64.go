//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func expSumAVX2(x *float32, n int, mx float32, c *[16][4]float64, sum float64) (s float64, done int)

//go:noescape
func maxAVX2(x *float32, n int) (m float32, nan bool)

//go:noescape
func subAVX2(dst, src *float32, n int, s float32)

//go:noescape
func mulAVX2(dst, src *float32, n int, s float32)

func init() {
	if !cpu.X86.HasAVX2 {
		return
	}
	maxVec, subVec, scaleVec = maxAVX2, subAVX2, mulAVX2
	// math.Exp takes its FMA path where HasAVX && HasFMA
	// (math/exp_amd64.go's useFMA; both packages honour GODEBUG=cpu.*):
	// the lanes copy that path, so they run only then.
	if cpu.X86.HasAVX && cpu.X86.HasFMA {
		expSumVec = expSumAVX2
	}
}
