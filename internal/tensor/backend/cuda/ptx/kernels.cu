// kernels.cu: the CUDA entry points of repro's non-GEMM kernels. Each
// computes its global thread index, checks it against the range and calls
// the body in kernels.h. Compiled by gen.sh with clang-14 (device only,
// -nocudainc -nocudalib: no CUDA headers, no libdevice) into kernels.ptx.
// Launch with 256 threads per block and ceil(n/256) blocks, n being the
// number of elements (GELU, ReLU, AdamW) or rows (layer and RMS norm,
// softmax).
#include "kernels.h"

#define __global__ __attribute__((global))

static __attribute__((device)) inline unsigned int thread_index(void) {
	return __nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() + __nvvm_read_ptx_sreg_tid_x();
}

extern "C" __global__ void repro_gelu_forward(const float *x, float *y, float *cdf, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_gelu_forward((int)i, x, y, cdf);
}

extern "C" __global__ void repro_gelu_backward(const float *x, const float *cdf, const float *gy, float *gx, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_gelu_backward((int)i, x, cdf, gy, gx);
}

extern "C" __global__ void repro_layer_norm_forward(const float *x, const float *g, const float *b, int rows, int cols, float eps, float *y, float *xhat, float *rstd) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_layer_norm_forward((int)r, x, g, b, cols, eps, y, xhat, rstd);
}

extern "C" __global__ void repro_layer_norm_backward(const float *gy, const float *g, const float *xhat, const float *rstd, int rows, int cols, float *gx) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_layer_norm_backward((int)r, gy, g, xhat, rstd, cols, gx);
}

extern "C" __global__ void repro_masked_softmax_rows(float *x, int rows, int cols, const int *visible) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_masked_softmax_row((int)r, x, cols, visible);
}

extern "C" __global__ void repro_gelu_tanh_forward(const float *x, float *y, float *t, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_gelu_tanh_forward((int)i, x, y, t);
}

extern "C" __global__ void repro_gelu_tanh_backward(const float *x, const float *t, const float *gy, float *gx, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_gelu_tanh_backward((int)i, x, t, gy, gx);
}

extern "C" __global__ void repro_relu_forward(const float *x, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_relu_forward((int)i, x, y);
}

extern "C" __global__ void repro_relu_backward(const float *x, const float *gy, float *gx, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_relu_backward((int)i, x, gy, gx);
}

extern "C" __global__ void repro_rms_norm_forward(const float *x, const float *g, int rows, int cols, float eps, float *y, float *xhat, float *rstd) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_rms_norm_forward((int)r, x, g, cols, eps, y, xhat, rstd);
}

extern "C" __global__ void repro_rms_norm_backward(const float *gy, const float *g, const float *xhat, const float *rstd, int rows, int cols, float *gx) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_rms_norm_backward((int)r, gy, g, xhat, rstd, cols, gx);
}

extern "C" __global__ void repro_bias_masked_softmax_rows(float *x, int rows, int cols, const int *visible, const float *bias, int biasRows) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_bias_masked_softmax_row((int)r, x, cols, visible, bias, biasRows);
}

extern "C" __global__ void repro_adamw(float *p, const float *g, float *m, float *v, int n, float decay, float b1, float b2, float stepSize, float sqrtBC2, float eps) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_adamw((int)i, p, g, m, v, decay, b1, b2, stepSize, sqrtBC2, eps);
}
