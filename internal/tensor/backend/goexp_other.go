//go:build !amd64

package backend

// goExpFMA: elsewhere math.Exp is not exp_amd64.s, which the kernels
// transcribe; the bit-for-bit tests skip there (the Go compiler fuses
// multiply-adds on those architectures anyway).
func goExpFMA() bool { return false }
