// Package gpt2 is the GPT-2 family of causal language models: pre-LN
// transformer blocks, learned position embeddings, tanh-approximated GELU
// ("gelu_new"), a fused query/key/value projection, causal self-attention,
// a final layer norm, and an output layer tied to the token embedding. Any
// size comes from a Config (Hugging Face's GPT2Config keys), built from
// the batched operators of repro/internal/tensor.
//
// Design choices:
//
//   - Parameters keep Hugging Face's names and layouts exactly: the
//     Conv1D weights (c_attn, c_proj, c_fc) are stored [in, out] and
//     multiplied with tensor.Affine, and c_attn stays fused ([D, 3D], q|k|v
//     along its columns) and is split by column slices after the one
//     matrix product. Loading and saving are therefore a name map
//     (checkpoint.ApplyNaming), with or without the "transformer." prefix
//     that GPT2LMHeadModel adds; a saved model opens with transformers'
//     GPT2LMHeadModel.from_pretrained.
//   - One forward computation serves training and inference. Training
//     (Forward, Loss) runs whole padded batches with a causal, length
//     masked attention. Inference (Start, a generate.Session) keeps a key
//     and value cache per layer with room for each sequence's capacity;
//     prompts of different lengths are read in one padded pass and every
//     sequence then appends at its own position, so no left padding and no
//     position shift is needed. Select forks (n samples per prompt) and
//     drops sequences by copying cache rows.
//   - Initialisation is GPT-2's (transformers' _init_weights): N(0, 0.02)
//     for embeddings and weights, with c_proj weights scaled by
//     1/sqrt(2 n_layer); drawn from a caller-owned *rand.Rand.
package gpt2

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

// File names inside a GPT-2 directory.
const (
	FileConfig = "config.json"
)

// Conv1D is GPT-2's dense layer: y = x W + b with W stored [in, out].
type Conv1D struct {
	Weight, Bias *nn.Param
}

// LayerNorm holds a layer norm's gain ("weight") and bias.
type LayerNorm struct {
	Weight, Bias *nn.Param
}

// Block is one transformer layer (HF's GPT2Block).
type Block struct {
	LN1   LayerNorm
	CAttn Conv1D // attn.c_attn: [D, 3D], q|k|v
	CProj Conv1D // attn.c_proj
	LN2   LayerNorm
	CFc   Conv1D // mlp.c_fc
	MProj Conv1D // mlp.c_proj
}

// Model is a GPT-2 language model.
type Model struct {
	Config Config
	WTE    *nn.Param // [V, D]
	WPE    *nn.Param // [n_positions, D]
	Blocks []*Block
	LNF    LayerNorm
	// LMHead is the output layer [V, D] when it is not tied to WTE.
	LMHead *nn.Param
}

func normal(rng *rand.Rand, rows, cols int, std float64) *nn.Param {
	m := tensor.Zeros(rows, cols)
	d := tensor.Data(m)
	for i := range d {
		d[i] = float32(rng.NormFloat64() * std)
	}
	return nn.NewParam(m)
}

func filled(n int, v float32) *nn.Param {
	m := tensor.Zeros(1, n)
	d := tensor.Data(m)
	for i := range d {
		d[i] = v
	}
	return nn.NewParam(m)
}

func newConv(rng *rand.Rand, in, out int, std float64) Conv1D {
	return Conv1D{Weight: normal(rng, in, out, std), Bias: filled(out, 0)}
}

func newLayerNorm(n int) LayerNorm { return LayerNorm{Weight: filled(n, 1), Bias: filled(n, 0)} }

// New builds a model with GPT-2's initialisation drawn from rng.
func New(c Config, rng *rand.Rand) (*Model, error) {
	if c.ModelType == "" {
		c.ModelType = "gpt2"
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("gpt2: %w", err)
	}
	std := float64(c.InitializerRange)
	if !(std > 0) {
		std = 0.02
	}
	projStd := std / math.Sqrt(2*float64(c.NLayer))
	D := c.NEmbd
	m := &Model{Config: c, WTE: normal(rng, c.VocabSize, D, std), WPE: normal(rng, c.NPositions, D, std)}
	for i := 0; i < c.NLayer; i++ {
		m.Blocks = append(m.Blocks, &Block{
			LN1: newLayerNorm(D), CAttn: newConv(rng, D, 3*D, std), CProj: newConv(rng, D, D, projStd),
			LN2: newLayerNorm(D), CFc: newConv(rng, D, c.Inner(), std), MProj: newConv(rng, c.Inner(), D, projStd),
		})
	}
	m.LNF = newLayerNorm(D)
	if !c.TieWordEmbeddings {
		m.LMHead = normal(rng, c.VocabSize, D, std)
	}
	return m, nil
}

func matrixNamed(name string, p *nn.Param) transformer.NamedParam {
	r, c := tensor.Dims(p)
	return transformer.NamedParam{Name: name, Shape: []int{r, c}, Param: p}
}

func vectorNamed(name string, p *nn.Param) transformer.NamedParam {
	return transformer.NamedParam{Name: name, Shape: []int{p.Size()}, Param: p}
}

func (l LayerNorm) named(prefix string) []transformer.NamedParam {
	return []transformer.NamedParam{vectorNamed(prefix+".weight", l.Weight), vectorNamed(prefix+".bias", l.Bias)}
}

func (l Conv1D) named(prefix string) []transformer.NamedParam {
	return []transformer.NamedParam{matrixNamed(prefix+".weight", l.Weight), vectorNamed(prefix+".bias", l.Bias)}
}

// NamedParams lists every parameter under its Hugging Face GPT2Model name
// (no "transformer." prefix), in a fixed order; an untied output layer is
// lm_head.weight (GPT2LMHeadModel's name, outside the base model).
func (m *Model) NamedParams() []transformer.NamedParam {
	ps := []transformer.NamedParam{matrixNamed("wte.weight", m.WTE), matrixNamed("wpe.weight", m.WPE)}
	for i, b := range m.Blocks {
		p := "h." + strconv.Itoa(i)
		ps = append(ps, b.LN1.named(p+".ln_1")...)
		ps = append(ps, b.CAttn.named(p+".attn.c_attn")...)
		ps = append(ps, b.CProj.named(p+".attn.c_proj")...)
		ps = append(ps, b.LN2.named(p+".ln_2")...)
		ps = append(ps, b.CFc.named(p+".mlp.c_fc")...)
		ps = append(ps, b.MProj.named(p+".mlp.c_proj")...)
	}
	ps = append(ps, m.LNF.named("ln_f")...)
	if m.LMHead != nil {
		ps = append(ps, matrixNamed("lm_head.weight", m.LMHead))
	}
	return ps
}

// Params lists the trainable parameters in NamedParams order.
func (m *Model) Params() []*nn.Param { return transformer.Params(m.NamedParams()) }

// VocabSize is the number of logits per position (generate.Model).
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// MaxLength is the context window (generate.Model).
func (m *Model) MaxLength() int { return m.Config.NPositions }

// output is the output layer's [V, D] matrix.
func (m *Model) output() *nn.Param {
	if m.LMHead != nil {
		return m.LMHead
	}
	return m.WTE
}

// attnScale is the attention scale of layer i (0-based).
func (c Config) attnScale(i int) float32 {
	s := 1.0
	if c.ScaleAttnWeights {
		s /= math.Sqrt(float64(c.NEmbd / c.NHead))
	}
	if c.ScaleAttnByInverseLayerIdx {
		s /= float64(i + 1)
	}
	return float32(s)
}

func (c Config) activate(x mat.Tensor) mat.Tensor {
	switch activations[c.Activation] {
	case "gelu":
		return tensor.GELU(x)
	case "relu":
		return tensor.ReLU(x)
	}
	return tensor.GELUTanh(x)
}

// attendFunc computes the attention output of a layer from its q, k and v
// ([n, D] each); it is where training (whole sequences) and inference (a
// key/value cache) differ.
type attendFunc func(layer int, q, k, v mat.Tensor) mat.Tensor

// affineFunc computes x W + b for one of the model's Conv1D layers:
// tensor.Affine in training, a product with prepacked weights in a
// Session.
type affineFunc func(x mat.Tensor, l Conv1D) mat.Tensor

func affine(x mat.Tensor, l Conv1D) mat.Tensor { return tensor.Affine(x, l.Weight, l.Bias) }

// embed returns wte[ids] + wpe[pos] with embedding dropout.
func (m *Model) embed(ids, pos []int, rng *rand.Rand) mat.Tensor {
	x := tensor.Add(tensor.Gather(m.WTE, ids), tensor.Gather(m.WPE, pos))
	return tensor.Dropout(x, m.Config.EmbdPdrop, rng)
}

// blocks runs every layer and the final layer norm on x [n, D].
func (m *Model) blocks(x mat.Tensor, attend attendFunc, affine affineFunc, rng *rand.Rand) mat.Tensor {
	c := m.Config
	D := c.NEmbd
	eps := c.LayerNormEps
	for i, b := range m.Blocks {
		h := tensor.LayerNorm(x, b.LN1.Weight, b.LN1.Bias, eps)
		qkv := affine(h, b.CAttn)
		a := attend(i, tensor.SliceCols(qkv, 0, D), tensor.SliceCols(qkv, D, 2*D), tensor.SliceCols(qkv, 2*D, 3*D))
		x = tensor.Add(x, tensor.Dropout(affine(a, b.CProj), c.ResidPdrop, rng))
		h = tensor.LayerNorm(x, b.LN2.Weight, b.LN2.Bias, eps)
		f := affine(c.activate(affine(h, b.CFc)), b.MProj)
		x = tensor.Add(x, tensor.Dropout(f, c.ResidPdrop, rng))
	}
	return tensor.LayerNorm(x, m.LNF.Weight, m.LNF.Bias, eps)
}

// validate checks a padded batch against the model: lengths, positions and
// token ids.
func (m *Model) validate(b transformer.Batch) error {
	c := m.Config
	if b.B <= 0 || b.T <= 0 || len(b.IDs) != b.B*b.T || len(b.Lens) != b.B {
		return fmt.Errorf("gpt2: malformed batch: B=%d T=%d with %d ids and %d lengths", b.B, b.T, len(b.IDs), len(b.Lens))
	}
	if b.T > c.NPositions {
		return fmt.Errorf("gpt2: sequences of %d tokens exceed the context window of %d", b.T, c.NPositions)
	}
	for i, l := range b.Lens {
		if l < 1 || l > b.T {
			return fmt.Errorf("gpt2: sequence %d has length %d, want 1..%d", i, l, b.T)
		}
	}
	for i, id := range b.IDs {
		if id < 0 || id >= c.VocabSize {
			return fmt.Errorf("gpt2: token id %d (sequence %d, position %d) outside the vocabulary of %d", id, i/b.T, i%b.T, c.VocabSize)
		}
	}
	return nil
}

// positions returns 0..T-1 for each of the batch's B rows.
func positions(B, T int) []int {
	pos := make([]int, B*T)
	for i := range pos {
		pos[i] = i % T
	}
	return pos
}

// Hidden runs the model on a padded batch (causal attention, padding
// masked) and returns the final layer norm's output [B*T, D]. rng supplies
// dropout; nil means evaluation.
func (m *Model) Hidden(b transformer.Batch, rng *rand.Rand) (mat.Tensor, error) {
	if err := m.validate(b); err != nil {
		return nil, err
	}
	c := m.Config
	spec := tensor.AttentionSpec{Batch: b.B, Heads: c.NHead, QLen: b.T, KLen: b.T, KeyLens: b.Lens, Causal: true}
	if rng != nil {
		spec.DropProb, spec.Rng = c.AttnPdrop, rng
	}
	attend := func(i int, q, k, v mat.Tensor) mat.Tensor {
		s := spec
		s.Scale = c.attnScale(i)
		return tensor.Attention(q, k, v, s)
	}
	return m.blocks(m.embed(b.IDs, positions(b.B, b.T), rng), attend, affine, rng), nil
}

// Forward returns the logits [B*T, V] of every position of a padded batch.
func (m *Model) Forward(b transformer.Batch, rng *rand.Rand) (mat.Tensor, error) {
	h, err := m.Hidden(b, rng)
	if err != nil {
		return nil, err
	}
	return tensor.Linear(h, m.output(), nil), nil
}

// Targets returns the next-token targets of a padded batch: position t of
// sequence b predicts token t+1; the last real position and the padding
// get tensor.IgnoreIndex.
func Targets(b transformer.Batch) []int {
	tg := make([]int, b.B*b.T)
	for s := 0; s < b.B; s++ {
		for t := 0; t < b.T; t++ {
			if t+1 < b.Lens[s] {
				tg[s*b.T+t] = b.IDs[s*b.T+t+1]
			} else {
				tg[s*b.T+t] = tensor.IgnoreIndex
			}
		}
	}
	return tg
}

// Loss returns the mean next-token cross-entropy over the batch's
// predicted positions (every real token after the first).
func (m *Model) Loss(b transformer.Batch, rng *rand.Rand) (mat.Tensor, error) {
	logits, err := m.Forward(b, rng)
	if err != nil {
		return nil, err
	}
	return tensor.CrossEntropy(logits, Targets(b)), nil
}
