// Package emu runs repro's CUDA kernels (../kernels.h) on the CPU: the
// kernel bodies, compiled by the C compiler with contraction off as for
// the PTX (no fused multiply-add), called for every thread index in turn. The
// kernels use no shared memory and no synchronisation, so this is exactly
// what the GPU computes; package tensor's tests (kernelref_test.go) compare
// it bit for bit with the Go operators, which is how the kernels are
// verified without a GPU (they skip where the Go compiler fuses
// multiply-adds -- arm64, amd64 with GOAMD64=v3 -- since the operators'
// results differ there). The emulated device backend
// (package backend/emudev, "emu") runs its kernels through it; no other
// training code does.
//
// The go command does not see ../kernels.h as an input of this package (it
// lies outside the package directory), so editing it alone would not
// rebuild the package. gen.sh therefore also rewrites sources.go with the
// sources' sha256: regenerating changes a file of this package, which
// rebuilds it, and TestSourcesCurrent fails while gen.sh has not been run.
package emu

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -lm
// gen.sh compiles the PTX with -ffp-contract=off; cgo does not accept that
// flag in #cgo CFLAGS, so the pragmas say the same: no fused multiply-add
// (gcc contracts by default where the target has FMA, arm64 for one).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize ("fp-contract=off")
#endif
#define REPRO_KERNELS_EMU 1
#include "../kernels.h"

static void emu_gelu_forward(const float *x, float *y, float *cdf, int n) {
	for (int i = 0; i < n; i++) k_gelu_forward(i, x, y, cdf);
}
static void emu_gelu_backward(const float *x, const float *cdf, const float *gy, float *gx, int n) {
	for (int i = 0; i < n; i++) k_gelu_backward(i, x, cdf, gy, gx);
}
static void emu_layer_norm_forward(const float *x, const float *g, const float *b, int rows, int cols, float eps, float *y, float *xhat, float *rstd) {
	for (int r = 0; r < rows; r++) k_layer_norm_forward(r, x, g, b, cols, eps, y, xhat, rstd);
}
static void emu_layer_norm_backward(const float *gy, const float *g, const float *xhat, const float *rstd, int rows, int cols, float *gx) {
	for (int r = 0; r < rows; r++) k_layer_norm_backward(r, gy, g, xhat, rstd, cols, gx);
}
static void emu_masked_softmax_rows(float *x, int rows, int cols, const int *visible) {
	for (int r = 0; r < rows; r++) k_masked_softmax_row(r, x, cols, visible);
}
static void emu_adamw(float *p, const float *g, float *m, float *v, int n, float decay, float b1, float b2, float stepSize, float sqrtBC2, float eps) {
	for (int i = 0; i < n; i++) k_adamw(i, p, g, m, v, decay, b1, b2, stepSize, sqrtBC2, eps);
}
static void emu_gelu_tanh_forward(const float *x, float *y, float *t, int n) {
	for (int i = 0; i < n; i++) k_gelu_tanh_forward(i, x, y, t);
}
static void emu_gelu_tanh_backward(const float *x, const float *t, const float *gy, float *gx, int n) {
	for (int i = 0; i < n; i++) k_gelu_tanh_backward(i, x, t, gy, gx);
}
static void emu_relu_forward(const float *x, float *y, int n) {
	for (int i = 0; i < n; i++) k_relu_forward(i, x, y);
}
static void emu_relu_backward(const float *x, const float *gy, float *gx, int n) {
	for (int i = 0; i < n; i++) k_relu_backward(i, x, gy, gx);
}
static void emu_rms_norm_forward(const float *x, const float *g, int rows, int cols, float eps, float *y, float *xhat, float *rstd) {
	for (int r = 0; r < rows; r++) k_rms_norm_forward(r, x, g, cols, eps, y, xhat, rstd);
}
static void emu_rms_norm_backward(const float *gy, const float *g, const float *xhat, const float *rstd, int rows, int cols, float *gx) {
	for (int r = 0; r < rows; r++) k_rms_norm_backward(r, gy, g, xhat, rstd, cols, gx);
}
static void emu_bias_masked_softmax_rows(float *x, int rows, int cols, const int *visible, const float *bias, int biasRows) {
	for (int r = 0; r < rows; r++) k_bias_masked_softmax_row(r, x, cols, visible, bias, biasRows);
}
static void emu_add(const float *a, const float *b, float *y, int n) {
	for (int i = 0; i < n; i++) k_add(i, a, b, y);
}
static void emu_mul(const float *a, const float *b, float *y, int n) {
	for (int i = 0; i < n; i++) k_mul(i, a, b, y);
}
static void emu_gather_rows(const float *x, int cols, const int *idx, float *y, int n) {
	for (int i = 0; i < n; i++) k_gather_rows(i, x, cols, idx, y);
}
static void emu_scatter_add_rows(const float *g, int cols, const int *idx, int npos, float *gx) {
	for (int j = 0; j < cols; j++) k_scatter_add_rows(j, g, cols, idx, npos, gx);
}
static void emu_broadcast_rows(const float *b, int cols, float *y, int n) {
	for (int i = 0; i < n; i++) k_broadcast_rows(i, b, cols, y);
}
static void emu_col_sums(const float *x, int rows, int cols, float *y) {
	for (int j = 0; j < cols; j++) k_col_sums(j, x, rows, cols, y);
}
static void emu_dropout_mask(float *m, int n, unsigned int thr, float keep, unsigned long long hi, unsigned long long lo) {
	for (int k = 0; k < (n + 1) / 2; k++) k_dropout_mask(k, m, n, thr, keep, hi, lo);
}
static void emu_attention_visible(const int *lens, int heads, int qlen, int klen, int causal, int *vis, int n) {
	for (int i = 0; i < n; i++) k_attention_visible(i, lens, heads, qlen, klen, causal, vis);
}
static void emu_softmax_backward_rows(const float *p, float *d, int rows, int cols, float scale) {
	for (int r = 0; r < rows; r++) k_softmax_backward_row(r, p, d, cols, scale);
}
static void emu_mean_pool(const float *x, int t, int cols, const int *lens, float *y, int n) {
	for (int i = 0; i < n; i++) k_mean_pool(i, x, t, cols, lens, y);
}
static void emu_mean_pool_backward(const float *g, int t, int cols, const int *lens, float *gx, int n) {
	for (int i = 0; i < n; i++) k_mean_pool_backward(i, g, t, cols, lens, gx);
}
static void emu_mse_forward(const float *x, const float *t, float *out, int n) {
	k_mse_forward(0, x, t, out, n);
}
static void emu_mse_backward(const float *x, const float *t, const float *gy, float *gx, int n) {
	for (int i = 0; i < n; i++) k_mse_backward(i, x, t, gy, gx, n);
}
static unsigned long long emu_pcg_advance_hi(unsigned long long hi, unsigned long long lo, unsigned long long delta) {
	k_pcg_advance(&hi, &lo, delta);
	return hi;
}
static unsigned long long emu_pcg_advance_lo(unsigned long long hi, unsigned long long lo, unsigned long long delta) {
	k_pcg_advance(&hi, &lo, delta);
	return lo;
}
static float emu_expf(float x) { return k_expf(x); }
static float emu_tanhf(float x) { return k_tanhf(x); }
static float emu_erff(float x) { return k_erff(x); }
static double emu_go_exp(double x, int fma) { return k_go_exp(x, fma); }
static double emu_go_log(double x) { return k_go_log(x); }
static double emu_go_tanh(double x, int fma) { return k_go_tanh(x, fma); }
static void emu_sub(const float *a, const float *b, float *y, int n) {
	for (int i = 0; i < n; i++) k_sub(i, a, b, y);
}
static void emu_neg(const float *x, float *y, int n) {
	for (int i = 0; i < n; i++) k_neg(i, x, y);
}
static void emu_scale(const float *x, float s, float *y, int n) {
	for (int i = 0; i < n; i++) k_scale(i, x, s, y);
}
static void emu_abs_forward(const float *x, float *y, int n) {
	for (int i = 0; i < n; i++) k_abs_forward(i, x, y);
}
static void emu_abs_backward(const float *x, const float *gy, float *gx, int n) {
	for (int i = 0; i < n; i++) k_abs_backward(i, x, gy, gx);
}
static void emu_tanh_forward(const float *x, float *y, int fma, int n) {
	for (int i = 0; i < n; i++) k_tanh_forward(i, x, y, fma);
}
static void emu_tanh_backward(const float *y, const float *gy, float *gx, int n) {
	for (int i = 0; i < n; i++) k_tanh_backward(i, y, gy, gx);
}
static void emu_l2_norm_forward(const float *x, int rows, int cols, float eps, float *y, float *norm) {
	for (int r = 0; r < rows; r++) k_l2_norm_forward_row(r, x, cols, eps, y, norm);
}
static void emu_l2_norm_backward(const float *y, const float *norm, const float *gy, int rows, int cols, float eps, float *gx) {
	for (int r = 0; r < rows; r++) k_l2_norm_backward_row(r, y, norm, gy, cols, eps, gx);
}
static void emu_row_dot(const float *a, const float *b, int rows, int cols, float *y) {
	for (int r = 0; r < rows; r++) k_row_dot(r, a, b, cols, y);
}
static void emu_row_scale(const float *g, const float *src, int cols, float *d, int n) {
	for (int i = 0; i < n; i++) k_row_scale(i, g, src, cols, d);
}
static void emu_copy_block(const float *src, int srcLd, int srcOff, float *dst, int dstLd, int dstOff, int width, int n) {
	for (int i = 0; i < n; i++) k_copy_block(i, src, srcLd, srcOff, dst, dstLd, dstOff, width);
}
static void emu_sum(const float *x, int n, int mean, float *out) {
	k_sum(0, x, n, mean, out);
}
static void emu_fill_from(const float *gy, int n, int mean, float *gx) {
	for (int i = 0; i < n; i++) k_fill_from(i, gy, n, mean, gx);
}
static void emu_log_softmax_rows(const float *x, int rows, int cols, int exp, int fma, float *y) {
	for (int r = 0; r < rows; r++) k_log_softmax_row(r, x, cols, exp, fma, y);
}
static void emu_softmax_rows_backward(const float *y, const float *gy, int rows, int cols, int log, float *gx) {
	for (int r = 0; r < rows; r++) k_softmax_row_backward(r, y, gy, cols, log, gx);
}
static void emu_cross_entropy_rows(const float *x, const int *targets, int rows, int cols, int fma, float *probs, double *losses) {
	for (int r = 0; r < rows; r++) k_cross_entropy_row(r, x, targets, cols, fma, probs, losses);
}
static void emu_cross_entropy_sum(const double *losses, const int *targets, int rows, int count, float *out) {
	k_cross_entropy_sum(0, losses, targets, rows, count, out);
}
static void emu_cross_entropy_backward(const float *probs, const int *targets, const float *gy, int cols, int count, float *gx, int n) {
	for (int i = 0; i < n; i++) k_cross_entropy_backward(i, probs, targets, gy, cols, count, gx);
}
static void emu_softmax_backward_bias_rows(const float *p, float *d, float *ds, int rows, int cols, float scale) {
	for (int r = 0; r < rows; r++) k_softmax_backward_bias_row(r, p, d, ds, cols, scale);
}
static void emu_bucket_bias_forward(const float *w, int heads, const int *buckets, int npos, float *y, int n) {
	for (int i = 0; i < n; i++) k_bucket_bias_forward(i, w, heads, buckets, npos, y);
}
static void emu_bucket_bias_backward(const float *g, int heads, const int *buckets, int npos, float *gw) {
	for (int h = 0; h < heads; h++) k_bucket_bias_backward(h, g, heads, buckets, npos, gw);
}
static void emu_sum_squares(const float *x, int n, double *acc) {
	k_sum_squares(0, x, n, acc);
}
static void emu_decode_attention(const float *q, const float *K, const float *V, int heads, int D, int klen,
	const int *lens, int lenAdd, int causal, float scale, const float *bias, int biasRows, float *probs, float *out, int n) {
	for (int i = 0; i < n; i++) k_decode_attention_row(i, q, K, V, heads, D, klen, lens, lenAdd, causal, scale, bias, biasRows, probs, out);
}
static void emu_write_rows_at(const float *src, int cols, const int *pos, int cap, float *dst, int n) {
	for (int i = 0; i < n; i++) k_write_rows_at(i, src, cols, pos, cap, dst);
}
static void emu_add_ints(int *x, int c, int n) {
	for (int i = 0; i < n; i++) k_add_ints(i, x, c);
}
static void emu_decode_bucket_bias(const float *w, int heads, const int *rb, const int *pos, int cap, float *y, int n) {
	for (int i = 0; i < n; i++) k_decode_bucket_bias(i, w, heads, rb, pos, cap, y);
}
static void emu_to_bf16(const float *x, unsigned short *y, int n) {
	for (int i = 0; i < n; i++) k_to_bf16(i, x, y);
}
static void emu_sample_rows(const float *logits, int rows, int V, float invT, int greedy, int topK, double topP, int fma,
	void *states, void *cands, int candCap, int *out) {
	for (int r = 0; r < rows; r++)
		k_sample_row(r, logits, V, invT, greedy, topK, topP, fma, (k_u64 *)states, (k_cand *)cands, candCap, out);
}
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"repro/internal/tensor/backend"
)

func ptr(x []float32) *C.float {
	if len(x) == 0 {
		return nil
	}
	return (*C.float)(&x[0])
}

func check(what string, want int, xs ...[]float32) {
	for _, x := range xs {
		if len(x) != want {
			panic(fmt.Sprintf("emu.%s: a slice of %d values, want %d", what, len(x), want))
		}
	}
}

func cint(n int) C.int {
	if n < 0 || n > math.MaxInt32 {
		panic(fmt.Sprintf("emu: size %d out of range", n))
	}
	return C.int(n)
}

// ExpF is kernels.h's k_expf.
func ExpF(x float32) float32 { return float32(C.emu_expf(C.float(x))) }

// ErfF is kernels.h's k_erff.
func ErfF(x float32) float32 { return float32(C.emu_erff(C.float(x))) }

// TanhF is kernels.h's k_tanhf.
func TanhF(x float32) float32 { return float32(C.emu_tanhf(C.float(x))) }

// GELUTanhForward is the repro_gelu_tanh_forward kernel.
func GELUTanhForward(x, y, t []float32) {
	check("GELUTanhForward", len(x), y, t)
	C.emu_gelu_tanh_forward(ptr(x), ptr(y), ptr(t), cint(len(x)))
}

// GELUTanhBackward is the repro_gelu_tanh_backward kernel.
func GELUTanhBackward(x, t, gy, gx []float32) {
	check("GELUTanhBackward", len(x), t, gy, gx)
	C.emu_gelu_tanh_backward(ptr(x), ptr(t), ptr(gy), ptr(gx), cint(len(x)))
}

// ReLUForward is the repro_relu_forward kernel.
func ReLUForward(x, y []float32) {
	check("ReLUForward", len(x), y)
	C.emu_relu_forward(ptr(x), ptr(y), cint(len(x)))
}

// ReLUBackward is the repro_relu_backward kernel.
func ReLUBackward(x, gy, gx []float32) {
	check("ReLUBackward", len(x), gy, gx)
	C.emu_relu_backward(ptr(x), ptr(gy), ptr(gx), cint(len(x)))
}

// RMSNormForward is the repro_rms_norm_forward kernel.
func RMSNormForward(x, g []float32, rows, cols int, eps float32, y, xhat, rstd []float32) {
	check("RMSNormForward", rows*cols, x, y, xhat)
	check("RMSNormForward", cols, g)
	check("RMSNormForward", rows, rstd)
	C.emu_rms_norm_forward(ptr(x), ptr(g), cint(rows), cint(cols), C.float(eps), ptr(y), ptr(xhat), ptr(rstd))
}

// RMSNormBackward is the repro_rms_norm_backward kernel.
func RMSNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32) {
	check("RMSNormBackward", rows*cols, gy, xhat, gx)
	check("RMSNormBackward", cols, g)
	check("RMSNormBackward", rows, rstd)
	C.emu_rms_norm_backward(ptr(gy), ptr(g), ptr(xhat), ptr(rstd), cint(rows), cint(cols), ptr(gx))
}

// BiasMaskedSoftmaxRows is the repro_bias_masked_softmax_rows kernel (in
// place).
func BiasMaskedSoftmaxRows(x []float32, rows, cols int, visible []int32, bias []float32, biasRows int) {
	check("BiasMaskedSoftmaxRows", rows*cols, x)
	check("BiasMaskedSoftmaxRows", biasRows*cols, bias)
	if len(visible) != rows || biasRows < 1 {
		panic(fmt.Sprintf("emu.BiasMaskedSoftmaxRows: %d visible counts for %d rows, %d bias rows", len(visible), rows, biasRows))
	}
	var vp *C.int
	if rows > 0 {
		vp = (*C.int)(&visible[0])
	}
	C.emu_bias_masked_softmax_rows(ptr(x), cint(rows), cint(cols), vp, ptr(bias), cint(biasRows))
}

// GELUForward is the repro_gelu_forward kernel: y = x*cdf, cdf = Phi(x).
func GELUForward(x, y, cdf []float32) {
	check("GELUForward", len(x), y, cdf)
	C.emu_gelu_forward(ptr(x), ptr(y), ptr(cdf), cint(len(x)))
}

// GELUBackward is the repro_gelu_backward kernel.
func GELUBackward(x, cdf, gy, gx []float32) {
	check("GELUBackward", len(x), cdf, gy, gx)
	C.emu_gelu_backward(ptr(x), ptr(cdf), ptr(gy), ptr(gx), cint(len(x)))
}

// LayerNormForward is the repro_layer_norm_forward kernel.
func LayerNormForward(x, g, b []float32, rows, cols int, eps float32, y, xhat, rstd []float32) {
	check("LayerNormForward", rows*cols, x, y, xhat)
	check("LayerNormForward", cols, g, b)
	check("LayerNormForward", rows, rstd)
	C.emu_layer_norm_forward(ptr(x), ptr(g), ptr(b), cint(rows), cint(cols), C.float(eps), ptr(y), ptr(xhat), ptr(rstd))
}

// LayerNormBackward is the repro_layer_norm_backward kernel.
func LayerNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32) {
	check("LayerNormBackward", rows*cols, gy, xhat, gx)
	check("LayerNormBackward", cols, g)
	check("LayerNormBackward", rows, rstd)
	C.emu_layer_norm_backward(ptr(gy), ptr(g), ptr(xhat), ptr(rstd), cint(rows), cint(cols), ptr(gx))
}

// MaskedSoftmaxRows is the repro_masked_softmax_rows kernel (in place).
func MaskedSoftmaxRows(x []float32, rows, cols int, visible []int32) {
	check("MaskedSoftmaxRows", rows*cols, x)
	if len(visible) != rows {
		panic(fmt.Sprintf("emu.MaskedSoftmaxRows: %d visible counts for %d rows", len(visible), rows))
	}
	var vp *C.int
	if rows > 0 {
		vp = (*C.int)(&visible[0])
	}
	C.emu_masked_softmax_rows(ptr(x), cint(rows), cint(cols), vp)
}

// AdamW is the repro_adamw kernel (p, m, v in place).
func AdamW(p, g, m, v []float32, decay, b1, b2, stepSize, sqrtBC2, eps float32) {
	check("AdamW", len(p), g, m, v)
	C.emu_adamw(ptr(p), ptr(g), ptr(m), ptr(v), cint(len(p)),
		C.float(decay), C.float(b1), C.float(b2), C.float(stepSize), C.float(sqrtBC2), C.float(eps))
}

func iptr(x []int32) *C.int {
	if len(x) == 0 {
		return nil
	}
	return (*C.int)(&x[0])
}

func checkInts(what string, want int, xs ...[]int32) {
	for _, x := range xs {
		if len(x) != want {
			panic(fmt.Sprintf("emu.%s: %d indices, want %d", what, len(x), want))
		}
	}
}

// Add is the repro_add kernel: y = a + b (y may be a or b).
func Add(a, b, y []float32) {
	check("Add", len(a), b, y)
	C.emu_add(ptr(a), ptr(b), ptr(y), cint(len(a)))
}

// Mul is the repro_mul kernel: y = a * b (y may be a or b).
func Mul(a, b, y []float32) {
	check("Mul", len(a), b, y)
	C.emu_mul(ptr(a), ptr(b), ptr(y), cint(len(a)))
}

// GatherRows is the repro_gather_rows kernel: row p of y is row idx[p] of
// x (cols wide). Indices must lie inside x: the kernel does not check.
func GatherRows(x []float32, cols int, idx []int32, y []float32) {
	check("GatherRows", len(idx)*cols, y)
	for _, i := range idx {
		if i < 0 || (int(i)+1)*cols > len(x) {
			panic(fmt.Sprintf("emu.GatherRows: index %d outside a table of %d rows", i, len(x)/max(cols, 1)))
		}
	}
	C.emu_gather_rows(ptr(x), cint(cols), iptr(idx), ptr(y), cint(len(y)))
}

// ScatterAddRows is the repro_scatter_add_rows kernel: row p of g is
// added into row idx[p] of gx, positions in order.
func ScatterAddRows(g []float32, cols int, idx []int32, gx []float32) {
	check("ScatterAddRows", len(idx)*cols, g)
	for _, i := range idx {
		if i < 0 || (int(i)+1)*cols > len(gx) {
			panic(fmt.Sprintf("emu.ScatterAddRows: index %d outside a table of %d rows", i, len(gx)/max(cols, 1)))
		}
	}
	C.emu_scatter_add_rows(ptr(g), cint(cols), iptr(idx), cint(len(idx)), ptr(gx))
}

// BroadcastRows is the repro_broadcast_rows kernel: every row of y (len(b)
// wide) becomes b.
func BroadcastRows(b, y []float32) {
	if len(b) == 0 || len(y)%len(b) != 0 {
		panic(fmt.Sprintf("emu.BroadcastRows: %d values are not rows of %d", len(y), len(b)))
	}
	C.emu_broadcast_rows(ptr(b), cint(len(b)), ptr(y), cint(len(y)))
}

// ColSums is the repro_col_sums kernel: y[j] is the sum of column j of
// the rows x cols matrix x, rows in order.
func ColSums(x []float32, rows, cols int, y []float32) {
	check("ColSums", rows*cols, x)
	check("ColSums", cols, y)
	C.emu_col_sums(ptr(x), cint(rows), cint(cols), ptr(y))
}

// DropoutMask is the repro_dropout_mask kernel: the n multipliers that
// tensor's dropoutMask draws from a PCG in state (hi, lo), each keep or 0.
func DropoutMask(m []float32, thr uint32, keep float32, hi, lo uint64) {
	C.emu_dropout_mask(ptr(m), cint(len(m)), C.uint(thr), C.float(keep), C.ulonglong(hi), C.ulonglong(lo))
}

// PCGAdvance is kernels.h's k_pcg_advance: the PCG state after delta
// steps from (hi, lo).
func PCGAdvance(hi, lo, delta uint64) (uint64, uint64) {
	h := C.emu_pcg_advance_hi(C.ulonglong(hi), C.ulonglong(lo), C.ulonglong(delta))
	l := C.emu_pcg_advance_lo(C.ulonglong(hi), C.ulonglong(lo), C.ulonglong(delta))
	return uint64(h), uint64(l)
}

// AttentionVisible is the repro_attention_visible kernel: the visible keys
// of every score row of a batch*heads*qlen attention.
func AttentionVisible(lens []int32, heads, qlen, klen int, causal bool, vis []int32) {
	if heads <= 0 || qlen <= 0 || len(vis) != len(lens)*heads*qlen {
		panic(fmt.Sprintf("emu.AttentionVisible: %d rows for %d sequences of %d heads x %d queries", len(vis), len(lens), heads, qlen))
	}
	c := C.int(0)
	if causal {
		c = 1
	}
	C.emu_attention_visible(iptr(lens), cint(heads), cint(qlen), cint(klen), c, iptr(vis), cint(len(vis)))
}

// SoftmaxBackwardRows is the repro_softmax_backward_rows kernel (d in
// place).
func SoftmaxBackwardRows(p, d []float32, rows, cols int, scale float32) {
	check("SoftmaxBackwardRows", rows*cols, p, d)
	C.emu_softmax_backward_rows(ptr(p), ptr(d), cint(rows), cint(cols), C.float(scale))
}

// MeanPool is the repro_mean_pool kernel over x [len(lens)*t, cols].
func MeanPool(x []float32, t, cols int, lens []int32, y []float32) {
	check("MeanPool", len(lens)*t*cols, x)
	check("MeanPool", len(lens)*cols, y)
	for _, n := range lens {
		if n < 0 || int(n) > t {
			panic(fmt.Sprintf("emu.MeanPool: length %d outside [0, %d]", n, t))
		}
	}
	C.emu_mean_pool(ptr(x), cint(t), cint(cols), iptr(lens), ptr(y), cint(len(y)))
}

// MeanPoolBackward is the repro_mean_pool_backward kernel.
func MeanPoolBackward(g []float32, t, cols int, lens []int32, gx []float32) {
	check("MeanPoolBackward", len(lens)*cols, g)
	check("MeanPoolBackward", len(lens)*t*cols, gx)
	for _, n := range lens {
		if n < 0 || int(n) > t {
			panic(fmt.Sprintf("emu.MeanPoolBackward: length %d outside [0, %d]", n, t))
		}
	}
	C.emu_mean_pool_backward(ptr(g), cint(t), cint(cols), iptr(lens), ptr(gx), cint(len(gx)))
}

// MSEForward is the repro_mse_forward kernel: out[0] = mean (x-t)^2.
func MSEForward(x, t, out []float32) {
	check("MSEForward", len(x), t)
	check("MSEForward", 1, out)
	C.emu_mse_forward(ptr(x), ptr(t), ptr(out), cint(len(x)))
}

// MSEBackward is the repro_mse_backward kernel.
func MSEBackward(x, t, gy, gx []float32) {
	check("MSEBackward", len(x), t, gx)
	check("MSEBackward", 1, gy)
	C.emu_mse_backward(ptr(x), ptr(t), ptr(gy), ptr(gx), cint(len(x)))
}

// GoExp is kernels.h's k_go_exp: Go's math.Exp on amd64, its FMA path
// when fma.
func GoExp(x float64, fma bool) float64 { return float64(C.emu_go_exp(C.double(x), cbool(fma))) }

// GoLog is kernels.h's k_go_log: Go's math.Log on amd64.
func GoLog(x float64) float64 { return float64(C.emu_go_log(C.double(x))) }

// GoTanh is kernels.h's k_go_tanh: Go's math.Tanh with GoExp.
func GoTanh(x float64, fma bool) float64 { return float64(C.emu_go_tanh(C.double(x), cbool(fma))) }

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// dptr views x (an even number of float32s, 8-byte aligned) as float64s.
func dptr(what string, x []float32, n int) *C.double {
	if len(x) != 2*n {
		panic(fmt.Sprintf("emu.%s: %d float32s hold %d float64s, want %d", what, len(x), len(x)/2, n))
	}
	if n == 0 {
		return nil
	}
	if uintptr(unsafe.Pointer(&x[0]))%8 != 0 {
		panic(fmt.Sprintf("emu.%s: float64 buffer not 8-byte aligned", what))
	}
	return (*C.double)(unsafe.Pointer(&x[0]))
}

// Sub is the repro_sub kernel: y = a - b.
func Sub(a, b, y []float32) {
	check("Sub", len(a), b, y)
	C.emu_sub(ptr(a), ptr(b), ptr(y), cint(len(a)))
}

// Neg is the repro_neg kernel: y = -x.
func Neg(x, y []float32) {
	check("Neg", len(x), y)
	C.emu_neg(ptr(x), ptr(y), cint(len(x)))
}

// Scale is the repro_scale kernel: y = x*s (y may be x).
func Scale(x []float32, s float32, y []float32) {
	check("Scale", len(x), y)
	C.emu_scale(ptr(x), C.float(s), ptr(y), cint(len(x)))
}

// AbsForward and AbsBackward are the repro_abs_* kernels.
func AbsForward(x, y []float32) {
	check("AbsForward", len(x), y)
	C.emu_abs_forward(ptr(x), ptr(y), cint(len(x)))
}

func AbsBackward(x, gy, gx []float32) {
	check("AbsBackward", len(x), gy, gx)
	C.emu_abs_backward(ptr(x), ptr(gy), ptr(gx), cint(len(x)))
}

// TanhForward and TanhBackward are the repro_tanh_* kernels.
func TanhForward(x, y []float32, fma bool) {
	check("TanhForward", len(x), y)
	C.emu_tanh_forward(ptr(x), ptr(y), cbool(fma), cint(len(x)))
}

func TanhBackward(y, gy, gx []float32) {
	check("TanhBackward", len(y), gy, gx)
	C.emu_tanh_backward(ptr(y), ptr(gy), ptr(gx), cint(len(y)))
}

// L2NormForward and L2NormBackward are the repro_l2_norm_* kernels.
func L2NormForward(x []float32, rows, cols int, eps float32, y, norm []float32) {
	check("L2NormForward", rows*cols, x, y)
	check("L2NormForward", rows, norm)
	C.emu_l2_norm_forward(ptr(x), cint(rows), cint(cols), C.float(eps), ptr(y), ptr(norm))
}

func L2NormBackward(y, norm, gy []float32, rows, cols int, eps float32, gx []float32) {
	check("L2NormBackward", rows*cols, y, gy, gx)
	check("L2NormBackward", rows, norm)
	C.emu_l2_norm_backward(ptr(y), ptr(norm), ptr(gy), cint(rows), cint(cols), C.float(eps), ptr(gx))
}

// RowDot is the repro_row_dot kernel; RowScale repro_row_scale.
func RowDot(a, b []float32, rows, cols int, y []float32) {
	check("RowDot", rows*cols, a, b)
	check("RowDot", rows, y)
	C.emu_row_dot(ptr(a), ptr(b), cint(rows), cint(cols), ptr(y))
}

func RowScale(g, src []float32, cols int, d []float32) {
	check("RowScale", len(src), d)
	check("RowScale", len(src)/max(cols, 1), g)
	C.emu_row_scale(ptr(g), ptr(src), cint(cols), ptr(d), cint(len(d)))
}

// CopyBlock is the repro_copy_block kernel: rows x width values from
// src[srcOff:] (rows srcLd apart) to dst[dstOff:] (rows dstLd apart).
func CopyBlock(src []float32, srcLd, srcOff int, dst []float32, dstLd, dstOff, rows, width int) {
	if rows == 0 || width == 0 {
		return
	}
	if srcOff < 0 || dstOff < 0 || width > srcLd || width > dstLd ||
		srcOff+(rows-1)*srcLd+width > len(src) || dstOff+(rows-1)*dstLd+width > len(dst) {
		panic(fmt.Sprintf("emu.CopyBlock: %dx%d block at %d (ld %d) of %d into %d (ld %d) of %d", rows, width, srcOff, srcLd, len(src), dstOff, dstLd, len(dst)))
	}
	C.emu_copy_block(ptr(src), cint(srcLd), cint(srcOff), ptr(dst), cint(dstLd), cint(dstOff), cint(width), cint(rows*width))
}

// Sum is the repro_sum kernel; FillFrom repro_fill_from.
func Sum(x []float32, mean bool, out []float32) {
	check("Sum", 1, out)
	C.emu_sum(ptr(x), cint(len(x)), cbool(mean), ptr(out))
}

func FillFrom(gy []float32, mean bool, gx []float32) {
	check("FillFrom", 1, gy)
	C.emu_fill_from(ptr(gy), cint(len(gx)), cbool(mean), ptr(gx))
}

// LogSoftmaxRows is the repro_log_softmax_rows kernel (exp: softmax).
func LogSoftmaxRows(x []float32, rows, cols int, exp, fma bool, y []float32) {
	check("LogSoftmaxRows", rows*cols, x, y)
	if cols < 1 {
		panic("emu.LogSoftmaxRows: no column")
	}
	C.emu_log_softmax_rows(ptr(x), cint(rows), cint(cols), cbool(exp), cbool(fma), ptr(y))
}

// SoftmaxRowsBackward is the repro_softmax_rows_backward kernel.
func SoftmaxRowsBackward(y, gy []float32, rows, cols int, log bool, gx []float32) {
	check("SoftmaxRowsBackward", rows*cols, y, gy, gx)
	C.emu_softmax_rows_backward(ptr(y), ptr(gy), cint(rows), cint(cols), cbool(log), ptr(gx))
}

func checkTargets(what string, targets []int32, rows, cols int) {
	if len(targets) != rows || cols < 1 {
		panic(fmt.Sprintf("emu.%s: %d targets for %d rows of %d", what, len(targets), rows, cols))
	}
	for _, t := range targets {
		if t != -100 && (t < 0 || int(t) >= cols) {
			panic(fmt.Sprintf("emu.%s: target %d outside [0, %d)", what, t, cols))
		}
	}
}

// CrossEntropyRows is the repro_cross_entropy_rows kernel; losses holds
// rows float64s (2*rows float32 slots).
func CrossEntropyRows(x []float32, targets []int32, rows, cols int, fma bool, probs, losses []float32) {
	check("CrossEntropyRows", rows*cols, x, probs)
	checkTargets("CrossEntropyRows", targets, rows, cols)
	C.emu_cross_entropy_rows(ptr(x), iptr(targets), cint(rows), cint(cols), cbool(fma), ptr(probs), dptr("CrossEntropyRows", losses, rows))
}

// CrossEntropySum is the repro_cross_entropy_sum kernel.
func CrossEntropySum(losses []float32, targets []int32, count int, out []float32) {
	check("CrossEntropySum", 1, out)
	rows := len(targets)
	C.emu_cross_entropy_sum(dptr("CrossEntropySum", losses, rows), iptr(targets), cint(rows), cint(count), ptr(out))
}

// CrossEntropyBackward is the repro_cross_entropy_backward kernel.
func CrossEntropyBackward(probs []float32, targets []int32, gy []float32, cols, count int, gx []float32) {
	check("CrossEntropyBackward", len(probs), gx)
	check("CrossEntropyBackward", 1, gy)
	checkTargets("CrossEntropyBackward", targets, len(probs)/max(cols, 1), cols)
	C.emu_cross_entropy_backward(ptr(probs), iptr(targets), ptr(gy), cint(cols), cint(count), ptr(gx), cint(len(gx)))
}

// SoftmaxBackwardBiasRows is the repro_softmax_backward_bias_rows kernel
// (d in place, ds written).
func SoftmaxBackwardBiasRows(p, d, ds []float32, rows, cols int, scale float32) {
	check("SoftmaxBackwardBiasRows", rows*cols, p, d, ds)
	C.emu_softmax_backward_bias_rows(ptr(p), ptr(d), ptr(ds), cint(rows), cint(cols), C.float(scale))
}

func checkBuckets(what string, buckets []int32, nb int) {
	for _, b := range buckets {
		if b < 0 || int(b) >= nb {
			panic(fmt.Sprintf("emu.%s: bucket %d outside [0, %d)", what, b, nb))
		}
	}
}

// BucketBiasForward is the repro_bucket_bias_forward kernel: y [heads,
// len(buckets)] from w [nb, heads].
func BucketBiasForward(w []float32, heads int, buckets []int32, y []float32) {
	check("BucketBiasForward", heads*len(buckets), y)
	checkBuckets("BucketBiasForward", buckets, len(w)/max(heads, 1))
	C.emu_bucket_bias_forward(ptr(w), cint(heads), iptr(buckets), cint(len(buckets)), ptr(y), cint(len(y)))
}

// BucketBiasBackward is the repro_bucket_bias_backward kernel.
func BucketBiasBackward(g []float32, heads int, buckets []int32, gw []float32) {
	check("BucketBiasBackward", heads*len(buckets), g)
	checkBuckets("BucketBiasBackward", buckets, len(gw)/max(heads, 1))
	C.emu_bucket_bias_backward(ptr(g), cint(heads), iptr(buckets), cint(len(buckets)), ptr(gw))
}

// SumSquares is the repro_sum_squares kernel: acc (one float64 in two
// float32 slots) += the sum of x's squares.
func SumSquares(x []float32, acc []float32) {
	C.emu_sum_squares(ptr(x), cint(len(x)), dptr("SumSquares", acc, 1))
}

// ToBF16 is the repro_to_bf16 kernel: the bfloat16 bits of each x.
func ToBF16(x []float32) []uint16 {
	y := make([]uint16, len(x))
	if len(x) > 0 {
		C.emu_to_bf16(ptr(x), (*C.ushort)(unsafe.Pointer(&y[0])), cint(len(x)))
	}
	return y
}

// Decoding on the device.

// DecodeAttention is the repro_decode_attention kernel: the one-query
// attention of every (sequence, head) of q [B, D] against its visible
// rows of k and v [B*klen, D], lens[b]+lenAdd of them (clamped to klen; at
// most 1 when causal); bias nil or biasRows rows of klen; probs [B*heads,
// klen] and out [B, D] are written.
func DecodeAttention(q, k, v []float32, heads, klen int, lens []int32, lenAdd int, causal bool, scale float32, bias []float32, biasRows int, probs, out []float32) {
	B := len(lens)
	if B == 0 || heads < 1 || len(q)%B != 0 || len(q)/B%heads != 0 {
		panic(fmt.Sprintf("emu.DecodeAttention: %d query values for %d sequences of %d heads", len(q), B, heads))
	}
	D := len(q) / B
	check("DecodeAttention", B*klen*D, k, v)
	check("DecodeAttention", B*heads*klen, probs)
	check("DecodeAttention", B*D, out)
	var bp *C.float
	if bias != nil {
		if biasRows < 1 || len(bias) != biasRows*klen {
			panic(fmt.Sprintf("emu.DecodeAttention: a bias of %d values, %d rows of %d", len(bias), biasRows, klen))
		}
		bp = ptr(bias)
	}
	C.emu_decode_attention(ptr(q), ptr(k), ptr(v), cint(heads), cint(D), cint(klen), iptr(lens), C.int(lenAdd), cbool(causal),
		C.float(scale), bp, cint(max(biasRows, 1)), ptr(probs), ptr(out), cint(B*heads))
}

// WriteRowsAt is the repro_write_rows_at kernel: row r of src [n, cols]
// into row pos[r] of block r of dst (blocks of cap rows).
func WriteRowsAt(src []float32, cols int, pos []int32, cap int, dst []float32) {
	n := len(pos)
	check("WriteRowsAt", n*cols, src)
	check("WriteRowsAt", n*cap*cols, dst)
	for r, p := range pos {
		if p < 0 || int(p) >= cap {
			panic(fmt.Sprintf("emu.WriteRowsAt: position %d of sequence %d outside a cache of %d rows", p, r, cap))
		}
	}
	C.emu_write_rows_at(ptr(src), cint(cols), iptr(pos), cint(cap), ptr(dst), cint(n*cols))
}

// AddInts is the repro_add_ints kernel: x[i] += c.
func AddInts(x []int32, c int) {
	C.emu_add_ints(iptr(x), C.int(c), cint(len(x)))
}

// DecodeBucketBias is the repro_decode_bucket_bias kernel: y [n*heads,
// cap] from w [buckets, heads], rb (the bucket of each distance, cap of
// them) and pos (n).
func DecodeBucketBias(w []float32, heads int, rb, pos []int32, cap int, y []float32) {
	n := len(pos)
	check("DecodeBucketBias", n*heads*cap, y)
	if len(rb) < cap {
		panic(fmt.Sprintf("emu.DecodeBucketBias: %d buckets for a cache of %d", len(rb), cap))
	}
	checkBuckets("DecodeBucketBias", rb, len(w)/max(heads, 1))
	for r, p := range pos {
		if p < 0 || int(p) >= cap {
			panic(fmt.Sprintf("emu.DecodeBucketBias: position %d of sequence %d outside a cache of %d rows", p, r, cap))
		}
	}
	C.emu_decode_bucket_bias(ptr(w), cint(heads), iptr(rb), iptr(pos), cint(cap), ptr(y), cint(n*heads*cap))
}

// SampleRows is the repro_sample_rows kernel: the next token of each row
// of logits [rows, V] (-1 for a row holding a NaN), drawn with s from the
// row's PCG state (states: rows*(hi, lo), as 4 float32-wide elements
// each), cands holding s's candidates (CandCap of them per row, 4 elements
// each).
func SampleRows(logits []float32, rows, V int, s backend.Sampling, fma bool, states, cands []float32, out []int32) {
	check("SampleRows", rows*V, logits)
	if len(out) != rows {
		panic(fmt.Sprintf("emu.SampleRows: %d outputs for %d rows", len(out), rows))
	}
	cc := s.CandCap(V)
	dptr("SampleRows", states, 2*rows)
	dptr("SampleRows", cands, 2*rows*cc)
	if rows == 0 {
		return
	}
	C.emu_sample_rows(ptr(logits), cint(rows), cint(V), C.float(s.InvT), cbool(s.Greedy), cint(s.TopK), C.double(s.TopP), cbool(fma),
		unsafe.Pointer(&states[0]), unsafe.Pointer(&cands[0]), cint(cc), iptr(out))
}

// Kernels presents the emulated kernels as a backend.Kernels, for testing
// code written against that interface without a GPU.
type Kernels struct{}

var _ backend.Kernels = Kernels{}

func (Kernels) GELUForward(x, y, cdf []float32)       { GELUForward(x, y, cdf) }
func (Kernels) GELUBackward(x, cdf, gy, gx []float32) { GELUBackward(x, cdf, gy, gx) }
func (Kernels) LayerNormForward(x, g, b []float32, rows, cols int, eps float32, y, xhat, rstd []float32) {
	LayerNormForward(x, g, b, rows, cols, eps, y, xhat, rstd)
}
func (Kernels) LayerNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32) {
	LayerNormBackward(gy, g, xhat, rstd, rows, cols, gx)
}
func (Kernels) MaskedSoftmaxRows(x []float32, rows, cols int, visible []int32) {
	MaskedSoftmaxRows(x, rows, cols, visible)
}
func (Kernels) GELUTanhForward(x, y, t []float32)       { GELUTanhForward(x, y, t) }
func (Kernels) GELUTanhBackward(x, t, gy, gx []float32) { GELUTanhBackward(x, t, gy, gx) }
func (Kernels) ReLUForward(x, y []float32)              { ReLUForward(x, y) }
func (Kernels) ReLUBackward(x, gy, gx []float32)        { ReLUBackward(x, gy, gx) }
func (Kernels) RMSNormForward(x, g []float32, rows, cols int, eps float32, y, xhat, rstd []float32) {
	RMSNormForward(x, g, rows, cols, eps, y, xhat, rstd)
}
func (Kernels) RMSNormBackward(gy, g, xhat, rstd []float32, rows, cols int, gx []float32) {
	RMSNormBackward(gy, g, xhat, rstd, rows, cols, gx)
}
func (Kernels) BiasMaskedSoftmaxRows(x []float32, rows, cols int, visible []int32, bias []float32, biasRows int) {
	BiasMaskedSoftmaxRows(x, rows, cols, visible, bias, biasRows)
}
func (Kernels) AdamW(p, g, m, v []float32, decay, b1, b2, stepSize, sqrtBC2, eps float32) {
	AdamW(p, g, m, v, decay, b1, b2, stepSize, sqrtBC2, eps)
}
