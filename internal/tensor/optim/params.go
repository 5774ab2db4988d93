package optim

import (
	"fmt"

	"github.com/nlpodyssey/spago/nn"

	"repro/internal/tensor"
)

// Config holds the hyperparameters of ForParams; zero betas and eps take
// PyTorch's defaults.
type Config struct {
	LR          float64
	Beta1       float64
	Beta2       float64
	Eps         float64
	WeightDecay float64
	// NoDecay lists parameters exempt from weight decay (BERT recipes
	// exempt biases and layer-norm weights).
	NoDecay map[*nn.Param]bool
}

// Params drives AdamW over spago parameters directly: Step reads their
// accumulated gradients, updates their values and clears the gradients.
// It is the same update as AdamW.Step (it calls it), for code that holds
// nn.Params rather than slices.
type Params struct {
	opt    *AdamW
	params []*nn.Param
	lr     float64
	decay  []float64
	data   [][]float32
	grads  [][]float32
	ds     *Moments // moments on the device (device.go)
}

// ForParams prepares AdamW for params (the list and its order are fixed
// from here on).
func ForParams(params []*nn.Param, cfg Config) (*Params, error) {
	if !(cfg.LR > 0) {
		return nil, fmt.Errorf("adamw: learning rate %v must be positive", cfg.LR)
	}
	if cfg.WeightDecay < 0 {
		return nil, fmt.Errorf("adamw: weight decay %v is negative", cfg.WeightDecay)
	}
	sizes := make([]int, len(params))
	decay := make([]float64, len(params))
	for i, p := range params {
		sizes[i] = p.Size()
		if !cfg.NoDecay[p] {
			decay[i] = cfg.WeightDecay
		}
	}
	opt, err := NewAdamW(sizes, cfg.Beta1, cfg.Beta2, cfg.Eps)
	if err != nil {
		return nil, err
	}
	return &Params{opt: opt, params: params, lr: cfg.LR, decay: decay,
		data: make([][]float32, len(params)), grads: make([][]float32, len(params))}, nil
}

// State is the underlying optimiser (moments and step counts).
func (o *Params) State() *AdamW { return o.opt }

// Step applies one update from the parameters' accumulated gradients
// (parameters without a gradient are left alone, their moments included),
// then clears the gradients.
func (o *Params) Step() {
	if dev, ok := o.device(); ok {
		o.stepDevice(dev)
		return
	}
	for i, p := range o.params {
		o.data[i] = tensor.Data(p)
		o.grads[i] = tensor.GradData(p)
	}
	o.opt.Step(o.data, o.grads, o.lr, o.decay)
	for i, p := range o.params {
		o.grads[i] = nil
		tensor.ReleaseGrad(p) // its buffer serves the next step's gradient
	}
}
