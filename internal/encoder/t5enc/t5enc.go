// Package t5enc is the sentence encoder made from a T5 text-to-text model
// (repro/internal/model/t5), in the two ways of Sentence-T5 (Ni et al.
// 2021): "encdec", the decoder's first output when the encoder reads the
// sentence (under a prompt template) and the decoder is fed its start
// (pad) token -- GenSE's sentence embedding, Table 1's T_s; and "mean", the
// mean of the encoder's outputs over the sentence's tokens (ST5 "Enc").
//
// Design choices:
//
//   - The artifact is the T5 directory itself (Hugging Face layout, so the
//     model stays usable as a language model) plus encoder.json naming the
//     mode, the template and the longest input; evaluation stages open it
//     with encoder.Open like every other encoder.
//   - The same prompt.Template instance fills sentences in training
//     (Embed) and evaluation (Encode), so both see the same text.
//   - Sentences are sorted by length into batches (stable sort: the
//     vectors do not depend on the input order beyond float32 rounding of
//     a batch's padding, which the masks make irrelevant).
package t5enc

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/nlpodyssey/spago/mat"

	"repro/internal/encoder"
	"repro/internal/model/t5"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/prompt"
	"repro/internal/tensor"
)

// Type is the encoder.json type of a T5 sentence encoder.
const Type = "t5"

// Modes of turning a T5 into a sentence encoder.
const (
	ModeEncDec = "encdec" // first decoder output, pad fed to the decoder (GenSE, ST5-EncDec)
	ModeMean   = "mean"   // mean of the encoder outputs (ST5-Enc)
)

// DefaultBatchSize is the sentences encoded together in Encode.
const DefaultBatchSize = 64

// Model is a T5 sentence encoder.
type Model struct {
	T5   *t5.Model
	Tok  tokenizer.Tokenizer
	Text *t5.Text
	Mode string
	// Template holds the sentence's place in the prompt ([X]); the zero
	// value means the sentence alone.
	Template prompt.Template
	// MaxLength is the most encoder tokens per input (EOS included); 0:
	// no limit.
	MaxLength int
	BatchSize int
}

// New wraps a T5 and its tokenizer as a sentence encoder; template may be
// "" (the sentence alone) and must otherwise have an [X] placeholder.
func New(m *t5.Model, tok tokenizer.Tokenizer, mode, template string, maxLength int) (*Model, error) {
	if mode != ModeEncDec && mode != ModeMean {
		return nil, fmt.Errorf("t5 encoder: mode %q is not %q or %q", mode, ModeEncDec, ModeMean)
	}
	if maxLength < 0 {
		return nil, fmt.Errorf("t5 encoder: max length %d is negative", maxLength)
	}
	e := &Model{T5: m, Tok: tok, Text: t5.NewText(tok, m.Config), Mode: mode, MaxLength: maxLength}
	if template != "" {
		t, err := prompt.Parse(template, 1)
		if err != nil {
			return nil, fmt.Errorf("t5 encoder: %w", err)
		}
		e.Template = t
	}
	return e, nil
}

// Dim is d_model.
func (e *Model) Dim() int { return e.T5.Config.DModel }

// Input returns the encoder ids of a sentence under the template, and
// whether they had to be cut to MaxLength.
func (e *Model) Input(sentence string) ([]int, bool) {
	text := sentence
	if e.Template.Slots == 1 {
		text = e.Template.Fill(sentence)
	}
	return e.Text.Encode(text, e.MaxLength)
}

// Inputs is Input for many sentences; it also counts the cut ones.
func (e *Model) Inputs(sentences []string) ([][]int, int) {
	out, cut := make([][]int, len(sentences)), 0
	for i, s := range sentences {
		var c bool
		if out[i], c = e.Input(s); c {
			cut++
		}
	}
	return out, cut
}

// Embed returns the sentence vectors [len(seqs), D] of encoder inputs
// (from Inputs), differentiable; rng supplies dropout (nil: none).
func (e *Model) Embed(seqs [][]int, rng *rand.Rand) (mat.Tensor, error) {
	src, err := transformer.NewBatch(seqs, e.T5.Config.PadTokenID)
	if err != nil {
		return nil, err
	}
	enc, err := e.T5.Encode(src, rng)
	if err != nil {
		return nil, err
	}
	if e.Mode == ModeMean {
		return tensor.MeanPool(enc.Hidden, src.B, src.T, src.Lens), nil
	}
	start := make([][]int, src.B)
	for i := range start {
		start[i] = []int{e.T5.Config.DecoderStartTokenID}
	}
	dec, err := transformer.NewBatch(start, e.T5.Config.PadTokenID)
	if err != nil {
		return nil, err
	}
	return e.T5.Decode(dec, enc, rng)
}

// Encode returns one vector per sentence (encoder.Encoder), without
// dropout.
func (e *Model) Encode(ctx context.Context, sentences []string) ([][]float32, error) {
	seqs, _ := e.Inputs(sentences)
	order := make([]int, len(seqs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(seqs[order[a]]) < len(seqs[order[b]]) })
	bs := e.BatchSize
	if bs <= 0 {
		bs = DefaultBatchSize
	}
	D := e.Dim()
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
		z, err := e.Embed(batch, nil)
		if err != nil {
			return nil, fmt.Errorf("t5 encoder: %w", err)
		}
		Z := tensor.Data(z)
		for i, j := range order[lo:hi] {
			out[j] = append([]float32(nil), Z[i*D:(i+1)*D]...)
		}
	}
	return out, nil
}

// meta is encoder.json of a T5 sentence encoder.
type meta struct {
	Type      string `json:"type"`
	Mode      string `json:"mode"`
	Template  string `json:"template,omitempty"`
	MaxLength int    `json:"max_length,omitempty"`
}

// Save writes the T5 directory (t5.Save, repro holding provenance) and
// encoder.json.
func (e *Model) Save(dir string, repro map[string]any) error {
	if err := t5.Save(dir, e.T5, e.Tok, repro); err != nil {
		return err
	}
	return encoder.WriteMeta(dir, meta{Type: Type, Mode: e.Mode, Template: e.Template.Text, MaxLength: e.MaxLength})
}

// Open reads a T5 sentence encoder artifact.
func Open(dir string, raw json.RawMessage) (*Model, error) {
	var mt meta
	if err := json.Unmarshal(raw, &mt); err != nil {
		return nil, fmt.Errorf("t5 encoder: %s/encoder.json: %v", dir, err)
	}
	m, tok, err := t5.Load(dir)
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, fmt.Errorf("t5 encoder: %s has no tokenizer files", dir)
	}
	return New(m, tok, mt.Mode, mt.Template, mt.MaxLength)
}

// Register makes encoder.Open understand "type": "t5".
func Register() {
	encoder.RegisterType(Type, func(dir string, raw json.RawMessage) (encoder.Encoder, error) { return Open(dir, raw) })
}
