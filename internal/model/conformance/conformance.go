// Package conformance holds a fixed training run that every tensor backend
// must reproduce: the CPU defines the result; the kernel-emulation tests
// (internal/tensor/backend/cuda/ptx/emu) require the same bits through backend.Kernels, and
// the CUDA tests require agreement to 1e-4 on a GPU. It exercises every
// operator a training stage uses: embeddings, layer norm, GELU, padded and
// causal self-attention, cross-attention with a tied decoder, pooling, the
// SimCSE and token cross-entropy losses, dropout and AdamW.
package conformance

import (
	"math/rand/v2"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/loss"
	"repro/internal/tensor/optim"
)

// TrainSteps runs a PaSeR-shaped step -- a 2-layer encoder over two dropout
// views (SimCSE-unsup loss) plus a tied 1-layer decoder cross-attending to
// the encoder's states with a causal mask (token cross-entropy) -- steps
// times with AdamW, and returns the losses and every weight afterwards.
func TrainSteps(steps int) (losses []float32, weights [][]float32, err error) {
	r, err := TrainStepsOn(nil, steps)
	return r.Losses, r.Weights, err
}

// StepsResult is what TrainStepsOn produced.
type StepsResult struct {
	Losses  []float32
	Weights [][]float32
	// PerStep is what each step copied between host and device (nil on
	// the host): an operator without a device path shows there by name
	// (internal/tensor/device.go).
	PerStep []backend.Copies
	// InputBytes is the batch the steps feed the device (4 bytes a value):
	// both sides' token ids and positions, the key lengths, the token
	// targets and the SimCSE loss's diagonal targets; plus 4 for the
	// logged loss. The batch is the same every step, so after the first
	// the device holds it (the integer cache) and only the loss crosses.
	InputBytes int64
}

// TrainStepsOn is TrainSteps with the parameters placed on dev
// (tensor.Place; nil: the host).
func TrainStepsOn(dev backend.Device, steps int) (StepsResult, error) {
	var res StepsResult
	fail := func(err error) (StepsResult, error) { return StepsResult{}, err }
	rng := rand.New(rand.NewPCG(7, 8))
	c := transformer.Config{VocabSize: 50, Hidden: 32, Layers: 2, Heads: 4, Intermediate: 64, MaxPosition: 16,
		HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12}
	enc, err := transformer.NewEncoder(c, rng)
	if err != nil {
		return fail(err)
	}
	dc := c
	dc.Layers = 1
	dec, err := transformer.NewDecoder(dc, enc.Embeddings.Word, rng)
	if err != nil {
		return fail(err)
	}
	seqs := make([][]int, 6)
	tgts := make([][]int, 6)
	for i := range seqs {
		seqs[i] = make([]int, 12-i) // padding: key masks of every length
		for j := range seqs[i] {
			seqs[i][j] = 1 + rng.IntN(c.VocabSize-1)
		}
		tgts[i] = seqs[i][:3+i%3]
	}
	b, err := transformer.NewBatch(seqs, c.PadID)
	if err != nil {
		return fail(err)
	}
	tb, err := transformer.NewBatch(tgts, c.PadID)
	if err != nil {
		return fail(err)
	}
	var targets []int
	for _, s := range tgts {
		for j := 0; j < tb.T; j++ {
			if j+1 < len(s) {
				targets = append(targets, s[j+1])
			} else {
				targets = append(targets, loss.IgnoreIndex)
			}
		}
	}
	res.InputBytes = int64(4 * (2*len(b.IDs) + len(b.Lens) + 2*len(tb.IDs) + len(tb.Lens) + len(targets) + len(seqs) + 1))
	var params []*nn.Param
	for _, np := range append(enc.NamedParams(), dec.NamedParams()...) {
		params = append(params, np.Param)
	}
	opt, err := optim.ForParams(params, optim.Config{LR: 1e-3, WeightDecay: 0.01})
	if err != nil {
		return fail(err)
	}
	leaves := make([]mat.Tensor, len(params))
	for i, p := range params {
		leaves[i] = p
	}
	if dev != nil {
		tensor.Place(dev, leaves...)
	}
	for s := 0; s < steps; s++ {
		var before backend.Copies
		if dev != nil {
			before = dev.Copies()
		}
		o1, err := enc.Forward(b, rng)
		if err != nil {
			return fail(err)
		}
		o2, err := enc.Forward(b, rng)
		if err != nil {
			return fail(err)
		}
		z1, err := enc.Pool(o1, transformer.PoolMean)
		if err != nil {
			return fail(err)
		}
		z2, err := enc.Pool(o2, transformer.PoolMean)
		if err != nil {
			return fail(err)
		}
		lc, err := loss.SimCSEUnsup(z1, z2, 0.05)
		if err != nil {
			return fail(err)
		}
		logits, _, err := dec.Forward(tb, transformer.Memory{States: o1.Last(), Len: b.T, Lens: b.Lens}, rng)
		if err != nil {
			return fail(err)
		}
		lg, err := loss.TokenCE(logits, targets)
		if err != nil {
			return fail(err)
		}
		l := tensor.Add(lc, lg)
		if err := tensor.Backward(l); err != nil {
			return fail(err)
		}
		res.Losses = append(res.Losses, tensor.Data(l)[0])
		opt.Step()
		if dev != nil {
			tensor.Release(l)
			res.PerStep = append(res.PerStep, dev.Copies().Since(before))
		}
	}
	if dev != nil {
		opt.Release()
		tensor.Unplace(leaves...)
		tensor.DropIntCache(dev)
	}
	for _, p := range params {
		res.Weights = append(res.Weights, append([]float32(nil), tensor.Data(p)...))
	}
	return res, nil
}
