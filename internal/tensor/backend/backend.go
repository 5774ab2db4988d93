// Package backend is the seam between repro's tensor operators and the
// hardware: a Backend performs the dense kernels (sgemm first of all) that the
// batched autograd operators in internal/tensor call. The pure-Go CPU
// backend is the default; OpenBLAS (build tag openblas) and CUDA (build tag
// cuda) are alternatives selected at build time and by Use.
//
// Two optional interfaces extend a Backend whose memory is a device's:
// Resident keeps long-lived operands (weights) on the device, and Kernels
// runs the operators' non-GEMM kernels (GELU in both forms, ReLU, layer
// and RMS norm, the attention softmax with or without a score bias, AdamW)
// there, with arithmetic identical to the operators' own loops. Only the CUDA
// backend and the emulated device ("emu", package emudev) implement them;
// the CPU and OpenBLAS backends leave those loops to the operators, whose
// numerics the recorded baselines depend on.
//
// Device (device.go) is the next step: memory apart from the host's,
// handed out as Buffers, with counted Upload/Download and kernels that take
// Buffers, so that tensors stay on the device across operators
// (internal/tensor/device.go has the design). DeviceOf finds it on a
// backend: cuda.Backend (a GPU) and emudev.Backend (the same kernels'
// C bodies on the CPU, for tests and for counting copies) have one.
package backend

import "sync"

// Backend performs dense float32 kernels on row-major matrices.
type Backend interface {
	Name() string
	// Sgemm computes C = alpha*op(A)*op(B) + beta*C, where op(X) is X or
	// its transpose; op(A) is m x k, op(B) is k x n, C is m x n, all
	// row-major with leading dimensions lda, ldb, ldc. Results must be
	// bit-identical run after run for the same inputs (fixed partitioning
	// and reduction order).
	Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int)
}

// BiasSgemm is implemented by backends that add a bias row inside the
// product (the CPU backend): SgemmBias computes C = alpha*op(A)*op(B) plus
// bias (n values) in every row, with exactly the bits of copying bias into
// every row of C and calling Sgemm with beta = 1, but without that copy.
// Callers of another backend copy and call Sgemm.
type BiasSgemm interface {
	SgemmBias(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, bias, c []float32, ldc int)
}

var (
	mu      sync.RWMutex
	current Backend
)

// Use selects the backend every operator calls from now on.
func Use(b Backend) {
	mu.Lock()
	current = b
	mu.Unlock()
}

// Current returns the selected backend (the CPU backend unless Use was called).
func Current() Backend {
	mu.RLock()
	b := current
	mu.RUnlock()
	if b == nil {
		return CPU()
	}
	return b
}
