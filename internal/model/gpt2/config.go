package gpt2

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Config is config.json of a GPT-2 checkpoint, with Hugging Face's
// GPT2Config keys and defaults (absent keys take GPT2Config's values), plus
// repro's own fields under "repro".
type Config struct {
	ModelType     string   `json:"model_type"`
	Architectures []string `json:"architectures,omitempty"`
	VocabSize     int      `json:"vocab_size"`
	// NPositions is the context window (rows of the position embeddings).
	NPositions int `json:"n_positions"`
	NEmbd      int `json:"n_embd"`
	NLayer     int `json:"n_layer"`
	NHead      int `json:"n_head"`
	// NInner is the feed-forward width; nil (null) means 4 * n_embd.
	NInner *int `json:"n_inner"`
	// Activation is activation_function: gelu_new (GPT-2's tanh
	// approximation; gelu_pytorch_tanh is the same function), gelu (exact)
	// or relu.
	Activation       string  `json:"activation_function"`
	LayerNormEps     float32 `json:"layer_norm_epsilon"`
	ResidPdrop       float32 `json:"resid_pdrop"`
	EmbdPdrop        float32 `json:"embd_pdrop"`
	AttnPdrop        float32 `json:"attn_pdrop"`
	InitializerRange float32 `json:"initializer_range"`
	// ScaleAttnWeights divides the attention scores by sqrt(head width);
	// ScaleAttnByInverseLayerIdx further by the layer number (1-based).
	ScaleAttnWeights           bool `json:"scale_attn_weights"`
	ScaleAttnByInverseLayerIdx bool `json:"scale_attn_by_inverse_layer_idx"`
	// ReorderAndUpcastAttn only changes the precision of half-precision
	// attention in transformers; in float32 it computes the same thing.
	ReorderAndUpcastAttn bool `json:"reorder_and_upcast_attn"`
	// TieWordEmbeddings makes the output layer the token embedding
	// (transposed); without it the checkpoint has its own lm_head.weight.
	TieWordEmbeddings bool `json:"tie_word_embeddings"`
	AddCrossAttention bool `json:"add_cross_attention"`
	BOSTokenID        int  `json:"bos_token_id"`
	EOSTokenID        int  `json:"eos_token_id"`
	// Repro holds repro's own fields (training provenance, the framing
	// the model was trained with); transformers ignores unknown keys.
	Repro map[string]any `json:"repro,omitempty"`
}

// DefaultConfig is GPT2Config's defaults: gpt2 (124M), vocabulary 50257.
func DefaultConfig() Config {
	return Config{ModelType: "gpt2", VocabSize: 50257, NPositions: 1024, NEmbd: 768, NLayer: 12, NHead: 12,
		Activation: "gelu_new", LayerNormEps: 1e-5, ResidPdrop: 0.1, EmbdPdrop: 0.1, AttnPdrop: 0.1,
		InitializerRange: 0.02, ScaleAttnWeights: true, TieWordEmbeddings: true, BOSTokenID: 50256, EOSTokenID: 50256}
}

// Inner is the feed-forward width.
func (c Config) Inner() int {
	if c.NInner != nil && *c.NInner > 0 {
		return *c.NInner
	}
	return 4 * c.NEmbd
}

// activations maps activation_function values to the operators' names.
var activations = map[string]string{"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu": "gelu", "relu": "relu"}

// Validate reports the first inconsistent field, naming its config.json key.
func (c Config) Validate() error {
	switch {
	case c.ModelType != "gpt2":
		return fmt.Errorf("model_type %q is not gpt2", c.ModelType)
	case c.VocabSize <= 0:
		return fmt.Errorf("vocab_size %d must be positive", c.VocabSize)
	case c.NPositions <= 0:
		return fmt.Errorf("n_positions %d must be positive", c.NPositions)
	case c.NEmbd <= 0 || c.NHead <= 0 || c.NEmbd%c.NHead != 0:
		return fmt.Errorf("n_embd %d must be a positive multiple of n_head %d", c.NEmbd, c.NHead)
	case c.NLayer < 1:
		return fmt.Errorf("n_layer %d must be at least 1", c.NLayer)
	case c.NInner != nil && *c.NInner < 0:
		return fmt.Errorf("n_inner %d is negative", *c.NInner)
	case activations[c.Activation] == "":
		return fmt.Errorf("activation_function %q is not supported (gelu_new, gelu_pytorch_tanh, gelu, relu)", c.Activation)
	case !(c.LayerNormEps > 0):
		return fmt.Errorf("layer_norm_epsilon %v must be positive", c.LayerNormEps)
	case !dropoutOK(c.ResidPdrop) || !dropoutOK(c.EmbdPdrop) || !dropoutOK(c.AttnPdrop):
		return fmt.Errorf("resid_pdrop %v, embd_pdrop %v and attn_pdrop %v must lie in [0, 1)", c.ResidPdrop, c.EmbdPdrop, c.AttnPdrop)
	case c.AddCrossAttention:
		return fmt.Errorf("add_cross_attention is not supported (a decoder-only GPT-2 is)")
	case c.EOSTokenID < 0 || c.EOSTokenID >= c.VocabSize:
		return fmt.Errorf("eos_token_id %d outside the vocabulary of %d", c.EOSTokenID, c.VocabSize)
	case c.BOSTokenID < 0 || c.BOSTokenID >= c.VocabSize:
		return fmt.Errorf("bos_token_id %d outside the vocabulary of %d", c.BOSTokenID, c.VocabSize)
	}
	return nil
}

func dropoutOK(p float32) bool { return p >= 0 && p < 1 }

// ReadConfig reads and validates dir/config.json. The pre-2020 key n_ctx
// stands in for n_positions when only it is given.
func ReadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, FileConfig)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gpt2: %w", err)
	}
	c := DefaultConfig()
	c.ModelType = ""
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("gpt2: %s: %v", path, err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err == nil {
		if _, ok := keys["n_positions"]; !ok {
			var nctx int
			if raw, ok := keys["n_ctx"]; ok && json.Unmarshal(raw, &nctx) == nil && nctx > 0 {
				c.NPositions = nctx
			}
		}
	}
	if c.ModelType == "" {
		return nil, fmt.Errorf("gpt2: %s: model_type missing (want \"gpt2\")", path)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("gpt2: %s: %w", path, err)
	}
	return &c, nil
}

// WriteConfig writes c as dir/config.json.
func WriteConfig(dir string, c Config) error {
	c.ModelType = "gpt2"
	if len(c.Architectures) == 0 {
		c.Architectures = []string{"GPT2LMHeadModel"}
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("gpt2: config: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, FileConfig), append(b, '\n'), 0o644)
}
