// Package transformer holds the Transformer encoder (BERT/RoBERTa shape)
// and decoder that repro's sentence-embedding models train and run, built
// from the batched operators of repro/internal/tensor: one [B*T, D] matrix
// per layer carries the whole batch.
//
// Parameter names and shapes follow Hugging Face exactly (NamedParams), and
// Linear weights are stored [out, in] as HF stores them and multiplied with
// a transposed sgemm, so checkpoint I/O and HF loading are a direct name
// map with no reshaping. Initialisation is BERT's (truncated normal, std
// 0.02; layer-norm gain 1, biases 0; the padding row of the word
// embeddings 0), drawn from a caller-owned *rand.Rand so that the same
// seed gives the same model. Dropout draws from the *rand.Rand passed to
// Forward; a nil generator means evaluation mode (no dropout).
//
// Blocks are post-LN as in BERT: x = LN(x + Dropout(Attn(x))),
// x = LN(x + Dropout(FFN(x))), FFN = Linear -> exact GELU -> Linear.
package transformer

import (
	"fmt"
)

// Config is the architecture of an encoder or decoder. JSON names are Hugging
// Face's config.json keys where HF has one.
type Config struct {
	VocabSize        int     `json:"vocab_size"`
	Hidden           int     `json:"hidden_size"`
	Layers           int     `json:"num_hidden_layers"`
	Heads            int     `json:"num_attention_heads"`
	Intermediate     int     `json:"intermediate_size"`
	MaxPosition      int     `json:"max_position_embeddings"`
	TypeVocab        int     `json:"type_vocab_size"` // 0: no segment embeddings
	HiddenDropout    float32 `json:"hidden_dropout_prob"`
	AttentionDropout float32 `json:"attention_probs_dropout_prob"`
	LayerNormEps     float32 `json:"layer_norm_eps"`
	PadID            int     `json:"pad_token_id"`
	// PositionOffset is added to every position id: 0 for BERT; RoBERTa
	// numbers positions from pad_token_id+1 (2), which is why its
	// max_position_embeddings is 514.
	PositionOffset int `json:"position_offset,omitempty"`
	// Pooler adds BERT's pooler (dense + tanh over the first token, named
	// pooler.dense), which the "cls" pooling applies; SimCSE's
	// unsupervised recipe trains with it and evaluates without it.
	Pooler bool `json:"add_pooling_layer,omitempty"`
}

// Validate reports the first inconsistent field.
func (c Config) Validate() error {
	switch {
	case c.VocabSize <= 0:
		return fmt.Errorf("transformer config: vocab_size %d must be positive", c.VocabSize)
	case c.Hidden <= 0 || c.Heads <= 0 || c.Hidden%c.Heads != 0:
		return fmt.Errorf("transformer config: hidden_size %d must be a positive multiple of num_attention_heads %d", c.Hidden, c.Heads)
	case c.Layers < 0:
		return fmt.Errorf("transformer config: num_hidden_layers %d is negative", c.Layers)
	case c.Intermediate <= 0:
		return fmt.Errorf("transformer config: intermediate_size %d must be positive", c.Intermediate)
	case c.PositionOffset < 0:
		// Position ids are offset+t; a negative one indexes before the table.
		return fmt.Errorf("transformer config: position_offset %d is negative", c.PositionOffset)
	case c.MaxPosition <= c.PositionOffset:
		return fmt.Errorf("transformer config: max_position_embeddings %d leaves no position after offset %d", c.MaxPosition, c.PositionOffset)
	case c.TypeVocab < 0:
		return fmt.Errorf("transformer config: type_vocab_size %d is negative", c.TypeVocab)
	case c.HiddenDropout < 0 || c.HiddenDropout >= 1 || c.AttentionDropout < 0 || c.AttentionDropout >= 1:
		return fmt.Errorf("transformer config: dropout probabilities %v and %v must lie in [0, 1)", c.HiddenDropout, c.AttentionDropout)
	case c.LayerNormEps <= 0:
		return fmt.Errorf("transformer config: layer_norm_eps %v must be positive", c.LayerNormEps)
	case c.PadID < 0 || c.PadID >= c.VocabSize:
		return fmt.Errorf("transformer config: pad_token_id %d outside the vocabulary of %d", c.PadID, c.VocabSize)
	}
	return nil
}

// MaxLen is the longest sequence the position embeddings cover.
func (c Config) MaxLen() int { return c.MaxPosition - c.PositionOffset }
