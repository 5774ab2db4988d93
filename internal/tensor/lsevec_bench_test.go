package tensor

import (
	"math"
	"math/rand/v2"
	"testing"

	"repro/internal/tensor/tensortest"
)

// lmLogits are 64 rows of GPT-2's vocabulary (50257), N(0, 3) values: the
// causal-LM step's logits in miniature.
func lmLogits() (r, c int, x []float32) {
	r, c = 64, 50257
	rng := rand.New(rand.NewPCG(5, 5))
	x = make([]float32, r*c)
	for i := range x {
		x[i] = float32(3 * rng.NormFloat64())
	}
	return r, c, x
}

// logSoftmaxRowScalar is logSoftmaxRow before the vector paths (the row
// max in four Go chains, math.Exp one element at a time).
func logSoftmaxRowScalar(x, y []float32) {
	mx := maxOfGo(x)
	lse := mx + float32(math.Log(expSumRef(x, mx)))
	for j, v := range x {
		y[j] = v - lse
	}
}

// BenchmarkLogSoftmaxRow: logSoftmaxRow over 64 rows of 50257 on one
// goroutine (the row max, the exponential sum and the subtraction), and
// the scalar code it replaces.
func BenchmarkLogSoftmaxRow(b *testing.B) {
	r, c, x := lmLogits()
	y := make([]float32, len(x))
	for _, bc := range []struct {
		name string
		row  func(x, y []float32)
	}{{"vector", logSoftmaxRow}, {"scalar", logSoftmaxRowScalar}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(4 * len(x)))
			for i := 0; i < b.N; i++ {
				for k := 0; k < r; k++ {
					bc.row(x[k*c:(k+1)*c], y[k*c:(k+1)*c])
				}
			}
		})
	}
}

// BenchmarkCrossEntropyLM: CrossEntropy's forward and backward over the
// 64 x 50257 logits (ParallelFor over rows; cpu-s/op is all threads).
func BenchmarkCrossEntropyLM(b *testing.B) {
	r, c, x := lmLogits()
	targets := make([]int, r)
	for i := range targets {
		targets[i] = (i * 7919) % c
	}
	step := func() {
		h := gradLeaf(r, c, x)
		loss := CrossEntropy(h, targets)
		if err := Backward(loss); err != nil {
			b.Fatal(err)
		}
		Release(loss)
	}
	step()
	var cpu tensortest.CPUTimer
	b.ResetTimer()
	cpu.Start()
	for i := 0; i < b.N; i++ {
		step()
	}
	cpu.Report(b)
}
