// Package optim holds AdamW, written here rather than taken from spago:
// spago's optimisers keep per-parameter state as generic matrices and
// dispatch per operation, and update parameters concurrently in
// goroutine order. This one updates each element with plain float32 loops
// split into fixed ranges (each element owned by one goroutine), so a
// step is both fast and bit-reproducible. The update is PyTorch's
// torch.optim.AdamW (decoupled weight decay, bias-corrected moments, eps
// outside the square root).
package optim

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/nlpodyssey/spago/nn"

	"repro/internal/tensor"
)

// AdamWConfig holds AdamW's hyperparameters; zero fields take PyTorch's
// defaults (betas 0.9/0.999, eps 1e-8, weight decay 0.01).
type AdamWConfig struct {
	LR          float64
	Beta1       float64
	Beta2       float64
	Eps         float64
	WeightDecay float64
	// NoDecay lists parameters exempt from weight decay (BERT recipes
	// exempt biases and layer-norm weights).
	NoDecay map[*nn.Param]bool
}

// AdamW is the optimiser state for a fixed list of parameters.
type AdamW struct {
	cfg    AdamWConfig
	params []*nn.Param
	m, v   [][]float32
	step   int
}

// NewAdamW prepares AdamW for params (the list and its order are fixed
// from here on). WeightDecay < 0 is an error; use 0 for none.
func NewAdamW(params []*nn.Param, cfg AdamWConfig) (*AdamW, error) {
	if cfg.Beta1 == 0 {
		cfg.Beta1 = 0.9
	}
	if cfg.Beta2 == 0 {
		cfg.Beta2 = 0.999
	}
	if cfg.Eps == 0 {
		cfg.Eps = 1e-8
	}
	switch {
	case !(cfg.LR > 0):
		return nil, fmt.Errorf("adamw: learning rate %v must be positive", cfg.LR)
	case cfg.Beta1 < 0 || cfg.Beta1 >= 1 || cfg.Beta2 < 0 || cfg.Beta2 >= 1:
		return nil, fmt.Errorf("adamw: betas (%v, %v) must lie in [0, 1)", cfg.Beta1, cfg.Beta2)
	case cfg.WeightDecay < 0:
		return nil, fmt.Errorf("adamw: weight decay %v is negative", cfg.WeightDecay)
	}
	o := &AdamW{cfg: cfg, params: params}
	for _, p := range params {
		o.m = append(o.m, make([]float32, p.Size()))
		o.v = append(o.v, make([]float32, p.Size()))
	}
	return o, nil
}

// Steps is the number of updates done so far.
func (o *AdamW) Steps() int { return o.step }

// SetLR changes the learning rate (for schedules).
func (o *AdamW) SetLR(lr float64) { o.cfg.LR = lr }

// Step applies one update from the parameters' accumulated gradients
// (parameters without a gradient are left alone, their moments included),
// then clears the gradients.
func (o *AdamW) Step() {
	o.step++
	c := o.cfg
	bc1 := 1 - math.Pow(c.Beta1, float64(o.step))
	bc2 := 1 - math.Pow(c.Beta2, float64(o.step))
	stepSize := float32(c.LR / bc1)
	invBC2Sqrt := float32(1 / math.Sqrt(bc2))
	b1, b2 := float32(c.Beta1), float32(c.Beta2)
	eps := float32(c.Eps)
	for i, p := range o.params {
		g := tensor.GradData(p)
		if g == nil {
			continue
		}
		w := tensor.Data(p)
		decay := float32(1)
		if !c.NoDecay[p] {
			decay = float32(1 - c.LR*c.WeightDecay)
		}
		m, v := o.m[i], o.v[i]
		parallel(len(w), func(lo, hi int) {
			for j := lo; j < hi; j++ {
				gj := g[j]
				m[j] = b1*m[j] + (1-b1)*gj
				v[j] = b2*v[j] + (1-b2)*gj*gj
				denom := float32(math.Sqrt(float64(v[j])))*invBC2Sqrt + eps
				w[j] = w[j]*decay - stepSize*m[j]/denom
			}
		})
		p.ZeroGrad()
	}
}

// ZeroGrad clears every parameter's gradient.
func (o *AdamW) ZeroGrad() {
	for _, p := range o.params {
		p.ZeroGrad()
	}
}

// ClipGradNorm scales all gradients so that their global L2 norm is at
// most maxNorm, and returns the norm before clipping (summed in a fixed
// order, in float64).
func ClipGradNorm(params []*nn.Param, maxNorm float64) float64 {
	var ss float64
	for _, p := range params {
		for _, g := range tensor.GradData(p) {
			ss += float64(g) * float64(g)
		}
	}
	norm := math.Sqrt(ss)
	if norm > maxNorm && norm > 0 {
		s := float32(maxNorm / (norm + 1e-6))
		for _, p := range params {
			g := tensor.GradData(p)
			for j := range g {
				g[j] *= s
			}
		}
	}
	return norm
}

// parallel splits [0, n) into one range per processor.
func parallel(n int, f func(lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < 1<<14 || workers == 1 {
		f(0, n)
		return
	}
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		hi := min(lo+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}
