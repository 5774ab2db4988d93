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

#endif
