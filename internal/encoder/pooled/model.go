package pooled

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"repro/internal/model/checkpoint"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

// DefaultBatchSize is the number of sentences Encode runs per forward pass.
const DefaultBatchSize = 128

// Model is a sentence encoder: tokenizer + transformer encoder + pooling.
// It implements encoder.Encoder.
type Model struct {
	Tokenizer tokenizer.Tokenizer
	Encoder   *transformer.Encoder
	// Pooling is the pooling Encode uses (evaluation pooling).
	Pooling transformer.Pooling
	// MaxLength caps the ids per sentence ([CLS] and [SEP] included) when
	// encoding; 0 means the model's position limit.
	MaxLength int
	// BatchSize is Encode's batch (default DefaultBatchSize).
	BatchSize int
}

// New builds a model from scratch with BERT's initialisation drawn from a
// generator seeded with seed. cfg's VocabSize and PadID are taken from tok;
// a pooling of "cls" gives the encoder its pooler (the SimCSE MLP head).
func New(cfg transformer.Config, tok tokenizer.Tokenizer, pooling transformer.Pooling, seed uint64) (*Model, error) {
	if tok == nil {
		return nil, fmt.Errorf("encoder: a tokenizer is required")
	}
	if err := checkPooling(pooling); err != nil {
		return nil, err
	}
	cfg.VocabSize = tok.Size()
	cfg.PadID = tok.Special().PAD
	if cfg.PadID < 0 {
		return nil, fmt.Errorf("encoder: the vocabulary has no padding token")
	}
	cfg.Pooler = cfg.Pooler || pooling == transformer.PoolCLS
	enc, err := transformer.NewEncoder(cfg, rand.New(rand.NewPCG(seed, 0x5e17e7c)))
	if err != nil {
		return nil, fmt.Errorf("encoder: %w", err)
	}
	return &Model{Tokenizer: tok, Encoder: enc, Pooling: pooling}, nil
}

// FromHF opens a local Hugging Face BERT or RoBERTa directory. The
// directory must hold a tokenizer. pooling is the pooling Encode will use.
func FromHF(dir string, pooling transformer.Pooling) (*Model, error) {
	if err := checkPooling(pooling); err != nil {
		return nil, err
	}
	ck, err := checkpoint.LoadEncoder(dir)
	if err != nil {
		return nil, err
	}
	if ck.Tokenizer == nil {
		return nil, fmt.Errorf("encoder: %s has no tokenizer files (vocab.txt, or vocab.json + merges.txt)", dir)
	}
	m := &Model{Tokenizer: ck.Tokenizer, Encoder: ck.Encoder, Pooling: pooling}
	if pooling == transformer.PoolCLS && m.Encoder.Pooler == nil {
		return nil, fmt.Errorf("encoder: %s: pooling %q needs a pooler layer and the checkpoint has none (use ResetPooler)", dir, pooling)
	}
	return m, nil
}

// ResetPooler gives the encoder a freshly initialised pooler (dense +
// tanh), drawn from a generator seeded with seed: SimCSE's MLP head is a
// new layer on top of the pretrained encoder, not BERT's pre-trained
// pooler.
func (m *Model) ResetPooler(seed uint64) {
	d := m.Encoder.Config.Hidden
	rng := rand.New(rand.NewPCG(seed, 0x9001e7))
	w := transformer.TruncNormal(rng, d, d, transformer.InitStd)
	m.Encoder.Pooler = &transformer.Linear{Weight: w, Bias: nn.NewParam(tensor.Zeros(1, d))}
	m.Encoder.Config.Pooler = true
}

func checkPooling(p transformer.Pooling) error {
	for _, q := range transformer.Poolings() {
		if p == q {
			return nil
		}
	}
	return fmt.Errorf("encoder: unknown pooling %q (known: %v)", p, transformer.Poolings())
}

// EvalPooling is the pooling a model trained with pooling p is evaluated
// with: SimCSE's mlp_only_train drops the "cls" MLP head at evaluation.
func EvalPooling(p transformer.Pooling, mlpOnlyTrain bool) transformer.Pooling {
	if p == transformer.PoolCLS && mlpOnlyTrain {
		return transformer.PoolCLSBeforePooler
	}
	return p
}

// Dim is the sentence vector size.
func (m *Model) Dim() int { return m.Encoder.Config.Hidden }

// maxLen is the id limit per sentence: MaxLength capped by the positions.
func (m *Model) maxLen() int {
	l := m.Encoder.Config.MaxLen()
	if m.MaxLength > 0 && m.MaxLength < l {
		l = m.MaxLength
	}
	return l
}

// Tokenize turns sentences into id sequences framed by the special tokens
// and truncated to maxLen ids (maxLen <= 0 or beyond the model's positions:
// the model's limit).
func (m *Model) Tokenize(sentences []string, maxLen int) [][]int {
	if lim := m.Encoder.Config.MaxLen(); maxLen <= 0 || maxLen > lim {
		maxLen = lim
	}
	out := make([][]int, len(sentences))
	for i, s := range sentences {
		out[i] = m.Tokenizer.Encode(s, maxLen)
	}
	return out
}

// Embed is the training-time forward pass: it encodes id sequences with
// dropout drawn from rng (nil: evaluation mode) and pools them with p,
// returning the [len(seqs), Dim] graph node to build a loss on.
func (m *Model) Embed(seqs [][]int, p transformer.Pooling, rng *rand.Rand) (mat.Tensor, error) {
	b, err := transformer.NewBatch(seqs, m.Encoder.Config.PadID)
	if err != nil {
		return nil, err
	}
	o, err := m.Encoder.Forward(b, rng)
	if err != nil {
		return nil, err
	}
	return m.Encoder.Pool(o, p)
}

// Encode implements encoder.Encoder: evaluation mode, batches of BatchSize
// sentences grouped by length, vectors returned in input order.
func (m *Model) Encode(ctx context.Context, sentences []string) ([][]float32, error) {
	return m.EncodeWith(ctx, sentences, m.Pooling)
}

// EncodeWith is Encode with an explicit pooling.
func (m *Model) EncodeWith(ctx context.Context, sentences []string, p transformer.Pooling) ([][]float32, error) {
	seqs := m.Tokenize(sentences, m.maxLen())
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	// Length order keeps padding small; the stable sort keeps it
	// deterministic.
	sort.SliceStable(order, func(a, b int) bool { return len(seqs[order[a]]) < len(seqs[order[b]]) })
	bs := m.BatchSize
	if bs <= 0 {
		bs = DefaultBatchSize
	}
	out := make([][]float32, len(seqs))
	for lo := 0; lo < len(order); lo += bs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+bs, len(order))
		batch := make([][]int, hi-lo)
		for i, j := range order[lo:hi] {
			batch[i] = seqs[j]
		}
		pooled, err := m.Embed(batch, p, nil)
		if err != nil {
			return nil, fmt.Errorf("encoder: encode: %w", err)
		}
		d := tensor.Data(pooled)
		_, w := tensor.Dims(pooled)
		for i, j := range order[lo:hi] {
			out[j] = append([]float32(nil), d[i*w:(i+1)*w]...)
		}
	}
	return out, nil
}
