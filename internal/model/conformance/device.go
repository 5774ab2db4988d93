package conformance

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/loss"
	"repro/internal/tensor/optim"
)

// EncoderRun is a BERT-shaped training run for the device-resident path
// (internal/tensor/device.go): an encoder with word, position and segment
// embeddings, dropout on embeddings, attention probabilities and every
// residual branch, mean pooling and a linear regression head trained with
// MSE and AdamW (weight decay on), one new padded batch per step.
type EncoderRun struct {
	Config transformer.Config
	Batch  int // sequences per batch
	Len    int // tokens per sequence (the longest; others are shorter)
	Steps  int
	Seed   uint64
}

// SmallEncoder is the run the tests use: 2 layers, width 32, 4 heads.
func SmallEncoder(steps int) EncoderRun {
	return EncoderRun{
		Config: transformer.Config{VocabSize: 50, Hidden: 32, Layers: 2, Heads: 4, Intermediate: 64, MaxPosition: 16,
			TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12},
		Batch: 6, Len: 12, Steps: steps, Seed: 7,
	}
}

// EncoderResult is what a run produced: the loss of every step, every
// weight and the optimiser's moments afterwards, and (on a device) the
// copies each step made.
type EncoderResult struct {
	Losses  []float32
	Weights [][]float32
	M, V    [][]float32
	// Placed is what placing the weights copied (before the first step);
	// PerStep what each step copied. Both zero for a host run.
	Placed  backend.Copies
	PerStep []backend.Copies
	// InputBytes is the bytes of each step's batch: token and segment ids,
	// lengths and labels (4 bytes each), plus 4 for the logged loss.
	InputBytes []int64
	// StepSeconds is each step's wall time, from the batch's forward pass
	// to the optimiser's update (the logged loss's download synchronises a
	// device).
	StepSeconds []float64
}

// Run trains on dev (its parameters placed there, every operator with a
// device path running on it), or on the host with dev nil, and returns the
// result. Device memory is given back afterwards (weights fetched first).
func (r EncoderRun) Run(dev backend.Device) (EncoderResult, error) {
	rng := rand.New(rand.NewPCG(r.Seed, r.Seed+1))
	c := r.Config
	enc, err := transformer.NewEncoder(c, rng)
	if err != nil {
		return EncoderResult{}, err
	}
	w := transformer.TruncNormal(rng, 1, c.Hidden, transformer.InitStd)
	bias := nn.NewParam(tensor.Zeros(1, 1))
	params := []*nn.Param{w, bias}
	for _, np := range enc.NamedParams() {
		params = append(params, np.Param)
	}
	opt, err := optim.ForParams(params, optim.Config{LR: 1e-3, WeightDecay: 0.01})
	if err != nil {
		return EncoderResult{}, err
	}
	leaves := make([]mat.Tensor, len(params))
	for i, p := range params {
		leaves[i] = p
	}
	var res EncoderResult
	if dev != nil {
		before := dev.Copies()
		tensor.Place(dev, leaves...)
		res.Placed = dev.Copies().Since(before)
	}
	for s := 0; s < r.Steps; s++ {
		seqs := make([][]int, r.Batch)
		types := make([]int, r.Batch*r.Len)
		labels := make([]float32, r.Batch)
		for i := range seqs {
			n := r.Len - i%max(r.Len-1, 1) // the first is the longest: every batch is r.Len wide
			seqs[i] = make([]int, n)
			for j := range seqs[i] {
				seqs[i][j] = 1 + rng.IntN(c.VocabSize-1)
				if c.TypeVocab > 1 && j >= n/2 {
					types[i*r.Len+j] = 1
				}
			}
			labels[i] = float32(rng.NormFloat64())
		}
		b, err := transformer.NewBatch(seqs, c.PadID)
		if err != nil {
			return EncoderResult{}, err
		}
		if c.TypeVocab > 0 {
			b.TypeIDs = types
		}
		var before backend.Copies
		if dev != nil {
			before = dev.Copies()
		}
		start := time.Now()
		out, err := enc.Forward(b, rng)
		if err != nil {
			return EncoderResult{}, err
		}
		z, err := enc.Pool(out, transformer.PoolMean)
		if err != nil {
			return EncoderResult{}, err
		}
		l := tensor.MSE(tensor.Linear(z, w, bias), labels)
		if err := tensor.Backward(l); err != nil {
			return EncoderResult{}, err
		}
		res.Losses = append(res.Losses, tensor.Data(l)[0]) // the logged scalar
		opt.Step()
		tensor.Release(l)
		res.StepSeconds = append(res.StepSeconds, time.Since(start).Seconds())
		if dev != nil {
			res.PerStep = append(res.PerStep, dev.Copies().Since(before))
		}
		res.InputBytes = append(res.InputBytes, int64(4*(len(b.IDs)+len(b.TypeIDs)+len(b.Lens)+len(labels))+4))
	}
	if dev != nil {
		opt.Release() // syncs the moments
		tensor.Unplace(leaves...)
		tensor.DropIntCache(dev)
	}
	for _, p := range params {
		res.Weights = append(res.Weights, append([]float32(nil), tensor.Data(p)...))
	}
	st := opt.State()
	res.M, res.V = st.M, st.V
	if len(res.Losses) != r.Steps {
		return res, fmt.Errorf("conformance: %d losses for %d steps", len(res.Losses), r.Steps)
	}
	return res, nil
}

// ContrastiveRun is a SimCSE-shaped training run for the device path:
// supervised SimCSE (an anchor, its positive and a hard negative per
// example: three padded batches through the encoder with dropout, the
// [CLS] state through the pooler's dense layer and tanh, cosine
// similarities of the anchors against all positives and negatives over a
// temperature, cross-entropy on the diagonal), the gradients clipped to
// a global norm, AdamW with decay, a new batch every step.
type ContrastiveRun struct {
	Config  transformer.Config
	Batch   int // examples (anchor, positive, negative) per batch
	Len     int // tokens of the longest sequence
	Steps   int
	Seed    uint64
	Temp    float32
	MaxNorm float64 // gradient clipping (0: none)
}

// SmallContrastive is the run the tests use: 2 layers, width 32, 4 heads,
// with the pooler.
func SmallContrastive(steps int) ContrastiveRun {
	c := SmallEncoder(0).Config
	c.Pooler = true
	return ContrastiveRun{Config: c, Batch: 5, Len: 9, Steps: steps, Seed: 11, Temp: 0.05, MaxNorm: 1}
}

// ContrastiveResult is what a ContrastiveRun produced.
type ContrastiveResult struct {
	Losses    []float32
	GradNorms []float64 // before clipping
	Weights   [][]float32
	M, V      [][]float32
	Placed    backend.Copies
	PerStep   []backend.Copies
	// InputBytes is each step's batch (token ids and lengths of the
	// three sides, positions and the loss's targets, 4 bytes each) plus
	// the logged scalars: the loss (4) and the gradient norm (8).
	InputBytes []int64
}

// Run trains on dev (parameters placed there) or on the host (dev nil).
func (r ContrastiveRun) Run(dev backend.Device) (ContrastiveResult, error) {
	rng := rand.New(rand.NewPCG(r.Seed, r.Seed+1))
	c := r.Config
	enc, err := transformer.NewEncoder(c, rng)
	if err != nil {
		return ContrastiveResult{}, err
	}
	var params []*nn.Param
	for _, np := range enc.NamedParams() {
		params = append(params, np.Param)
	}
	opt, err := optim.ForParams(params, optim.Config{LR: 1e-3, WeightDecay: 0.01})
	if err != nil {
		return ContrastiveResult{}, err
	}
	leaves := make([]mat.Tensor, len(params))
	for i, p := range params {
		leaves[i] = p
	}
	var res ContrastiveResult
	if dev != nil {
		before := dev.Copies()
		tensor.Place(dev, leaves...)
		res.Placed = dev.Copies().Since(before)
	}
	batch := func() (transformer.Batch, error) {
		seqs := make([][]int, r.Batch)
		for i := range seqs {
			n := r.Len - rng.IntN(r.Len/2)
			if i == 0 {
				n = r.Len
			}
			seqs[i] = make([]int, n)
			for j := range seqs[i] {
				seqs[i][j] = 1 + rng.IntN(c.VocabSize-1)
			}
		}
		return transformer.NewBatch(seqs, c.PadID)
	}
	for s := 0; s < r.Steps; s++ {
		var sides [3]transformer.Batch
		inputs := 0
		for i := range sides {
			if sides[i], err = batch(); err != nil {
				return res, err
			}
			inputs += 2*len(sides[i].IDs) + len(sides[i].Lens)
		}
		var before backend.Copies
		if dev != nil {
			before = dev.Copies()
		}
		var z [3]mat.Tensor
		for i, b := range sides {
			out, err := enc.Forward(b, rng)
			if err != nil {
				return res, err
			}
			if z[i], err = enc.Pool(out, transformer.PoolCLS); err != nil {
				return res, err
			}
		}
		l, err := loss.SimCSESup(z[0], z[1], z[2], r.Temp)
		if err != nil {
			return res, err
		}
		if err := tensor.Backward(l); err != nil {
			return res, err
		}
		res.Losses = append(res.Losses, tensor.Data(l)[0])
		var norm float64
		if dev != nil {
			norm = optim.ClipDeviceGradNorm(dev, leaves, r.MaxNorm)
		} else {
			grads := make([][]float32, len(params))
			for i, p := range params {
				grads[i] = tensor.GradData(p)
			}
			norm = optim.ClipGradNorm(grads, r.MaxNorm)
		}
		res.GradNorms = append(res.GradNorms, norm)
		opt.Step()
		tensor.Release(l)
		if dev != nil {
			res.PerStep = append(res.PerStep, dev.Copies().Since(before))
		}
		res.InputBytes = append(res.InputBytes, int64(4*(inputs+r.Batch)+4+8))
	}
	if dev != nil {
		opt.Release()
		tensor.Unplace(leaves...)
		tensor.DropIntCache(dev)
	}
	for _, p := range params {
		res.Weights = append(res.Weights, append([]float32(nil), tensor.Data(p)...))
	}
	st := opt.State()
	res.M, res.V = st.M, st.V
	return res, nil
}
