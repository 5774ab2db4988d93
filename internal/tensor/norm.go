package tensor

import (
	"fmt"
	"math"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

type layerNormFn struct {
	x, g, b mat.Tensor
	eps     float32
	xhat    []float32
	rstd    []float32

	dt           devTemps
	dxhat, drstd backend.Buffer
}

// LayerNorm normalises each row of x to zero mean and unit variance
// (biased variance, eps inside the square root, as BERT), then applies
// the per-column gain g and bias b (each of x's width).
func LayerNorm(x, g, b mat.Tensor, eps float32) mat.Tensor {
	_, c := Dims(x)
	if g.Size() != c || b.Size() != c {
		panic(fmt.Sprintf("tensor.LayerNorm: width %d but gain has %d values and bias %d", c, g.Size(), b.Size()))
	}
	return run(&layerNormFn{x: x, g: g, b: b, eps: eps})
}

func (f *layerNormFn) Operands() []mat.Tensor { return []mat.Tensor{f.x, f.g, f.b} }

func (f *layerNormFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("LayerNorm", f.x, f.g, f.b); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	out := rawMatrix(r, c) // every row written below
	X, Y, G, B := Data(f.x), Data(out), Data(f.g), Data(f.b)
	f.xhat = allocRaw(r * c)
	f.rstd = allocRaw(r)
	if k, ok := kernels(); ok {
		k.LayerNormForward(X, G, B, r, c, f.eps, Y, f.xhat, f.rstd)
		return wrap(out, f), nil
	}
	ParallelFor(r, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := X[i*c : (i+1)*c]
			var sum float64
			for _, v := range x {
				sum += float64(v)
			}
			mean := sum / float64(c)
			var ss float64
			for _, v := range x {
				d := float64(v) - mean
				ss += d * d
			}
			rstd := 1 / math.Sqrt(ss/float64(c)+float64(f.eps))
			f.rstd[i] = float32(rstd)
			xh, y := f.xhat[i*c:(i+1)*c], Y[i*c:(i+1)*c]
			for j, v := range x {
				h := float32((float64(v) - mean) * rstd)
				xh[j] = h
				y[j] = h*G[j] + B[j]
			}
		}
	})
	return wrap(out, f), nil
}

func (f *layerNormFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	r, c := Dims(f.x)
	Gy, G := Data(gy), Data(f.g)
	if f.x.RequiresGrad() {
		gx := alloc(r * c)
		if k, ok := kernels(); ok {
			k.LayerNormBackward(Gy, G, f.xhat, f.rstd, r, c, gx)
		} else {
			layerNormGradX(Gy, G, f.xhat, f.rstd, r, c, gx)
		}
		accGrad(f.x, gx)
	}
	if f.g.RequiresGrad() {
		accGrad(f.g, gainGrad(Gy, f.xhat, r, c))
	}
	if f.b.RequiresGrad() {
		accGrad(f.b, colSums(Gy, r, c))
	}
	return nil
}

// gainGrad is a normalisation's gain gradient: the column sums of
// gy * xhat (rows x cols).
func gainGrad(gy, xhat []float32, r, c int) []float32 {
	prod := alloc(r * c)
	ParallelFor(r*c, 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			prod[i] = gy[i] * xhat[i]
		}
	})
	return colSums(prod, r, c)
}

// layerNormGradX is LayerNorm's input gradient on the CPU.
func layerNormGradX(Gy, G, xhat, rstd []float32, r, c int, gx []float32) {
	ParallelFor(r, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			gyr, xh, d := Gy[i*c:(i+1)*c], xhat[i*c:(i+1)*c], gx[i*c:(i+1)*c]
			var s1, s2 float32
			for j, g := range gyr {
				dh := g * G[j]
				s1 += dh
				s2 += dh * xh[j]
			}
			m1, m2 := s1/float32(c), s2/float32(c)
			rs := rstd[i]
			for j, g := range gyr {
				d[j] = rs * (g*G[j] - m1 - xh[j]*m2)
			}
		}
	})
}

type l2NormFn struct {
	x    mat.Tensor
	y    []float32
	norm []float32
	eps  float32

	dt        devTemps
	dy, dnorm backend.Buffer // the output and the norms on the device
}

// L2Normalize divides each row by its Euclidean norm (floored at 1e-12,
// as torch.nn.functional.normalize).
func L2Normalize(x mat.Tensor) mat.Tensor { return run(&l2NormFn{x: x, eps: 1e-12}) }

func (f *l2NormFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *l2NormFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("L2Normalize", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	out := zeroMatrix(r, c)
	X, Y := Data(f.x), Data(out)
	f.norm = alloc(r)
	ParallelFor(r, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := X[i*c : (i+1)*c]
			var ss float64
			for _, v := range x {
				ss += float64(v) * float64(v)
			}
			n := max(float32(math.Sqrt(ss)), f.eps)
			f.norm[i] = n
			for j, v := range x {
				Y[i*c+j] = v / n
			}
		}
	})
	f.y = Y
	return wrap(out, f), nil
}

func (f *l2NormFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	r, c := Dims(f.x)
	G := Data(gy)
	gx := alloc(r * c)
	ParallelFor(r, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			y, g, d := f.y[i*c:(i+1)*c], G[i*c:(i+1)*c], gx[i*c:(i+1)*c]
			n := f.norm[i]
			if n <= f.eps { // the floor is active: y = x / eps, linear
				for j := range d {
					d[j] = g[j] / n
				}
				continue
			}
			var dot float32
			for j := range g {
				dot += g[j] * y[j]
			}
			for j := range d {
				d[j] = (g[j] - y[j]*dot) / n
			}
		}
	})
	accGrad(f.x, gx)
	return nil
}

type rmsNormFn struct {
	x, g mat.Tensor
	eps  float32
	xhat []float32
	rstd []float32

	dt           devTemps
	dxhat, drstd backend.Buffer
}

// RMSNorm scales each row of x by the reciprocal of its root mean square
// (no mean subtracted, eps inside the square root, sum of squares in
// float64) and applies the per-column gain g: T5's layer norm, which has no
// bias.
func RMSNorm(x, g mat.Tensor, eps float32) mat.Tensor {
	_, c := Dims(x)
	if g.Size() != c {
		panic(fmt.Sprintf("tensor.RMSNorm: width %d but gain has %d values", c, g.Size()))
	}
	return run(&rmsNormFn{x: x, g: g, eps: eps})
}

func (f *rmsNormFn) Operands() []mat.Tensor { return []mat.Tensor{f.x, f.g} }

func (f *rmsNormFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("RMSNorm", f.x, f.g); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	r, c := Dims(f.x)
	if k, ok := kernels(); ok {
		out := zeroMatrix(r, c)
		f.xhat, f.rstd = alloc(r*c), alloc(r)
		k.RMSNormForward(Data(f.x), Data(f.g), r, c, f.eps, Data(out), f.xhat, f.rstd)
		return wrap(out, f), nil
	}
	// Every element of out, xhat and rstd is written below.
	out := rawMatrix(r, c)
	X, Y, G := Data(f.x), Data(out), Data(f.g)
	f.xhat = allocRaw(r * c)
	f.rstd = allocRaw(r)
	ParallelFor(r, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			x := X[i*c : (i+1)*c]
			var ss float64
			for _, v := range x {
				ss += float64(v) * float64(v)
			}
			rstd := 1 / math.Sqrt(ss/float64(c)+float64(f.eps))
			f.rstd[i] = float32(rstd)
			xh, y := f.xhat[i*c:(i+1)*c], Y[i*c:(i+1)*c]
			for j, v := range x {
				h := float32(float64(v) * rstd)
				xh[j] = h
				y[j] = h * G[j]
			}
		}
	})
	return wrap(out, f), nil
}

func (f *rmsNormFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	r, c := Dims(f.x)
	Gy, G := Data(gy), Data(f.g)
	if f.x.RequiresGrad() {
		var gx []float32
		if k, ok := kernels(); ok {
			gx = alloc(r * c)
			k.RMSNormBackward(Gy, G, f.xhat, f.rstd, r, c, gx)
		} else {
			gx = allocRaw(r * c) // every element written
			rmsNormGradX(Gy, G, f.xhat, f.rstd, r, c, gx)
		}
		accGrad(f.x, gx)
	}
	if f.g.RequiresGrad() {
		accGrad(f.g, gainGrad(Gy, f.xhat, r, c))
	}
	return nil
}

// rmsNormGradX is RMSNorm's input gradient on the CPU:
// rstd * (gy*g - xhat * mean(gy*g*xhat)).
func rmsNormGradX(Gy, G, xhat, rstd []float32, r, c int, gx []float32) {
	ParallelFor(r, 8, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			gyr, xh, d := Gy[i*c:(i+1)*c], xhat[i*c:(i+1)*c], gx[i*c:(i+1)*c]
			var s float32
			for j, g := range gyr {
				s += g * G[j] * xh[j]
			}
			m := s / float32(c)
			rs := rstd[i]
			for j, g := range gyr {
				d[j] = rs * (g*G[j] - xh[j]*m)
			}
		}
	})
}
