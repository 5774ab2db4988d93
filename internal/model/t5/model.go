// Package t5 is the T5 family of text-to-text models (Raffel et al. 2020;
// v1.1 and Flan-T5): an encoder and a decoder of pre-norm blocks with RMS
// layer norms without bias, linear layers without bias, unscaled attention
// with a relative position bias (bucketed, bidirectional in the encoder,
// causal in the decoder, held by the first layer of each stack and shared
// by the others), a ReLU (v1.0) or gated-GELU (v1.1) feed-forward layer,
// one token embedding shared by both stacks, and an output layer tied to it
// with the decoder output scaled by d_model^-0.5 (v1.0) or a separate
// lm_head (v1.1). The decoder starts from the pad token.
//
// Design choices:
//
//   - Parameters keep Hugging Face's names and [out, in] layouts
//     (shared.weight, encoder.block.N.layer.0.SelfAttention.q.weight, ...),
//     so loading and saving are a name map and a saved model opens with
//     transformers' T5ForConditionalGeneration.
//   - Built from repro/internal/tensor's batched operators: one [B*T, D]
//     matrix per stack carries the batch; the position bias is one
//     [heads*q, k] matrix (tensor.BucketBias) shared by the batch.
//   - One forward serves training and inference. Generation (Start, a
//     generate.Session) encodes each prompt once and projects the encoder
//     output to every layer's cross-attention keys and values there; the
//     decoder then appends one token per step against its self-attention
//     cache.
//   - Initialisation is transformers' T5PreTrainedModel._init_weights,
//     drawn from a caller-owned *rand.Rand.
package t5

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

// Attention is one attention layer: q, k, v [inner, D] and o [D, inner]
// (Linear layout), and the relative position bias table [buckets, heads]
// in the first layer of a stack's self-attention (nil elsewhere).
type Attention struct {
	Q, K, V, O *nn.Param
	RelBias    *nn.Param
}

// FeedForward is DenseReluDense: wi [F, D] (wi_0 when gated), wi_1 [F, D]
// when gated (nil otherwise), wo [D, F].
type FeedForward struct {
	Wi, Wi1, Wo *nn.Param
}

// Block is one layer: self-attention, cross-attention (decoder only) and
// the feed-forward layer, each behind its own RMS norm gain.
type Block struct {
	SelfNorm  *nn.Param
	Self      Attention
	CrossNorm *nn.Param // nil in the encoder
	Cross     Attention
	FFNorm    *nn.Param
	FF        FeedForward
}

// Model is a T5 encoder-decoder with its language-model head.
type Model struct {
	Config  Config
	Shared  *nn.Param // [V, D]
	Encoder []*Block
	EncNorm *nn.Param
	Decoder []*Block
	DecNorm *nn.Param
	LMHead  *nn.Param // [V, D] when not tied; nil otherwise
	act     string
	gated   bool
}

func normal(rng *rand.Rand, rows, cols int, std float64) *nn.Param {
	m := tensor.Zeros(rows, cols)
	d := tensor.Data(m)
	for i := range d {
		d[i] = float32(rng.NormFloat64() * std)
	}
	return nn.NewParam(m)
}

func ones(n int) *nn.Param {
	m := tensor.Zeros(1, n)
	d := tensor.Data(m)
	for i := range d {
		d[i] = 1
	}
	return nn.NewParam(m)
}

// New builds a model with T5's initialisation drawn from rng.
func New(c Config, rng *rand.Rand) (*Model, error) {
	if c.ModelType == "" {
		c.ModelType = "t5"
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("t5: %w", err)
	}
	act, gated, _ := c.FeedForward()
	f := float64(c.InitializerFactor)
	if !(f > 0) {
		f = 1
	}
	D, I, F := c.DModel, c.Inner(), c.DFF
	attn := func(rel bool) Attention {
		a := Attention{
			Q: normal(rng, I, D, f*math.Pow(float64(D*c.DKV), -0.5)),
			K: normal(rng, I, D, f*math.Pow(float64(D), -0.5)),
			V: normal(rng, I, D, f*math.Pow(float64(D), -0.5)),
			O: normal(rng, D, I, f*math.Pow(float64(I), -0.5)),
		}
		if rel {
			a.RelBias = normal(rng, c.RelBuckets, c.NumHeads, f*math.Pow(float64(D), -0.5))
		}
		return a
	}
	ff := func() FeedForward {
		l := FeedForward{Wi: normal(rng, F, D, f*math.Pow(float64(D), -0.5))}
		if gated {
			l.Wi1 = normal(rng, F, D, f*math.Pow(float64(D), -0.5))
		}
		l.Wo = normal(rng, D, F, f*math.Pow(float64(F), -0.5))
		return l
	}
	m := &Model{Config: c, Shared: normal(rng, c.VocabSize, D, f), act: act, gated: gated}
	for i := 0; i < c.NumLayers; i++ {
		m.Encoder = append(m.Encoder, &Block{SelfNorm: ones(D), Self: attn(i == 0), FFNorm: ones(D), FF: ff()})
	}
	m.EncNorm = ones(D)
	for i := 0; i < c.DecoderLayers(); i++ {
		m.Decoder = append(m.Decoder, &Block{SelfNorm: ones(D), Self: attn(i == 0), CrossNorm: ones(D), Cross: attn(false),
			FFNorm: ones(D), FF: ff()})
	}
	m.DecNorm = ones(D)
	if !c.TieWordEmbeddings {
		m.LMHead = normal(rng, c.VocabSize, D, f)
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

func (a Attention) named(prefix string) []transformer.NamedParam {
	ps := []transformer.NamedParam{matrixNamed(prefix+".q.weight", a.Q), matrixNamed(prefix+".k.weight", a.K),
		matrixNamed(prefix+".v.weight", a.V), matrixNamed(prefix+".o.weight", a.O)}
	if a.RelBias != nil {
		ps = append(ps, matrixNamed(prefix+".relative_attention_bias.weight", a.RelBias))
	}
	return ps
}

func (l FeedForward) named(prefix string) []transformer.NamedParam {
	if l.Wi1 != nil {
		return []transformer.NamedParam{matrixNamed(prefix+".wi_0.weight", l.Wi), matrixNamed(prefix+".wi_1.weight", l.Wi1),
			matrixNamed(prefix+".wo.weight", l.Wo)}
	}
	return []transformer.NamedParam{matrixNamed(prefix+".wi.weight", l.Wi), matrixNamed(prefix+".wo.weight", l.Wo)}
}

func (b *Block) named(prefix string) []transformer.NamedParam {
	ps := append([]transformer.NamedParam{}, b.Self.named(prefix+".layer.0.SelfAttention")...)
	ps = append(ps, vectorNamed(prefix+".layer.0.layer_norm.weight", b.SelfNorm))
	ff := 1
	if b.CrossNorm != nil {
		ps = append(ps, b.Cross.named(prefix+".layer.1.EncDecAttention")...)
		ps = append(ps, vectorNamed(prefix+".layer.1.layer_norm.weight", b.CrossNorm))
		ff = 2
	}
	l := prefix + ".layer." + strconv.Itoa(ff)
	ps = append(ps, b.FF.named(l+".DenseReluDense")...)
	return append(ps, vectorNamed(l+".layer_norm.weight", b.FFNorm))
}

// NamedParams lists every parameter under its Hugging Face
// T5ForConditionalGeneration name, in a fixed order; lm_head.weight only
// when the output layer is not tied.
func (m *Model) NamedParams() []transformer.NamedParam {
	ps := []transformer.NamedParam{matrixNamed("shared.weight", m.Shared)}
	for i, b := range m.Encoder {
		ps = append(ps, b.named("encoder.block."+strconv.Itoa(i))...)
	}
	ps = append(ps, vectorNamed("encoder.final_layer_norm.weight", m.EncNorm))
	for i, b := range m.Decoder {
		ps = append(ps, b.named("decoder.block."+strconv.Itoa(i))...)
	}
	ps = append(ps, vectorNamed("decoder.final_layer_norm.weight", m.DecNorm))
	if m.LMHead != nil {
		ps = append(ps, matrixNamed("lm_head.weight", m.LMHead))
	}
	return ps
}

// Params lists the trainable parameters in NamedParams order.
func (m *Model) Params() []*nn.Param { return transformer.Params(m.NamedParams()) }

// VocabSize is the number of logits per position (generate.Model).
func (m *Model) VocabSize() int { return m.Config.VocabSize }

// MaxLength is 0: relative positions put no limit on the decoder's length
// (generate.Model).
func (m *Model) MaxLength() int { return 0 }

// linearFunc computes x W^T for one of the model's weights: tensor.Linear
// in training; a product with prepacked weights in a Session.
type linearFunc func(x mat.Tensor, w *nn.Param) mat.Tensor

func linear(x mat.Tensor, w *nn.Param) mat.Tensor { return tensor.Linear(x, w, nil) }

func (m *Model) activate(x mat.Tensor) mat.Tensor {
	switch m.act {
	case "gelu":
		return tensor.GELU(x)
	case "gelu_tanh":
		return tensor.GELUTanh(x)
	}
	return tensor.ReLU(x)
}

// feedForward is DenseReluDense: wo(dropout(act(wi x) [* wi_1 x])).
func (m *Model) feedForward(x mat.Tensor, l FeedForward, lin linearFunc, rng *rand.Rand) mat.Tensor {
	h := m.activate(lin(x, l.Wi))
	if l.Wi1 != nil {
		h = tensor.Mul(h, lin(x, l.Wi1))
	}
	return lin(tensor.Dropout(h, m.Config.DropoutRate, rng), l.Wo)
}

// attendFunc computes an attention layer's mixed values [n, inner] from
// its queries and the layer's keys and values: where training (whole
// sequences) and a Session (caches) differ. layer is the block index.
type attendFunc func(layer int, a Attention, q mat.Tensor, x mat.Tensor) mat.Tensor

// validate checks a padded batch against the vocabulary.
func (m *Model) validate(what string, b transformer.Batch) error {
	if b.B <= 0 || b.T <= 0 || len(b.IDs) != b.B*b.T || len(b.Lens) != b.B {
		return fmt.Errorf("t5: malformed %s batch: B=%d T=%d with %d ids and %d lengths", what, b.B, b.T, len(b.IDs), len(b.Lens))
	}
	for i, l := range b.Lens {
		if l < 1 || l > b.T {
			return fmt.Errorf("t5: %s sequence %d has length %d, want 1..%d", what, i, l, b.T)
		}
	}
	for i, id := range b.IDs {
		if id < 0 || id >= m.Config.VocabSize {
			return fmt.Errorf("t5: %s token id %d (sequence %d, position %d) outside the vocabulary of %d", what, id, i/b.T, i%b.T, m.Config.VocabSize)
		}
	}
	return nil
}

// Encoded is the encoder's output for a batch: hidden states [B*S, D]
// and the real length of each source.
type Encoded struct {
	Hidden mat.Tensor
	B, S   int
	Lens   []int
}

// Encode runs the encoder on a padded batch (padding masked) and returns
// its final, normed (and, in training, dropped-out) output. rng supplies
// dropout; nil means evaluation.
func (m *Model) Encode(src transformer.Batch, rng *rand.Rand) (*Encoded, error) {
	if err := m.validate("source", src); err != nil {
		return nil, err
	}
	c := m.Config
	p := c.DropoutRate
	bias := tensor.BucketBias(m.Encoder[0].Self.RelBias, c.buckets(src.T, src.T, 0, true), src.T, src.T)
	spec := tensor.AttentionSpec{Batch: src.B, Heads: c.NumHeads, QLen: src.T, KLen: src.T, KeyLens: src.Lens, Scale: 1, Bias: bias}
	if rng != nil {
		spec.DropProb, spec.Rng = p, rng
	}
	x := tensor.Dropout(tensor.Gather(m.Shared, src.IDs), p, rng)
	for _, b := range m.Encoder {
		h := tensor.RMSNorm(x, b.SelfNorm, c.LayerNormEps)
		a := tensor.Attention(linear(h, b.Self.Q), linear(h, b.Self.K), linear(h, b.Self.V), spec)
		x = tensor.Add(x, tensor.Dropout(linear(a, b.Self.O), p, rng))
		h = tensor.RMSNorm(x, b.FFNorm, c.LayerNormEps)
		x = tensor.Add(x, tensor.Dropout(m.feedForward(h, b.FF, linear, rng), p, rng))
	}
	out := tensor.Dropout(tensor.RMSNorm(x, m.EncNorm, c.LayerNormEps), p, rng)
	return &Encoded{Hidden: out, B: src.B, S: src.T, Lens: append([]int(nil), src.Lens...)}, nil
}

// decoderStack runs the decoder blocks on the embedded input x: self
// attention through selfAttend, cross-attention through crossAttend.
func (m *Model) decoderStack(x mat.Tensor, selfAttend, crossAttend attendFunc, lin linearFunc, rng *rand.Rand) mat.Tensor {
	c := m.Config
	p := c.DropoutRate
	for i, b := range m.Decoder {
		h := tensor.RMSNorm(x, b.SelfNorm, c.LayerNormEps)
		x = tensor.Add(x, tensor.Dropout(lin(selfAttend(i, b.Self, lin(h, b.Self.Q), h), b.Self.O), p, rng))
		h = tensor.RMSNorm(x, b.CrossNorm, c.LayerNormEps)
		x = tensor.Add(x, tensor.Dropout(lin(crossAttend(i, b.Cross, lin(h, b.Cross.Q), h), b.Cross.O), p, rng))
		h = tensor.RMSNorm(x, b.FFNorm, c.LayerNormEps)
		x = tensor.Add(x, tensor.Dropout(m.feedForward(h, b.FF, lin, rng), p, rng))
	}
	return tensor.Dropout(tensor.RMSNorm(x, m.DecNorm, c.LayerNormEps), p, rng)
}

// Decode runs the decoder on a padded batch of decoder inputs (each
// starting with the decoder start token) against enc, causal and padding
// masked, and returns the final normed output [B*T, D].
func (m *Model) Decode(tgt transformer.Batch, enc *Encoded, rng *rand.Rand) (mat.Tensor, error) {
	if err := m.validate("target", tgt); err != nil {
		return nil, err
	}
	if tgt.B != enc.B {
		return nil, fmt.Errorf("t5: %d decoder sequences for %d encoded sources", tgt.B, enc.B)
	}
	c := m.Config
	p := c.DropoutRate
	bias := tensor.BucketBias(m.Decoder[0].Self.RelBias, c.buckets(tgt.T, tgt.T, 0, false), tgt.T, tgt.T)
	self := tensor.AttentionSpec{Batch: tgt.B, Heads: c.NumHeads, QLen: tgt.T, KLen: tgt.T, KeyLens: tgt.Lens, Causal: true, Scale: 1, Bias: bias}
	cross := tensor.AttentionSpec{Batch: tgt.B, Heads: c.NumHeads, QLen: tgt.T, KLen: enc.S, KeyLens: enc.Lens, Scale: 1}
	if rng != nil {
		self.DropProb, self.Rng = p, rng
		cross.DropProb, cross.Rng = p, rng
	}
	selfAttend := func(_ int, a Attention, q, h mat.Tensor) mat.Tensor {
		return tensor.Attention(q, linear(h, a.K), linear(h, a.V), self)
	}
	crossAttend := func(_ int, a Attention, q, _ mat.Tensor) mat.Tensor {
		return tensor.Attention(q, linear(enc.Hidden, a.K), linear(enc.Hidden, a.V), cross)
	}
	x := tensor.Dropout(tensor.Gather(m.Shared, tgt.IDs), p, rng)
	return m.decoderStack(x, selfAttend, crossAttend, linear, rng), nil
}

// output is the output layer [V, D].
func (m *Model) output() *nn.Param {
	if m.LMHead != nil {
		return m.LMHead
	}
	return m.Shared
}

// Logits maps decoder outputs h [n, D] to logits [n, V]: the tied output
// layer sees h scaled by d_model^-0.5.
func (m *Model) Logits(h mat.Tensor) mat.Tensor {
	if m.LMHead == nil {
		h = tensor.Scale(h, m.outScale())
	}
	return tensor.Linear(h, m.output(), nil)
}

func (m *Model) outScale() float32 { return float32(math.Pow(float64(m.Config.DModel), -0.5)) }

// Forward returns the decoder logits [B*T, V] of a source batch and a
// batch of decoder inputs.
func (m *Model) Forward(src, dec transformer.Batch, rng *rand.Rand) (mat.Tensor, error) {
	enc, err := m.Encode(src, rng)
	if err != nil {
		return nil, err
	}
	h, err := m.Decode(dec, enc, rng)
	if err != nil {
		return nil, err
	}
	return m.Logits(h), nil
}
