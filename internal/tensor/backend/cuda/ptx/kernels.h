/*
 * kernels.h: the bodies of repro's non-GEMM CUDA kernels (see ptx.go).
 *
 * Each kernel is a static function of one global thread index: one thread
 * per element for GELU and AdamW, one thread per row for layer norm and the
 * masked softmax. There is no shared memory and no synchronisation, so a
 * plain C loop over the thread index (package emu, compiled by gcc) computes
 * exactly what the GPU computes, and that is how the kernels are tested
 * where there is no GPU.
 *
 * The arithmetic mirrors repro's Go operators operation by operation, in the
 * same order and precision (float32, float64 where Go uses float64), so
 * that the results are bit-identical to the CPU's:
 *   expf, erff, tanhf        internal/tensor/fastmath.go
 *   GELU forward/backward    internal/tensor/activation.go (geluFn)
 *   tanh GELU fwd/bwd        internal/tensor/activation.go (geluTanhFn)
 *   ReLU fwd/bwd             internal/tensor/activation.go (reluFn)
 *   layer norm fwd/bwd       internal/tensor/norm.go (layerNormFn)
 *   RMS norm fwd/bwd         internal/tensor/norm.go (rmsNormFn)
 *   masked softmax row       internal/tensor/attention.go (maskedSoftmaxRow,
 *                            after addBias when the scores have a bias)
 *   AdamW update             internal/tensor/optim/adamw.go (AdamW.Step)
 * Rules that keep it so: compile with -ffp-contract=off (no fused
 * multiply-add: Go's default amd64 build does not fuse; builds that do --
 * arm64, GOAMD64=v3 -- are not bit-identical to these kernels), float
 * literals with an f suffix
 * (Go rounds its untyped constants to float32 the same way; a product of
 * Go constants such as 3*0.044715 is folded exactly before rounding, so
 * the C side writes the folded literal), min/max with
 * Go's NaN and signed-zero rules, and no libm: only floor and sqrt, as
 * builtins that become single correctly rounded PTX instructions
 * (cvt.rmi.f64.f64, sqrt.rn.f64), so the PTX needs no libdevice.
 *
 * Editing this file or kernels.cu requires running gen.sh: the test of
 * package ptx checks the hash recorded in kernels.ptx.
 *
 * It must compile as C (gcc, package emu: define REPRO_KERNELS_EMU) and as
 * CUDA C++ (clang-14 device-only, from kernels.cu).
 */
#ifndef REPRO_KERNELS_H
#define REPRO_KERNELS_H

#if defined(__CUDA__) && !defined(REPRO_KERNELS_EMU)
#define KFN static inline __attribute__((device))
#else
#define KFN static inline
#endif

typedef unsigned int k_u32; /* 32 bits on x86-64, arm64 and nvptx64 */

KFN float k_from_bits(k_u32 u) {
	union { k_u32 u; float f; } c;
	c.u = u;
	return c.f;
}

KFN k_u32 k_bits(float f) {
	union { k_u32 u; float f; } c;
	c.f = f;
	return c.u;
}

/* Go's max(a, b) for float32: NaN if either is NaN; max(-0, +0) = +0. */
KFN float k_go_max(float a, float b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == 0.0f && b == 0.0f) return (k_bits(a) & 0x80000000u) ? b : a;
	return a > b ? a : b;
}

/* Go's min(a, b) for float32: NaN if either is NaN; min(-0, +0) = -0. */
KFN float k_go_min(float a, float b) {
	if (a != a) return a;
	if (b != b) return b;
	if (a == 0.0f && b == 0.0f) return (k_bits(a) & 0x80000000u) ? a : b;
	return a < b ? a : b;
}

/* tensor.expf: Cephes' expf. */
KFN float k_expf(float x) {
	if (x > 88.72283f) return k_from_bits(0x7f800000u); /* +Inf */
	if (x < -87.33654f) return 0.0f;
	if (x != x) return x;
	float n = (float)__builtin_floor((double)(x * 1.44269504088896341f + 0.5f));
	float r = x - n * 0.693359375f - n * -2.12194440e-4f;
	float z = r * r;
	float p = ((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r + 1.6666665459e-1f) * r + 5.0000001201e-1f;
	p = p * z + r + 1.0f;
	if (n > 127.0f) /* 2^128 is not a float32: apply the scale in two factors */
		return p * 2.0f * k_from_bits((k_u32)((int)n + 126) << 23);
	return p * k_from_bits((k_u32)((int)n + 127) << 23);
}

/* tensor.erff: Eigen's generic_fast_erf_float. */
KFN float k_erff(float x) {
	x = k_go_min(k_go_max(x, -4.0f), 4.0f);
	float x2 = x * x;
	float p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
	p = x2 * p + -2.10102402082508e-06f;
	p = x2 * p + -5.69250639462346e-05f;
	p = x2 * p + -7.34990630326855e-04f;
	p = x2 * p + -2.95459980854025e-03f;
	p = x2 * p + -1.60960333262415e-02f;
	p = p * x;
	float q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
	q = x2 * q + -1.68282697438203e-03f;
	q = x2 * q + -7.37332916720468e-03f;
	q = x2 * q + -1.42647390514189e-02f;
	return p / q;
}

/* tensor.tanhf: Cephes' tanhf. */
KFN float k_tanhf(float x) {
	float z = x;
	if (z < 0.0f) z = -z;
	if (x != x) return x;
	if (z > 9.0f) return x > 0.0f ? 1.0f : -1.0f;
	if (z >= 0.625f) {
		z = 1.0f - 2.0f / (k_expf(z + z) + 1.0f);
		if (x < 0.0f) z = -z;
		return z;
	}
	float s = x * x;
	return ((((-5.70498872745e-3f * s + 2.06390887954e-2f) * s - 5.37397155531e-2f) * s + 1.33314422036e-1f) * s - 3.33332819422e-1f) * s * x + x;
}

/* GELU forward, element i: cdf = Phi(x), y = x * cdf. */
KFN void k_gelu_forward(int i, const float *x, float *y, float *cdf) {
	float xi = x[i];
	float c = 0.5f * (1.0f + k_erff(xi * 0.70710678118654752440f));
	cdf[i] = c;
	y[i] = xi * c;
}

/* GELU backward, element i: gx = gy * (cdf + x * phi(x)). */
KFN void k_gelu_backward(int i, const float *x, const float *cdf, const float *gy, float *gx) {
	float xi = x[i];
	gx[i] = gy[i] * (cdf[i] + xi * 0.39894228040143267794f * k_expf(-0.5f * xi * xi));
}

/* tanh GELU forward, element i: t = tanh(c (x + a x^3)), y = 0.5 x (1 + t). */
KFN void k_gelu_tanh_forward(int i, const float *x, float *y, float *t) {
	float xi = x[i];
	float ti = k_tanhf(0.7978845608028654f * (xi + 0.044715f * xi * xi * xi));
	t[i] = ti;
	y[i] = 0.5f * xi * (1.0f + ti);
}

/* tanh GELU backward, element i. */
KFN void k_gelu_tanh_backward(int i, const float *x, const float *t, const float *gy, float *gx) {
	float xi = x[i], ti = t[i];
	gx[i] = gy[i] * (0.5f * (1.0f + ti) + 0.5f * xi * (1.0f - ti * ti) * 0.7978845608028654f * (1.0f + 0.134145f * xi * xi));
}

/* ReLU forward and backward, element i (the derivative at 0 is 0). */
KFN void k_relu_forward(int i, const float *x, float *y) {
	y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

KFN void k_relu_backward(int i, const float *x, const float *gy, float *gx) {
	gx[i] = x[i] > 0.0f ? gy[i] : 0.0f;
}

/* Layer norm forward, row r of a rows x cols matrix: float64 mean and
 * biased variance, rstd = 1/sqrt(var+eps), xhat and y in float32. */
KFN void k_layer_norm_forward(int r, const float *x, const float *g, const float *b, int cols, float eps, float *y, float *xhat, float *rstd) {
	long o = (long)r * cols;
	const float *xr = x + o;
	float *xh = xhat + o, *yr = y + o;
	double sum = 0.0;
	for (int j = 0; j < cols; j++) sum += (double)xr[j];
	double mean = sum / (double)cols;
	double ss = 0.0;
	for (int j = 0; j < cols; j++) {
		double d = (double)xr[j] - mean;
		ss += d * d;
	}
	double rs = 1.0 / __builtin_sqrt(ss / (double)cols + (double)eps);
	rstd[r] = (float)rs;
	for (int j = 0; j < cols; j++) {
		float h = (float)(((double)xr[j] - mean) * rs);
		xh[j] = h;
		yr[j] = h * g[j] + b[j];
	}
}

/* Layer norm backward (x-gradient only), row r. */
KFN void k_layer_norm_backward(int r, const float *gy, const float *g, const float *xhat, const float *rstd, int cols, float *gx) {
	long o = (long)r * cols;
	const float *gyr = gy + o, *xh = xhat + o;
	float *d = gx + o;
	float s1 = 0.0f, s2 = 0.0f;
	for (int j = 0; j < cols; j++) {
		float dh = gyr[j] * g[j];
		s1 += dh;
		s2 += dh * xh[j];
	}
	float m1 = s1 / (float)cols, m2 = s2 / (float)cols;
	float rs = rstd[r];
	for (int j = 0; j < cols; j++) d[j] = rs * (gyr[j] * g[j] - m1 - xh[j] * m2);
}

/* RMS norm forward, row r: float64 sum of squares, rstd = 1/sqrt(ms+eps),
 * xhat and y in float32. */
KFN void k_rms_norm_forward(int r, const float *x, const float *g, int cols, float eps, float *y, float *xhat, float *rstd) {
	long o = (long)r * cols;
	const float *xr = x + o;
	float *xh = xhat + o, *yr = y + o;
	double ss = 0.0;
	for (int j = 0; j < cols; j++) ss += (double)xr[j] * (double)xr[j];
	double rs = 1.0 / __builtin_sqrt(ss / (double)cols + (double)eps);
	rstd[r] = (float)rs;
	for (int j = 0; j < cols; j++) {
		float h = (float)((double)xr[j] * rs);
		xh[j] = h;
		yr[j] = h * g[j];
	}
}

/* RMS norm backward (x-gradient only), row r. */
KFN void k_rms_norm_backward(int r, const float *gy, const float *g, const float *xhat, const float *rstd, int cols, float *gx) {
	long o = (long)r * cols;
	const float *gyr = gy + o, *xh = xhat + o;
	float *d = gx + o;
	float s = 0.0f;
	for (int j = 0; j < cols; j++) s += gyr[j] * g[j] * xh[j];
	float m = s / (float)cols;
	float rs = rstd[r];
	for (int j = 0; j < cols; j++) d[j] = rs * (gyr[j] * g[j] - xh[j] * m);
}

/* Masked softmax, row r in place: softmax over the first visible[r]
 * entries (at most cols), zeros after; visible[r] <= 0 zeroes the row. */
KFN void k_masked_softmax_row(int r, float *x, int cols, const int *visible) {
	float *row = x + (long)r * cols;
	int vis = visible[r];
	if (vis > cols) vis = cols;
	if (vis <= 0) {
		for (int j = 0; j < cols; j++) row[j] = 0.0f;
		return;
	}
	float mx = row[0];
	for (int j = 1; j < vis; j++) mx = k_go_max(mx, row[j]);
	float sum = 0.0f;
	for (int j = 0; j < vis; j++) {
		float e = k_expf(row[j] - mx);
		row[j] = e;
		sum += e;
	}
	float inv = 1.0f / sum;
	for (int j = 0; j < vis; j++) row[j] = row[j] * inv;
	for (int j = vis; j < cols; j++) row[j] = 0.0f;
}

/* Masked softmax after a score bias, row r in place: bias row
 * r % biasRows added to the first visible[r] entries, then as above. */
KFN void k_bias_masked_softmax_row(int r, float *x, int cols, const int *visible, const float *bias, int biasRows) {
	float *row = x + (long)r * cols;
	const float *br = bias + (long)(r % biasRows) * cols;
	int vis = visible[r];
	if (vis > cols) vis = cols;
	for (int j = 0; j < vis; j++) row[j] = row[j] + br[j];
	k_masked_softmax_row(r, x, cols, visible);
}

/* AdamW update of element j of one parameter (optim.AdamW.Step's loop). */
KFN void k_adamw(int j, float *p, const float *g, float *m, float *v, float decay, float b1, float b2, float stepSize, float sqrtBC2, float eps) {
	float pj = p[j];
	if (decay != 1.0f) pj = pj * decay;
	float gj = g[j];
	float mj = b1 * m[j] + (1.0f - b1) * gj;
	float vj = b2 * v[j] + (1.0f - b2) * gj * gj;
	m[j] = mj;
	v[j] = vj;
	float denom = (float)__builtin_sqrt((double)vj) / sqrtBC2 + eps;
	p[j] = pj - stepSize * mj / denom;
}

/* ---- Device-resident training (internal/tensor/device.go): the kernels
 * the operators run when their values live in device memory. Each mirrors
 * the operator's own Go loop:
 *   add, mul                 binaryFn, dropoutFn (y = x * mask)
 *   gather / scatter-add     gatherFn forward / backward (index order)
 *   broadcast rows           linearFn's bias rows before the sgemm
 *   column sums              colSums (rows in order, per column)
 *   dropout mask             dropoutMask: math/rand/v2's PCG, draw k taken
 *                            by jump-ahead from the state before the mask
 *   attention visible        attentionFn's key lengths and causal mask
 *   softmax backward row     attentionFn.Backward's dS = P (dP - <P, dP>)
 *   mean pool fwd/bwd        meanPoolFn
 *   MSE fwd/bwd              mseFn (one thread sums in order)
 */

typedef unsigned long long k_u64;

/* y = a + b, element i. */
KFN void k_add(int i, const float *a, const float *b, float *y) {
	y[i] = a[i] + b[i];
}

/* y = a * b, element i. */
KFN void k_mul(int i, const float *a, const float *b, float *y) {
	y[i] = a[i] * b[i];
}

/* y[p, j] = x[idx[p], j], element i = p*cols + j. */
KFN void k_gather_rows(int i, const float *x, int cols, const int *idx, float *y) {
	int p = i / cols, j = i - p * cols;
	y[i] = x[(long)idx[p] * cols + j];
}

/* gx[idx[p], j] += g[p, j] for p = 0, 1, ... in order: thread j owns
 * column j of gx, so repeated indices sum in position order. */
KFN void k_scatter_add_rows(int j, const float *g, int cols, const int *idx, int npos, float *gx) {
	for (int p = 0; p < npos; p++) {
		long d = (long)idx[p] * cols + j;
		gx[d] = gx[d] + g[(long)p * cols + j];
	}
}

/* y[i] = b[i mod cols]: the bias in every row. */
KFN void k_broadcast_rows(int i, const float *b, int cols, float *y) {
	y[i] = b[i % cols];
}

/* y[j] = sum over rows of x[., j], rows in order (float32). */
KFN void k_col_sums(int j, const float *x, int rows, int cols, float *y) {
	float acc = 0.0f;
	for (int r = 0; r < rows; r++) acc = acc + x[(long)r * cols + j];
	y[j] = acc;
}

/* The high 64 bits of a*b. */
KFN k_u64 k_mulhi64(k_u64 a, k_u64 b) {
	k_u64 a0 = a & 0xffffffffull, a1 = a >> 32, b0 = b & 0xffffffffull, b1 = b >> 32;
	k_u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	k_u64 mid = (p00 >> 32) + (p01 & 0xffffffffull) + (p10 & 0xffffffffull);
	return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* (rh, rl) = (ah, al) * (bh, bl) mod 2^128. */
KFN void k_mul128(k_u64 ah, k_u64 al, k_u64 bh, k_u64 bl, k_u64 *rh, k_u64 *rl) {
	k_u64 h = k_mulhi64(al, bl) + ah * bl + al * bh;
	*rl = al * bl;
	*rh = h;
}

/* (rh, rl) = (ah, al) + (bh, bl) mod 2^128. */
KFN void k_add128(k_u64 ah, k_u64 al, k_u64 bh, k_u64 bl, k_u64 *rh, k_u64 *rl) {
	k_u64 l = al + bl;
	*rh = ah + bh + (l < al ? 1ull : 0ull);
	*rl = l;
}

/* math/rand/v2's PCG after delta steps of state = state*mul + inc (mod
 * 2^128), by Brown's jump-ahead: O(log delta) multiplications. */
KFN void k_pcg_advance(k_u64 *hi, k_u64 *lo, k_u64 delta) {
	k_u64 mh = 2549297995355413924ull, ml = 4865540595714422341ull; /* mul */
	k_u64 ph = 6364136223846793005ull, pl = 1442695040888963407ull; /* inc */
	k_u64 amh = 0, aml = 1, aph = 0, apl = 0;
	while (delta > 0) {
		if (delta & 1ull) {
			k_mul128(amh, aml, mh, ml, &amh, &aml);
			k_u64 th, tl;
			k_mul128(aph, apl, mh, ml, &th, &tl);
			k_add128(th, tl, ph, pl, &aph, &apl);
		}
		k_u64 m1h, m1l;
		k_add128(mh, ml, 0, 1, &m1h, &m1l);
		k_mul128(m1h, m1l, ph, pl, &ph, &pl);
		k_mul128(mh, ml, mh, ml, &mh, &ml);
		delta >>= 1;
	}
	k_u64 sh, sl;
	k_mul128(amh, aml, *hi, *lo, &sh, &sl);
	k_add128(sh, sl, aph, apl, hi, lo);
}

/* PCG's DXSM output for a state (math/rand/v2's PCG.Uint64 after next). */
KFN k_u64 k_pcg_output(k_u64 hi, k_u64 lo) {
	hi ^= hi >> 32;
	hi *= 0xda942042e4dd58b5ull;
	hi ^= hi >> 48;
	hi *= (lo | 1ull);
	return hi;
}

/* Dropout mask, draw k: the (k+1)th Uint64 of the PCG whose state is
 * (hi, lo) gives elements 2k (low 32 bits) and 2k+1 (high 32 bits), keep
 * when the 32-bit uniform is at least thr, else 0. */
KFN void k_dropout_mask(int k, float *m, int n, unsigned int thr, float keep, k_u64 hi, k_u64 lo) {
	k_pcg_advance(&hi, &lo, (k_u64)k + 1ull);
	k_u64 u = k_pcg_output(hi, lo);
	int i = 2 * k;
	m[i] = (unsigned int)u >= thr ? keep : 0.0f;
	if (i + 1 < n) m[i + 1] = (unsigned int)(u >> 32) >= thr ? keep : 0.0f;
}

/* Visible keys of score row i = (b*heads + h)*qlen + q: the key length of
 * sequence b clamped to [0, klen], and at most q+1 when causal. */
KFN void k_attention_visible(int i, const int *lens, int heads, int qlen, int klen, int causal, int *vis) {
	int b = i / (heads * qlen), q = i % qlen;
	int v = lens[b];
	if (v < 0) v = 0;
	if (v > klen) v = klen;
	if (causal && v > q + 1) v = q + 1;
	vis[i] = v;
}

/* Attention's softmax backward, row r in place: d = p * (d - <p, d>) * scale. */
KFN void k_softmax_backward_row(int r, const float *p, float *d, int cols, float scale) {
	const float *pr = p + (long)r * cols;
	float *dr = d + (long)r * cols;
	float dot = 0.0f;
	for (int j = 0; j < cols; j++) dot = dot + pr[j] * dr[j];
	for (int j = 0; j < cols; j++) dr[j] = pr[j] * (dr[j] - dot) * scale;
}

/* Mean pool, element i = s*cols + j of the [B, cols] output: the float64
 * mean of rows s*t .. s*t+lens[s]-1 of x in column j (0 for length 0). */
KFN void k_mean_pool(int i, const float *x, int t, int cols, const int *lens, float *y) {
	int s = i / cols, j = i - s * cols;
	int n = lens[s];
	if (n == 0) {
		y[i] = 0.0f;
		return;
	}
	double acc = 0.0;
	for (int r = 0; r < n; r++) acc += (double)x[((long)s * t + r) * cols + j];
	y[i] = (float)(acc / (double)n);
}

/* Mean pool backward, element i of the [B*t, cols] input gradient. */
KFN void k_mean_pool_backward(int i, const float *g, int t, int cols, const int *lens, float *gx) {
	int row = i / cols, j = i - row * cols;
	int s = row / t, r = row - s * t;
	int n = lens[s];
	gx[i] = r < n ? g[(long)s * cols + j] / (float)n : 0.0f;
}

/* MSE forward (one thread): out[0] = float64 mean of (x - t)^2, in order. */
KFN void k_mse_forward(int i, const float *x, const float *t, float *out, int n) {
	if (i != 0) return;
	double s = 0.0;
	for (int k = 0; k < n; k++) {
		double d = (double)x[k] - (double)t[k];
		s += d * d;
	}
	out[0] = (float)(s / (double)n);
}

/* MSE backward, element i: gx = (gy*2/n) * (x - t). */
KFN void k_mse_backward(int i, const float *x, const float *t, const float *gy, float *gx, int n) {
	float g = gy[0] * 2.0f / (float)n;
	gx[i] = g * (x[i] - t[i]);
}

/* ---- Device-resident training, second slice: the operators of the other
 * training types (contrastive losses, PaSeR's features, T5, GPT-2) and
 * gradient clipping. Each mirrors its Go loop as above:
 *   sub, neg, scale          binaryFn (Sub and its b-gradient), Scale
 *   abs fwd/bwd              Abs: float32(math.Abs(float64(x))), sign(x)*g
 *   tanh fwd/bwd             Tanh: float32(math.Tanh(float64(x))), (1-y*y)*g
 *   L2 norm row fwd/bwd      l2NormFn
 *   row dot, row scale       rowDotFn forward / backward
 *   copy block               concatFn and sliceColsFn, both ways
 *   sum, fill from           sumFn forward (one thread, float64 in order)
 *                            and backward
 *   (log) softmax rows       rowSoftmaxFn and crossEntropyFn's
 *                            logSoftmaxRow: float64 sum of math.Exp,
 *                            math.Log
 *   softmax rows backward    rowSoftmaxFn.Backward
 *   cross-entropy row, sum,  crossEntropyFn: per-row float64 losses, their
 *   backward                 sum in row order by one thread, the gradient
 *   softmax backward + ds    attentionFn.Backward with a score bias (the
 *                            bias gradient before the scale)
 *   bucket bias fwd/bwd      bucketBiasFn (T5's relative position bias)
 *   sum of squares           optim.ClipGradNorm's float64 sum, carried
 *                            across calls in acc (one thread)
 *
 * math.Exp and math.Log are Go's amd64 assembly (exp_amd64.s, log_amd64.s),
 * transcribed instruction by instruction; math.Exp takes a fused
 * multiply-add path on CPUs with AVX and FMA, so the kernels that call it
 * take the host's choice as an argument (fma, backend.GoExpFMA) and then
 * use __builtin_fma (fma.rn.f64 in the PTX, glibc's correctly rounded fma
 * or the FMA instruction under gcc): one rounding, as VFMADD. math.Tanh is
 * Go's portable tanh.go, which calls math.Exp. */

KFN double k_f64_from_bits(k_u64 u) {
	union { k_u64 u; double f; } c;
	c.u = u;
	return c.f;
}

KFN k_u64 k_f64_bits(double f) {
	union { k_u64 u; double f; } c;
	c.f = f;
	return c.u;
}

/* Go's math.Exp on amd64 (exp_amd64.s); fma != 0 is its AVX+FMA path. */
KFN double k_go_exp(double x, int fma) {
	k_u64 bx = k_f64_bits(x);
	if ((bx & 0x7fffffffffffffffull) >= 0x7ff0000000000000ull) /* NaN, +-Inf */
		return bx == 0xfff0000000000000ull ? 0.0 : x;
	if (x > 7.09782712893384e+02) return k_f64_from_bits(0x7ff0000000000000ull);
	double v = 1.4426950408889634073599246810018920 * x;
	int k;
	if (v < -2147483648.0) {
		k = (int)0x80000000u; /* CVTSD2SL out of range: the integer indefinite */
	} else {
		/* CVTSD2SL: round to nearest, ties to even (|v| < 2^51). */
		double r = (v + 6755399441055744.0) - 6755399441055744.0;
		k = (int)r;
	}
	double kd = (double)k;
	double r, p;
	if (fma) {
		r = __builtin_fma(-kd, 0.69314718055966295651160180568695068359375, x);
		r = __builtin_fma(-kd, 0.28235290563031577122588448175013436025525412068e-12, r);
		r = r * 0.0625;
		p = 2.4801587301587301587e-5;
		p = __builtin_fma(p, r, 1.9841269841269841270e-4);
		p = __builtin_fma(p, r, 1.3888888888888888889e-3);
		p = __builtin_fma(p, r, 8.3333333333333333333e-3);
		p = __builtin_fma(p, r, 4.1666666666666666667e-2);
		p = __builtin_fma(p, r, 1.6666666666666666667e-1);
		p = __builtin_fma(p, r, 0.5);
		p = __builtin_fma(p, r, 1.0);
		r = r * p;
		p = r + 2.0;
		r = r * p;
		p = r + 2.0;
		r = r * p;
		p = r + 2.0;
		r = r * p;
		p = r + 2.0;
		r = __builtin_fma(r, p, 1.0);
	} else {
		r = x - kd * 0.69314718055966295651160180568695068359375;
		r = r - kd * 0.28235290563031577122588448175013436025525412068e-12;
		r = r * 0.0625;
		p = 2.4801587301587301587e-5 * r;
		p = p + 1.9841269841269841270e-4;
		p = p * r;
		p = p + 1.3888888888888888889e-3;
		p = p * r;
		p = p + 8.3333333333333333333e-3;
		p = p * r;
		p = p + 4.1666666666666666667e-2;
		p = p * r;
		p = p + 1.6666666666666666667e-1;
		p = p * r;
		p = p + 0.5;
		p = p * r;
		p = p + 1.0;
		r = r * p;
		p = 2.0 + r;
		r = r * p;
		p = 2.0 + r;
		r = r * p;
		p = 2.0 + r;
		r = r * p;
		p = 2.0 + r;
		r = r * p;
		r = r + 1.0;
	}
	/* fr * 2^k, through a subnormal scale in two factors. */
	int e = k + 0x3ff;
	if (e <= 0) {
		if (e < -52) return 0.0;
		r = r * k_f64_from_bits((k_u64)(e + 0x3fe) << 52);
		e = 1;
	} else if (e >= 0x7ff) {
		return k_f64_from_bits(0x7ff0000000000000ull);
	}
	return r * k_f64_from_bits((k_u64)e << 52);
}

/* Go's math.Log on amd64 (log_amd64.s). */
KFN double k_go_log(double x) {
	k_u64 bx = k_f64_bits(x);
	if ((bx & 0x7fffffffffffffffull) == 0) return k_f64_from_bits(0xfff0000000000000ull); /* -Inf */
	if (bx >> 63) return k_f64_from_bits(0x7ff8000000000001ull);                           /* NaN */
	if (bx >= 0x7ff0000000000000ull) return x;                                               /* +Inf, NaN */
	double f1 = k_f64_from_bits((bx & 0x000fffffffffffffull) | 0x3fe0000000000000ull);
	double k = (double)((int)((bx >> 52) & 0x7ff) - 0x3fe);
	if (!(7.07106781186547524401e-01 < f1)) { /* CMPSD ..., 5 (not less than) */
		k = k - 1.0;
		f1 = f1 * 2.0;
	}
	double f = f1 - 1.0;
	double s = f / (2.0 + f);
	double s2 = s * s;
	double s4 = s2 * s2;
	double t1 = 1.479819860511658591e-01 * s4;
	t1 = t1 + 1.818357216161805012e-01;
	t1 = t1 * s4;
	t1 = t1 + 2.857142874366239149e-01;
	t1 = t1 * s4;
	t1 = t1 + 6.666666666666735130e-01;
	t1 = s2 * t1;
	double t2 = 1.531383769920937332e-01 * s4;
	t2 = t2 + 2.222219843214978396e-01;
	t2 = t2 * s4;
	t2 = t2 + 3.999999999940941908e-01;
	t2 = s4 * t2;
	double R = t1 + t2;
	double hfsq = 0.5 * f;
	hfsq = hfsq * f;
	double a = R + hfsq;
	a = s * a;
	a = a + 1.90821492927058770002e-10 * k;
	double z = hfsq - a;
	z = z - f;
	return k * 6.93147180369123816490e-01 - z;
}

/* Go's math.Tanh (tanh.go, Cephes), with math.Exp as above. */
KFN double k_go_tanh(double x, int fma) {
	double z = k_f64_from_bits(k_f64_bits(x) & 0x7fffffffffffffffull);
	if (z > 0.5 * 8.8029691931113054295988e+01) return x < 0.0 ? -1.0 : 1.0;
	if (z >= 0.625) {
		double s = k_go_exp(2.0 * z, fma);
		z = 1.0 - 2.0 / (s + 1.0);
		if (x < 0.0) z = -z;
		return z;
	}
	if (x == 0.0) return x;
	double s = x * x;
	return x + x * s * ((-9.64399179425052238628e-1 * s + -9.92877231001918586564e1) * s + -1.61468768441708447952e3) /
		(((s + 1.12811678491632931402e2) * s + 2.23548839060100448583e3) * s + 4.84406305325125486048e3);
}

/* y = a - b, element i. */
KFN void k_sub(int i, const float *a, const float *b, float *y) {
	y[i] = a[i] - b[i];
}

/* y = -x, element i. */
KFN void k_neg(int i, const float *x, float *y) {
	y[i] = -x[i];
}

/* y = x * s, element i (y may be x). */
KFN void k_scale(int i, const float *x, float s, float *y) {
	y[i] = x[i] * s;
}

/* Abs forward, element i: through float64, as Go's float32(math.Abs(float64(x))). */
KFN void k_abs_forward(int i, const float *x, float *y) {
	y[i] = (float)k_f64_from_bits(k_f64_bits((double)x[i]) & 0x7fffffffffffffffull);
}

/* Abs backward, element i: gy times 1, -1 or 0 (the derivative at 0). */
KFN void k_abs_backward(int i, const float *x, const float *gy, float *gx) {
	float xi = x[i], d = 0.0f;
	if (xi > 0.0f) d = 1.0f;
	else if (xi < 0.0f) d = -1.0f;
	gx[i] = gy[i] * d;
}

/* Tanh forward, element i: float32(math.Tanh(float64(x))). */
KFN void k_tanh_forward(int i, const float *x, float *y, int fma) {
	y[i] = (float)k_go_tanh((double)x[i], fma);
}

/* Tanh backward, element i: gx = gy * (1 - y*y). */
KFN void k_tanh_backward(int i, const float *y, const float *gy, float *gx) {
	float yi = y[i];
	gx[i] = gy[i] * (1.0f - yi * yi);
}

/* L2 normalisation, row r: n = max(float32(sqrt(float64 sum of squares)),
 * eps), y = x / n. */
KFN void k_l2_norm_forward_row(int r, const float *x, int cols, float eps, float *y, float *norm) {
	long o = (long)r * cols;
	double ss = 0.0;
	for (int j = 0; j < cols; j++) ss += (double)x[o + j] * (double)x[o + j];
	float n = k_go_max((float)__builtin_sqrt(ss), eps);
	norm[r] = n;
	for (int j = 0; j < cols; j++) y[o + j] = x[o + j] / n;
}

/* L2 normalisation backward, row r. */
KFN void k_l2_norm_backward_row(int r, const float *y, const float *norm, const float *gy, int cols, float eps, float *gx) {
	long o = (long)r * cols;
	float n = norm[r];
	if (n <= eps) { /* the floor is active: y = x / eps, linear */
		for (int j = 0; j < cols; j++) gx[o + j] = gy[o + j] / n;
		return;
	}
	float dot = 0.0f;
	for (int j = 0; j < cols; j++) dot = dot + gy[o + j] * y[o + j];
	for (int j = 0; j < cols; j++) gx[o + j] = (gy[o + j] - y[o + j] * dot) / n;
}

/* Row r of the inner products of a and b (float32, in order). */
KFN void k_row_dot(int r, const float *a, const float *b, int cols, float *y) {
	long o = (long)r * cols;
	float s = 0.0f;
	for (int j = 0; j < cols; j++) s = s + a[o + j] * b[o + j];
	y[r] = s;
}

/* d[i] = g[row of i] * src[i]: RowDot's gradient. */
KFN void k_row_scale(int i, const float *g, const float *src, int cols, float *d) {
	d[i] = g[i / cols] * src[i];
}

/* Element i of a rows x width block: dst[dstOff + row*dstLd + j] =
 * src[srcOff + row*srcLd + j]. */
KFN void k_copy_block(int i, const float *src, int srcLd, int srcOff, float *dst, int dstLd, int dstOff, int width) {
	int row = i / width, j = i - row * width;
	dst[dstOff + (long)row * dstLd + j] = src[srcOff + (long)row * srcLd + j];
}

/* Sum (one thread): out[0] = the float64 sum of x in order, divided by n
 * when mean. */
KFN void k_sum(int i, const float *x, int n, int mean, float *out) {
	if (i != 0) return;
	double s = 0.0;
	for (int k = 0; k < n; k++) s += (double)x[k];
	if (mean) s /= (double)n;
	out[0] = (float)s;
}

/* gx[i] = gy[0], divided by n when mean: Sum's and Mean's gradient. */
KFN void k_fill_from(int i, const float *gy, int n, int mean, float *gx) {
	float g = gy[0];
	if (mean) g = g / (float)n;
	gx[i] = g;
}

/* Row r of log softmax(x) into y (logSoftmaxRow: float32 max, float64 sum
 * of math.Exp, lse = max + float32(math.Log(sum))); exp != 0 then takes
 * expf of each value (Softmax). */
KFN void k_log_softmax_row(int r, const float *x, int cols, int exp, int fma, float *y) {
	const float *xr = x + (long)r * cols;
	float *yr = y + (long)r * cols;
	float mx = xr[0];
	for (int j = 1; j < cols; j++) mx = k_go_max(mx, xr[j]);
	double sum = 0.0;
	for (int j = 0; j < cols; j++) sum += k_go_exp((double)(xr[j] - mx), fma);
	float lse = mx + (float)k_go_log(sum);
	for (int j = 0; j < cols; j++) yr[j] = xr[j] - lse;
	if (exp)
		for (int j = 0; j < cols; j++) yr[j] = k_expf(yr[j]);
}

/* Row r of rowSoftmaxFn's backward pass: log softmax dx = g - exp(y)*sum(g),
 * softmax dx = y * (g - <g, y>). */
KFN void k_softmax_row_backward(int r, const float *y, const float *gy, int cols, int log, float *gx) {
	long o = (long)r * cols;
	const float *yr = y + o, *g = gy + o;
	float *d = gx + o;
	float s = 0.0f;
	if (log) {
		for (int j = 0; j < cols; j++) s = s + g[j];
		for (int j = 0; j < cols; j++) d[j] = g[j] - k_expf(yr[j]) * s;
	} else {
		for (int j = 0; j < cols; j++) s = s + g[j] * yr[j];
		for (int j = 0; j < cols; j++) d[j] = yr[j] * (g[j] - s);
	}
}

/* Cross-entropy, row r: for a target other than -100 (IgnoreIndex), the
 * row's log softmax, its loss -log p[target] in float64, and the
 * probabilities expf(log p) kept for the backward pass; an ignored row
 * gets zeros. */
KFN void k_cross_entropy_row(int r, const float *x, const int *targets, int cols, int fma, float *probs, double *losses) {
	float *pr = probs + (long)r * cols;
	int t = targets[r];
	if (t == -100) {
		for (int j = 0; j < cols; j++) pr[j] = 0.0f;
		losses[r] = 0.0;
		return;
	}
	k_log_softmax_row(r, x, cols, 0, fma, probs);
	losses[r] = -(double)pr[t];
	for (int j = 0; j < cols; j++) pr[j] = k_expf(pr[j]);
}

/* Cross-entropy's loss (one thread): the float64 sum of the rows' losses
 * in row order over the rows not ignored, divided by their count (count 0:
 * the loss is 0). */
KFN void k_cross_entropy_sum(int i, const double *losses, const int *targets, int rows, int count, float *out) {
	if (i != 0) return;
	double s = 0.0;
	for (int r = 0; r < rows; r++)
		if (targets[r] != -100) s += losses[r];
	if (count > 0) s /= (double)count;
	out[0] = (float)s;
}

/* Cross-entropy backward, element i: g = gy[0]/count, gx = g*p, minus g at
 * the target; 0 in ignored rows. */
KFN void k_cross_entropy_backward(int i, const float *probs, const int *targets, const float *gy, int cols, int count, float *gx) {
	int r = i / cols, j = i - r * cols;
	int t = targets[r];
	if (t == -100) {
		gx[i] = 0.0f;
		return;
	}
	float g = gy[0] / (float)count;
	float v = g * probs[i];
	if (j == t) v = v - g;
	gx[i] = v;
}

/* Attention's softmax backward with a score bias, row r: ds = p*(d - <p, d>)
 * (the bias's gradient), then d = ds*scale as k_softmax_backward_row. */
KFN void k_softmax_backward_bias_row(int r, const float *p, float *d, float *ds, int cols, float scale) {
	long o = (long)r * cols;
	const float *pr = p + o;
	float *dr = d + o, *sr = ds + o;
	float dot = 0.0f;
	for (int j = 0; j < cols; j++) dot = dot + pr[j] * dr[j];
	for (int j = 0; j < cols; j++) {
		sr[j] = pr[j] * (dr[j] - dot);
		dr[j] = pr[j] * (dr[j] - dot) * scale;
	}
}

/* Bucket bias forward, element i = h*n + p: y = w[buckets[p], h] (w is
 * buckets x heads). */
KFN void k_bucket_bias_forward(int i, const float *w, int heads, const int *buckets, int n, float *y) {
	int h = i / n, p = i - h * n;
	y[i] = w[(long)buckets[p] * heads + h];
}

/* Bucket bias backward, head h (one thread per head): gw[buckets[p], h] +=
 * g[h*n + p] for p in order. */
KFN void k_bucket_bias_backward(int h, const float *g, int heads, const int *buckets, int n, float *gw) {
	for (int p = 0; p < n; p++) {
		long d = (long)buckets[p] * heads + h;
		gw[d] = gw[d] + g[(long)h * n + p];
	}
}

/* Sum of squares (one thread): acc[0] += float64(x)^2 for x in order, the
 * sum carried from call to call (ClipGradNorm's over every gradient). */
KFN void k_sum_squares(int i, const float *x, int n, double *acc) {
	if (i != 0) return;
	double s = acc[0];
	for (int k = 0; k < n; k++) s += (double)x[k] * (double)x[k];
	acc[0] = s;
}

/* ---- Decoding on the device (generation; internal/tensor/decode_device.go):
 * the one-query attention against a key/value cache, the cache's row
 * writes, the sessions' lengths, T5's decoder bias from them, and the draw
 * of the next token. Each mirrors its Go code as above:
 *   decode attention row     attentionFn.Forward's one-query path (QLen 1,
 *                            no dropout, the CPU backend): the keys below
 *                            vis&^3 scored by dot4's one running sum each,
 *                            the others by dot's four lanes, addBias,
 *                            maskedSoftmaxRow, then axpy4 over groups of
 *                            four keys and axpy over the rest
 *   write rows at            the sessions' copies of a step's keys and
 *                            values into their caches
 *   add ints                 lens[i]++ (and any constant)
 *   decode bucket bias       t5.Session.Append's bias of each sequence's
 *                            query against its cache
 *   sample row               generate's sampler.choose: greedy argmax;
 *                            sampleAll; topK's insertion; nucleusCandidates
 *                            and its sort; the softmax over the candidates
 *                            (math.Exp), top-p's cut and the draw, from
 *                            math/rand/v2's PCG and Rand.Float64 */

/* dot4's chain for one key: a single running sum, in order. */
KFN float k_dot_seq(const float *a, const float *b, int n) {
	float s = 0.0f;
	for (int i = 0; i < n; i++) s = s + a[i] * b[i];
	return s;
}

/* tensor's dot: four interleaved partial sums, the tail into the first. */
KFN float k_dot_lanes(const float *a, const float *b, int n) {
	float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
	int i = 0;
	for (; i + 4 <= n; i += 4) {
		s0 = s0 + a[i] * b[i];
		s1 = s1 + a[i + 1] * b[i + 1];
		s2 = s2 + a[i + 2] * b[i + 2];
		s3 = s3 + a[i + 3] * b[i + 3];
	}
	for (; i < n; i++) s0 = s0 + a[i] * b[i];
	return (s0 + s1) + (s2 + s3);
}

/* maskedSoftmaxRow: softmax of row[:vis] in place, zeros after. */
KFN void k_softmax_prefix(float *row, int cols, int vis) {
	if (vis > cols) vis = cols;
	if (vis <= 0) {
		for (int j = 0; j < cols; j++) row[j] = 0.0f;
		return;
	}
	float mx = row[0];
	for (int j = 1; j < vis; j++) mx = k_go_max(mx, row[j]);
	float sum = 0.0f;
	for (int j = 0; j < vis; j++) {
		float e = k_expf(row[j] - mx);
		row[j] = e;
		sum = sum + e;
	}
	float inv = 1.0f / sum;
	for (int j = 0; j < vis; j++) row[j] = row[j] * inv;
	for (int j = vis; j < cols; j++) row[j] = 0.0f;
}

/* One-query attention of score row bh = b*heads + h: query row b of q
 * [B, D] against keys and values rows b*klen .. b*klen+vis-1 of K, V
 * [B*klen, D] (head h's columns), vis = lens[b] + lenAdd clamped to
 * [0, klen] (at most 1 when causal); bias (NULL: none) row bh % biasRows
 * of klen values added before the softmax; the probabilities into row bh
 * of probs [B*heads, klen], the output into head h's columns of row b of
 * out [B, D]. */
KFN void k_decode_attention_row(int bh, const float *q, const float *K, const float *V, int heads, int D, int klen,
	const int *lens, int lenAdd, int causal, float scale, const float *bias, int biasRows, float *probs, float *out) {
	int b = bh / heads, h = bh - b * heads;
	int dh = D / heads;
	const float *qv = q + (long)b * D + (long)h * dh;
	float *P = probs + (long)bh * klen;
	int vis = lens[b] + lenAdd;
	if (vis < 0) vis = 0;
	if (vis > klen) vis = klen;
	if (causal && vis > 1) vis = 1;
	long base = (long)b * klen * D + (long)h * dh;
	int vis4 = vis & ~3;
	for (int j = 0; j < vis; j++) {
		const float *kj = K + base + (long)j * D;
		float s = j < vis4 ? k_dot_seq(qv, kj, dh) : k_dot_lanes(qv, kj, dh);
		P[j] = scale * s;
	}
	if (bias) {
		const float *br = bias + (long)(bh % biasRows) * klen;
		for (int j = 0; j < vis; j++) P[j] = P[j] + br[j];
	}
	k_softmax_prefix(P, klen, vis);
	float *o = out + (long)b * D + (long)h * dh;
	for (int i = 0; i < dh; i++) o[i] = 0.0f;
	int j = 0;
	for (; j + 4 <= vis; j += 4) {
		float a0 = P[j], a1 = P[j + 1], a2 = P[j + 2], a3 = P[j + 3];
		const float *x0 = V + base + (long)j * D, *x1 = x0 + D, *x2 = x1 + D, *x3 = x2 + D;
		for (int i = 0; i < dh; i++) o[i] = o[i] + (((a0 * x0[i] + a1 * x1[i]) + a2 * x2[i]) + a3 * x3[i]);
	}
	for (; j < vis; j++) {
		float a = P[j];
		const float *x = V + base + (long)j * D;
		for (int i = 0; i < dh; i++) o[i] = o[i] + a * x[i];
	}
}

/* Element i of src [n, cols] into row pos[r] of block r of dst (blocks of
 * cap rows of cols), r = i / cols. */
KFN void k_write_rows_at(int i, const float *src, int cols, const int *pos, int cap, float *dst) {
	int r = i / cols, j = i - r * cols;
	dst[((long)r * cap + pos[r]) * cols + j] = src[i];
}

/* x[i] += c (int32). */
KFN void k_add_ints(int i, int *x, int c) {
	x[i] = x[i] + c;
}

/* Element i of the decoder self-attention bias [n*heads, cap] of one
 * query per sequence at position pos[r]: row r*heads + h, key j <= pos[r]
 * gets w[rb[pos[r]-j], h] (w is buckets x heads, rb[d] the bucket of
 * distance d), the keys after it 0. */
KFN void k_decode_bucket_bias(int i, const float *w, int heads, const int *rb, const int *pos, int cap, float *y) {
	int row = i / cap, j = i - row * cap;
	int r = row / heads, h = row - r * heads;
	int p = pos[r];
	y[i] = j <= p ? w[(long)rb[p - j] * heads + h] : 0.0f;
}

/* generate's cand: a token with its logit and probability (16 bytes). */
typedef struct {
	int id;
	float logit;
	double p;
} k_cand;

/* generate's before: logit descending, then id ascending. */
KFN int k_before(const k_cand *a, const k_cand *b) {
	if (a->logit != b->logit) return a->logit > b->logit;
	return a->id < b->id;
}

/* math/rand/v2: PCG.Uint64 (next, then DXSM) and Rand.Float64 on it. */
KFN double k_pcg_float64(k_u64 *st) {
	k_u64 h, l;
	k_mul128(st[0], st[1], 2549297995355413924ull, 4865540595714422341ull, &h, &l);
	k_add128(h, l, 6364136223846793005ull, 1442695040888963407ull, &st[0], &st[1]);
	k_u64 u = k_pcg_output(st[0], st[1]);
	return (double)(u & 0x1fffffffffffffull) / 9007199254740992.0;
}

/* generate's normalizer: the largest tempered logit and the float64 sum of
 * the float32 exponentials relative to it. */
KFN float k_normalizer(const float *l, int V, float invT, double *z) {
	float mx = l[0];
	for (int j = 1; j < V; j++) mx = k_go_max(mx, l[j]);
	mx = mx * invT;
	double s = 0.0;
	for (int j = 0; j < V; j++) s += (double)k_expf(l[j] * invT - mx);
	*z = s;
	return mx;
}

/* Heap sort of c[0..n) into before's order (a strict total order: any
 * correct sort gives sort.Slice's result). */
KFN void k_sift(k_cand *c, int root, int n) {
	for (;;) {
		int child = 2 * root + 1;
		if (child >= n) return;
		if (child + 1 < n && k_before(&c[child], &c[child + 1])) child++;
		if (!k_before(&c[root], &c[child])) return;
		k_cand t = c[root];
		c[root] = c[child];
		c[child] = t;
		root = child;
	}
}

KFN void k_sort_cands(k_cand *c, int n) {
	for (int i = n / 2 - 1; i >= 0; i--) k_sift(c, i, n);
	for (int end = n - 1; end > 0; end--) {
		k_cand t = c[0];
		c[0] = c[end];
		c[end] = t;
		k_sift(c, 0, end);
	}
}

/* Row r of logits [rows, V]: the next token as generate's sampler.choose
 * draws it (-1 when the row holds a NaN, which the host reports), the
 * row's PCG state (hi, lo) at states[2r], advanced by the one draw of a
 * sampling choice (none when greedy). cands holds candCap candidates per
 * row (top_k of them with top-k, V for nucleus sampling). */
KFN void k_sample_row(int r, const float *logits, int V, float invT, int greedy, int topK, double topP, int fma,
	k_u64 *states, k_cand *cands, int candCap, int *out) {
	const float *l = logits + (long)r * V;
	for (int j = 0; j < V; j++)
		if (l[j] != l[j]) {
			out[r] = -1;
			return;
		}
	if (greedy) {
		int best = 0;
		for (int j = 1; j < V; j++)
			if (l[j] > l[best]) best = j;
		out[r] = best;
		return;
	}
	k_u64 *st = states + 2L * r;
	k_cand *c = cands + (long)r * candCap;
	int n = 0;
	if (topK > 0 && topK < V) {
		for (int j = 0; j < V; j++) {
			k_cand x;
			x.id = j;
			x.logit = l[j];
			x.p = 0.0;
			if (n == topK && !k_before(&x, &c[topK - 1])) continue;
			if (n < topK) c[n++] = x;
			else c[topK - 1] = x;
			for (int i = n - 1; i > 0 && k_before(&c[i], &c[i - 1]); i--) {
				k_cand t = c[i];
				c[i] = c[i - 1];
				c[i - 1] = t;
			}
		}
	} else if (topP < 1.0) {
		double z;
		float mx = k_normalizer(l, V, invT, &z);
		const double thrs[4] = {1e-3, 1e-5, 1e-7, 0.0};
		for (int t = 0; t < 4; t++) {
			double thr = thrs[t], mass = 0.0;
			n = 0;
			for (int j = 0; j < V; j++) {
				double e = (double)k_expf(l[j] * invT - mx);
				if (e > thr * z || thr == 0.0) {
					c[n].id = j;
					c[n].logit = l[j];
					c[n].p = 0.0;
					n++;
					mass += e;
				}
			}
			if (mass >= topP * z || thr == 0.0) break;
		}
		k_sort_cands(c, n);
	} else {
		double z;
		float mx = k_normalizer(l, V, invT, &z);
		double u = k_pcg_float64(st) * z;
		for (int j = 0; j < V; j++) {
			u -= (double)k_expf(l[j] * invT - mx);
			if (u < 0.0) {
				out[r] = j;
				return;
			}
		}
		out[r] = V - 1;
		return;
	}
	float mx = c[0].logit * invT;
	double z = 0.0;
	for (int i = 0; i < n; i++) {
		c[i].p = k_go_exp((double)(c[i].logit * invT - mx), fma);
		z += c[i].p;
	}
	if (topP < 1.0) {
		double above = 0.0;
		int m = 0;
		while (m < n && above < topP * z) {
			above += c[m].p;
			m++;
		}
		n = m;
		z = above;
	}
	double u = k_pcg_float64(st) * z;
	for (int i = 0; i < n; i++) {
		u -= c[i].p;
		if (u < 0.0) {
			out[r] = c[i].id;
			return;
		}
	}
	out[r] = c[n - 1].id;
}

/* ---- Mixed precision (backend.Precision): a GEMM's operands converted to
 * bfloat16 for cuBLAS, rounded to nearest even (NaN made quiet), as
 * backend.RoundBF16. */
KFN void k_to_bf16(int i, const float *x, unsigned short *y) {
	k_u32 u = k_bits(x[i]);
	if ((u & 0x7fffffffu) > 0x7f800000u) {
		y[i] = (unsigned short)((u | 0x00400000u) >> 16);
		return;
	}
	u = u + 0x7fffu + ((u >> 16) & 1u);
	y[i] = (unsigned short)(u >> 16);
}

#endif
