package paser

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/mlm"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
	"repro/internal/text/mask"
)

// Memory names how the decoding signal becomes the decoder's memory.
type Memory string

const (
	// MemorySlots: four memory rows Es, Es', m|Es-Es'|, n|Es*Es'| (the
	// [B, 4D] signal viewed as [B, 4, D]).
	MemorySlots Memory = "slots"
	// MemoryProject: one memory row, Linear(4D, D) of the concatenated
	// signal.
	MemoryProject Memory = "project"
)

// Config is PaSeR's objective. DefaultConfig holds the paper's values.
type Config struct {
	DecoderLayers int                 // generative decoder depth (paper: 6)
	M, N          float32             // scales of |Es-Es'| and |Es*Es'| (paper: 10, 10)
	Pooling       transformer.Pooling // sentence vector (paper: cls)
	Memory        Memory              // how the signal feeds the decoder
	MLM           bool                // add L_MLM (eq. 4)
	MLMProb       float64             // BERT masking rate (0.15)
	// MaxLength caps encoder inputs in ids, [CLS] and [SEP] included
	// (paper: 32); MaxTargetLength caps decoder sequences, BOS and the
	// final SEP included.
	MaxLength, MaxTargetLength int
}

// DefaultConfig is the paper's unsupervised setting.
func DefaultConfig() Config {
	return Config{DecoderLayers: 6, M: 10, N: 10, Pooling: transformer.PoolCLS, Memory: MemorySlots,
		MLM: true, MLMProb: 0.15, MaxLength: 32, MaxTargetLength: 32}
}

// Model is the encoder with PaSeR's training-only decoder and MLM head.
type Model struct {
	Config    Config
	Encoder   *transformer.Encoder
	Tokenizer tokenizer.Tokenizer
	Decoder   *transformer.Decoder
	Project   *transformer.Linear  // MemoryProject only
	MLMHead   *transformer.MLMHead // Config.MLM only
	special   tokenizer.Specials
}

// New adds a decoder (and an MLM head) to enc, initialised from a
// generator seeded with seed. tok must be enc's tokenizer.
func New(enc *transformer.Encoder, tok tokenizer.Tokenizer, cfg Config, seed uint64) (*Model, error) {
	if enc == nil || tok == nil {
		return nil, fmt.Errorf("paser: an encoder and its tokenizer are required")
	}
	ec := enc.Config
	if tok.Size() != ec.VocabSize {
		return nil, fmt.Errorf("paser: the tokenizer has %d entries, the encoder's vocabulary %d", tok.Size(), ec.VocabSize)
	}
	sp := tok.Special()
	if sp.CLS < 0 || sp.SEP < 0 || sp.PAD < 0 {
		return nil, fmt.Errorf("paser: the vocabulary lacks a CLS, SEP or PAD token (ids %d, %d, %d)", sp.CLS, sp.SEP, sp.PAD)
	}
	if cfg.MLM && sp.MASK < 0 {
		return nil, fmt.Errorf("paser: MLM needs a mask token and the vocabulary has none")
	}
	switch {
	case cfg.DecoderLayers < 1:
		return nil, fmt.Errorf("paser: decoder_layers = %d, must be at least 1", cfg.DecoderLayers)
	case cfg.M < 0 || cfg.N < 0 || math.IsNaN(float64(cfg.M)) || math.IsNaN(float64(cfg.N)):
		return nil, fmt.Errorf("paser: m = %v and n = %v must not be negative", cfg.M, cfg.N)
	case cfg.MLM && !(cfg.MLMProb > 0 && cfg.MLMProb < 1):
		return nil, fmt.Errorf("paser: mlm_probability = %v, must be in (0, 1)", cfg.MLMProb)
	case cfg.MaxLength < 3 || cfg.MaxLength > ec.MaxLen():
		return nil, fmt.Errorf("paser: max_length = %d, must be in [3, %d] (the encoder's positions)", cfg.MaxLength, ec.MaxLen())
	case cfg.MaxTargetLength < 2 || cfg.MaxTargetLength > ec.MaxLen():
		return nil, fmt.Errorf("paser: max_target_length = %d, must be in [2, %d]", cfg.MaxTargetLength, ec.MaxLen())
	case cfg.Memory != MemorySlots && cfg.Memory != MemoryProject:
		return nil, fmt.Errorf("paser: memory %q, must be %q or %q", cfg.Memory, MemorySlots, MemoryProject)
	}
	known := false
	for _, p := range transformer.Poolings() {
		known = known || p == cfg.Pooling
	}
	if !known {
		return nil, fmt.Errorf("paser: unknown pooling %q (known: %v)", cfg.Pooling, transformer.Poolings())
	}
	if cfg.Pooling == transformer.PoolCLS && enc.Pooler == nil {
		return nil, fmt.Errorf("paser: pooling %q needs the encoder's pooler layer, which it lacks", cfg.Pooling)
	}
	if (cfg.Pooling == transformer.PoolTop2Avg || cfg.Pooling == transformer.PoolFirstLastAvg) && ec.Layers < 2 {
		return nil, fmt.Errorf("paser: pooling %q needs at least 2 encoder layers, the encoder has %d", cfg.Pooling, ec.Layers)
	}
	rng := rand.New(rand.NewPCG(seed, 0xdec0de))
	dc := ec
	dc.Layers = cfg.DecoderLayers
	dc.Pooler = false
	dec, err := transformer.NewDecoder(dc, enc.Embeddings.Word, rng)
	if err != nil {
		return nil, fmt.Errorf("paser: decoder: %w", err)
	}
	m := &Model{Config: cfg, Encoder: enc, Tokenizer: tok, Decoder: dec, special: sp}
	if cfg.Memory == MemoryProject {
		m.Project = &transformer.Linear{Weight: transformer.TruncNormal(rng, ec.Hidden, 4*ec.Hidden, transformer.InitStd), Bias: nn.NewParam(tensor.Zeros(1, ec.Hidden))}
	}
	if cfg.MLM {
		m.MLMHead = transformer.NewMLMHead(enc, rng)
	}
	return m, nil
}

// NamedParams lists every trainable parameter: the encoder's under its
// Hugging Face names (the shared word embeddings once, there), the
// decoder's under "decoder.", the projection under "decoder.signal_proj.",
// the MLM head's under HF BertForMaskedLM names ("cls.predictions.").
func (m *Model) NamedParams() []transformer.NamedParam {
	ps := m.Encoder.NamedParams()
	for _, p := range m.Decoder.NamedParams() {
		p.Name = "decoder." + p.Name
		ps = append(ps, p)
	}
	if m.Project != nil {
		out, in := tensor.Dims(m.Project.Weight)
		ps = append(ps,
			transformer.NamedParam{Name: "decoder.signal_proj.weight", Shape: []int{out, in}, Param: m.Project.Weight},
			transformer.NamedParam{Name: "decoder.signal_proj.bias", Shape: []int{out}, Param: m.Project.Bias})
	}
	if m.MLMHead != nil {
		ps = append(ps, m.MLMHead.NamedParams()...)
	}
	return ps
}

// Example is a tokenised masked pair: encoder ids of s and s' and the
// decoder sequence BOS p0 SEP p1 SEP ... SEP.
type Example struct {
	Sentence, Masked, Target []int
	// Dropped counts the targets left out because the tokenizer keeps
	// nothing of them (a phrase of characters it discards, such as the
	// U+FFFD replacement characters of mis-decoded STS sentences).
	Dropped int
}

// pieces returns text's token ids without the framing special tokens.
func (m *Model) pieces(s string) []int {
	ids := m.Tokenizer.Encode(s, 0)
	if len(ids) >= 2 {
		return ids[1 : len(ids)-1]
	}
	return nil
}

// Prepare tokenises masked pairs. Row numbers in errors count from 1.
func (m *Model) Prepare(pairs []mask.MaskedPair) ([]Example, error) {
	out := make([]Example, len(pairs))
	for i, p := range pairs {
		if p.Sentence == "" || p.Masked == "" {
			return nil, fmt.Errorf("row %d: empty sentence or masked sentence", i+1)
		}
		ex := Example{
			Sentence: m.Tokenizer.Encode(p.Sentence, m.Config.MaxLength),
			Masked:   m.Tokenizer.Encode(p.Masked, m.Config.MaxLength),
		}
		tgt := []int{m.special.CLS}
		for j, ph := range p.Targets {
			if strings.TrimSpace(ph) == "" {
				return nil, fmt.Errorf("row %d: target %d is blank", i+1, j+1)
			}
			ids := m.pieces(ph)
			if len(ids) == 0 {
				ex.Dropped++
				continue
			}
			tgt = append(append(tgt, ids...), m.special.SEP)
		}
		if len(tgt) == 1 {
			tgt = append(tgt, m.special.SEP)
		}
		if len(tgt) > m.Config.MaxTargetLength {
			tgt = tgt[:m.Config.MaxTargetLength]
			tgt[len(tgt)-1] = m.special.SEP
		}
		ex.Target = tgt
		out[i] = ex
	}
	return out, nil
}

// Signal builds the decoder memory from the sentence vectors es (of s) and
// ems (of s'), both [B, D] (eq. 2).
func (m *Model) Signal(es, ems mat.Tensor) transformer.Memory {
	b, _ := tensor.Dims(es)
	diff := tensor.Scale(tensor.Abs(tensor.Sub(es, ems)), m.Config.M)
	prod := tensor.Scale(tensor.Abs(tensor.Mul(es, ems)), m.Config.N)
	if m.Config.Memory == MemoryProject {
		cat := tensor.ConcatCols(es, ems, diff, prod)
		return transformer.Memory{States: tensor.Linear(cat, m.Project.Weight, m.Project.Bias), Len: 1}
	}
	// Rows k*B+b of the stacked parts become row 4b+k: the [B, 4D]
	// concatenation read as [B*4, D].
	stacked := tensor.ConcatRows(es, ems, diff, prod)
	idx := make([]int, 4*b)
	for i := 0; i < b; i++ {
		for k := 0; k < 4; k++ {
			idx[4*i+k] = k*b + i
		}
	}
	return transformer.Memory{States: tensor.Gather(stacked, idx), Len: 4}
}

// embedPooled encodes seqs in one pass and pools them with the model's
// pooling, returning [len(seqs), D].
func (m *Model) embedPooled(seqs [][]int, rng *rand.Rand) (mat.Tensor, error) {
	b, err := transformer.NewBatch(seqs, m.Encoder.Config.PadID)
	if err != nil {
		return nil, err
	}
	o, err := m.Encoder.Forward(b, rng)
	if err != nil {
		return nil, err
	}
	return m.Encoder.Pool(o, m.Config.Pooling)
}

// GenerativeLoss is eq. 3 over a batch: encode s and s', build the signal,
// and score the decoder's teacher-forced prediction of each target.
func (m *Model) GenerativeLoss(batch []Example, rng *rand.Rand) (mat.Tensor, error) {
	n := len(batch)
	if n == 0 {
		return nil, fmt.Errorf("paser: empty batch")
	}
	seqs := make([][]int, 0, 2*n)
	for _, ex := range batch {
		seqs = append(seqs, ex.Sentence)
	}
	for _, ex := range batch {
		seqs = append(seqs, ex.Masked)
	}
	pooled, err := m.embedPooled(seqs, rng)
	if err != nil {
		return nil, fmt.Errorf("paser: encoder: %w", err)
	}
	mem := m.Signal(tensor.SliceRows(pooled, 0, n), tensor.SliceRows(pooled, n, 2*n))
	in := make([][]int, n)
	T := 0
	for i, ex := range batch {
		if len(ex.Target) < 2 {
			return nil, fmt.Errorf("paser: example %d has a target of %d ids, want at least BOS and SEP", i, len(ex.Target))
		}
		in[i] = ex.Target[:len(ex.Target)-1]
		T = max(T, len(in[i]))
	}
	tb, err := transformer.NewBatch(in, m.Encoder.Config.PadID)
	if err != nil {
		return nil, err
	}
	labels := make([]int, n*T)
	for i, ex := range batch {
		for t := 0; t < T; t++ {
			if t < len(in[i]) {
				labels[i*T+t] = ex.Target[t+1]
			} else {
				labels[i*T+t] = loss.IgnoreIndex
			}
		}
	}
	logits, _, err := m.Decoder.Forward(tb, mem, rng)
	if err != nil {
		return nil, fmt.Errorf("paser: decoder: %w", err)
	}
	return loss.TokenCE(logits, labels)
}

// maskForMLM applies BERT's 80/10/10 masking (repro/internal/mlm.Mask,
// token level) to a copy of seqs, drawing from rng, and returns the
// corrupted batch and the labels (original id at drawn positions,
// IgnoreIndex elsewhere), flattened [B*T].
func (m *Model) maskForMLM(seqs [][]int, rng *rand.Rand) (transformer.Batch, []int, error) {
	v := mlm.Vocab{Size: m.Encoder.Config.VocabSize, Mask: m.special.MASK, Pad: m.Encoder.Config.PadID,
		Special: map[int]bool{m.special.CLS: true, m.special.SEP: true, m.special.PAD: true}}
	mk := mlm.BERT()
	mk.Prob = m.Config.MLMProb
	b, labels, err := mlm.Mask(seqs, v, mk, rng)
	if err != nil {
		return b, nil, fmt.Errorf("paser: MLM: %w", err)
	}
	return b, labels, nil
}

// MLMLoss is BERT's masked-language-model loss on a masked copy of seqs.
func (m *Model) MLMLoss(seqs [][]int, rng *rand.Rand) (mat.Tensor, error) {
	if m.MLMHead == nil {
		return nil, fmt.Errorf("paser: the model was built without an MLM head")
	}
	b, labels, err := m.maskForMLM(seqs, rng)
	if err != nil {
		return nil, err
	}
	o, err := m.Encoder.Forward(b, rng)
	if err != nil {
		return nil, fmt.Errorf("paser: MLM encoder: %w", err)
	}
	// Only the drawn positions are scored: the head's vocabulary-wide
	// product is the costliest part of MLM, and the other rows would be
	// ignored by the loss anyway.
	var rows, targets []int
	for p, l := range labels {
		if l != loss.IgnoreIndex {
			rows, targets = append(rows, p), append(targets, l)
		}
	}
	return loss.MLM(m.MLMHead.Forward(tensor.Gather(o.Last(), rows)), targets)
}

// Losses are one batch's loss nodes; MLM is nil without MLM.
type Losses struct {
	Total, Generative, MLM mat.Tensor
}

// UnsupLoss is eq. 4: L_MLM + L_generative (L_generative alone without
// MLM).
func (m *Model) UnsupLoss(batch []Example, rng *rand.Rand) (Losses, error) {
	gen, err := m.GenerativeLoss(batch, rng)
	if err != nil {
		return Losses{}, err
	}
	l := Losses{Total: gen, Generative: gen}
	if m.Config.MLM {
		seqs := make([][]int, len(batch))
		for i, ex := range batch {
			seqs[i] = ex.Sentence
		}
		if l.MLM, err = m.MLMLoss(seqs, rng); err != nil {
			return Losses{}, err
		}
		l.Total = tensor.Add(l.MLM, gen)
	}
	return l, nil
}

// Triplet is a tokenised NLI triplet; Negative is nil when absent.
type Triplet struct {
	Anchor, Positive, Negative []int
}

// PrepareTriplets tokenises (anchor, positive, negative) rows; negatives
// must be present in every row or in none (hard negatives, or in-batch
// negatives only). Row numbers in errors count from 1.
func (m *Model) PrepareTriplets(anchor, pos, neg []string) ([]Triplet, error) {
	if len(pos) != len(anchor) || len(neg) != len(anchor) {
		return nil, fmt.Errorf("paser: %d anchors, %d positives, %d negatives", len(anchor), len(pos), len(neg))
	}
	out := make([]Triplet, len(anchor))
	for i := range anchor {
		if anchor[i] == "" || pos[i] == "" {
			return nil, fmt.Errorf("row %d: empty anchor or positive", i+1)
		}
		if (neg[i] == "") != (neg[0] == "") {
			return nil, fmt.Errorf("row %d: negative %s, unlike row 1 (hard negatives must be given for every triplet or for none)",
				i+1, map[bool]string{true: "missing", false: "present"}[neg[i] == ""])
		}
		out[i] = Triplet{Anchor: m.Tokenizer.Encode(anchor[i], m.Config.MaxLength), Positive: m.Tokenizer.Encode(pos[i], m.Config.MaxLength)}
		if neg[i] != "" {
			out[i].Negative = m.Tokenizer.Encode(neg[i], m.Config.MaxLength)
		}
	}
	return out, nil
}

// ContrastiveLoss is supervised SimCSE on a batch of triplets at
// temperature temp: hard negatives when the triplets have them, in-batch
// negatives only otherwise. All three roles go through one encoder pass.
func (m *Model) ContrastiveLoss(batch []Triplet, temp float32, rng *rand.Rand) (mat.Tensor, error) {
	n := len(batch)
	if n == 0 {
		return nil, fmt.Errorf("paser: empty batch")
	}
	hard := batch[0].Negative != nil
	seqs := make([][]int, 0, 3*n)
	for _, t := range batch {
		seqs = append(seqs, t.Anchor)
	}
	for _, t := range batch {
		seqs = append(seqs, t.Positive)
	}
	if hard {
		for i, t := range batch {
			if t.Negative == nil {
				return nil, fmt.Errorf("paser: triplet %d of the batch has no negative", i)
			}
			seqs = append(seqs, t.Negative)
		}
	}
	pooled, err := m.embedPooled(seqs, rng)
	if err != nil {
		return nil, fmt.Errorf("paser: encoder: %w", err)
	}
	a, p := tensor.SliceRows(pooled, 0, n), tensor.SliceRows(pooled, n, 2*n)
	if hard {
		return loss.SimCSESup(a, p, tensor.SliceRows(pooled, 2*n, 3*n), temp)
	}
	return loss.SimCSEUnsup(a, p, temp)
}

// SupLosses are a supervised batch's loss nodes.
type SupLosses struct {
	Total, Contrastive, Generative mat.Tensor
}

// SupLoss is eq. 5: L_contrastive + alpha * L_generative.
func (m *Model) SupLoss(triplets []Triplet, masked []Example, alpha, temp float32, rng *rand.Rand) (SupLosses, error) {
	if alpha < 0 {
		return SupLosses{}, fmt.Errorf("paser: alpha = %v must not be negative", alpha)
	}
	con, err := m.ContrastiveLoss(triplets, temp, rng)
	if err != nil {
		return SupLosses{}, err
	}
	l := SupLosses{Total: con, Contrastive: con}
	if alpha > 0 {
		gen, err := m.GenerativeLoss(masked, rng)
		if err != nil {
			return SupLosses{}, err
		}
		l.Generative = gen
		l.Total = tensor.Add(con, tensor.Scale(gen, alpha))
	}
	return l, nil
}
