package emudev

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/model/conformance"
	"repro/internal/model/gpt2"
	"repro/internal/model/t5"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/backend"
	"repro/internal/tensor/optim"
)

// mulAdd is compiled like the operators' a*b + c.
//
//go:noinline
func mulAdd(a, b, c float32) float32 { return a*b + c }

// needUnfused skips t where Go fuses multiply-adds (arm64, GOAMD64=v3):
// there the CPU operators do not compute what the kernels compute.
func needUnfused(t *testing.T) {
	t.Helper()
	a := float32(1 + 1.0/4096)
	if mulAdd(a, a, -(1+1.0/2048)) != 0 {
		t.Skipf("skipped: this Go build (GOARCH=%s) fuses multiply-adds; the bit-for-bit comparison needs amd64 below GOAMD64=v3", runtime.GOARCH)
	}
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s[%d]: %v on the emulated device, %v on the CPU", what, i, got[i], want[i])
		}
	}
}

// TestEncoderStepsOnDevice: three training steps of a BERT-shaped encoder
// (embeddings with segments, attention with padding masks and dropout,
// GELU, layer norms, mean pooling, a regression head, MSE, AdamW) with the
// weights placed on the emulated device give the CPU's losses, weights and
// optimiser moments bit for bit, and each step copies no more than its
// batch (token and segment ids, lengths, labels) and the logged loss.
func TestEncoderStepsOnDevice(t *testing.T) {
	needUnfused(t)
	run := conformance.SmallEncoder(3)
	want, err := run.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want.Losses[0] == want.Losses[2] || math.IsNaN(float64(want.Losses[0])) {
		t.Fatalf("the model did not train: losses %v", want.Losses)
	}
	b := New()
	got, err := run.Run(b.Device())
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "loss", got.Losses, want.Losses)
	for i := range want.Weights {
		sameBits(t, "weight", got.Weights[i], want.Weights[i])
		sameBits(t, "first moment", got.M[i], want.M[i])
		sameBits(t, "second moment", got.V[i], want.V[i])
	}

	// Placing uploads every weight once, and only that.
	var weightBytes int64
	for _, w := range want.Weights {
		weightBytes += int64(4 * len(w))
	}
	if got.Placed.UpBytes != weightBytes || got.Placed.Down != 0 || len(got.Placed.ByLabel) != 1 {
		t.Errorf("placing copied %v, want %d bytes up under \"place\"", got.Placed, weightBytes)
	}
	// Per step: the batch and the loss. The first step also uploads the
	// position ids (and whatever the cache has not seen).
	T := run.Len * run.Batch
	for s, c := range got.PerStep {
		budget := got.InputBytes[s]
		if s == 0 {
			budget += int64(4 * T) // position ids, cached from then on
		}
		t.Logf("step %d: %d bytes copied (budget %d): %v", s, c.Bytes(), budget, c)
		if c.Bytes() > budget {
			t.Errorf("step %d copied %d bytes, more than its batch and loss (%d): %v", s, c.Bytes(), budget, c)
		}
		if c.Down != 1 || c.DownBytes != 4 {
			t.Errorf("step %d downloaded %d values (%d bytes), want the loss alone", s, c.Down, c.DownBytes)
		}
		for l := range c.ByLabel {
			if strings.HasPrefix(l, "fallback") {
				t.Errorf("step %d: an operator ran on the host: %q", s, l)
			}
		}
	}
	if n, bytes := b.Dev().Live(); n != 0 {
		t.Errorf("%d device buffers (%d bytes) still allocated after the run", n, bytes)
	}
}

// TestPaSeRStepsOnDevice: the PaSeR-shaped conformance run (encoder over
// two dropout views with the SimCSE loss, a tied decoder with causal self-
// and cross-attention and token cross-entropy) with its weights on the
// emulated device gives the CPU's losses and weights bit for bit, nothing
// falls back, and the steps copy their batch (token ids, positions,
// lengths, targets: the first step, after which the unchanged batch is
// held by the device) and the logged loss, nothing else.
func TestPaSeRStepsOnDevice(t *testing.T) {
	needUnfused(t)
	wantL, wantW, err := conformance.TrainSteps(3)
	if err != nil {
		t.Fatal(err)
	}
	b := New()
	got, err := conformance.TrainStepsOn(b.Device(), 3)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "loss", got.Losses, wantL)
	for i := range wantW {
		sameBits(t, "weight", got.Weights[i], wantW[i])
	}
	checkSteps(t, got.PerStep, func(s int) int64 {
		if s == 0 {
			return got.InputBytes
		}
		return 4 // the same batch: only the loss
	}, 4)
	if n, bytes := b.Dev().Live(); n != 0 {
		t.Errorf("%d device buffers (%d bytes) still allocated after the run", n, bytes)
	}
}

// checkSteps checks each step's copies: at most budget(s) bytes, down
// exactly the logged scalars (down bytes), no fallback.
func checkSteps(t *testing.T, perStep []backend.Copies, budget func(s int) int64, down int64) {
	t.Helper()
	for s, c := range perStep {
		t.Logf("step %d: %d bytes copied (budget %d): %v", s, c.Bytes(), budget(s), c)
		if c.Bytes() > budget(s) {
			t.Errorf("step %d copied %d bytes, more than its batch and logged scalars (%d): %v", s, c.Bytes(), budget(s), c)
		}
		if c.DownBytes != down {
			t.Errorf("step %d downloaded %d bytes, want the logged scalars' %d", s, c.DownBytes, down)
		}
		for l := range c.ByLabel {
			if strings.HasPrefix(l, "fallback") {
				t.Errorf("step %d: an operator ran on the host: %q", s, l)
			}
		}
	}
}

// TestContrastiveStepsOnDevice: three steps of supervised SimCSE (three
// encoder passes with dropout, pooler and tanh, cosine similarities over
// a temperature, cross-entropy, gradients clipped to norm 1, AdamW) on the
// emulated device give the CPU's losses, gradient norms, weights and
// moments bit for bit; each step copies its new batch up and the loss and
// gradient norm down, nothing else.
func TestContrastiveStepsOnDevice(t *testing.T) {
	needUnfused(t)
	run := conformance.SmallContrastive(3)
	want, err := run.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	clipped := false
	for _, n := range want.GradNorms {
		clipped = clipped || n > run.MaxNorm
	}
	if !clipped || want.Losses[0] == want.Losses[2] {
		t.Fatalf("the run does not exercise clipping or does not train: norms %v, losses %v", want.GradNorms, want.Losses)
	}
	b := New()
	got, err := run.Run(b.Device())
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "loss", got.Losses, want.Losses)
	for i, n := range want.GradNorms {
		if math.Float64bits(got.GradNorms[i]) != math.Float64bits(n) {
			t.Fatalf("step %d: gradient norm %v on the device, %v on the CPU", i, got.GradNorms[i], n)
		}
	}
	for i := range want.Weights {
		sameBits(t, "weight", got.Weights[i], want.Weights[i])
		sameBits(t, "first moment", got.M[i], want.M[i])
		sameBits(t, "second moment", got.V[i], want.V[i])
	}
	var weightBytes int64
	for _, w := range want.Weights {
		weightBytes += int64(4 * len(w))
	}
	if got.Placed.UpBytes != weightBytes || got.Placed.Down != 0 {
		t.Errorf("placing copied %v, want %d bytes up", got.Placed, weightBytes)
	}
	checkSteps(t, got.PerStep, func(s int) int64 { return got.InputBytes[s] }, 4+8)
	if n, bytes := b.Dev().Live(); n != 0 {
		t.Errorf("%d device buffers (%d bytes) still allocated after the run", n, bytes)
	}
}

// TestCopyPathCounts: as a plain backend (weights not placed) "emu" is
// today's CUDA path: host operators, GEMMs and kernels on the "device" with
// their operands copied per call. It gives the CPU's bits, and its counter
// shows what that path moves per step, against the device path's batch.
func TestCopyPathCounts(t *testing.T) {
	needUnfused(t)
	run := conformance.SmallEncoder(3)
	want, err := run.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := New()
	defer backend.Use(backend.Current())
	backend.Use(b)
	got, err := run.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	sameBits(t, "loss", got.Losses, want.Losses)
	for i := range want.Weights {
		sameBits(t, "weight", got.Weights[i], want.Weights[i])
	}
	c := b.Dev().Copies()
	perStep := c.Bytes() / int64(run.Steps)
	t.Logf("copy path: %d B per step (%d copies) against the device path's %d B of batch: %v", perStep, (c.Up+c.Down)/run.Steps, want.InputBytes[0], c)
	if perStep <= 10*want.InputBytes[0] {
		t.Errorf("the copy path moved %d B per step: no more than 10x the batch (%d B)? the counting is broken", perStep, want.InputBytes[0])
	}
}

// modelSteps runs three training steps of the model build returns (its
// parameters and its loss function, which draws from rng) with AdamW, on
// dev or on the host (dev nil): the losses, the weights afterwards and
// each step's copies.
func modelSteps(t *testing.T, dev backend.Device, build func(rng *rand.Rand) ([]*nn.Param, func(rng *rand.Rand) (mat.Tensor, error))) ([]float32, [][]float32, []backend.Copies) {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	params, lossOf := build(rng)
	opt, err := optim.ForParams(params, optim.Config{LR: 1e-3, WeightDecay: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	var leaves []mat.Tensor
	for _, p := range params {
		leaves = append(leaves, p)
	}
	if dev != nil {
		tensor.Place(dev, leaves...)
	}
	var losses []float32
	var perStep []backend.Copies
	for s := 0; s < 3; s++ {
		var before backend.Copies
		if dev != nil {
			before = dev.Copies()
		}
		l, err := lossOf(rng)
		if err != nil {
			t.Fatal(err)
		}
		if err := tensor.Backward(l); err != nil {
			t.Fatal(err)
		}
		losses = append(losses, tensor.Data(l)[0])
		opt.Step()
		tensor.Release(l)
		if dev != nil {
			perStep = append(perStep, dev.Copies().Since(before))
		}
	}
	if dev != nil {
		opt.Release()
		tensor.Unplace(leaves...)
		tensor.DropIntCache(dev)
	}
	var weights [][]float32
	for _, p := range params {
		weights = append(weights, append([]float32(nil), tensor.Data(p)...))
	}
	return losses, weights, perStep
}

// checkModelSteps compares a model's steps on the emulated device with
// the host's, bit for bit; the first step copies the batch (batch bytes,
// under the batch's labels) and the loss, the others (the same batch,
// held by the device) the loss alone; nothing falls back or stays
// allocated.
func checkModelSteps(t *testing.T, batch int64, build func(rng *rand.Rand) ([]*nn.Param, func(rng *rand.Rand) (mat.Tensor, error))) {
	t.Helper()
	wantL, wantW, _ := modelSteps(t, nil, build)
	if wantL[0] == wantL[2] {
		t.Fatalf("the model did not train: losses %v", wantL)
	}
	b := New()
	gotL, gotW, perStep := modelSteps(t, b.Device(), build)
	sameBits(t, "loss", gotL, wantL)
	for i := range wantW {
		sameBits(t, "weight", gotW[i], wantW[i])
	}
	checkSteps(t, perStep, func(s int) int64 {
		if s == 0 {
			return batch + 4
		}
		return 4
	}, 4)
	for l := range perStep[0].ByLabel {
		switch l {
		case "gather indices", "attention key lengths", "cross-entropy targets", "relative position buckets", "read by the caller":
		default:
			t.Errorf("step 0 copied %q: not the batch", l)
		}
	}
	if n, bytes := b.Dev().Live(); n != 0 {
		t.Errorf("%d device buffers (%d bytes) still allocated after the run", n, bytes)
	}
}

// TestT5StepsOnDevice: a small T5 (relative position bias from a bucket
// table, RMS norms, the gated tanh-GELU feed-forward of v1.1 with its own
// output layer and v1.0's ReLU with the tied, scaled one, dropout, token
// cross-entropy) trains on the emulated device to the CPU's bits.
func TestT5StepsOnDevice(t *testing.T) {
	needUnfused(t)
	const B, S, T = 4, 9, 4
	for _, ff := range []string{"gated-gelu", "relu"} {
		t.Run(ff, func(t *testing.T) {
			// Source and target ids and lengths, decoder inputs, targets,
			// the encoder's and the decoder's bucket tables (4 B each).
			batch := int64(4 * (B*S + B + 2*B*T + B + S*S + T*T))
			checkModelSteps(t, batch, func(rng *rand.Rand) ([]*nn.Param, func(*rand.Rand) (mat.Tensor, error)) {
				c := t5.DefaultConfig()
				c.VocabSize, c.DModel, c.DKV, c.DFF, c.NumLayers, c.NumHeads, c.RelBuckets, c.RelMaxDistance = 60, 16, 8, 32, 2, 2, 8, 20
				c.FeedForwardProj, c.TieWordEmbeddings = ff, ff == "relu"
				m, err := t5.New(c, rng)
				if err != nil {
					t.Fatal(err)
				}
				ex := make([]t5.Example, B)
				for i := range ex {
					ex[i].Source, ex[i].Target = make([]int, S-i), make([]int, T-i%2)
					for j := range ex[i].Source {
						ex[i].Source[j] = 2 + rng.IntN(c.VocabSize-2)
					}
					for j := range ex[i].Target {
						ex[i].Target[j] = 2 + rng.IntN(c.VocabSize-2)
					}
				}
				return m.Params(), func(rng *rand.Rand) (mat.Tensor, error) {
					l, _, err := m.Loss(ex, rng)
					return l, err
				}
			})
		})
	}
}

// TestGPT2StepsOnDevice: a small GPT-2 (fused QKV projection split by
// SliceCols, Conv1D affines, causal attention over padded rows, tanh GELU,
// tied output, dropout, causal LM cross-entropy) trains on the emulated
// device to the CPU's bits.
func TestGPT2StepsOnDevice(t *testing.T) {
	needUnfused(t)
	const B, T = 4, 10
	// Token ids, positions, lengths and targets (4 B each).
	batch := int64(4 * (3*B*T + B))
	checkModelSteps(t, batch, func(rng *rand.Rand) ([]*nn.Param, func(*rand.Rand) (mat.Tensor, error)) {
		c := gpt2.DefaultConfig()
		c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead, c.BOSTokenID, c.EOSTokenID = 50, 16, 16, 2, 2, 49, 49
		m, err := gpt2.New(c, rng)
		if err != nil {
			t.Fatal(err)
		}
		seqs := make([][]int, B)
		for i := range seqs {
			seqs[i] = make([]int, T-2*i)
			for j := range seqs[i] {
				seqs[i][j] = rng.IntN(c.VocabSize)
			}
		}
		b, err := transformer.NewBatch(seqs, 0)
		if err != nil {
			t.Fatal(err)
		}
		return m.Params(), func(rng *rand.Rand) (mat.Tensor, error) { return m.Loss(b, rng) }
	})
}
