//go:build cuda

package cuda

/*
#cgo CFLAGS: -I/usr/local/cuda/include
#cgo LDFLAGS: -L/usr/local/cuda/lib64 -lcublas
#include <cublas_v2.h>

static int repro_blas_create(cublasHandle_t *h) { return (int)cublasCreate(h); }
static int repro_blas_destroy(cublasHandle_t h) { return (int)cublasDestroy(h); }

// count column-major products C_j = alpha op(A_j) op(B_j) + beta C_j, the
// operands of product j at A + j*sA, B + j*sB, C + j*sC (device pointers
// passed as integers).
static int repro_sgemm_strided(cublasHandle_t h, int tA, int tB, int m, int n, int k, float alpha,
	unsigned long long A, int lda, long long sA, unsigned long long B, int ldb, long long sB,
	float beta, unsigned long long C, int ldc, long long sC, int count) {
	return (int)cublasSgemmStridedBatched(h, tA ? CUBLAS_OP_T : CUBLAS_OP_N, tB ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
		&alpha, (const float *)A, lda, sA, (const float *)B, ldb, sB, &beta, (float *)C, ldc, sC, count);
}

// The same with cublasGemmStridedBatchedEx in mixed precision: prec 1 is
// TF32 (FP32 operands, CUBLAS_COMPUTE_32F_FAST_TF32), 2 bfloat16 operands
// (CUDA_R_16BF, accumulated in FP32: CUBLAS_COMPUTE_32F); C is FP32.
static int repro_gemm_strided_ex(cublasHandle_t h, int prec, int tA, int tB, int m, int n, int k, float alpha,
	unsigned long long A, int lda, long long sA, unsigned long long B, int ldb, long long sB,
	float beta, unsigned long long C, int ldc, long long sC, int count) {
	cudaDataType in = prec == 2 ? CUDA_R_16BF : CUDA_R_32F;
	cublasComputeType_t compute = prec == 2 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
	return (int)cublasGemmStridedBatchedEx(h, tA ? CUBLAS_OP_T : CUBLAS_OP_N, tB ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k,
		&alpha, (const void *)A, in, lda, sA, (const void *)B, in, ldb, sB, &beta, (void *)C, CUDA_R_32F, ldc, sC, count,
		compute, CUBLAS_GEMM_DEFAULT);
}
*/
import "C"

import (
	"fmt"

	"gorgonia.org/cu"

	"repro/internal/tensor/backend"
)

// Strided-batched GEMMs for the device path. gorgonia.org/cu's cuBLAS
// binding has no cublasSgemmStridedBatched, so this file binds it on a
// handle of its own, created on the device goroutine with the context
// current and on the default stream, as the rest of the backend's work:
// it is ordered with the kernels and the copies. Device.Gemm runs each
// strided run of its batch (backend.GemmBatch.Strided) as one call:
// attention's (sequence, head) grid becomes one call per head (over the
// sequences) or per sequence (over the heads), whichever is fewer, in
// place of one cublasSgemm per (sequence, head).

// stridedBLAS is the backend's second cuBLAS handle.
type stridedBLAS struct{ h C.cublasHandle_t }

// openStrided creates the handle (on the device goroutine).
func (b *Backend) openStrided() error {
	s := &stridedBLAS{}
	if st := C.repro_blas_create(&s.h); st != 0 {
		return fmt.Errorf("cublasCreate: status %d", int(st))
	}
	b.sblas = s
	return nil
}

// closeStrided destroys the handle (on the device goroutine).
func (b *Backend) closeStrided() error {
	if b.sblas == nil {
		return nil
	}
	st := C.repro_blas_destroy(b.sblas.h)
	b.sblas = nil
	if st != 0 {
		return fmt.Errorf("cublasDestroy: status %d", int(st))
	}
	return nil
}

func cbool(v bool) C.int {
	if v {
		return 1
	}
	return 0
}

// sgemmStrided runs count products as one strided-batched call (on the
// device goroutine): row-major C = alpha op(A) op(B) + beta C as its
// column-major transpose, operands swapped (as Sgemm), product j's
// operands at a + j*sa, b + j*sb, c + j*sc elements. In FP32
// cublasSgemmStridedBatched; in TF32 and BF16 cublasGemmStridedBatchedEx
// (BF16: a and b point at bfloat16 copies of the operands, the element
// offsets and strides the same).
func (b *Backend) sgemmStrided(prec backend.Precision, transA, transB bool, m, n, k int, alpha float32, a cu.DevicePtr, lda, sa int,
	bm cu.DevicePtr, ldb, sb int, beta float32, c cu.DevicePtr, ldc, sc int, count int) error {
	var st C.int
	what := "cublasSgemmStridedBatched"
	if prec == backend.FP32 {
		st = C.repro_sgemm_strided(b.sblas.h, cbool(transB), cbool(transA), C.int(n), C.int(m), C.int(k), C.float(alpha),
			C.ulonglong(bm), C.int(ldb), C.longlong(sb), C.ulonglong(a), C.int(lda), C.longlong(sa),
			C.float(beta), C.ulonglong(c), C.int(ldc), C.longlong(sc), C.int(count))
	} else {
		what = "cublasGemmStridedBatchedEx (" + prec.String() + ")"
		p := 1
		if prec == backend.BF16 {
			p = 2
		}
		st = C.repro_gemm_strided_ex(b.sblas.h, C.int(p), cbool(transB), cbool(transA), C.int(n), C.int(m), C.int(k), C.float(alpha),
			C.ulonglong(bm), C.int(ldb), C.longlong(sb), C.ulonglong(a), C.int(lda), C.longlong(sa),
			C.float(beta), C.ulonglong(c), C.int(ldc), C.longlong(sc), C.int(count))
	}
	if st != 0 {
		b.failed = fmt.Errorf("%s: status %d (the backend keeps this error; reopen it)", what, int(st))
		return b.failed
	}
	return nil
}
