package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/kernel"
	"repro/internal/tensor/tensortest"
)

// attentionRun is one forward and backward of Attention on fixed inputs,
// returning the output and the gradients of q, k, v and the bias.
func attentionRun(t *testing.T, Q, K, V, G, bias []float32, s AttentionSpec, D, biasRows int, seed uint64) [][]float32 {
	t.Helper()
	B, Tq, Tk := s.Batch, s.QLen, s.KLen
	q, k, v := gradLeaf(B*Tq, D, Q), gradLeaf(B*Tk, D, K), gradLeaf(B*Tk, D, V)
	var bt *Matrix
	if bias != nil {
		bt = gradLeaf(biasRows, Tk, bias)
		s.Bias = bt
	}
	if s.DropProb > 0 {
		s.Rng = rand.New(rand.NewPCG(seed, 1))
	}
	y := Attention(q, k, v, s)
	out := [][]float32{append([]float32(nil), Data(y)...)}
	y.AccGrad(New(B*Tq, D, G))
	if err := Backward(y); err != nil {
		t.Fatal(err)
	}
	out = append(out, append([]float32(nil), GradData(q)...), append([]float32(nil), GradData(k)...), append([]float32(nil), GradData(v)...))
	if bt != nil {
		out = append(out, append([]float32(nil), GradData(bt)...))
	}
	Release(y)
	return out
}

// TestAttentionFusedBits: the fused CPU path (one call per (sequence, head)
// block, query-row tiles, kernel.Direct products) gives the per-head Sgemm
// path's bits, output and every gradient, on random shapes: odd sizes,
// key lengths (0 included), causal masks, dropout, T5's relative bias
// (shared and per sequence), unscaled scores, one query with dropout, and
// sequences long enough for several row tiles and for k slices of the
// products (Tq, Tk > 256), with both the FMA and the mul+add arithmetic.
func TestAttentionFusedBits(t *testing.T) {
	saved := fusedAttention
	defer func() { fusedAttention = saved }()
	if !saved() {
		t.Skip("not on the CPU backend")
	}
	r := rand.New(rand.NewPCG(38, 38))
	rnd := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	type shape struct{ B, H, dh, Tq, Tk int }
	var shapes []shape
	for trial := 0; trial < 60; trial++ {
		s := shape{B: 1 + r.IntN(3), H: 1 + r.IntN(3), dh: []int{1, 3, 5, 8, 16, 24, 64, 72}[r.IntN(8)], Tq: 1 + r.IntN(70)}
		s.Tk = s.Tq
		if r.IntN(3) == 0 {
			s.Tk = 1 + r.IntN(70)
		}
		shapes = append(shapes, s)
	}
	shapes = append(shapes, shape{2, 4, 64, 32, 32}, shape{1, 2, 64, 300, 300}, shape{1, 1, 16, 260, 7}, shape{1, 1, 8, 5, 290}, shape{3, 2, 32, 1, 40})
	arith := map[kernel.Arith]bool{}
	for n, sh := range shapes {
		D := sh.H * sh.dh
		s := AttentionSpec{Batch: sh.B, Heads: sh.H, QLen: sh.Tq, KLen: sh.Tk, Causal: sh.Tq == sh.Tk && r.IntN(2) == 0}
		if r.IntN(2) == 0 {
			s.KeyLens = make([]int, sh.B)
			for i := range s.KeyLens {
				s.KeyLens[i] = r.IntN(sh.Tk + 1)
			}
		}
		if r.IntN(3) == 0 {
			s.Scale = 1
		}
		if r.IntN(2) == 0 || sh.Tq == 1 {
			s.DropProb = 0.2
		}
		biasRows := []int{0, sh.H * sh.Tq, sh.B * sh.H * sh.Tq}[r.IntN(3)]
		var bias []float32
		if biasRows > 0 {
			bias = rnd(biasRows * sh.Tk)
		}
		Q, K, V, G := rnd(sh.B*sh.Tq*D), rnd(sh.B*sh.Tk*D), rnd(sh.B*sh.Tk*D), rnd(sh.B*sh.Tq*D)
		seed := r.Uint64()
		arith[kernel.ArithOf(sh.Tq, sh.Tk, sh.dh)] = true
		fusedAttention = func() bool { return false }
		want := attentionRun(t, Q, K, V, G, bias, s, D, biasRows, seed)
		fusedAttention = func() bool { return true }
		got := attentionRun(t, Q, K, V, G, bias, s, D, biasRows, seed)
		names := []string{"out", "dq", "dk", "dv", "dbias"}
		for x := range want {
			for i := range want[x] {
				if math.Float32bits(got[x][i]) != math.Float32bits(want[x][i]) {
					t.Fatalf("case %d %+v (key lens %v, causal %v, scale %v, dropout %v, bias rows %d): fused %s[%d] = %v, per-head %v",
						n, sh, s.KeyLens, s.Causal, s.Scale, s.DropProb, biasRows, names[x], i, got[x][i], want[x][i])
				}
			}
		}
	}
	if kernel.ArithOf(32, 32, 64) == kernel.FMA && !(arith[kernel.FMA] && arith[kernel.MulAdd]) {
		t.Errorf("the shapes did not cover both arithmetics: %v", arith)
	}
}

// TestGradAttentionFused checks the fused path's gradients against finite
// differences at sizes whose products take the FMA chains (more than 256
// multiply-adds a head), with a bias, causality, padding and dropout.
func TestGradAttentionFused(t *testing.T) {
	if !fusedAttention() {
		t.Skip("not on the CPU backend")
	}
	rng := rand.New(rand.NewPCG(3, 8))
	const B, H, dh, T = 2, 2, 8, 9
	for _, tc := range []struct {
		causal, bias, drop bool
	}{{false, false, false}, {true, true, false}, {false, true, true}} {
		name := fmt.Sprintf("causal=%v bias=%v dropout=%v", tc.causal, tc.bias, tc.drop)
		in := []*Matrix{param(rng, B*T, H*dh, 0.5), param(rng, B*T, H*dh, 0.5), param(rng, B*T, H*dh, 1)}
		if tc.bias {
			in = append(in, param(rng, H*T, T, 1))
		}
		gradCheck(t, "AttentionFused/"+name, in, func(in []*Matrix) mat.Tensor {
			s := AttentionSpec{Batch: B, Heads: H, QLen: T, KLen: T, KeyLens: []int{T, T - 2}, Causal: tc.causal}
			if tc.bias {
				s.Bias = in[3]
			}
			if tc.drop {
				s.DropProb, s.Rng = 0.2, rand.New(rand.NewPCG(7, 7))
			}
			return Attention(in[0], in[1], in[2], s)
		})
	}
}

// BenchmarkAttentionStep is one attention layer of the reference training
// step (64 sequences x 4 heads, 32 tokens, head width 64, dropout 0.1),
// forward and backward, fused and per-head (the Sgemm calls it replaces).
func BenchmarkAttentionStep(b *testing.B) {
	saved := fusedAttention
	defer func() { fusedAttention = saved }()
	const B, H, T, dh = 64, 4, 32, 64
	const D = H * dh
	r := rand.New(rand.NewPCG(1, 1))
	rnd := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		return x
	}
	Q, K, V, G := rnd(B*T*D), rnd(B*T*D), rnd(B*T*D), rnd(B*T*D)
	for _, fused := range []bool{true, false} {
		name := "heads"
		if fused {
			name = "fused"
		}
		b.Run(name, func(b *testing.B) {
			fusedAttention = func() bool { return fused }
			rng := rand.New(rand.NewPCG(2, 2))
			step := func() {
				q, k, v := gradLeaf(B*T, D, Q), gradLeaf(B*T, D, K), gradLeaf(B*T, D, V)
				y := Attention(q, k, v, AttentionSpec{Batch: B, Heads: H, QLen: T, KLen: T, DropProb: 0.1, Rng: rng})
				y.AccGrad(New(B*T, D, G))
				if err := Backward(y); err != nil {
					b.Fatal(err)
				}
				Release(y)
			}
			step()
			var cpu tensortest.CPUTimer
			b.ResetTimer()
			cpu.Start()
			for i := 0; i < b.N; i++ {
				step()
			}
			cpu.Report(b)
		})
	}
}
