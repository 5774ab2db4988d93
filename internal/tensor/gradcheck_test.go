package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nlpodyssey/spago/mat"
)

// param returns a rows x cols matrix of N(0, scale^2) values that requires
// gradients.
func param(rng *rand.Rand, rows, cols int, scale float64) *Matrix {
	m := Zeros(rows, cols)
	for i, d := 0, Data(m); i < len(d); i++ {
		d[i] = float32(rng.NormFloat64() * scale)
	}
	m.SetRequiresGrad(true)
	return m
}

// gradCheck compares the gradients Backward computes for every input with
// central finite differences of the scalar sum(build(inputs) * R), R a
// fixed random projection that makes every output element matter.
func gradCheck(t *testing.T, name string, inputs []*Matrix, build func(in []*Matrix) mat.Tensor) {
	t.Helper()
	out := build(inputs)
	r, c := Dims(out)
	prng := rand.New(rand.NewPCG(99, 1))
	proj := New(r, c, nil)
	for i, d := 0, Data(proj); i < len(d); i++ {
		d[i] = float32(prng.NormFloat64())
	}
	objective := func() float64 {
		o := build(inputs)
		var s float64
		for i, v := range Data(o) {
			s += float64(v) * float64(Data(proj)[i])
		}
		return s
	}
	for _, in := range inputs {
		in.ZeroGrad()
	}
	loss := Sum(Mul(build(inputs), proj))
	if err := Backward(loss); err != nil {
		t.Fatalf("%s: Backward: %v", name, err)
	}
	const eps = 1e-2
	for k, in := range inputs {
		analytic := GradData(in)
		d := Data(in)
		if analytic == nil {
			analytic = make([]float32, len(d))
		}
		for i := range d {
			orig := d[i]
			d[i] = orig + eps
			fp := objective()
			d[i] = orig - eps
			fm := objective()
			d[i] = orig
			num := (fp - fm) / (2 * eps)
			a := float64(analytic[i])
			if math.Abs(a-num) > 1e-2+3e-2*math.Abs(num) {
				t.Errorf("%s: input %d element %d: analytic %.6g, numeric %.6g", name, k, i, a, num)
			}
		}
	}
}

func TestGradMatMul(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			ar, ac := 3, 4
			if ta {
				ar, ac = 4, 3
			}
			br, bc := 4, 5
			if tb {
				br, bc = 5, 4
			}
			in := []*Matrix{param(rng, ar, ac, 1), param(rng, br, bc, 1)}
			gradCheck(t, fmt.Sprintf("MatMul(%v,%v)", ta, tb), in, func(in []*Matrix) mat.Tensor {
				return MatMul(in[0], in[1], ta, tb)
			})
		}
	}
}

func TestGradLinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 3))
	in := []*Matrix{param(rng, 5, 4, 1), param(rng, 3, 4, 1), param(rng, 1, 3, 1)}
	gradCheck(t, "Linear", in, func(in []*Matrix) mat.Tensor { return Linear(in[0], in[1], in[2]) })
	gradCheck(t, "Linear(no bias)", in[:2], func(in []*Matrix) mat.Tensor { return Linear(in[0], in[1], nil) })
}

func TestGradAttention(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 4))
	cases := []struct {
		name string
		tq   int
		tk   int
		spec AttentionSpec
		drop bool
	}{
		{name: "self", tq: 3, tk: 3, spec: AttentionSpec{Batch: 2, Heads: 2}},
		{name: "padded", tq: 4, tk: 4, spec: AttentionSpec{Batch: 2, Heads: 2, KeyLens: []int{2, 4}}},
		{name: "causal", tq: 4, tk: 4, spec: AttentionSpec{Batch: 2, Heads: 2, KeyLens: []int{3, 4}, Causal: true}},
		{name: "cross", tq: 2, tk: 5, spec: AttentionSpec{Batch: 2, Heads: 2, KeyLens: []int{5, 3}}},
		{name: "dropout", tq: 3, tk: 3, spec: AttentionSpec{Batch: 2, Heads: 2, DropProb: 0.3}, drop: true},
		{name: "unscaled", tq: 3, tk: 4, spec: AttentionSpec{Batch: 2, Heads: 2, KeyLens: []int{4, 2}, Scale: 1}},
		{name: "one query", tq: 1, tk: 5, spec: AttentionSpec{Batch: 3, Heads: 2, KeyLens: []int{5, 2, 0}}},
	}
	for _, tc := range cases {
		s := tc.spec
		s.QLen, s.KLen = tc.tq, tc.tk
		in := []*Matrix{
			param(rng, s.Batch*tc.tq, 4, 1),
			param(rng, s.Batch*tc.tk, 4, 1),
			param(rng, s.Batch*tc.tk, 4, 1),
		}
		gradCheck(t, "Attention/"+tc.name, in, func(in []*Matrix) mat.Tensor {
			sp := s
			if tc.drop {
				sp.Rng = rand.New(rand.NewPCG(7, 7)) // the same mask every evaluation
			}
			return Attention(in[0], in[1], in[2], sp)
		})
	}
}

// TestGradAttentionBias checks the score bias's gradient (T5's relative
// position bias), shared by the batch and per sequence, with a scale.
func TestGradAttentionBias(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 9))
	const B, H, Tq, Tk, D = 2, 2, 3, 4, 4
	for _, tc := range []struct {
		name     string
		biasRows int
		causal   bool
		scale    float32
	}{
		{"shared", H * Tq, false, 1},
		{"per-sequence", B * H * Tq, false, 0},
		{"shared causal", H * Tq, true, 0.7},
	} {
		tq := Tq
		if tc.causal {
			tq = Tk
		}
		br := tc.biasRows / Tq * tq
		in := []*Matrix{param(rng, B*tq, D, 1), param(rng, B*Tk, D, 1), param(rng, B*Tk, D, 1), param(rng, br, Tk, 1)}
		gradCheck(t, "AttentionBias/"+tc.name, in, func(in []*Matrix) mat.Tensor {
			return Attention(in[0], in[1], in[2], AttentionSpec{Batch: B, Heads: H, QLen: tq, KLen: Tk,
				KeyLens: []int{Tk, Tk - 1}, Causal: tc.causal, Scale: tc.scale, Bias: in[3]})
		})
	}
}

func TestGradRMSNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 10))
	in := []*Matrix{param(rng, 4, 6, 1), param(rng, 1, 6, 1)}
	gradCheck(t, "RMSNorm", in, func(in []*Matrix) mat.Tensor { return RMSNorm(in[0], in[1], 1e-6) })
}

func TestGradAffine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 11))
	in := []*Matrix{param(rng, 5, 4, 1), param(rng, 4, 3, 1), param(rng, 1, 3, 1)}
	gradCheck(t, "Affine", in, func(in []*Matrix) mat.Tensor { return Affine(in[0], in[1], in[2]) })
	gradCheck(t, "Affine(no bias)", in[:2], func(in []*Matrix) mat.Tensor { return Affine(in[0], in[1], nil) })
}

func TestGradLayerNorm(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 5))
	in := []*Matrix{param(rng, 4, 6, 1), param(rng, 1, 6, 1), param(rng, 1, 6, 1)}
	gradCheck(t, "LayerNorm", in, func(in []*Matrix) mat.Tensor { return LayerNorm(in[0], in[1], in[2], 1e-12) })
}

func TestGradElementwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 6))
	in := []*Matrix{param(rng, 3, 4, 1), param(rng, 3, 4, 1)}
	unaries := map[string]func(mat.Tensor) mat.Tensor{
		"GELU":       GELU,
		"GELUTanh":   GELUTanh,
		"ReLU":       ReLU, // N(0,1) values are far enough from 0 for eps 1e-2
		"SliceCols":  func(x mat.Tensor) mat.Tensor { return SliceCols(x, 1, 3) },
		"Tanh":       Tanh,
		"Abs":        Abs, // N(0,1) values are far enough from 0 for eps 1e-2
		"Scale":      func(x mat.Tensor) mat.Tensor { return Scale(x, -2.5) },
		"Softmax":    Softmax,
		"LogSoftmax": LogSoftmax,
		"L2":         L2Normalize,
		"Dropout":    func(x mat.Tensor) mat.Tensor { return Dropout(x, 0.4, rand.New(rand.NewPCG(3, 3))) },
		"Mean":       Mean,
		"Sum":        Sum,
		"Gather":     func(x mat.Tensor) mat.Tensor { return Gather(x, []int{2, 0, 2, 2, 1}) },
		"SliceRows":  func(x mat.Tensor) mat.Tensor { return SliceRows(x, 1, 3) },
		"MeanPool":   func(x mat.Tensor) mat.Tensor { return MeanPool(Gather(x, []int{0, 1, 2, 0, 1, 2}), 2, 3, []int{2, 3}) },
		"FirstToken": func(x mat.Tensor) mat.Tensor { return FirstTokens(x, 1, 3) },
		"MSE":        func(x mat.Tensor) mat.Tensor { return MSE(x, make([]float32, 12)) },
		"CE": func(x mat.Tensor) mat.Tensor {
			return CrossEntropy(x, []int{3, IgnoreIndex, 0})
		},
	}
	for name, f := range unaries {
		gradCheck(t, name, in[:1], func(in []*Matrix) mat.Tensor { return f(in[0]) })
	}
	binaries := map[string]func(a, b mat.Tensor) mat.Tensor{
		"Add":        Add,
		"Sub":        Sub,
		"Mul":        Mul,
		"ConcatCols": func(a, b mat.Tensor) mat.Tensor { return ConcatCols(a, b, a) },
		"ConcatRows": func(a, b mat.Tensor) mat.Tensor { return ConcatRows(b, a) },
		"RowDot":     RowDot,
		"Cosine":     CosineMatrix,
	}
	for name, f := range binaries {
		gradCheck(t, name, in, func(in []*Matrix) mat.Tensor { return f(in[0], in[1]) })
	}
}

// TestGradSharedInput checks accumulation when one input feeds several
// operators (the fan-out that spago's goroutine backward sums in
// completion order).
func TestGradSharedInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 8))
	in := []*Matrix{param(rng, 3, 4, 1), param(rng, 4, 4, 1)}
	gradCheck(t, "fan-out", in, func(in []*Matrix) mat.Tensor {
		x := in[0]
		a := MatMul(x, in[1], false, false)
		b := MatMul(x, in[1], false, true)
		return Add(Add(Mul(a, b), x), GELU(x))
	})
}
