//go:build !unix

package tensortest

func processCPU() float64 { return 0 }
