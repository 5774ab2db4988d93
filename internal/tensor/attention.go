package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

// AttentionSpec describes one fused multi-head attention call.
type AttentionSpec struct {
	Batch int // sequences in the batch
	Heads int // attention heads; the model width must be a multiple
	QLen  int // query positions per sequence (rows of q are Batch*QLen)
	KLen  int // key positions per sequence (rows of k, v are Batch*KLen)
	// KeyLens[b] is the number of real (non-padding) keys of sequence b;
	// keys at or beyond it get no attention. nil means all KLen are real.
	KeyLens []int
	// Causal stops query i from attending to keys after position i.
	Causal bool
	// DropProb is the dropout probability on the attention
	// probabilities; it applies only when Rng is not nil.
	DropProb float32
	Rng      *rand.Rand
	// Scale multiplies the scores q.k before the bias and the softmax; 0
	// means 1/sqrt(head width), the usual scaling (T5 uses 1: unscaled).
	Scale float32
	// Bias, when not nil, is added to the scaled scores before the mask
	// and the softmax (T5's relative position bias): [Heads*QLen, KLen],
	// shared by every sequence of the batch, or [Batch*Heads*QLen, KLen],
	// one per sequence; row (b*Heads + h)*QLen + i holds query i of head h.
	// Its gradient is accumulated (summed over the batch when shared, in
	// sequence order).
	Bias mat.Tensor
}

type attentionFn struct {
	q, k, v mat.Tensor
	s       AttentionSpec
	// biasRows is the number of rows of s.Bias (0 without a bias): H*QLen
	// when shared by the batch, B*H*QLen otherwise.
	biasRows int
	d, dh    int
	scale    float32
	probs    []float32 // softmax probabilities, [B, H, QLen, KLen]
	drop     []float32 // dropout multipliers (0 or 1/(1-p)); nil without dropout

	dt            devTemps
	dprobs, ddrop backend.Buffer // probs and drop on the device
}

// Attention is scaled dot-product multi-head attention over a whole batch:
// q is [Batch*QLen, D], k and v are [Batch*KLen, D] (already projected;
// head h uses columns h*D/Heads to (h+1)*D/Heads), and the result is
// [Batch*QLen, D] with the heads side by side, ready for the output
// projection. Keys past KeyLens[b] and, with Causal, keys after the query
// are masked; a query row with no visible key yields zeros.
func Attention(q, k, v mat.Tensor, s AttentionSpec) mat.Tensor {
	qr, d := Dims(q)
	kr, kd := Dims(k)
	vr, vd := Dims(v)
	switch {
	case s.Batch <= 0 || s.Heads <= 0 || s.QLen <= 0 || s.KLen <= 0:
		panic(fmt.Sprintf("tensor.Attention: bad spec batch=%d heads=%d qlen=%d klen=%d", s.Batch, s.Heads, s.QLen, s.KLen))
	case qr != s.Batch*s.QLen || kr != s.Batch*s.KLen || vr != kr:
		panic(fmt.Sprintf("tensor.Attention: q has %d rows, k %d, v %d; want %d and %d", qr, kr, vr, s.Batch*s.QLen, s.Batch*s.KLen))
	case kd != d || vd != d || d%s.Heads != 0:
		panic(fmt.Sprintf("tensor.Attention: widths q=%d k=%d v=%d with %d heads", d, kd, vd, s.Heads))
	case s.KeyLens != nil && len(s.KeyLens) != s.Batch:
		panic(fmt.Sprintf("tensor.Attention: %d key lengths for %d sequences", len(s.KeyLens), s.Batch))
	case s.DropProb < 0 || s.DropProb >= 1:
		panic(fmt.Sprintf("tensor.Attention: dropout probability %v outside [0, 1)", s.DropProb))
	case s.Scale < 0 || s.Scale != s.Scale:
		panic(fmt.Sprintf("tensor.Attention: scale %v is negative or NaN", s.Scale))
	}
	dh := d / s.Heads
	f := &attentionFn{q: q, k: k, v: v, s: s, d: d, dh: dh, scale: s.Scale}
	if f.scale == 0 {
		f.scale = float32(1 / math.Sqrt(float64(dh)))
	}
	if s.Bias != nil {
		br, bc := Dims(s.Bias)
		if bc != s.KLen || (br != s.Heads*s.QLen && br != s.Batch*s.Heads*s.QLen) {
			panic(fmt.Sprintf("tensor.Attention: bias is %dx%d, want %dx%d (shared) or %dx%d (per sequence)",
				br, bc, s.Heads*s.QLen, s.KLen, s.Batch*s.Heads*s.QLen, s.KLen))
		}
		f.biasRows = br
	}
	return run(f)
}

func (f *attentionFn) Operands() []mat.Tensor {
	if f.s.Bias != nil {
		return []mat.Tensor{f.q, f.k, f.v, f.s.Bias}
	}
	return []mat.Tensor{f.q, f.k, f.v}
}

// biasRow returns the bias added to the scores of query i of head h of
// sequence b (nil without a bias).
func (f *attentionFn) biasRow(bias []float32, bh, i int) []float32 {
	if bias == nil {
		return nil
	}
	Tq, Tk := f.s.QLen, f.s.KLen
	r := (bh*Tq + i) % f.biasRows
	return bias[r*Tk : (r+1)*Tk]
}

func (f *attentionFn) keyLen(b int) int {
	if f.s.KeyLens == nil {
		return f.s.KLen
	}
	return min(max(f.s.KeyLens[b], 0), f.s.KLen)
}

func (f *attentionFn) Forward() (mat.Tensor, error) {
	if f.onDevice() {
		if dev := deviceOf("Attention", f.q, f.k, f.v); dev != nil {
			f.dt.dev = dev
			return f.forwardDevice()
		}
	}
	s := f.s
	B, H, Tq, Tk, D, dh := s.Batch, s.Heads, s.QLen, s.KLen, f.d, f.dh
	Q, K, V := Data(f.q), Data(f.k), Data(f.v)
	var bias []float32
	if s.Bias != nil {
		bias = Data(s.Bias)
	}
	out := zeroMatrix(B*Tq, D)
	O := Data(out)
	f.probs = alloc(B * H * Tq * Tk)
	if s.Rng != nil && s.DropProb > 0 {
		// Drawn sequentially, before the parallel part, so the mask does
		// not depend on goroutine scheduling.
		f.drop = dropoutMask(s.Rng, len(f.probs), s.DropProb)
	}
	scores := func(bh int) {
		b, h := bh/H, bh%H
		qo, ko := b*Tq*D+h*dh, b*Tk*D+h*dh
		sgemm(false, true, Tq, Tk, dh, f.scale, Q[qo:], D, K[ko:], D, 0, f.probs[bh*Tq*Tk:(bh+1)*Tq*Tk], Tk)
	}
	visible := func(b, i int) int {
		vis := f.keyLen(b)
		if s.Causal {
			vis = min(vis, i+1)
		}
		return vis
	}
	// mix computes O_h = dropout(P) V_h; buf is the caller's Tq*Tk scratch
	// for the dropped probabilities (one per goroutine, reused head after
	// head).
	mix := func(bh int, buf []float32) {
		b, h := bh/H, bh%H
		qo, ko := b*Tq*D+h*dh, b*Tk*D+h*dh
		P := f.probs[bh*Tq*Tk : (bh+1)*Tq*Tk]
		PV := P
		if f.drop != nil {
			PV = buf[:len(P)]
			dm := f.drop[bh*Tq*Tk : (bh+1)*Tq*Tk]
			for i, p := range P {
				PV[i] = p * dm[i]
			}
		}
		sgemm(false, false, Tq, dh, Tk, 1, PV, Tk, V[ko:], D, 0, O[qo:], D)
	}
	mixRange := func(lo, hi int, fused func(bh int)) {
		var buf []float32
		if f.drop != nil {
			buf = allocRaw(Tq * Tk)
			defer free(buf)
		}
		for bh := lo; bh < hi; bh++ {
			if fused != nil {
				fused(bh)
			}
			mix(bh, buf)
		}
	}
	if k, ok := kernels(); ok {
		// The backend's softmax kernel takes every row of every head in
		// one call, so the three phases run one after the other.
		ParallelFor(B*H, 1, func(lo, hi int) {
			for bh := lo; bh < hi; bh++ {
				scores(bh)
			}
		})
		vis := make([]int32, B*H*Tq)
		for bh := 0; bh < B*H; bh++ {
			for i := 0; i < Tq; i++ {
				vis[bh*Tq+i] = int32(visible(bh/H, i))
			}
		}
		if bias != nil {
			k.BiasMaskedSoftmaxRows(f.probs, B*H*Tq, Tk, vis, bias, f.biasRows)
		} else {
			k.MaskedSoftmaxRows(f.probs, B*H*Tq, Tk, vis)
		}
		ParallelFor(B*H, 1, func(lo, hi int) { mixRange(lo, hi, nil) })
		return wrap(out, f), nil
	}
	if Tq == 1 && f.drop == nil {
		// One query per sequence (a decoding step against a key/value
		// cache): dot products over the visible keys only. Packing K and V
		// for a one-row sgemm per head would cost more than the products.
		ParallelFor(B*H, 8, func(lo, hi int) {
			kt := allocRaw(16 * dh)
			defer free(kt)
			for bh := lo; bh < hi; bh++ {
				b, h := bh/H, bh%H
				q := Q[b*D+h*dh : b*D+h*dh+dh]
				P := f.probs[bh*Tk : (bh+1)*Tk]
				vis := visible(b, 0)
				key := func(X []float32, j int) []float32 { return X[(b*Tk+j)*D+h*dh : (b*Tk+j)*D+h*dh+dh] }
				j := scoreKeys(q, K, b*Tk*D+h*dh, D, vis&^3, f.scale, P, kt)
				for ; j+4 <= vis; j += 4 {
					s0, s1, s2, s3 := dot4(q, key(K, j), key(K, j+1), key(K, j+2), key(K, j+3))
					P[j], P[j+1], P[j+2], P[j+3] = f.scale*s0, f.scale*s1, f.scale*s2, f.scale*s3
				}
				for ; j < vis; j++ {
					P[j] = f.scale * dot(q, key(K, j))
				}
				if br := f.biasRow(bias, bh, 0); br != nil {
					addBias(P, br, vis)
				}
				maskedSoftmaxRow(P, vis)
				o := O[b*D+h*dh : b*D+h*dh+dh]
				j = 0
				for ; j+4 <= vis; j += 4 {
					axpy4(P[j], P[j+1], P[j+2], P[j+3], key(V, j), key(V, j+1), key(V, j+2), key(V, j+3), o)
				}
				for ; j < vis; j++ {
					axpy(P[j], key(V, j), o)
				}
			}
		})
		return wrap(out, f), nil
	}
	if fusedAttention() {
		f.forwardFused(Q, K, V, bias, O, visible)
		return wrap(out, f), nil
	}
	// One (sequence, head) block at a time: its scores, bias, mask and
	// softmax stay in cache for the value product.
	ParallelFor(B*H, 1, func(lo, hi int) {
		mixRange(lo, hi, func(bh int) {
			scores(bh)
			P := f.probs[bh*Tq*Tk : (bh+1)*Tq*Tk]
			for i := 0; i < Tq; i++ {
				row, vis := P[i*Tk:(i+1)*Tk], visible(bh/H, i)
				if br := f.biasRow(bias, bh, i); br != nil {
					addBias(row, br, vis)
				}
				maskedSoftmaxRow(row, vis)
			}
		})
	})
	return wrap(out, f), nil
}

// dot is the inner product of two equally long vectors, in four
// interleaved partial sums (fixed order).
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dot4 is the inner products of q with four vectors of its length, q
// read once for all four.
func dot4(q, k0, k1, k2, k3 []float32) (s0, s1, s2, s3 float32) {
	n := len(q)
	k0, k1, k2, k3 = k0[:n], k1[:n], k2[:n], k3[:n]
	for i, x := range q {
		s0 += x * k0[i]
		s1 += x * k1[i]
		s2 += x * k2[i]
		s3 += x * k3[i]
	}
	return s0, s1, s2, s3
}

// axpy4 adds a0*x0 + a1*x1 + a2*x2 + a3*x3 to y, y read and written once
// (eight columns at a time where the CPU has AVX2, same bits).
func axpy4(a0, a1, a2, a3 float32, x0, x1, x2, x3, y []float32) {
	n := len(y)
	x0, x1, x2, x3 = x0[:n], x1[:n], x2[:n], x3[:n]
	if axpy4Vec != nil && n >= 8 {
		a := [4]float32{a0, a1, a2, a3}
		v := n &^ 7
		axpy4Vec(&a, &x0[0], &x1[0], &x2[0], &x3[0], &y[0], v)
		x0, x1, x2, x3, y = x0[v:], x1[v:], x2[v:], x3[v:], y[v:]
	}
	for i := range y {
		y[i] += a0*x0[i] + a1*x1[i] + a2*x2[i] + a3*x3[i]
	}
}

// axpy adds alpha*x to y.
func axpy(alpha float32, x, y []float32) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] += alpha * v
	}
}

// addBias adds bias to the first vis entries of row (at most len(row)):
// the masked ones are zeroed by the softmax anyway.
func addBias(row, bias []float32, vis int) {
	vis = min(vis, len(row))
	for j := 0; j < vis; j++ {
		row[j] += bias[j]
	}
}

// maskedSoftmaxRow turns row into softmax(row[:vis]) followed by zeros.
func maskedSoftmaxRow(row []float32, vis int) {
	if vis <= 0 {
		clear(row)
		return
	}
	mx := row[0]
	for _, x := range row[1:vis] {
		mx = max(mx, x)
	}
	expSub(row[:vis], mx) // row[j] = expf(row[j] - mx), vectorised
	var sum float32
	for _, e := range row[:vis] {
		sum += e
	}
	inv := 1 / sum
	for j := 0; j < vis; j++ {
		row[j] *= inv
	}
	clear(row[vis:])
}

func (f *attentionFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	s := f.s
	B, H, Tq, Tk, D := s.Batch, s.Heads, s.QLen, s.KLen, f.d
	Q, K, V := Data(f.q), Data(f.k), Data(f.v)
	G := Data(gy)
	needQ, needK, needV := f.q.RequiresGrad(), f.k.RequiresGrad(), f.v.RequiresGrad()
	needB := s.Bias != nil && s.Bias.RequiresGrad()
	var gq, gk, gv, dsAll []float32
	if needB {
		// The score gradients of every (sequence, head), kept so the
		// shared bias's gradient can be summed over sequences in order.
		dsAll = alloc(B * H * Tq * Tk)
	}
	if needQ {
		gq = alloc(B * Tq * D)
	}
	if needK {
		gk = alloc(B * Tk * D)
	}
	if needV {
		gv = alloc(B * Tk * D)
	}
	if fusedAttention() {
		f.backwardFused(Q, K, V, G, gq, gk, gv, dsAll)
	} else {
		f.backwardHeads(Q, K, V, G, gq, gk, gv, dsAll)
	}
	if needQ {
		accGrad(f.q, gq)
	}
	if needK {
		accGrad(f.k, gk)
	}
	if needV {
		accGrad(f.v, gv)
	}
	if needB {
		accGrad(s.Bias, f.biasGrad(dsAll))
	}
	return nil
}

// backwardHeads is Backward's per-head formulation: one Sgemm call per
// product of each (sequence, head).
func (f *attentionFn) backwardHeads(Q, K, V, G, gq, gk, gv, dsAll []float32) {
	s := f.s
	B, H, Tq, Tk, D, dh := s.Batch, s.Heads, s.QLen, s.KLen, f.d, f.dh
	needQ, needK, needV, needB := gq != nil, gk != nil, gv != nil, dsAll != nil
	ParallelFor(B*H, 1, func(lo, hi int) {
		dP := allocRaw(Tq * Tk) // written whole by sgemm for each head
		defer free(dP)
		var PV []float32
		if f.drop != nil {
			PV = allocRaw(Tq * Tk)
			defer free(PV)
		}
		for bh := lo; bh < hi; bh++ {
			b, h := bh/H, bh%H
			P := f.probs[bh*Tq*Tk : (bh+1)*Tq*Tk]
			qo, ko := b*Tq*D+h*dh, b*Tk*D+h*dh
			var dm []float32
			pv := P
			if f.drop != nil {
				dm = f.drop[bh*Tq*Tk : (bh+1)*Tq*Tk]
				for i, p := range P {
					PV[i] = p * dm[i]
				}
				pv = PV
			}
			if needV { // dV = P'^T dO
				sgemm(true, false, Tk, dh, Tq, 1, pv, Tk, G[qo:], D, 0, gv[ko:], D)
			}
			if !needQ && !needK && !needB {
				continue
			}
			// dP' = dO V^T, then through dropout and the softmax.
			sgemm(false, true, Tq, Tk, dh, 1, G[qo:], D, V[ko:], D, 0, dP, Tk)
			if dm != nil {
				for i := range dP {
					dP[i] *= dm[i]
				}
			}
			for i := 0; i < Tq; i++ {
				pr, dr := P[i*Tk:(i+1)*Tk], dP[i*Tk:(i+1)*Tk]
				var dot float32
				for j, p := range pr {
					dot += p * dr[j]
				}
				if needB {
					ds := dsAll[bh*Tq*Tk+i*Tk : bh*Tq*Tk+(i+1)*Tk]
					for j, p := range pr {
						ds[j] = p * (dr[j] - dot)
					}
				}
				for j, p := range pr {
					dr[j] = p * (dr[j] - dot) * f.scale
				}
			}
			if needQ { // dQ = dS K
				sgemm(false, false, Tq, dh, Tk, 1, dP, Tk, K[ko:], D, 0, gq[qo:], D)
			}
			if needK { // dK = dS^T Q
				sgemm(true, false, Tk, dh, Tq, 1, dP, Tk, Q[qo:], D, 0, gk[ko:], D)
			}
		}
	})
}

// biasGrad sums the score gradients ds ([B*H*Tq, Tk]) into the bias's
// shape: itself when the bias is per sequence, the sum over sequences in
// order when it is shared.
func (f *attentionFn) biasGrad(ds []float32) []float32 {
	rowLen := f.biasRows * f.s.KLen
	if rowLen == len(ds) {
		return ds
	}
	g := alloc(rowLen)
	ParallelFor(rowLen, 4096, func(lo, hi int) {
		for b := 0; b < f.s.Batch; b++ {
			src := ds[b*rowLen+lo : b*rowLen+hi]
			dst := g[lo:hi]
			for j, v := range src {
				dst[j] += v
			}
		}
	})
	return g
}
