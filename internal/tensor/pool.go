package tensor

import (
	"fmt"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

type meanPoolFn struct {
	x    mat.Tensor
	b, t int
	lens []int

	dt    devTemps
	dlens backend.Buffer
}

// MeanPool averages, for each of the b sequences in x [b*t, D], its first
// lens[s] rows (the non-padding tokens), giving [b, D]. A sequence of
// length 0 pools to zeros.
func MeanPool(x mat.Tensor, b, t int, lens []int) mat.Tensor {
	r, _ := Dims(x)
	if r != b*t || len(lens) != b {
		panic(fmt.Sprintf("tensor.MeanPool: %d rows and %d lengths for %d sequences of %d", r, len(lens), b, t))
	}
	for s, l := range lens {
		if l < 0 || l > t {
			panic(fmt.Sprintf("tensor.MeanPool: length %d of sequence %d outside [0, %d]", l, s, t))
		}
	}
	return run(&meanPoolFn{x: x, b: b, t: t, lens: append([]int(nil), lens...)})
}

func (f *meanPoolFn) Operands() []mat.Tensor { return []mat.Tensor{f.x} }

func (f *meanPoolFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("MeanPool", f.x); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	_, c := Dims(f.x)
	out := zeroMatrix(f.b, c)
	X, Y := Data(f.x), Data(out)
	ParallelFor(f.b, 1, func(lo, hi int) {
		acc := make([]float64, c)
		for s := lo; s < hi; s++ {
			n := f.lens[s]
			if n == 0 {
				continue
			}
			clear(acc)
			for i := 0; i < n; i++ {
				row := X[(s*f.t+i)*c : (s*f.t+i+1)*c]
				for j, v := range row {
					acc[j] += float64(v)
				}
			}
			for j := range acc {
				Y[s*c+j] = float32(acc[j] / float64(n))
			}
		}
	})
	return wrap(out, f), nil
}

func (f *meanPoolFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.x.RequiresGrad() {
		return nil
	}
	_, c := Dims(f.x)
	G := Data(gy)
	gx := alloc(f.b * f.t * c)
	for s := 0; s < f.b; s++ {
		n := f.lens[s]
		for i := 0; i < n; i++ {
			dst := gx[(s*f.t+i)*c : (s*f.t+i+1)*c]
			for j := range dst {
				dst[j] = G[s*c+j] / float32(n)
			}
		}
	}
	accGrad(f.x, gx)
	return nil
}

// FirstTokens returns row s*t of x [b*t, D] for each sequence s: the
// [CLS] (first-token) representation, [b, D].
func FirstTokens(x mat.Tensor, b, t int) mat.Tensor {
	idx := make([]int, b)
	for s := range idx {
		idx[s] = s * t
	}
	return Gather(x, idx)
}

// CosineMatrix returns the [Na, Nb] matrix of cosine similarities between
// the rows of a [Na, D] and of b [Nb, D].
func CosineMatrix(a, b mat.Tensor) mat.Tensor {
	return MatMul(L2Normalize(a), L2Normalize(b), false, true)
}
