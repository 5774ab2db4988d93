// Package ptx holds the PTX of repro's non-GEMM CUDA kernels (GELU and
// tanh GELU, ReLU, layer and RMS norm, masked softmax with or without a
// score bias, AdamW; and the kernels of device-resident training: add,
// multiply, row gather and scatter-add, bias rows, column sums, the
// counter-based dropout mask, attention's visibility and softmax backward,
// mean pooling, MSE; and of the second slice: subtract, negate, scale,
// abs, tanh, L2 normalisation, row dot products, block copies, sums,
// (log) softmax rows, cross-entropy, attention's bias gradient, T5's
// bucket bias, the sum of squares of gradient clipping; and of decoding:
// the one-query attention against a key/value cache, cache row writes,
// lengths, T5's decoder bias, the token draw; the bfloat16 conversion of
// mixed precision) and their C source. It has
// no build tag and no cgo: the CUDA backend loads Source with
// cuModuleLoadData, and a machine without a GPU can still test that the PTX
// is current.
//
// Files:
//
//	kernels.h    the kernel bodies, one function of the global thread index
//	             each, mirroring the Go operators' arithmetic exactly
//	kernels.cu   the __global__ entry points (thread index, bounds check)
//	gen.sh       clang-14 -> kernels.ptx, with the sources' sha256 on line 1
//	kernels.ptx  the generated PTX (sm_60), embedded as Source
//	emu/         the bodies compiled by gcc and looped on the CPU, which is
//	             how the kernels are checked bit for bit against the Go code
//	             without a GPU
//
// After editing kernels.h or kernels.cu run gen.sh; TestSourceCurrent fails
// until kernels.ptx is regenerated.
package ptx

import (
	_ "embed"
	"strings"
)

// Source is the PTX module (kernels.ptx).
//
//go:embed kernels.ptx
var Source string

// Kernel entry points in Source, launched with 256 threads per block and
// ceil(n/256) blocks over n elements (GELU, ReLU, AdamW) or rows (layer and
// RMS norm, softmax). Parameters, in order (pointers are device pointers; int and
// float are 32-bit):
const (
	// x, y, cdf *float; n int
	GELUForward = "repro_gelu_forward"
	// x, cdf, gy, gx *float; n int
	GELUBackward = "repro_gelu_backward"
	// x, g, b *float; rows, cols int; eps float; y, xhat, rstd *float
	LayerNormForward = "repro_layer_norm_forward"
	// gy, g, xhat, rstd *float; rows, cols int; gx *float
	LayerNormBackward = "repro_layer_norm_backward"
	// x *float; rows, cols int; visible *int
	MaskedSoftmaxRows = "repro_masked_softmax_rows"
	// p, g, m, v *float; n int; decay, b1, b2, stepSize, sqrtBC2, eps float
	AdamW = "repro_adamw"
	// x, y, t *float; n int
	GELUTanhForward = "repro_gelu_tanh_forward"
	// x, t, gy, gx *float; n int
	GELUTanhBackward = "repro_gelu_tanh_backward"
	// x, y *float; n int
	ReLUForward = "repro_relu_forward"
	// x, gy, gx *float; n int
	ReLUBackward = "repro_relu_backward"
	// x, g *float; rows, cols int; eps float; y, xhat, rstd *float
	RMSNormForward = "repro_rms_norm_forward"
	// gy, g, xhat, rstd *float; rows, cols int; gx *float
	RMSNormBackward = "repro_rms_norm_backward"
	// x *float; rows, cols int; visible *int; bias *float; biasRows int
	BiasMaskedSoftmaxRows = "repro_bias_masked_softmax_rows"

	// The kernels of device-resident training (tensor's device path):
	// they read and write device memory only, nothing is copied per call.

	// a, b, y *float; n int (y = a + b)
	Add = "repro_add"
	// a, b, y *float; n int (y = a * b)
	Mul = "repro_mul"
	// x *float; cols int; idx *int; y *float; n int (n = len(idx)*cols)
	GatherRows = "repro_gather_rows"
	// g *float; cols int; idx *int; npos int; gx *float (cols threads)
	ScatterAddRows = "repro_scatter_add_rows"
	// b *float; cols int; y *float; n int
	BroadcastRows = "repro_broadcast_rows"
	// x *float; rows, cols int; y *float (cols threads)
	ColSums = "repro_col_sums"
	// m *float; n int; thr int (u32); keep float; the PCG state as four
	// u32 words, high first ((n+1)/2 threads)
	DropoutMask = "repro_dropout_mask"
	// lens *int; heads, qlen, klen, causal int; vis *int; n int
	AttentionVisible = "repro_attention_visible"
	// p, d *float; rows, cols int; scale float
	SoftmaxBackwardRows = "repro_softmax_backward_rows"
	// x *float; t, cols int; lens *int; y *float; n int (n = B*cols)
	MeanPool = "repro_mean_pool"
	// g *float; t, cols int; lens *int; gx *float; n int (n = B*t*cols)
	MeanPoolBackward = "repro_mean_pool_backward"
	// x, t, out *float; n int (one thread)
	MSEForward = "repro_mse_forward"
	// x, t, gy, gx *float; n int
	MSEBackward = "repro_mse_backward"

	// The second slice: the other training types' operators and
	// clipping. fma is backend.GoExpFMA (math.Exp's path on the host).

	// a, b, y *float; n int (y = a - b)
	Sub = "repro_sub"
	// x, y *float; n int (y = -x)
	Neg = "repro_neg"
	// x *float; s float; y *float; n int (y = x*s)
	Scale = "repro_scale"
	// x, y *float; n int
	AbsForward = "repro_abs_forward"
	// x, gy, gx *float; n int
	AbsBackward = "repro_abs_backward"
	// x, y *float; fma, n int
	TanhForward = "repro_tanh_forward"
	// y, gy, gx *float; n int
	TanhBackward = "repro_tanh_backward"
	// x *float; rows, cols int; eps float; y, norm *float (rows threads)
	L2NormForward = "repro_l2_norm_forward"
	// y, norm, gy *float; rows, cols int; eps float; gx *float
	L2NormBackward = "repro_l2_norm_backward"
	// a, b *float; rows, cols int; y *float (rows threads)
	RowDot = "repro_row_dot"
	// g, src *float; cols int; d *float; n int
	RowScale = "repro_row_scale"
	// src *float; srcLd, srcOff int; dst *float; dstLd, dstOff, width, n int
	CopyBlock = "repro_copy_block"
	// x *float; n, mean int; out *float (one thread)
	Sum = "repro_sum"
	// gy *float; n, mean int; gx *float
	FillFrom = "repro_fill_from"
	// x *float; rows, cols, exp, fma int; y *float (rows threads)
	LogSoftmaxRows = "repro_log_softmax_rows"
	// y, gy *float; rows, cols, log int; gx *float
	SoftmaxRowsBackward = "repro_softmax_rows_backward"
	// x *float; targets *int; rows, cols, fma int; probs *float; losses
	// *double (rows threads)
	CrossEntropyRows = "repro_cross_entropy_rows"
	// losses *double; targets *int; rows, count int; out *float (one thread)
	CrossEntropySum = "repro_cross_entropy_sum"
	// probs *float; targets *int; gy *float; cols, count int; gx *float; n int
	CrossEntropyBackward = "repro_cross_entropy_backward"
	// p, d, ds *float; rows, cols int; scale float
	SoftmaxBackwardBiasRows = "repro_softmax_backward_bias_rows"
	// w *float; heads int; buckets *int; npos int; y *float; n int
	BucketBiasForward = "repro_bucket_bias_forward"
	// g *float; heads int; buckets *int; npos int; gw *float (heads threads)
	BucketBiasBackward = "repro_bucket_bias_backward"
	// x *float; n int; acc *double (one thread)
	SumSquares = "repro_sum_squares"

	// Decoding on the device (generation): the one-query attention
	// against a key/value cache and what a session keeps beside it.

	// q, K, V *float; heads, D, klen int; lens *int; lenAdd, causal int;
	// scale float; bias *float (0: none); biasRows int; probs, out *float;
	// n int (n = B*heads threads)
	DecodeAttention = "repro_decode_attention"
	// src *float; cols int; pos *int; cap int; dst *float; n int
	WriteRowsAt = "repro_write_rows_at"
	// x *int; c, n int
	AddInts = "repro_add_ints"
	// w *float; heads int; rb, pos *int; cap int; y *float; n int
	DecodeBucketBias = "repro_decode_bucket_bias"
	// logits *float; rows, V int; invT float; greedy, topK int; top_p's
	// float64 bits as two u32 words, high first; fma int; states *u64;
	// cands *cand; candCap int; out *int (rows threads)
	SampleRows = "repro_sample_rows"

	// Mixed precision: x *float; y *u16 (bfloat16); n int
	ToBF16 = "repro_to_bf16"
)

// Entries lists every kernel entry point.
var Entries = []string{GELUForward, GELUBackward, LayerNormForward, LayerNormBackward, MaskedSoftmaxRows, AdamW,
	GELUTanhForward, GELUTanhBackward, ReLUForward, ReLUBackward, RMSNormForward, RMSNormBackward, BiasMaskedSoftmaxRows,
	Add, Mul, GatherRows, ScatterAddRows, BroadcastRows, ColSums, DropoutMask, AttentionVisible, SoftmaxBackwardRows,
	MeanPool, MeanPoolBackward, MSEForward, MSEBackward,
	Sub, Neg, Scale, AbsForward, AbsBackward, TanhForward, TanhBackward, L2NormForward, L2NormBackward, RowDot, RowScale,
	CopyBlock, Sum, FillFrom, LogSoftmaxRows, SoftmaxRowsBackward, CrossEntropyRows, CrossEntropySum, CrossEntropyBackward,
	SoftmaxBackwardBiasRows, BucketBiasForward, BucketBiasBackward, SumSquares,
	DecodeAttention, WriteRowsAt, AddInts, DecodeBucketBias, SampleRows, ToBF16}

// Params gives the parameter kinds of each entry, in order: 'p' a device
// pointer (.u64 in the PTX), 'i' a 32-bit int (.u32), 'f' a float32 (.f32).
// The test checks them against Source; the CUDA backend checks its launch
// arguments against them.
var Params = map[string]string{
	GELUForward:       "pppi",
	GELUBackward:      "ppppi",
	LayerNormForward:  "pppiifppp",
	LayerNormBackward: "ppppiip",
	MaskedSoftmaxRows: "piip",
	AdamW:             "ppppiffffff",

	GELUTanhForward:       "pppi",
	GELUTanhBackward:      "ppppi",
	ReLUForward:           "ppi",
	ReLUBackward:          "pppi",
	RMSNormForward:        "ppiifppp",
	RMSNormBackward:       "ppppiip",
	BiasMaskedSoftmaxRows: "piippi",

	Add:                 "pppi",
	Mul:                 "pppi",
	GatherRows:          "pippi",
	ScatterAddRows:      "pipip",
	BroadcastRows:       "pipi",
	ColSums:             "piip",
	DropoutMask:         "piifiiii",
	AttentionVisible:    "piiiipi",
	SoftmaxBackwardRows: "ppiif",
	MeanPool:            "piippi",
	MeanPoolBackward:    "piippi",
	MSEForward:          "pppi",
	MSEBackward:         "ppppi",

	Sub:                     "pppi",
	Neg:                     "ppi",
	Scale:                   "pfpi",
	AbsForward:              "ppi",
	AbsBackward:             "pppi",
	TanhForward:             "ppii",
	TanhBackward:            "pppi",
	L2NormForward:           "piifpp",
	L2NormBackward:          "pppiifp",
	RowDot:                  "ppiip",
	RowScale:                "ppipi",
	CopyBlock:               "piipiiii",
	Sum:                     "piip",
	FillFrom:                "piip",
	LogSoftmaxRows:          "piiiip",
	SoftmaxRowsBackward:     "ppiiip",
	CrossEntropyRows:        "ppiiipp",
	CrossEntropySum:         "ppiip",
	CrossEntropyBackward:    "pppiipi",
	SoftmaxBackwardBiasRows: "pppiif",
	BucketBiasForward:       "pipipi",
	BucketBiasBackward:      "pipip",
	SumSquares:              "pip",

	DecodeAttention:  "pppiiipiifpippi",
	WriteRowsAt:      "pipipi",
	AddInts:          "pii",
	DecodeBucketBias: "pippipi",
	SampleRows:       "piifiiiiippip",

	ToBF16: "ppi",
}

const hashPrefix = "// kernels-sha256: "

// SourceHash returns the sha256 (hex) of kernels.h followed by kernels.cu
// recorded by gen.sh on Source's first line, or "" when there is none.
func SourceHash() string {
	line, _, _ := strings.Cut(Source, "\n")
	rest, ok := strings.CutPrefix(line, hashPrefix)
	if !ok {
		return ""
	}
	hash, _, _ := strings.Cut(rest, " ")
	return hash
}
