// Package optim holds the optimiser every training stage uses: AdamW with
// the linear warm-up/decay schedule and global-norm gradient clipping.
//
// It is written here rather than taken from spago: spago's optimisers keep
// per-parameter state as generic matrices, dispatch per operation and update
// parameters concurrently in goroutine order. This AdamW works on plain
// float32 slices split into fixed ranges (each element owned by one
// goroutine), so a step is fast and bit-reproducible, and its state (the
// moments and step counts) is exported so that the trainer can checkpoint
// and resume it exactly. The update is PyTorch's torch.optim.AdamW
// (decoupled weight decay, bias-corrected moments, eps outside the square
// root); golden tests replay trajectories computed by PyTorch.
package optim

import (
	"fmt"
	"math"
	"repro/internal/tensor"

	"repro/internal/tensor/backend"
)

// AdamW is the optimiser state for a fixed list of parameters.
type AdamW struct {
	Beta1, Beta2, Eps float64
	// M and V are the first and second moments, one slice per parameter.
	M, V [][]float32
	// T counts the updates of each parameter (for bias correction); as in
	// PyTorch a parameter without a gradient is skipped and not counted.
	T []int
}

// NewAdamW allocates moments for parameters of the given sizes. Zero betas
// and eps take PyTorch's defaults (0.9, 0.999, 1e-8).
func NewAdamW(sizes []int, beta1, beta2, eps float64) (*AdamW, error) {
	if beta1 == 0 {
		beta1 = 0.9
	}
	if beta2 == 0 {
		beta2 = 0.999
	}
	if eps == 0 {
		eps = 1e-8
	}
	if beta1 < 0 || beta1 >= 1 || beta2 < 0 || beta2 >= 1 {
		return nil, fmt.Errorf("adamw: betas (%g, %g) must lie in [0, 1)", beta1, beta2)
	}
	if eps < 0 {
		return nil, fmt.Errorf("adamw: eps %g is negative", eps)
	}
	a := &AdamW{Beta1: beta1, Beta2: beta2, Eps: eps, M: make([][]float32, len(sizes)), V: make([][]float32, len(sizes)), T: make([]int, len(sizes))}
	for i, n := range sizes {
		a.M[i] = make([]float32, n)
		a.V[i] = make([]float32, n)
	}
	return a, nil
}

// Step applies one update with learning rate lr; weightDecay[i] is the
// decay of parameter i (0 for biases and LayerNorm weights by convention).
// A nil grads[i] skips parameter i entirely (PyTorch's grad-is-None rule).
func (a *AdamW) Step(params, grads [][]float32, lr float64, weightDecay []float64) {
	b1, b2 := float32(a.Beta1), float32(a.Beta2)
	eps := float32(a.Eps)
	for i, p := range params {
		g := grads[i]
		if g == nil {
			continue
		}
		decay, stepSize, sqrtBC2 := a.count(i, lr, weightDecay[i])
		m, v := a.M[i], a.V[i]
		if k, ok := backend.KernelsOf(backend.Current()); ok {
			k.AdamW(p, g, m, v, decay, b1, b2, stepSize, sqrtBC2, eps)
			continue
		}
		c := adamwCoef{decay, b1, 1 - b1, b2, 1 - b2, stepSize, sqrtBC2, eps}
		tensor.ParallelFor(len(p), 1<<15, func(lo, hi int) {
			adamwUpdate(p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], c)
		})
	}
}

// adamwCoef holds an update's coefficients in the order the assembly reads
// them: decay, b1, 1-b1, b2, 1-b2, stepSize, sqrtBC2, eps (each difference
// rounded to float32, as the scalar loop's). It is passed by value: a
// pointer passed through the adamwVec variable would escape, one heap
// allocation per band and step.
type adamwCoef [8]float32

// adamwUpdate applies the update to every element of p (g, m and v at
// least as long): eight lanes at a time where the CPU has AVX2 (adamwVec),
// each lane doing adamwScalar's operations in its order with its rounding
// (no FMA), the remaining elements by adamwScalar, so every element gets
// adamwScalar's bits; TestAdamWVecBits checks it.
func adamwUpdate(p, g, m, v []float32, c adamwCoef) {
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	j := 0
	if adamwVec != nil && len(p) >= 8 {
		j = len(p) &^ 7
		nodecay := 0
		if c[0] == 1 {
			nodecay = 1
		}
		adamwVec(&p[0], &g[0], &m[0], &v[0], j, c, nodecay)
	}
	adamwScalar(p[j:], g[j:], m[j:], v[j:], c)
}

// adamwVec, where the CPU has AVX2, is adamwUpdate on the first n (a
// multiple of 8, > 0) elements (p, g, m and v not overlapping); nodecay = 1
// skips the decay multiply, as adamwScalar does when the decay is 1. (p*1
// would only quiet a signalling NaN, which the final subtraction quiets
// anyway, so no test can tell; the skip keeps the two codes alike.)
var adamwVec func(p, g, m, v *float32, n int, c adamwCoef, nodecay int)

// adamwScalar is PyTorch's AdamW update of each element of p, the
// reference adamwVec matches bit for bit.
func adamwScalar(p, g, m, v []float32, c adamwCoef) {
	decay, b1, b2, stepSize, sqrtBC2, eps := c[0], c[1], c[3], c[5], c[6], c[7]
	g, m, v = g[:len(p)], m[:len(p)], v[:len(p)]
	for j := range p {
		if decay != 1 {
			p[j] *= decay
		}
		gj := g[j]
		m[j] = b1*m[j] + (1-b1)*gj
		v[j] = b2*v[j] + (1-b2)*gj*gj
		denom := float32(math.Sqrt(float64(v[j])))/sqrtBC2 + eps
		p[j] -= stepSize * m[j] / denom
	}
}

// count counts an update of parameter i and returns its coefficients:
// the weight-decay factor, lr over the first moment's bias correction and
// the square root of the second's.
func (a *AdamW) count(i int, lr, weightDecay float64) (decay, stepSize, sqrtBC2 float32) {
	a.T[i]++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.T[i]))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.T[i]))
	return float32(1 - lr*weightDecay), float32(lr / bc1), float32(math.Sqrt(bc2))
}

// LinearSchedule is Hugging Face's get_linear_schedule_with_warmup: the
// learning-rate multiplier for optimizer update number step (0-based) rises
// linearly from 0 to 1 over warmup updates, then falls linearly to 0 at
// total. As in HF (scheduler.step() after optimizer.step()), update 0 uses
// multiplier 0 when warmup > 0.
func LinearSchedule(step, warmup, total int) float64 {
	if step < warmup {
		return float64(step) / float64(max(1, warmup))
	}
	return math.Max(0, float64(total-step)/float64(max(1, total-warmup)))
}

// ClipGradNorm scales the gradients so their global L2 norm is at most
// maxNorm (PyTorch's clip_grad_norm_: coefficient maxNorm/(norm+1e-6),
// applied only when below 1) and returns the norm before clipping. The
// norm is accumulated in float64 in slice order, so it is reproducible.
// maxNorm <= 0 only measures.
func ClipGradNorm(grads [][]float32, maxNorm float64) float64 {
	var ss float64
	for _, g := range grads {
		for _, v := range g {
			ss += float64(v) * float64(v)
		}
	}
	norm := math.Sqrt(ss)
	if maxNorm > 0 && !math.IsNaN(norm) {
		if c := maxNorm / (norm + 1e-6); c < 1 {
			cf := float32(c)
			for _, g := range grads {
				for i := range g {
					g[i] *= cf
				}
			}
		}
	}
	return norm
}
