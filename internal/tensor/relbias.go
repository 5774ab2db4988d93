package tensor

import (
	"fmt"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/tensor/backend"
)

type bucketBiasFn struct {
	w       mat.Tensor
	buckets []int
	q, k    int

	dt       devTemps
	dbuckets backend.Buffer
}

// BucketBias expands a per-bucket, per-head table w [buckets, Heads] (T5's
// relative_attention_bias, Hugging Face's layout) into the attention score
// bias [Heads*q, k] that AttentionSpec.Bias takes: row h*q+i, column j holds
// w[buckets[i*k+j], h]. buckets has q*k entries (the bucket of key j seen
// from query i). The gradient scatter-adds into w in row-major output
// order, so it is reproducible.
func BucketBias(w mat.Tensor, buckets []int, q, k int) mat.Tensor {
	nb, _ := Dims(w)
	if len(buckets) != q*k {
		panic(fmt.Sprintf("tensor.BucketBias: %d buckets for %dx%d positions", len(buckets), q, k))
	}
	for p, b := range buckets {
		if b < 0 || b >= nb {
			panic(fmt.Sprintf("tensor.BucketBias: bucket %d (position %d) outside [0, %d)", b, p, nb))
		}
	}
	return run(&bucketBiasFn{w: w, buckets: append([]int(nil), buckets...), q: q, k: k})
}

func (f *bucketBiasFn) Operands() []mat.Tensor { return []mat.Tensor{f.w} }

func (f *bucketBiasFn) Forward() (mat.Tensor, error) {
	if dev := deviceOf("BucketBias", f.w); dev != nil {
		f.dt.dev = dev
		return f.forwardDevice()
	}
	_, H := Dims(f.w)
	W := Data(f.w)
	out := zeroMatrix(H*f.q, f.k)
	Y := Data(out)
	n := f.q * f.k
	for h := 0; h < H; h++ {
		y := Y[h*n : (h+1)*n]
		for p, b := range f.buckets {
			y[p] = W[b*H+h]
		}
	}
	return wrap(out, f), nil
}

func (f *bucketBiasFn) Backward(gy mat.Tensor) error {
	if f.dt.dev != nil {
		return f.backwardDevice(gy)
	}
	if !f.w.RequiresGrad() {
		return nil
	}
	nb, H := Dims(f.w)
	G := Data(gy)
	gw := alloc(nb * H)
	n := f.q * f.k
	for h := 0; h < H; h++ {
		g := G[h*n : (h+1)*n]
		for p, b := range f.buckets {
			gw[b*H+h] += g[p]
		}
	}
	accGrad(f.w, gw)
	return nil
}
