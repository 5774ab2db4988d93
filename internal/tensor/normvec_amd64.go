//go:build amd64 && !purego

package tensor

import "golang.org/x/sys/cpu"

//go:noescape
func layerNormRowAVX(x, gain, b, xh, y *float32, n int, mean, rstd float64)

//go:noescape
func layerNormGradAVX(gy, gain, xh, d *float32, n int, m1, m2, rs float32)

//go:noescape
func rmsNormRowAVX(x, gain, xh, y *float32, n int, rstd float64)

//go:noescape
func rmsNormGradAVX(gy, gain, xh, d *float32, n int, m, rs float32)

//go:noescape
func colProdSumsAVX(out, a, b *float32, rows, n, ld int)

//go:noescape
func gainBiasAVX(outP, outS, a, b *float32, rows, n, ld int)

//go:noescape
func rowSums8AVX(x *float32, ld, n int, s *[8]float64)

//go:noescape
func rowSqDev8AVX(x *float32, ld, n int, mean *[8]float64, s *[8]float64)

//go:noescape
func layerNormGradSums8AVX(gy, gain, xh *float32, ld, n int, a, b *[8]float32)

//go:noescape
func rmsNormGradSums8AVX(gy, gain, xh *float32, ld, n int, s *[8]float32)

func init() {
	if cpu.X86.HasAVX2 {
		layerNormRowVec, layerNormGradVec = layerNormRowAVX, layerNormGradAVX
		rmsNormRowVec, rmsNormGradVec = rmsNormRowAVX, rmsNormGradAVX
		colProdSumsVec, gainBiasVec = colProdSumsAVX, gainBiasAVX
		rowSums8Vec, rowSqDev8Vec = rowSums8AVX, rowSqDev8AVX
		layerNormGradSums8Vec, rmsNormGradSums8Vec = layerNormGradSums8AVX, rmsNormGradSums8AVX
	}
}
