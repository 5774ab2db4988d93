package backend

import (
	"fmt"
	"math"
)

// Precision is the arithmetic of a device's GEMMs. FP32 (the zero value)
// is the reference: every result of the device path is then the CPU's.
// The others are mixed precision as GPUs offer it, opt-in per training
// stage (its precision parameter): the GEMMs' inputs are rounded, their
// products accumulated in FP32 and written as FP32; everything else (the
// weights, which stay the FP32 master copy, the optimiser and its
// moments, every other kernel) is unchanged.
//
//   - TF32: inputs rounded to 10 mantissa bits (TensorFloat-32; cuBLAS's
//     CUBLAS_COMPUTE_32F_FAST_TF32 on Ampere and later).
//   - BF16: inputs rounded to bfloat16's 7 (cuBLAS's GEMM with
//     CUDA_R_16BF operands and CUBLAS_COMPUTE_32F).
//
// The emulated device rounds the inputs to nearest, ties to even
// (RoundTF32, RoundBF16), then runs the CPU's sgemm: what the GPU computes
// up to the order of its FP32 sums (and, for TF32, the rounding cuBLAS
// applies inside, which NVIDIA does not specify).
type Precision int

// The precisions.
const (
	FP32 Precision = iota
	TF32
	BF16
)

// Precisions lists the names ParsePrecision accepts.
func Precisions() []string { return []string{"fp32", "tf32", "bf16"} }

// ParsePrecision reads "fp32", "tf32" or "bf16" ("" is fp32).
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "fp32", "":
		return FP32, nil
	case "tf32":
		return TF32, nil
	case "bf16":
		return BF16, nil
	}
	return FP32, fmt.Errorf("precision %q is not one of fp32, tf32, bf16", s)
}

func (p Precision) String() string {
	switch p {
	case FP32:
		return "fp32"
	case TF32:
		return "tf32"
	case BF16:
		return "bf16"
	}
	return fmt.Sprintf("Precision(%d)", int(p))
}

// PrecisionDevice is a Device whose GEMMs can run in mixed precision.
// SetGemmPrecision applies to this device value only: NewDeviceOf gives
// each user (a training run) its own.
type PrecisionDevice interface {
	Device
	SetGemmPrecision(p Precision)
	GemmPrecision() Precision
}

// roundMantissa rounds x to nearest, ties to even, keeping the top keep
// of float32's 23 mantissa bits; NaN (made quiet) and infinities pass.
func roundMantissa(x float32, keep uint) float32 {
	u := math.Float32bits(x)
	drop := 23 - keep
	mask := uint32(1)<<drop - 1
	if u&0x7fffffff > 0x7f800000 {
		return math.Float32frombits((u | 0x00400000) &^ mask)
	}
	u += mask>>1 + (u>>drop)&1
	return math.Float32frombits(u &^ mask)
}

// RoundTF32 rounds x to TF32 (10 mantissa bits), to nearest even.
func RoundTF32(x float32) float32 { return roundMantissa(x, 10) }

// RoundBF16 rounds x to bfloat16 (7 mantissa bits), to nearest even, as
// the CUDA conversion kernel does.
func RoundBF16(x float32) float32 { return roundMantissa(x, 7) }

// Round rounds x to p's GEMM input precision (FP32: x itself).
func (p Precision) Round(x float32) float32 {
	switch p {
	case TF32:
		return RoundTF32(x)
	case BF16:
		return RoundBF16(x)
	}
	return x
}
