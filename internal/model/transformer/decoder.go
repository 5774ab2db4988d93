package transformer

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/tensor"
)

// Decoder is a post-LN Transformer decoder stack: token + position
// embeddings, then per layer masked self-attention, cross-attention to a
// memory, and the FFN, each followed by add & norm; the output projection
// is the word-embedding matrix (transposed) plus a bias. PaSeR's
// generative decoder shares the word embeddings with the sentence encoder:
// pass the encoder's matrix to NewDecoder and the gradients of both uses
// sum into it.
type Decoder struct {
	Config     Config
	Embeddings Embeddings // Word may be the encoder's; TokenType is nil
	Layers     []*Layer   // with Cross set
	OutputBias *nn.Param  // cls.predictions.bias, [V]
	tied       bool
}

// NewDecoder builds a decoder initialised from rng. word is the [V, D]
// word-embedding matrix to share (tie) or nil for the decoder's own.
// c.TypeVocab is ignored: decoders take no segment ids.
func NewDecoder(c Config, word *nn.Param, rng *rand.Rand) (*Decoder, error) {
	c.TypeVocab = 0
	if err := c.Validate(); err != nil {
		return nil, err
	}
	d := &Decoder{Config: c}
	if word != nil {
		if r, w := tensor.Dims(word); r != c.VocabSize || w != c.Hidden {
			return nil, fmt.Errorf("transformer: shared word embeddings are %dx%d, the decoder needs %dx%d", r, w, c.VocabSize, c.Hidden)
		}
		d.Embeddings.Word, d.tied = word, true
	} else {
		d.Embeddings.Word = TruncNormal(rng, c.VocabSize, c.Hidden, InitStd)
		clear(tensor.Data(d.Embeddings.Word)[c.PadID*c.Hidden : (c.PadID+1)*c.Hidden])
	}
	d.Embeddings.Position = TruncNormal(rng, c.MaxPosition, c.Hidden, InitStd)
	d.Embeddings.LayerNorm = newLayerNorm(c.Hidden)
	for i := 0; i < c.Layers; i++ {
		d.Layers = append(d.Layers, newLayer(rng, c, true))
	}
	d.OutputBias = constParam(c.VocabSize, 0)
	return d, nil
}

// NamedParams lists the decoder's parameters under HF BertLMHeadModel
// names (is_decoder with add_cross_attention; no "bert." prefix). Shared
// word embeddings are left out: they belong to the encoder.
func (d *Decoder) NamedParams() []NamedParam {
	var ps []NamedParam
	if !d.tied {
		ps = append(ps, matrixNamed("embeddings.word_embeddings.weight", d.Embeddings.Word))
	}
	ps = append(ps, matrixNamed("embeddings.position_embeddings.weight", d.Embeddings.Position))
	ps = append(ps, d.Embeddings.LayerNorm.named("embeddings.LayerNorm")...)
	for i, l := range d.Layers {
		ps = append(ps, l.named("encoder.layer."+strconv.Itoa(i))...)
	}
	ps = append(ps, NamedParam{Name: "cls.predictions.bias", Shape: []int{d.Config.VocabSize}, Param: d.OutputBias})
	return ps
}

// Memory is what the decoder cross-attends to: [B*Len, D] rows, Len per
// sequence, of which Lens[b] are real (nil: all).
type Memory struct {
	States mat.Tensor
	Len    int
	Lens   []int
}

// Forward runs the decoder on target tokens tgt (teacher forcing: position
// t sees positions <= t) against mem, returning the logits [B*T, V] and
// the last hidden states [B*T, D]. rng supplies dropout; nil means
// evaluation.
func (d *Decoder) Forward(tgt Batch, mem Memory, rng *rand.Rand) (logits, hidden mat.Tensor, err error) {
	c := d.Config
	if err := tgt.validate(c); err != nil {
		return nil, nil, err
	}
	if tgt.TypeIDs != nil {
		return nil, nil, fmt.Errorf("transformer: the decoder takes no segment ids")
	}
	rows, width := tensor.Dims(mem.States)
	if mem.Len <= 0 || rows != tgt.B*mem.Len || width != c.Hidden {
		return nil, nil, fmt.Errorf("transformer: memory is %dx%d, want %d sequences of %d rows of width %d", rows, width, tgt.B, mem.Len, c.Hidden)
	}
	if mem.Lens != nil {
		if len(mem.Lens) != tgt.B {
			return nil, nil, fmt.Errorf("transformer: %d memory lengths for %d sequences", len(mem.Lens), tgt.B)
		}
		for i, l := range mem.Lens {
			if l < 1 || l > mem.Len {
				return nil, nil, fmt.Errorf("transformer: memory length %d of sequence %d outside 1..%d", l, i, mem.Len)
			}
		}
	}
	x := embed(c, d.Embeddings, tgt, rng)
	self := tensor.AttentionSpec{Batch: tgt.B, QLen: tgt.T, KLen: tgt.T, KeyLens: tgt.Lens, Causal: true}
	cross := tensor.AttentionSpec{Batch: tgt.B, QLen: tgt.T, KLen: mem.Len, KeyLens: mem.Lens}
	for _, l := range d.Layers {
		x = l.Attention.attend(c, x, x, self, rng)
		x = l.Cross.attend(c, x, mem.States, cross, rng)
		x = l.feedForward(c, x, rng)
	}
	return tensor.Linear(x, d.Embeddings.Word, d.OutputBias), x, nil
}

// MLMHead is BERT's masked-language-model head: dense + GELU + layer norm,
// then the (tied) word embeddings transposed plus a bias.
type MLMHead struct {
	Transform Linear
	LayerNorm LayerNorm
	Word      *nn.Param // the encoder's word embeddings
	Bias      *nn.Param
	eps       float32
}

// NewMLMHead builds an MLM head tied to e's word embeddings.
func NewMLMHead(e *Encoder, rng *rand.Rand) *MLMHead {
	c := e.Config
	return &MLMHead{
		Transform: newLinear(rng, c.Hidden, c.Hidden), LayerNorm: newLayerNorm(c.Hidden),
		Word: e.Embeddings.Word, Bias: constParam(c.VocabSize, 0), eps: c.LayerNormEps,
	}
}

// Forward maps hidden states [N, D] to vocabulary logits [N, V].
func (h *MLMHead) Forward(x mat.Tensor) mat.Tensor {
	x = h.LayerNorm.forward(tensor.GELU(h.Transform.forward(x)), h.eps)
	return tensor.Linear(x, h.Word, h.Bias)
}

// NamedParams lists the head's own parameters under HF BertForMaskedLM
// names (the tied decoder weight is the encoder's word embeddings).
func (h *MLMHead) NamedParams() []NamedParam {
	ps := h.Transform.named("cls.predictions.transform.dense")
	ps = append(ps, h.LayerNorm.named("cls.predictions.transform.LayerNorm")...)
	return append(ps, NamedParam{Name: "cls.predictions.bias", Shape: []int{h.Bias.Size()}, Param: h.Bias})
}

// RoBERTaNamedParams lists the same parameters under HF
// RobertaForMaskedLM's names (lm_head.dense, lm_head.layer_norm,
// lm_head.bias; lm_head.decoder.weight is tied to the word embeddings).
func (h *MLMHead) RoBERTaNamedParams() []NamedParam {
	ps := h.Transform.named("lm_head.dense")
	ps = append(ps, h.LayerNorm.named("lm_head.layer_norm")...)
	return append(ps, NamedParam{Name: "lm_head.bias", Shape: []int{h.Bias.Size()}, Param: h.Bias})
}
