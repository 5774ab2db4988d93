package tensor

import (
	"fmt"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

// IgnoreIndex marks a target row that CrossEntropy skips (padding, tokens
// that MLM did not mask), as PyTorch's default.
const IgnoreIndex = -100

type sumFn struct {
	x    mat.Tensor
	mean bool
	dt   devTemps
}

// Sum returns the 1x1 sum of all elements (float64 accumulation, fixed
// order).
func Sum(x mat.Tensor) mat.Tensor { return run(&sumFn{x: x}) }

// Mean returns the 1x1 mean of all elements.
func Mean(x mat.Tensor) mat.Tensor { return run(&sumFn{x: x, mean: true}) }

func (f *sumFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *sumFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("Sum", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	var s float64
	for _, v := range Data(f.x) {
		s += float64(v)
	}
	if f.mean {
		s /= float64(f.x.Size())
	}
	return wrap(New(1, 1, []float32{float32(s)}), f), nil
}

func (f *sumFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	g := Data(gy)[0]
	if f.mean {
		g /= float32(f.x.Size())
	}
	gx := alloc(f.x.Size())
	for i := range gx {
		gx[i] = g
	}
	accGrad(f.x, gx)
	return nil
}

type crossEntropyFn struct {
	x       mat.Tensor
	targets []int
	probs   []float32
	count   int

	dt               devTemps
	dprobs, dtargets backend.Buffer
}

// CrossEntropy returns the 1x1 mean over rows of -log softmax(x)[target]
// for logits x [N, C] and N targets; rows whose target is IgnoreIndex are
// skipped (the mean is over the others; with none left the loss is 0).
// A target outside [0, C) that is not IgnoreIndex panics: loss helpers
// validate their targets.
func CrossEntropy(x mat.Tensor, targets []int) mat.Tensor {
	r, c := Dims(x)
	if len(targets) != r {
		panic(fmt.Sprintf("tensor.CrossEntropy: %d targets for %d rows", len(targets), r))
	}
	for i, t := range targets {
		if t != IgnoreIndex && (t < 0 || t >= c) {
			panic(fmt.Sprintf("tensor.CrossEntropy: target %d of row %d outside [0, %d)", t, i, c))
		}
	}
	return run(&crossEntropyFn{x: x, targets: append([]int(nil), targets...)})
}

func (f *crossEntropyFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *crossEntropyFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("CrossEntropy", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	X := Data(f.x)
	f.probs = allocRaw(r * c) // every row written below
	losses := make([]float64, r)
	ParallelFor(r, 4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			lp := f.probs[i*c : (i+1)*c]
			if f.targets[i] == IgnoreIndex {
				clear(lp)
				continue
			}
			// The probabilities expf(v - lse) in one pass: the bits of
			// expf(lp[j] - 0) for the log-probability lp[j] = v - lse
			// (a - 0 is a, bit for bit, NaNs included).
			x := X[i*c : (i+1)*c]
			lse := logSumExp(x)
			losses[i] = -float64(x[f.targets[i]] - lse)
			expSubTo(lp, x, lse)
		}
	})
	var s float64
	for i, l := range losses { // fixed order
		if f.targets[i] != IgnoreIndex {
			s += l
			f.count++
		}
	}
	if f.count > 0 {
		s /= float64(f.count)
	}
	return wrap(New(1, 1, []float32{float32(s)}), f), nil
}

func (f *crossEntropyFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() || f.count == 0 {
		return nil
	}
	r, c := Dims(f.x)
	g := Data(gy)[0] / float32(f.count)
	gx := allocRaw(r * c) // every row written below
	ParallelFor(r, 4, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			t := f.targets[i]
			d, p := gx[i*c:(i+1)*c], f.probs[i*c:(i+1)*c]
			if t == IgnoreIndex {
				clear(d)
				continue
			}
			mulScalar(d, p, g) // d[j] = g * p[j], eight lanes at a time
			d[t] -= g
		}
	})
	accGrad(f.x, gx)
	return nil
}

type mseFn struct {
	x      mat.Tensor
	target []float32

	dt      devTemps
	dtarget backend.Buffer
}

// MSE returns the 1x1 mean of (x - target)^2 over all elements of x,
// target holding one value per element (row-major).
func MSE(x mat.Tensor, target []float32) mat.Tensor {
	if len(target) != x.Size() {
		panic(fmt.Sprintf("tensor.MSE: %d targets for %d values", len(target), x.Size()))
	}
	return run(&mseFn{x: x, target: append([]float32(nil), target...)})
}

func (f *mseFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *mseFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("MSE", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	var s float64
	for i, v := range Data(f.x) {
		d := float64(v) - float64(f.target[i])
		s += d * d
	}
	return wrap(New(1, 1, []float32{float32(s / float64(len(f.target)))}), f), nil
}

func (f *mseFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	g := Data(gy)[0] * 2 / float32(len(f.target))
	X := Data(f.x)
	gx := alloc(len(X))
	for i, v := range X {
		gx[i] = g * (v - f.target[i])
	}
	accGrad(f.x, gx)
	return nil
}
