package transformer

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/tensor"
)

// NamedParam is one parameter under its Hugging Face name, with HF's
// shape (1-D for biases and layer-norm vectors, which are stored here as
// 1 x n rows: the row-major data is the same).
type NamedParam struct {
	Name  string
	Shape []int
	Param *nn.Param
}

// Linear is a dense layer with HF's [out, in] weight.
type Linear struct {
	Weight, Bias *nn.Param
}

// LayerNorm holds a layer norm's gain (HF "weight") and bias.
type LayerNorm struct {
	Weight, Bias *nn.Param
}

// InitStd is BERT's initialiser scale (initializer_range).
const InitStd = 0.02

// TruncNormal fills a rows x cols parameter with N(0, std^2) values
// redrawn until they fall within two standard deviations: BERT's
// initialiser, for every new weight of the models (the draw order is part of
// what makes a seed's run bit-identical).
func TruncNormal(rng *rand.Rand, rows, cols int, std float64) *nn.Param {
	m := tensor.Zeros(rows, cols)
	d := tensor.Data(m)
	for i := range d {
		for {
			v := rng.NormFloat64()
			if math.Abs(v) <= 2 {
				d[i] = float32(v * std)
				break
			}
		}
	}
	return nn.NewParam(m)
}

func constParam(n int, v float32) *nn.Param {
	m := tensor.Zeros(1, n)
	d := tensor.Data(m)
	for i := range d {
		d[i] = v
	}
	return nn.NewParam(m)
}

func newLinear(rng *rand.Rand, in, out int) Linear {
	return Linear{Weight: TruncNormal(rng, out, in, InitStd), Bias: constParam(out, 0)}
}

func newLayerNorm(n int) LayerNorm {
	return LayerNorm{Weight: constParam(n, 1), Bias: constParam(n, 0)}
}

func (l Linear) forward(x mat.Tensor) mat.Tensor { return tensor.Linear(x, l.Weight, l.Bias) }

func (l LayerNorm) forward(x mat.Tensor, eps float32) mat.Tensor {
	return tensor.LayerNorm(x, l.Weight, l.Bias, eps)
}

func (l Linear) named(prefix string) []NamedParam {
	out, in := tensor.Dims(l.Weight)
	return []NamedParam{
		{Name: prefix + ".weight", Shape: []int{out, in}, Param: l.Weight},
		{Name: prefix + ".bias", Shape: []int{out}, Param: l.Bias},
	}
}

func (l LayerNorm) named(prefix string) []NamedParam {
	n := l.Weight.Size()
	return []NamedParam{
		{Name: prefix + ".weight", Shape: []int{n}, Param: l.Weight},
		{Name: prefix + ".bias", Shape: []int{n}, Param: l.Bias},
	}
}

func matrixNamed(name string, p *nn.Param) NamedParam {
	r, c := tensor.Dims(p)
	return NamedParam{Name: name, Shape: []int{r, c}, Param: p}
}

// Params lists the parameters of named, in order (for optimisers).
func Params(named []NamedParam) []*nn.Param {
	ps := make([]*nn.Param, len(named))
	for i, np := range named {
		ps[i] = np.Param
	}
	return ps
}

// ByName indexes named parameters by name.
func ByName(named []NamedParam) map[string]NamedParam {
	m := make(map[string]NamedParam, len(named))
	for _, np := range named {
		m[np.Name] = np
	}
	return m
}

// SetParam copies values (row-major, HF layout) into the parameter called
// name, checking the count.
func SetParam(named []NamedParam, name string, values []float32) error {
	np, ok := ByName(named)[name]
	if !ok {
		return fmt.Errorf("no parameter named %q", name)
	}
	d := tensor.Data(np.Param)
	if len(values) != len(d) {
		return fmt.Errorf("parameter %q has shape %v (%d values), got %d values", name, np.Shape, len(d), len(values))
	}
	copy(d, values)
	return nil
}
