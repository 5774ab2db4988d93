package transformer

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/tensor"
)

// Batch is a padded batch of token-id sequences, flattened row-major:
// IDs[b*T+t] is token t of sequence b, PadID past Lens[b].
type Batch struct {
	B, T    int
	IDs     []int
	TypeIDs []int // segment ids, same layout; nil means all 0
	Lens    []int // real tokens per sequence
}

// NewBatch pads seqs to the longest one with pad. Empty sequences are an
// error: they have no token to pool.
func NewBatch(seqs [][]int, pad int) (Batch, error) {
	if len(seqs) == 0 {
		return Batch{}, fmt.Errorf("transformer: empty batch")
	}
	T := 0
	for i, s := range seqs {
		if len(s) == 0 {
			return Batch{}, fmt.Errorf("transformer: sequence %d of the batch is empty", i)
		}
		T = max(T, len(s))
	}
	b := Batch{B: len(seqs), T: T, IDs: make([]int, len(seqs)*T), Lens: make([]int, len(seqs))}
	for i, s := range seqs {
		copy(b.IDs[i*T:], s)
		for t := len(s); t < T; t++ {
			b.IDs[i*T+t] = pad
		}
		b.Lens[i] = len(s)
	}
	return b, nil
}

func (b Batch) validate(c Config) error {
	if b.B <= 0 || b.T <= 0 || len(b.IDs) != b.B*b.T || len(b.Lens) != b.B {
		return fmt.Errorf("transformer: malformed batch: B=%d T=%d with %d ids and %d lengths", b.B, b.T, len(b.IDs), len(b.Lens))
	}
	if b.T > c.MaxLen() {
		return fmt.Errorf("transformer: sequences of %d tokens exceed the %d positions of the model", b.T, c.MaxLen())
	}
	for i, l := range b.Lens {
		if l < 1 || l > b.T {
			return fmt.Errorf("transformer: sequence %d has length %d, want 1..%d", i, l, b.T)
		}
	}
	for i, id := range b.IDs {
		if id < 0 || id >= c.VocabSize {
			return fmt.Errorf("transformer: token id %d (sequence %d, position %d) outside the vocabulary of %d", id, i/b.T, i%b.T, c.VocabSize)
		}
	}
	if b.TypeIDs != nil {
		if len(b.TypeIDs) != len(b.IDs) {
			return fmt.Errorf("transformer: %d segment ids for %d tokens", len(b.TypeIDs), len(b.IDs))
		}
		for i, id := range b.TypeIDs {
			if id < 0 || id >= max(c.TypeVocab, 1) {
				return fmt.Errorf("transformer: segment id %d (sequence %d, position %d) outside [0, %d)", id, i/b.T, i%b.T, max(c.TypeVocab, 1))
			}
		}
	}
	return nil
}

// Embeddings are the input embeddings with their layer norm.
type Embeddings struct {
	Word, Position, TokenType *nn.Param // TokenType is nil when type_vocab_size is 0
	LayerNorm                 LayerNorm
}

// AttentionBlock is multi-head attention with its output projection and
// the post-attention layer norm (HF's BertAttention).
type AttentionBlock struct {
	Query, Key, Value, Output Linear
	LayerNorm                 LayerNorm
}

// Layer is one transformer block; Cross is set in decoder layers only.
type Layer struct {
	Attention    AttentionBlock
	Cross        *AttentionBlock
	Intermediate Linear
	Output       Linear
	LayerNorm    LayerNorm
}

// Encoder is a BERT/RoBERTa-shaped Transformer encoder.
type Encoder struct {
	Config     Config
	Embeddings Embeddings
	Layers     []*Layer
	Pooler     *Linear // pooler.dense; nil unless Config.Pooler
}

func newAttentionBlock(rng *rand.Rand, d int) AttentionBlock {
	return AttentionBlock{
		Query: newLinear(rng, d, d), Key: newLinear(rng, d, d), Value: newLinear(rng, d, d),
		Output: newLinear(rng, d, d), LayerNorm: newLayerNorm(d),
	}
}

func newLayer(rng *rand.Rand, c Config, cross bool) *Layer {
	l := &Layer{Attention: newAttentionBlock(rng, c.Hidden)}
	if cross {
		cb := newAttentionBlock(rng, c.Hidden)
		l.Cross = &cb
	}
	l.Intermediate = newLinear(rng, c.Hidden, c.Intermediate)
	l.Output = newLinear(rng, c.Intermediate, c.Hidden)
	l.LayerNorm = newLayerNorm(c.Hidden)
	return l
}

// NewEncoder builds an encoder with BERT's initialisation drawn from rng.
func NewEncoder(c Config, rng *rand.Rand) (*Encoder, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	e := &Encoder{Config: c}
	e.Embeddings.Word = TruncNormal(rng, c.VocabSize, c.Hidden, InitStd)
	clear(tensor.Data(e.Embeddings.Word)[c.PadID*c.Hidden : (c.PadID+1)*c.Hidden])
	e.Embeddings.Position = TruncNormal(rng, c.MaxPosition, c.Hidden, InitStd)
	if c.TypeVocab > 0 {
		e.Embeddings.TokenType = TruncNormal(rng, c.TypeVocab, c.Hidden, InitStd)
	}
	e.Embeddings.LayerNorm = newLayerNorm(c.Hidden)
	for i := 0; i < c.Layers; i++ {
		e.Layers = append(e.Layers, newLayer(rng, c, false))
	}
	if c.Pooler {
		p := newLinear(rng, c.Hidden, c.Hidden)
		e.Pooler = &p
	}
	return e, nil
}

func (a AttentionBlock) named(prefix string) []NamedParam {
	var ps []NamedParam
	ps = append(ps, a.Query.named(prefix+".self.query")...)
	ps = append(ps, a.Key.named(prefix+".self.key")...)
	ps = append(ps, a.Value.named(prefix+".self.value")...)
	ps = append(ps, a.Output.named(prefix+".output.dense")...)
	ps = append(ps, a.LayerNorm.named(prefix+".output.LayerNorm")...)
	return ps
}

func (l *Layer) named(prefix string) []NamedParam {
	ps := l.Attention.named(prefix + ".attention")
	if l.Cross != nil {
		ps = append(ps, l.Cross.named(prefix+".crossattention")...)
	}
	ps = append(ps, l.Intermediate.named(prefix+".intermediate.dense")...)
	ps = append(ps, l.Output.named(prefix+".output.dense")...)
	ps = append(ps, l.LayerNorm.named(prefix+".output.LayerNorm")...)
	return ps
}

// NamedParams lists every parameter under its Hugging Face BertModel name
// (no "bert." prefix; RoBERTa uses the same names), in a fixed order.
func (e *Encoder) NamedParams() []NamedParam {
	ps := []NamedParam{
		matrixNamed("embeddings.word_embeddings.weight", e.Embeddings.Word),
		matrixNamed("embeddings.position_embeddings.weight", e.Embeddings.Position),
	}
	if e.Embeddings.TokenType != nil {
		ps = append(ps, matrixNamed("embeddings.token_type_embeddings.weight", e.Embeddings.TokenType))
	}
	ps = append(ps, e.Embeddings.LayerNorm.named("embeddings.LayerNorm")...)
	for i, l := range e.Layers {
		ps = append(ps, l.named("encoder.layer."+strconv.Itoa(i))...)
	}
	if e.Pooler != nil {
		ps = append(ps, e.Pooler.named("pooler.dense")...)
	}
	return ps
}

// Output holds an encoder pass: Hidden[0] is the embedding output and
// Hidden[i] the output of layer i, each [B*T, D].
type Output struct {
	Batch  Batch
	Hidden []mat.Tensor
}

// Last is the final layer's output.
func (o *Output) Last() mat.Tensor { return o.Hidden[len(o.Hidden)-1] }

// embed returns LN(word + position (+ segment)) for the batch, with
// dropout when rng is not nil.
func embed(c Config, emb Embeddings, b Batch, rng *rand.Rand) mat.Tensor {
	pos := make([]int, b.B*b.T)
	for i := range pos {
		pos[i] = c.PositionOffset + i%b.T
	}
	x := tensor.Add(tensor.Gather(emb.Word, b.IDs), tensor.Gather(emb.Position, pos))
	if emb.TokenType != nil {
		types := b.TypeIDs
		if types == nil {
			types = make([]int, len(b.IDs))
		}
		x = tensor.Add(x, tensor.Gather(emb.TokenType, types))
	}
	x = emb.LayerNorm.forward(x, c.LayerNormEps)
	return tensor.Dropout(x, c.HiddenDropout, rng)
}

// attend runs one attention block with its residual and layer norm.
func (a AttentionBlock) attend(c Config, x, mem mat.Tensor, spec tensor.AttentionSpec, rng *rand.Rand) mat.Tensor {
	q := a.Query.forward(x)
	k := a.Key.forward(mem)
	v := a.Value.forward(mem)
	spec.Heads = c.Heads
	if rng != nil {
		spec.DropProb, spec.Rng = c.AttentionDropout, rng
	}
	h := tensor.Attention(q, k, v, spec)
	h = tensor.Dropout(a.Output.forward(h), c.HiddenDropout, rng)
	return a.LayerNorm.forward(tensor.Add(h, x), c.LayerNormEps)
}

func (l *Layer) feedForward(c Config, x mat.Tensor, rng *rand.Rand) mat.Tensor {
	h := tensor.GELU(l.Intermediate.forward(x))
	h = tensor.Dropout(l.Output.forward(h), c.HiddenDropout, rng)
	return l.LayerNorm.forward(tensor.Add(h, x), c.LayerNormEps)
}

// Forward encodes the batch. rng supplies dropout; nil means evaluation.
func (e *Encoder) Forward(b Batch, rng *rand.Rand) (*Output, error) {
	if err := b.validate(e.Config); err != nil {
		return nil, err
	}
	c := e.Config
	x := embed(c, e.Embeddings, b, rng)
	out := &Output{Batch: b, Hidden: []mat.Tensor{x}}
	spec := tensor.AttentionSpec{Batch: b.B, QLen: b.T, KLen: b.T, KeyLens: b.Lens}
	for _, l := range e.Layers {
		x = l.Attention.attend(c, x, x, spec, rng)
		x = l.feedForward(c, x, rng)
		out.Hidden = append(out.Hidden, x)
	}
	return out, nil
}

// Pooling names how token states become one sentence vector.
type Pooling string

const (
	// PoolCLS is the first token through the pooler (dense + tanh);
	// SimCSE's unsupervised training uses it.
	PoolCLS Pooling = "cls"
	// PoolCLSBeforePooler is the raw first-token state.
	PoolCLSBeforePooler Pooling = "cls_before_pooler"
	// PoolMean averages the last layer over real tokens (PaSeR's "Top1 avg").
	PoolMean Pooling = "mean"
	// PoolFirstLastAvg averages the first and last layers' outputs, then
	// over real tokens (SimCSE's avg_first_last: hidden_states[1] and [-1]).
	PoolFirstLastAvg Pooling = "first_last_avg"
	// PoolTop2Avg averages the last two layers, then over real tokens.
	PoolTop2Avg Pooling = "top2_avg"
)

// Poolings lists the pooling names Pool accepts.
func Poolings() []Pooling {
	return []Pooling{PoolCLS, PoolCLSBeforePooler, PoolMean, PoolFirstLastAvg, PoolTop2Avg}
}

// PoolingNames lists Poolings as strings, for a parameter's check.
func PoolingNames() []string {
	var names []string
	for _, p := range Poolings() {
		names = append(names, string(p))
	}
	return names
}

// Pool turns an encoder output into [B, D] sentence vectors.
func (e *Encoder) Pool(o *Output, p Pooling) (mat.Tensor, error) {
	b := o.Batch
	switch p {
	case PoolCLS:
		if e.Pooler == nil {
			return nil, fmt.Errorf("transformer: pooling %q needs the pooler layer (config add_pooling_layer)", p)
		}
		return tensor.Tanh(e.Pooler.forward(tensor.FirstTokens(o.Last(), b.B, b.T))), nil
	case PoolCLSBeforePooler:
		return tensor.FirstTokens(o.Last(), b.B, b.T), nil
	case PoolMean:
		return tensor.MeanPool(o.Last(), b.B, b.T, b.Lens), nil
	case PoolFirstLastAvg, PoolTop2Avg:
		if len(o.Hidden) < 3 {
			return nil, fmt.Errorf("transformer: pooling %q needs at least 2 layers, the model has %d", p, len(o.Hidden)-1)
		}
		first := o.Hidden[1]
		if p == PoolTop2Avg {
			first = o.Hidden[len(o.Hidden)-2]
		}
		avg := tensor.Scale(tensor.Add(first, o.Last()), 0.5)
		return tensor.MeanPool(avg, b.B, b.T, b.Lens), nil
	}
	return nil, fmt.Errorf("transformer: unknown pooling %q (known: %v)", p, Poolings())
}

// Encode embeds token-id sequences in evaluation mode (no dropout, no
// gradients kept), returning one vector per sequence.
func (e *Encoder) Encode(seqs [][]int, p Pooling) ([][]float32, error) {
	b, err := NewBatch(seqs, e.Config.PadID)
	if err != nil {
		return nil, err
	}
	o, err := e.Forward(b, nil)
	if err != nil {
		return nil, err
	}
	pooled, err := e.Pool(o, p)
	if err != nil {
		return nil, err
	}
	d := tensor.Data(pooled)
	_, w := tensor.Dims(pooled)
	out := make([][]float32, b.B)
	for i := range out {
		out[i] = append([]float32(nil), d[i*w:(i+1)*w]...)
	}
	return out, nil
}

// InitWordEmbeddings copies pretrained vectors (GloVe) into the word
// embeddings for every vocabulary entry (vocab[i] is token id i) found in
// vectors, returning how many were found. Vectors shorter than the hidden
// size fill the leading columns and leave the rest as initialised;
// longer ones are an error.
func (e *Encoder) InitWordEmbeddings(vocab []string, vectors map[string][]float32) (int, error) {
	c := e.Config
	if len(vocab) != c.VocabSize {
		return 0, fmt.Errorf("transformer: vocabulary has %d entries, the model %d", len(vocab), c.VocabSize)
	}
	w := tensor.Data(e.Embeddings.Word)
	found := 0
	for id, word := range vocab {
		v, ok := vectors[word]
		if !ok || id == c.PadID {
			continue
		}
		if len(v) > c.Hidden {
			return found, fmt.Errorf("transformer: vector for %q has %d dimensions, more than hidden size %d", word, len(v), c.Hidden)
		}
		copy(w[id*c.Hidden:], v)
		found++
	}
	return found, nil
}
