package tensor

import (
	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

// Attention's device path, in its own file: attention.go and
// attention_fused.go are the CPU paths (issue 38's fused loops).

func (f *attentionFn) temps() *devTemps { return &f.dt }

// Attention.

// onDevice reports whether this attention has a device path: every
// attention has. The one-query path without dropout (decoding against a
// cache) runs the decode kernel, which mirrors the CPU's dot products
// (not a GEMM) bit for bit; the rest runs per-head GEMMs and the softmax
// kernels. A score bias (T5's relative positions) is added by the softmax
// kernel, as the CPU's kernels path does, and its gradient is the score
// gradient before the scale, summed over the batch in order when shared.
func (f *attentionFn) onDevice() bool { return true }

// oneQuery reports whether the host takes its one-query path (QLen 1, no
// dropout), which the device mirrors with DecodeAttention.
func (f *attentionFn) oneQuery() bool {
	return f.s.QLen == 1 && (f.s.Rng == nil || f.s.DropProb == 0)
}

// heads returns the two-level batch of per-(sequence, head) products:
// A, B and C advance by the given per-sequence and per-head strides.
func heads(B, H int, outer, inner [3]int) backend.GemmBatch {
	return backend.GemmBatch{Count: B * H, Inner: H, Outer: outer, InnerStride: inner}
}

func (f *attentionFn) forwardDevice() (mat.Tensor, error) {
	s := f.s
	dev := f.dt.dev
	B, H, Tq, Tk, D, dh := s.Batch, s.Heads, s.QLen, s.KLen, f.d, f.dh
	Q, K, V := f.dt.operand(f.q), f.dt.operand(f.k), f.dt.operand(f.v)
	out := newDevVal(dev, B*Tq, D)
	n := B * H * Tq * Tk
	f.dprobs = f.dt.keep(dev.Alloc(n))
	lens := make([]int, B)
	for b := range lens {
		lens[b] = s.KLen
		if s.KeyLens != nil {
			lens[b] = s.KeyLens[b]
		}
	}
	if f.oneQuery() {
		// The CPU's one-query path: dot products over the visible keys.
		var bias backend.Buffer
		if s.Bias != nil {
			bias = f.dt.operand(s.Bias)
		}
		dev.DecodeAttention(Q, K, V, H, Tk, f.dt.ints(lens, "attention key lengths"), 0, s.Causal, f.scale,
			bias, max(f.biasRows, 1), f.dprobs, out.buf)
		return wrapDev(out, f), nil
	}
	if s.Rng != nil && s.DropProb > 0 {
		f.ddrop = f.dt.dropoutMask(s.Rng, n, s.DropProb)
	}
	// S = scale Q_h K_h^T for every (sequence, head).
	dev.Gemm(false, true, Tq, Tk, dh, f.scale, Q, 0, D, K, 0, D, 0, f.dprobs, 0, Tk,
		heads(B, H, [3]int{Tq * D, Tk * D, H * Tq * Tk}, [3]int{dh, dh, Tq * Tk}))
	vis := f.dt.keep(dev.Alloc(B * H * Tq))
	dev.AttentionVisible(f.dt.ints(lens, "attention key lengths"), H, Tq, Tk, s.Causal, vis)
	if s.Bias != nil {
		dev.BiasMaskedSoftmaxRows(f.dprobs, B*H*Tq, Tk, vis, f.dt.operand(s.Bias), f.biasRows)
	} else {
		dev.MaskedSoftmaxRows(f.dprobs, B*H*Tq, Tk, vis)
	}
	pv := f.dprobs
	if f.ddrop != nil {
		pv = dev.Alloc(n)
		defer dev.Free(pv)
		dev.Mul(f.dprobs, f.ddrop, pv)
	}
	// O_h = P'_h V_h.
	dev.Gemm(false, false, Tq, dh, Tk, 1, pv, 0, Tk, V, 0, D, 0, out.buf, 0, D,
		heads(B, H, [3]int{H * Tq * Tk, Tk * D, Tq * D}, [3]int{Tq * Tk, dh, dh}))
	return wrapDev(out, f), nil
}

func (f *attentionFn) backwardDevice(gy mat.Tensor) error {
	s := f.s
	dev := f.dt.dev
	B, H, Tq, Tk, D, dh := s.Batch, s.Heads, s.QLen, s.KLen, f.d, f.dh
	needQ, needK, needV := f.q.RequiresGrad(), f.k.RequiresGrad(), f.v.RequiresGrad()
	needB := s.Bias != nil && s.Bias.RequiresGrad()
	G := f.dt.gradIn(gy)
	n := B * H * Tq * Tk
	pv := f.dprobs
	if f.ddrop != nil {
		pv = dev.Alloc(n)
		defer dev.Free(pv)
		dev.Mul(f.dprobs, f.ddrop, pv)
	}
	var gq, gk, gv, ds backend.Buffer
	if needV { // dV = P'^T dO
		gv = dev.Alloc(B * Tk * D)
		dev.Gemm(true, false, Tk, dh, Tq, 1, pv, 0, Tk, G, 0, D, 0, gv, 0, D,
			heads(B, H, [3]int{H * Tq * Tk, Tq * D, Tk * D}, [3]int{Tq * Tk, dh, dh}))
	}
	if needQ || needK || needB {
		// dP' = dO V^T, through dropout and the softmax.
		dP := dev.Alloc(n)
		defer dev.Free(dP)
		V := f.dt.operand(f.v)
		dev.Gemm(false, true, Tq, Tk, dh, 1, G, 0, D, V, 0, D, 0, dP, 0, Tk,
			heads(B, H, [3]int{Tq * D, Tk * D, H * Tq * Tk}, [3]int{dh, dh, Tq * Tk}))
		if f.ddrop != nil {
			dev.Mul(dP, f.ddrop, dP)
		}
		if needB {
			ds = dev.Alloc(n)
			dev.SoftmaxBackwardBiasRows(f.dprobs, dP, ds, B*H*Tq, Tk, f.scale)
		} else {
			dev.SoftmaxBackwardRows(f.dprobs, dP, B*H*Tq, Tk, f.scale)
		}
		if needQ { // dQ = dS K
			gq = dev.Alloc(B * Tq * D)
			dev.Gemm(false, false, Tq, dh, Tk, 1, dP, 0, Tk, f.dt.operand(f.k), 0, D, 0, gq, 0, D,
				heads(B, H, [3]int{H * Tq * Tk, Tk * D, Tq * D}, [3]int{Tq * Tk, dh, dh}))
		}
		if needK { // dK = dS^T Q
			gk = dev.Alloc(B * Tk * D)
			dev.Gemm(true, false, Tk, dh, Tq, 1, dP, 0, Tk, f.dt.operand(f.q), 0, D, 0, gk, 0, D,
				heads(B, H, [3]int{H * Tq * Tk, Tq * D, Tk * D}, [3]int{Tq * Tk, dh, dh}))
		}
	}
	if needQ {
		accGradDev(dev, f.q, gq, B*Tq, D)
	}
	if needK {
		accGradDev(dev, f.k, gk, B*Tk, D)
	}
	if needV {
		accGradDev(dev, f.v, gv, B*Tk, D)
	}
	if needB {
		// biasGrad: the score gradients themselves when the bias is per
		// sequence, else their sum over sequences in order.
		rowLen := f.biasRows * Tk
		if rowLen != n {
			g := dev.Alloc(rowLen)
			dev.ColSums(ds, B, rowLen, g)
			dev.Free(ds)
			ds = g
		}
		accGradDev(dev, s.Bias, ds, f.biasRows, Tk)
	}
	return nil
}
