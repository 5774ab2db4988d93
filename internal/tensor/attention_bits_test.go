package tensor

import (
	"math"
	"math/rand/v2"
	"testing"
)

// refAttention is Attention's CPU arithmetic written out per head (the
// per-head products of the unfused formulation, fresh buffers for each):
// the output and the gradients of q, k, v and the bias for output
// gradient g, given the dropout multipliers drop (nil without dropout).
func refAttention(Q, K, V, bias, G, drop []float32, s AttentionSpec, D, biasRows int) (out, gq, gk, gv, gb []float32) {
	B, H, Tq, Tk := s.Batch, s.Heads, s.QLen, s.KLen
	dh := D / H
	scale := s.Scale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(dh)))
	}
	out = make([]float32, B*Tq*D)
	gq, gk, gv = make([]float32, B*Tq*D), make([]float32, B*Tk*D), make([]float32, B*Tk*D)
	ds := make([]float32, B*H*Tq*Tk)
	for bh := 0; bh < B*H; bh++ {
		b, h := bh/H, bh%H
		qo, ko := b*Tq*D+h*dh, b*Tk*D+h*dh
		P := make([]float32, Tq*Tk)
		sgemm(false, true, Tq, Tk, dh, scale, Q[qo:], D, K[ko:], D, 0, P, Tk)
		for i := 0; i < Tq; i++ {
			vis := Tk
			if s.KeyLens != nil {
				vis = min(max(s.KeyLens[b], 0), Tk)
			}
			if s.Causal {
				vis = min(vis, i+1)
			}
			row := P[i*Tk : (i+1)*Tk]
			if bias != nil {
				r := (bh*Tq + i) % biasRows
				addBias(row, bias[r*Tk:(r+1)*Tk], vis)
			}
			maskedSoftmaxRow(row, vis)
		}
		PV := append([]float32(nil), P...)
		if drop != nil {
			for i := range PV {
				PV[i] *= drop[bh*Tq*Tk+i]
			}
		}
		sgemm(false, false, Tq, dh, Tk, 1, PV, Tk, V[ko:], D, 0, out[qo:], D)
		sgemm(true, false, Tk, dh, Tq, 1, PV, Tk, G[qo:], D, 0, gv[ko:], D)
		dP := make([]float32, Tq*Tk)
		sgemm(false, true, Tq, Tk, dh, 1, G[qo:], D, V[ko:], D, 0, dP, Tk)
		if drop != nil {
			for i := range dP {
				dP[i] *= drop[bh*Tq*Tk+i]
			}
		}
		for i := 0; i < Tq; i++ {
			pr, dr := P[i*Tk:(i+1)*Tk], dP[i*Tk:(i+1)*Tk]
			var dot float32
			for j, p := range pr {
				dot += p * dr[j]
			}
			for j, p := range pr {
				ds[bh*Tq*Tk+i*Tk+j] = p * (dr[j] - dot)
				dr[j] = p * (dr[j] - dot) * scale
			}
		}
		sgemm(false, false, Tq, dh, Tk, 1, dP, Tk, K[ko:], D, 0, gq[qo:], D)
		sgemm(true, false, Tk, dh, Tq, 1, dP, Tk, Q[qo:], D, 0, gk[ko:], D)
	}
	if bias != nil && biasRows*Tk == len(ds) {
		gb = ds // one bias row per sequence: the score gradients themselves
	} else if bias != nil {
		gb = make([]float32, biasRows*Tk)
		for b := 0; b < len(ds)/len(gb); b++ {
			for j := range gb {
				gb[j] += ds[b*len(gb)+j]
			}
		}
	}
	return out, gq, gk, gv, gb
}

// TestAttentionBits: the attention operator (one call per (sequence, head)
// block, buffers reused) gives the per-head formulation's bits, forward and
// backward, on random shapes with masks, causality, dropout and both bias
// layouts, several steps in a row so reused buffers are exercised.
func TestAttentionBits(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 21))
	rnd := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	for trial := 0; trial < 40; trial++ {
		B, H := 1+r.IntN(4), 1+r.IntN(4)
		dh := []int{1, 3, 8, 16, 64}[r.IntN(5)]
		Tq := 1 + r.IntN(40)
		Tk := Tq
		if r.IntN(3) == 0 {
			Tk = 1 + r.IntN(40)
		}
		D := H * dh
		s := AttentionSpec{Batch: B, Heads: H, QLen: Tq, KLen: Tk, Causal: Tq == Tk && r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			s.KeyLens = make([]int, B)
			for i := range s.KeyLens {
				s.KeyLens[i] = r.IntN(Tk + 1)
			}
		}
		if r.IntN(3) == 0 {
			s.Scale = 1
		}
		biasRows := 0
		var bias []float32
		switch r.IntN(3) {
		case 1:
			biasRows = H * Tq
		case 2:
			biasRows = B * H * Tq
		}
		if biasRows > 0 {
			bias = rnd(biasRows * Tk)
		}
		seed := r.Uint64()
		if r.IntN(2) == 0 {
			s.DropProb = 0.25
		}
		Q, K, V, G := rnd(B*Tq*D), rnd(B*Tk*D), rnd(B*Tk*D), rnd(B*Tq*D)
		for step := 0; step < 2; step++ {
			q, k, v := gradLeaf(B*Tq, D, Q), gradLeaf(B*Tk, D, K), gradLeaf(B*Tk, D, V)
			ss := s
			var bt *Matrix
			if bias != nil {
				bt = gradLeaf(biasRows, Tk, bias)
				ss.Bias = bt
			}
			var drop []float32
			if s.DropProb > 0 {
				ss.Rng = rand.New(rand.NewPCG(seed, 1))
				drop = dropoutMask(rand.New(rand.NewPCG(seed, 1)), B*H*Tq*Tk, s.DropProb)
			}
			y := Attention(q, k, v, ss)
			got := append([]float32(nil), Data(y)...)
			y.AccGrad(New(B*Tq, D, G))
			if err := Backward(y); err != nil {
				t.Fatal(err)
			}
			out, gq, gk, gv, gb := refAttention(Q, K, V, bias, G, drop, s, D, biasRows)
			check := func(name string, got, want []float32) {
				t.Helper()
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("trial %d step %d (%+v, dh %d, bias rows %d): %s[%d] = %v, per-head formulation %v",
							trial, step, s, dh, biasRows, name, i, got[i], want[i])
					}
				}
			}
			check("out", got, out)
			check("dq", GradData(q), gq)
			check("dk", GradData(k), gk)
			check("dv", GradData(v), gv)
			if bt != nil {
				check("dbias", GradData(bt), gb)
			}
			Release(y)
		}
	}
}
