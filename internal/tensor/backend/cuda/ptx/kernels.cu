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

extern "C" __global__ void repro_add(const float *a, const float *b, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_add((int)i, a, b, y);
}

extern "C" __global__ void repro_mul(const float *a, const float *b, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_mul((int)i, a, b, y);
}

extern "C" __global__ void repro_gather_rows(const float *x, int cols, const int *idx, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_gather_rows((int)i, x, cols, idx, y);
}

/* One thread per column (cols threads). */
extern "C" __global__ void repro_scatter_add_rows(const float *g, int cols, const int *idx, int npos, float *gx) {
	unsigned int j = thread_index();
	if (j < (unsigned int)cols) k_scatter_add_rows((int)j, g, cols, idx, npos, gx);
}

extern "C" __global__ void repro_broadcast_rows(const float *b, int cols, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_broadcast_rows((int)i, b, cols, y);
}

/* One thread per column (cols threads). */
extern "C" __global__ void repro_col_sums(const float *x, int rows, int cols, float *y) {
	unsigned int j = thread_index();
	if (j < (unsigned int)cols) k_col_sums((int)j, x, rows, cols, y);
}

/* One thread per 64-bit draw: (n+1)/2 threads. The PCG state comes as four
 * 32-bit words, high first. */
extern "C" __global__ void repro_dropout_mask(float *m, int n, unsigned int thr, float keep, unsigned int h1, unsigned int h0, unsigned int l1, unsigned int l0) {
	unsigned int k = thread_index();
	if (k < ((unsigned int)n + 1u) / 2u)
		k_dropout_mask((int)k, m, n, thr, keep, ((k_u64)h1 << 32) | h0, ((k_u64)l1 << 32) | l0);
}

/* One thread per score row (n = batch*heads*qlen). */
extern "C" __global__ void repro_attention_visible(const int *lens, int heads, int qlen, int klen, int causal, int *vis, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_attention_visible((int)i, lens, heads, qlen, klen, causal, vis);
}

extern "C" __global__ void repro_softmax_backward_rows(const float *p, float *d, int rows, int cols, float scale) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_softmax_backward_row((int)r, p, d, cols, scale);
}

extern "C" __global__ void repro_mean_pool(const float *x, int t, int cols, const int *lens, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_mean_pool((int)i, x, t, cols, lens, y);
}

extern "C" __global__ void repro_mean_pool_backward(const float *g, int t, int cols, const int *lens, float *gx, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_mean_pool_backward((int)i, g, t, cols, lens, gx);
}

/* One thread. */
extern "C" __global__ void repro_mse_forward(const float *x, const float *t, float *out, int n) {
	unsigned int i = thread_index();
	if (i < 1u) k_mse_forward((int)i, x, t, out, n);
}

extern "C" __global__ void repro_mse_backward(const float *x, const float *t, const float *gy, float *gx, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_mse_backward((int)i, x, t, gy, gx, n);
}

/* ---- Second slice (see kernels.h). */

extern "C" __global__ void repro_sub(const float *a, const float *b, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_sub((int)i, a, b, y);
}

extern "C" __global__ void repro_neg(const float *x, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_neg((int)i, x, y);
}

extern "C" __global__ void repro_scale(const float *x, float s, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_scale((int)i, x, s, y);
}

extern "C" __global__ void repro_abs_forward(const float *x, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_abs_forward((int)i, x, y);
}

extern "C" __global__ void repro_abs_backward(const float *x, const float *gy, float *gx, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_abs_backward((int)i, x, gy, gx);
}

extern "C" __global__ void repro_tanh_forward(const float *x, float *y, int fma, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_tanh_forward((int)i, x, y, fma);
}

extern "C" __global__ void repro_tanh_backward(const float *y, const float *gy, float *gx, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_tanh_backward((int)i, y, gy, gx);
}

/* One thread per row. */
extern "C" __global__ void repro_l2_norm_forward(const float *x, int rows, int cols, float eps, float *y, float *norm) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_l2_norm_forward_row((int)r, x, cols, eps, y, norm);
}

extern "C" __global__ void repro_l2_norm_backward(const float *y, const float *norm, const float *gy, int rows, int cols, float eps, float *gx) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_l2_norm_backward_row((int)r, y, norm, gy, cols, eps, gx);
}

extern "C" __global__ void repro_row_dot(const float *a, const float *b, int rows, int cols, float *y) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_row_dot((int)r, a, b, cols, y);
}

extern "C" __global__ void repro_row_scale(const float *g, const float *src, int cols, float *d, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_row_scale((int)i, g, src, cols, d);
}

/* n = rows*width threads. */
extern "C" __global__ void repro_copy_block(const float *src, int srcLd, int srcOff, float *dst, int dstLd, int dstOff, int width, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_copy_block((int)i, src, srcLd, srcOff, dst, dstLd, dstOff, width);
}

/* One thread. */
extern "C" __global__ void repro_sum(const float *x, int n, int mean, float *out) {
	unsigned int i = thread_index();
	if (i < 1u) k_sum((int)i, x, n, mean, out);
}

extern "C" __global__ void repro_fill_from(const float *gy, int n, int mean, float *gx) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_fill_from((int)i, gy, n, mean, gx);
}

/* One thread per row. */
extern "C" __global__ void repro_log_softmax_rows(const float *x, int rows, int cols, int exp, int fma, float *y) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_log_softmax_row((int)r, x, cols, exp, fma, y);
}

extern "C" __global__ void repro_softmax_rows_backward(const float *y, const float *gy, int rows, int cols, int log, float *gx) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_softmax_row_backward((int)r, y, gy, cols, log, gx);
}

extern "C" __global__ void repro_cross_entropy_rows(const float *x, const int *targets, int rows, int cols, int fma, float *probs, double *losses) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_cross_entropy_row((int)r, x, targets, cols, fma, probs, losses);
}

/* One thread. */
extern "C" __global__ void repro_cross_entropy_sum(const double *losses, const int *targets, int rows, int count, float *out) {
	unsigned int i = thread_index();
	if (i < 1u) k_cross_entropy_sum((int)i, losses, targets, rows, count, out);
}

extern "C" __global__ void repro_cross_entropy_backward(const float *probs, const int *targets, const float *gy, int cols, int count, float *gx, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_cross_entropy_backward((int)i, probs, targets, gy, cols, count, gx);
}

/* One thread per score row. */
extern "C" __global__ void repro_softmax_backward_bias_rows(const float *p, float *d, float *ds, int rows, int cols, float scale) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows) k_softmax_backward_bias_row((int)r, p, d, ds, cols, scale);
}

/* n = heads*q*k threads, each position of each head. */
extern "C" __global__ void repro_bucket_bias_forward(const float *w, int heads, const int *buckets, int npos, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_bucket_bias_forward((int)i, w, heads, buckets, npos, y);
}

/* One thread per head. */
extern "C" __global__ void repro_bucket_bias_backward(const float *g, int heads, const int *buckets, int npos, float *gw) {
	unsigned int h = thread_index();
	if (h < (unsigned int)heads) k_bucket_bias_backward((int)h, g, heads, buckets, npos, gw);
}

/* One thread. */
extern "C" __global__ void repro_sum_squares(const float *x, int n, double *acc) {
	unsigned int i = thread_index();
	if (i < 1u) k_sum_squares((int)i, x, n, acc);
}

/* Decoding on the device. One thread per (sequence, head): n = B*heads. */
extern "C" __global__ void repro_decode_attention(const float *q, const float *K, const float *V, int heads, int D, int klen,
	const int *lens, int lenAdd, int causal, float scale, const float *bias, int biasRows, float *probs, float *out, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_decode_attention_row((int)i, q, K, V, heads, D, klen, lens, lenAdd, causal, scale, bias, biasRows, probs, out);
}

extern "C" __global__ void repro_write_rows_at(const float *src, int cols, const int *pos, int cap, float *dst, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_write_rows_at((int)i, src, cols, pos, cap, dst);
}

extern "C" __global__ void repro_add_ints(int *x, int c, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_add_ints((int)i, x, c);
}

extern "C" __global__ void repro_decode_bucket_bias(const float *w, int heads, const int *rb, const int *pos, int cap, float *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_decode_bucket_bias((int)i, w, heads, rb, pos, cap, y);
}

/* One thread per row. top_p comes as the two 32-bit halves of its float64
 * bits, high first (the launcher passes 32-bit words). */
extern "C" __global__ void repro_sample_rows(const float *logits, int rows, int V, float invT, int greedy, int topK,
	unsigned int pHi, unsigned int pLo, int fma, unsigned long long *states, k_cand *cands, int candCap, int *out) {
	unsigned int r = thread_index();
	if (r < (unsigned int)rows)
		k_sample_row((int)r, logits, V, invT, greedy, topK, k_f64_from_bits(((k_u64)pHi << 32) | pLo), fma, states, cands, candCap, out);
}

/* Mixed precision: n elements. */
extern "C" __global__ void repro_to_bf16(const float *x, unsigned short *y, int n) {
	unsigned int i = thread_index();
	if (i < (unsigned int)n) k_to_bf16((int)i, x, y);
}
