package mlm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/encoder"
	"repro/internal/encoder/pooled"
	"repro/internal/model/checkpoint"
	"repro/internal/model/safetensors"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
	"repro/internal/tensor/loss"
)

// Model is an encoder with BERT's masked-language-model head (dense, GELU,
// layer norm, then the word embeddings transposed plus a bias).
type Model struct {
	Encoder   *transformer.Encoder
	Head      *transformer.MLMHead
	Tokenizer tokenizer.Tokenizer
	Vocab     Vocab
	// NSP is the next-sentence classifier on the pooler's output (nil:
	// masked-LM only; see WithNSP).
	NSP *transformer.Linear
}

// New puts a fresh head, drawn from a generator seeded with seed, on enc.
func New(enc *transformer.Encoder, tok tokenizer.Tokenizer, seed uint64) (*Model, error) {
	if enc == nil || tok == nil {
		return nil, fmt.Errorf("mlm: an encoder and its tokenizer are required")
	}
	if tok.Size() != enc.Config.VocabSize {
		return nil, fmt.Errorf("mlm: the tokenizer has %d entries, the encoder's vocabulary %d", tok.Size(), enc.Config.VocabSize)
	}
	v, err := VocabOf(tok)
	if err != nil {
		return nil, err
	}
	head := transformer.NewMLMHead(enc, rand.New(rand.NewPCG(seed, 0x3a5c3d)))
	return &Model{Encoder: enc, Head: head, Tokenizer: tok, Vocab: v}, nil
}

// RoBERTa reports whether the encoder is RoBERTa-shaped (positions offset
// by the padding id), which decides the head's names in a checkpoint.
func (m *Model) RoBERTa() bool { return m.Encoder.Config.PositionOffset > 0 }

// NamedParams lists the encoder's and the heads' parameters under Hugging
// Face names (BertForMaskedLM's or RobertaForMaskedLM's head names, and
// BertForPreTraining's next-sentence classifier when there is one).
func (m *Model) NamedParams() []transformer.NamedParam {
	ps := m.Encoder.NamedParams()
	if m.RoBERTa() {
		return append(ps, m.Head.RoBERTaNamedParams()...)
	}
	return append(append(ps, m.Head.NamedParams()...), m.nspNamedParams()...)
}

// Loss is the MLM loss of one batch: seqs corrupted by Mask (drawing from
// rng), encoded with dropout from rng, and scored at the chosen positions
// only -- the head's product with the whole vocabulary is the costliest
// part, and the other rows would be ignored by the loss anyway.
func (m *Model) Loss(seqs [][]int, mk Masking, rng *rand.Rand) (mat.Tensor, error) {
	b, labels, err := Mask(seqs, m.Vocab, mk, rng)
	if err != nil {
		return nil, err
	}
	o, err := m.Encoder.Forward(b, rng)
	if err != nil {
		return nil, fmt.Errorf("mlm: %w", err)
	}
	rows, targets := chosen(labels)
	return loss.MLM(m.Head.Forward(tensor.Gather(o.Last(), rows)), targets)
}

func chosen(labels []int) (rows, targets []int) {
	for p, l := range labels {
		if l != loss.IgnoreIndex {
			rows, targets = append(rows, p), append(targets, l)
		}
	}
	return rows, targets
}

// Eval is the head's quality on held-out text.
type Eval struct {
	Loss       float64 `json:"loss"`       // mean cross-entropy per predicted token, nats
	Perplexity float64 `json:"perplexity"` // exp(Loss)
	Accuracy   float64 `json:"accuracy"`   // share of predicted tokens whose arg max is the original
	Tokens     int     `json:"tokens"`     // predicted tokens
}

// Evaluate scores the head on seqs without dropout, masked by mk with a
// generator seeded from seed, so that every evaluation of a run (and of
// runs with other weights) predicts the same tokens. Batches of batch
// sequences are taken in order.
func (m *Model) Evaluate(ctx context.Context, seqs [][]int, mk Masking, seed uint64, batch int) (Eval, error) {
	if len(seqs) == 0 {
		return Eval{}, fmt.Errorf("mlm: no evaluation sentences")
	}
	if batch < 1 {
		batch = 64
	}
	rng := rand.New(rand.NewPCG(seed, 0xe7a1))
	var sum float64
	var n, right int
	for lo := 0; lo < len(seqs); lo += batch {
		if err := ctx.Err(); err != nil {
			return Eval{}, err
		}
		b, labels, err := Mask(seqs[lo:min(lo+batch, len(seqs))], m.Vocab, mk, rng)
		if err != nil {
			return Eval{}, err
		}
		o, err := m.Encoder.Forward(b, nil)
		if err != nil {
			return Eval{}, fmt.Errorf("mlm: %w", err)
		}
		rows, targets := chosen(labels)
		logits := m.Head.Forward(tensor.Gather(o.Last(), rows))
		_, v := tensor.Dims(logits)
		s, r := score(tensor.Data(logits), v, targets)
		sum += s
		right += r
		n += len(targets)
	}
	l := sum / float64(n)
	return Eval{Loss: l, Perplexity: math.Exp(l), Accuracy: float64(right) / float64(n), Tokens: n}, nil
}

// score returns the summed cross-entropy (nats, in float64) of rows of
// logits [len(targets), v] against targets, and how many rows have their
// target as the arg max (the first maximum on ties).
func score(logits []float32, v int, targets []int) (float64, int) {
	var sum float64
	right := 0
	for i, t := range targets {
		row := logits[i*v : (i+1)*v]
		best := 0
		mx := float64(row[0])
		for j, x := range row {
			if float64(x) > mx {
				mx, best = float64(x), j
			}
		}
		var z float64
		for _, x := range row {
			z += math.Exp(float64(x) - mx)
		}
		sum += mx + math.Log(z) - float64(row[t])
		if best == t {
			right++
		}
	}
	return sum, right
}

// Save writes the model as a Hugging Face masked-LM checkpoint directory
// (model.safetensors with the encoder's and the head's tensors, config.json
// with architectures BertForMaskedLM or RobertaForMaskedLM, the tokenizer
// files) plus encoder.json, so that it is also a sentence encoder artifact
// with the given pooling: the loaders of repro/internal/encoder/pooled read
// it as they read bert-base (skipping the head), and Hugging Face's
// AutoModelForMaskedLM reads it whole. repro goes into config.json's
// "repro" section (training provenance).
func (m *Model) Save(dir string, pooling transformer.Pooling, repro map[string]any) error {
	cfg := checkpoint.Config{Config: m.Encoder.Config, ModelType: "bert", Architectures: []string{"BertForMaskedLM"}, Repro: map[string]any{}}
	if m.RoBERTa() {
		cfg.ModelType, cfg.Architectures = "roberta", []string{"RobertaForMaskedLM"}
	} else if m.NSP != nil {
		cfg.Architectures = []string{"BertForPreTraining"}
	}
	cfg.Pooler = m.Encoder.Pooler != nil
	for k, v := range repro {
		cfg.Repro[k] = v
	}
	cfg.Repro["pooling"] = string(pooling)
	cfg.Repro["max_length"] = 0
	if err := checkpoint.Save(dir, cfg, m.NamedParams(), m.Tokenizer); err != nil {
		return fmt.Errorf("mlm: save: %w", err)
	}
	if err := encoder.WriteMeta(dir, pooled.Meta{Type: pooled.Type, Pooling: pooling}); err != nil {
		return fmt.Errorf("mlm: save: %w", err)
	}
	return nil
}

// FromEncoder continues pretraining a saved encoder: the head is read from
// dir's model.safetensors when the checkpoint holds one (a model Save
// wrote, or a Hugging Face *ForMaskedLM checkpoint), else drawn fresh
// from seed. A next-sentence classifier in the checkpoint (with the pooler
// it reads) comes back too.
func FromEncoder(p *pooled.Model, dir string, seed uint64) (*Model, bool, error) {
	m, err := New(p.Encoder, p.Tokenizer, seed)
	if err != nil {
		return nil, false, err
	}
	f, err := safetensors.ReadFile(filepath.Join(dir, checkpoint.FileWeights))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return m, false, nil
		}
		return nil, false, fmt.Errorf("mlm: %w", err)
	}
	if _, ok := f.Tensors["cls.seq_relationship.weight"]; ok && p.Encoder.Pooler != nil {
		if err := m.WithNSP(seed); err != nil {
			return nil, false, err
		}
		nsp := map[string]safetensors.Tensor{}
		for _, np := range m.nspNamedParams() {
			if t, ok := f.Tensors[np.Name]; ok {
				nsp[np.Name] = t
			}
		}
		if _, err := checkpoint.Apply(m.nspNamedParams(), nsp); err != nil {
			return nil, false, fmt.Errorf("mlm: %s: next-sentence classifier: %w", dir, err)
		}
	}
	head := map[string]safetensors.Tensor{}
	for name, t := range f.Tensors {
		if strings.HasPrefix(name, "cls.predictions.") || strings.HasPrefix(name, "lm_head.") {
			if name == "cls.predictions.decoder.weight" || name == "lm_head.decoder.weight" || name == "cls.predictions.decoder.bias" || name == "lm_head.decoder.bias" {
				continue // tied to the word embeddings / the same as the bias
			}
			head[name] = t
		}
	}
	if len(head) == 0 {
		return m, false, nil
	}
	named := m.Head.NamedParams()
	if m.RoBERTa() {
		named = m.Head.RoBERTaNamedParams()
	}
	if _, err := checkpoint.Apply(named, head); err != nil {
		return nil, false, fmt.Errorf("mlm: %s: head: %w", dir, err)
	}
	return m, true, nil
}
