package t5

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FileConfig is the configuration file of a T5 directory.
const FileConfig = "config.json"

// Config is config.json of a T5 checkpoint with Hugging Face's T5Config
// keys and defaults (absent keys take T5Config's values: t5-small), plus
// repro's own fields under "repro".
type Config struct {
	ModelType     string   `json:"model_type"`
	Architectures []string `json:"architectures,omitempty"`
	VocabSize     int      `json:"vocab_size"`
	DModel        int      `json:"d_model"`
	// DKV is the width of one attention head; NumHeads*DKV need not equal
	// DModel.
	DKV              int  `json:"d_kv"`
	DFF              int  `json:"d_ff"`
	NumLayers        int  `json:"num_layers"`
	NumDecoderLayers *int `json:"num_decoder_layers"`
	NumHeads         int  `json:"num_heads"`
	RelBuckets       int  `json:"relative_attention_num_buckets"`
	RelMaxDistance   int  `json:"relative_attention_max_distance"`
	// DropoutRate applies to embeddings, attention probabilities, the
	// feed-forward hidden layer and every residual branch.
	DropoutRate       float32 `json:"dropout_rate"`
	LayerNormEps      float32 `json:"layer_norm_epsilon"`
	InitializerFactor float32 `json:"initializer_factor"`
	// FeedForwardProj is "relu" (T5 v1.0), "gated-gelu" (v1.1, Flan-T5)
	// or another "[gated-]ACT" with ACT among relu, gelu, gelu_new.
	FeedForwardProj string `json:"feed_forward_proj"`
	// TieWordEmbeddings makes the output layer the shared embedding,
	// applied to the decoder output scaled by d_model^-0.5 (v1.0); without
	// it the checkpoint has its own lm_head.weight (v1.1).
	TieWordEmbeddings   bool `json:"tie_word_embeddings"`
	IsEncoderDecoder    bool `json:"is_encoder_decoder"`
	PadTokenID          int  `json:"pad_token_id"`
	EOSTokenID          int  `json:"eos_token_id"`
	DecoderStartTokenID int  `json:"decoder_start_token_id"`
	// Repro holds repro's own fields; transformers ignores unknown keys.
	Repro map[string]any `json:"repro,omitempty"`
}

// DefaultConfig is T5Config's defaults (t5-small's shape).
func DefaultConfig() Config {
	return Config{ModelType: "t5", VocabSize: 32128, DModel: 512, DKV: 64, DFF: 2048, NumLayers: 6, NumHeads: 8,
		RelBuckets: 32, RelMaxDistance: 128, DropoutRate: 0.1, LayerNormEps: 1e-6, InitializerFactor: 1,
		FeedForwardProj: "relu", TieWordEmbeddings: true, IsEncoderDecoder: true, PadTokenID: 0, EOSTokenID: 1}
}

// DecoderLayers is num_decoder_layers, num_layers when unset.
func (c Config) DecoderLayers() int {
	if c.NumDecoderLayers != nil {
		return *c.NumDecoderLayers
	}
	return c.NumLayers
}

// Inner is the attention width, num_heads * d_kv.
func (c Config) Inner() int { return c.NumHeads * c.DKV }

// activations maps T5's activation names to the operators'.
var activations = map[string]string{"relu": "relu", "gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh"}

// FeedForward parses feed_forward_proj as transformers does: "ACT" or
// "gated-ACT", where "gated-gelu" means the tanh approximation (gelu_new).
// It returns the operator's activation name and whether the layer is gated.
func (c Config) FeedForward() (act string, gated bool, err error) {
	parts := strings.Split(c.FeedForwardProj, "-")
	name := parts[len(parts)-1]
	gated = parts[0] == "gated"
	if len(parts) > 2 || (len(parts) == 2 && !gated) {
		return "", false, fmt.Errorf("feed_forward_proj %q is not of the form ACT or gated-ACT", c.FeedForwardProj)
	}
	if c.FeedForwardProj == "gated-gelu" {
		name = "gelu_new"
	}
	act = activations[name]
	if act == "" {
		return "", false, fmt.Errorf("feed_forward_proj %q: activation %q is not supported (relu, gelu, gelu_new; gated or not)", c.FeedForwardProj, name)
	}
	return act, gated, nil
}

// Validate reports the first inconsistent field, naming its config.json key.
func (c Config) Validate() error {
	switch {
	case c.ModelType != "t5":
		return fmt.Errorf("model_type %q is not t5", c.ModelType)
	case c.VocabSize <= 0:
		return fmt.Errorf("vocab_size %d must be positive", c.VocabSize)
	case c.DModel <= 0 || c.DKV <= 0 || c.DFF <= 0 || c.NumHeads <= 0:
		return fmt.Errorf("d_model %d, d_kv %d, d_ff %d and num_heads %d must be positive", c.DModel, c.DKV, c.DFF, c.NumHeads)
	case c.NumLayers < 1 || c.DecoderLayers() < 1:
		return fmt.Errorf("num_layers %d and num_decoder_layers %d must be at least 1", c.NumLayers, c.DecoderLayers())
	case c.RelBuckets < 2 || c.RelMaxDistance < 2:
		return fmt.Errorf("relative_attention_num_buckets %d and relative_attention_max_distance %d must be at least 2", c.RelBuckets, c.RelMaxDistance)
	case !(c.DropoutRate >= 0 && c.DropoutRate < 1):
		return fmt.Errorf("dropout_rate %v must lie in [0, 1)", c.DropoutRate)
	case !(c.LayerNormEps > 0):
		return fmt.Errorf("layer_norm_epsilon %v must be positive", c.LayerNormEps)
	case c.PadTokenID < 0 || c.PadTokenID >= c.VocabSize:
		return fmt.Errorf("pad_token_id %d outside the vocabulary of %d", c.PadTokenID, c.VocabSize)
	case c.EOSTokenID < 0 || c.EOSTokenID >= c.VocabSize:
		return fmt.Errorf("eos_token_id %d outside the vocabulary of %d", c.EOSTokenID, c.VocabSize)
	case c.DecoderStartTokenID < 0 || c.DecoderStartTokenID >= c.VocabSize:
		return fmt.Errorf("decoder_start_token_id %d outside the vocabulary of %d", c.DecoderStartTokenID, c.VocabSize)
	}
	if _, _, err := c.FeedForward(); err != nil {
		return err
	}
	return nil
}

// ReadConfig reads and validates dir/config.json.
func ReadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, FileConfig)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("t5: %w", err)
	}
	c := DefaultConfig()
	c.ModelType = ""
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("t5: %s: %v", path, err)
	}
	if c.ModelType == "" {
		return nil, fmt.Errorf("t5: %s: model_type missing (want \"t5\")", path)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("t5: %s: %w", path, err)
	}
	return &c, nil
}

// WriteConfig writes c as dir/config.json.
func WriteConfig(dir string, c Config) error {
	c.ModelType = "t5"
	c.IsEncoderDecoder = true
	if len(c.Architectures) == 0 {
		c.Architectures = []string{"T5ForConditionalGeneration"}
	}
	if c.NumDecoderLayers == nil {
		n := c.NumLayers
		c.NumDecoderLayers = &n
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("t5: config: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, FileConfig), append(b, '\n'), 0o644)
}
