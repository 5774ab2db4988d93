package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"
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
}

type attentionFn struct {
	q, k, v mat.Tensor
	s       AttentionSpec
	d, dh   int
	scale   float32
	probs   []float32 // softmax probabilities, [B, H, QLen, KLen]
	drop    []float32 // dropout multipliers (0 or 1/(1-p)); nil without dropout
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
	}
	dh := d / s.Heads
	return run(&attentionFn{q: q, k: k, v: v, s: s, d: d, dh: dh, scale: float32(1 / math.Sqrt(float64(dh)))})
}

func (f *attentionFn) Operands() []mat.Tensor { return []mat.Tensor{f.q, f.k, f.v} }

func (f *attentionFn) keyLen(b int) int {
	if f.s.KeyLens == nil {
		return f.s.KLen
	}
	return min(max(f.s.KeyLens[b], 0), f.s.KLen)
}

func (f *attentionFn) Forward() (mat.Tensor, error) {
	s := f.s
	B, H, Tq, Tk, D, dh := s.Batch, s.Heads, s.QLen, s.KLen, f.d, f.dh
	Q, K, V := Data(f.q), Data(f.k), Data(f.v)
	out := Zeros(B*Tq, D)
	O := Data(out)
	f.probs = make([]float32, B*H*Tq*Tk)
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
	mix := func(bh int) { // O_h = dropout(P) V_h
		b, h := bh/H, bh%H
		qo, ko := b*Tq*D+h*dh, b*Tk*D+h*dh
		P := f.probs[bh*Tq*Tk : (bh+1)*Tq*Tk]
		PV := P
		if f.drop != nil {
			PV = make([]float32, len(P))
			dm := f.drop[bh*Tq*Tk : (bh+1)*Tq*Tk]
			for i, p := range P {
				PV[i] = p * dm[i]
			}
		}
		sgemm(false, false, Tq, dh, Tk, 1, PV, Tk, V[ko:], D, 0, O[qo:], D)
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
		k.MaskedSoftmaxRows(f.probs, B*H*Tq, Tk, vis)
		ParallelFor(B*H, 1, func(lo, hi int) {
			for bh := lo; bh < hi; bh++ {
				mix(bh)
			}
		})
		return wrap(out, f), nil
	}
	ParallelFor(B*H, 1, func(lo, hi int) {
		for bh := lo; bh < hi; bh++ {
			scores(bh)
			P := f.probs[bh*Tq*Tk : (bh+1)*Tq*Tk]
			for i := 0; i < Tq; i++ {
				maskedSoftmaxRow(P[i*Tk:(i+1)*Tk], visible(bh/H, i))
			}
			mix(bh)
		}
	})
	return wrap(out, f), nil
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
	var sum float32
	for j := 0; j < vis; j++ {
		e := expf(row[j] - mx)
		row[j] = e
		sum += e
	}
	inv := 1 / sum
	for j := 0; j < vis; j++ {
		row[j] *= inv
	}
	clear(row[vis:])
}

func (f *attentionFn) Backward(gy mat.Tensor) error {
	s := f.s
	B, H, Tq, Tk, D, dh := s.Batch, s.Heads, s.QLen, s.KLen, f.d, f.dh
	Q, K, V := Data(f.q), Data(f.k), Data(f.v)
	G := Data(gy)
	needQ, needK, needV := f.q.RequiresGrad(), f.k.RequiresGrad(), f.v.RequiresGrad()
	var gq, gk, gv []float32
	if needQ {
		gq = make([]float32, B*Tq*D)
	}
	if needK {
		gk = make([]float32, B*Tk*D)
	}
	if needV {
		gv = make([]float32, B*Tk*D)
	}
	ParallelFor(B*H, 1, func(lo, hi int) {
		dP := make([]float32, Tq*Tk)
		var PV []float32
		if f.drop != nil {
			PV = make([]float32, Tq*Tk)
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
			if !needQ && !needK {
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
	if needQ {
		accGrad(f.q, gq)
	}
	if needK {
		accGrad(f.k, gk)
	}
	if needV {
		accGrad(f.v, gv)
	}
	return nil
}
