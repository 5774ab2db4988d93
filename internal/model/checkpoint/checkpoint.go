// Package checkpoint saves and loads models as directories any Hugging
// Face tool can open: model.safetensors (HF parameter names), config.json
// (HF BERT/RoBERTa keys plus repro's own fields under "repro"), and the
// tokenizer files (vocab.txt and tokenizer_config.json for WordPiece;
// vocab.json and merges.txt for byte-level BPE).
//
// Loading is a name map, not a conversion, because models expose HF names
// and shapes (transformer.NamedParam). Apply accepts a file's tensors with
// or without the architecture prefix ("bert.", "roberta."), renames the
// old TensorFlow-era LayerNorm "gamma"/"beta" to "weight"/"bias" as
// transformers does, treats the pooler as optional, ignores the known
// pre-training heads (cls.*, lm_head.*) and the position_ids buffer, and
// otherwise fails with the names of every missing or unexpected tensor and
// every shape mismatch (both shapes), so a wrong checkpoint is never half
// loaded. RoBERTa's position ids start at padding_idx+1; config.json does
// not say so, so ReadConfig derives PositionOffset from model_type.
//
// Other model families (GPT-2 in internal/model/gpt2) reuse the pieces:
// OpenWeights (one file or the shards of model.safetensors.index.json),
// ApplyNaming with the family's Naming, WriteWeights and the tokenizer
// files.
package checkpoint

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"repro/internal/model/safetensors"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

// File names inside a checkpoint directory.
const (
	FileWeights         = "model.safetensors"
	FileConfig          = "config.json"
	FileVocab           = "vocab.txt"
	FileTokenizerConfig = "tokenizer_config.json"
	FileBPEVocab        = "vocab.json"
	FileMerges          = "merges.txt"
	// FileSPModel is a SentencePiece model (T5's tokenizer);
	// FileTokenizerJSON a Hugging Face tokenizers file (read when it holds
	// a Unigram model).
	FileSPModel       = "spiece.model"
	FileTokenizerJSON = "tokenizer.json"
)

// Config is config.json. The architecture keys are transformer.Config's
// (HF names); the rest are HF's descriptive keys and repro's own section.
type Config struct {
	transformer.Config
	ModelType     string   `json:"model_type"` // "bert" or "roberta"
	Architectures []string `json:"architectures,omitempty"`
	HiddenAct     string   `json:"hidden_act,omitempty"`
	// Repro holds repro's fields (pooling, training provenance); HF tools
	// ignore unknown keys.
	Repro map[string]any `json:"repro,omitempty"`
}

// ReadConfig reads and validates dir/config.json.
func ReadConfig(dir string) (*Config, error) {
	path := filepath.Join(dir, FileConfig)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	// Absent keys keep HF's BertConfig defaults.
	c := Config{Config: transformer.Config{TypeVocab: 2, LayerNormEps: 1e-12, HiddenDropout: 0.1, AttentionDropout: 0.1, MaxPosition: 512}}
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %v", path, err)
	}
	var raw map[string]json.RawMessage
	json.Unmarshal(b, &raw)
	switch c.ModelType {
	case "bert":
	case "roberta", "xlm-roberta":
		if _, ok := raw["position_offset"]; !ok {
			c.PositionOffset = c.PadID + 1
		}
		if _, ok := raw["pad_token_id"]; !ok {
			c.PadID, c.PositionOffset = 1, 2
		}
	case "":
		return nil, fmt.Errorf("checkpoint: %s: model_type missing (want \"bert\" or \"roberta\")", path)
	default:
		return nil, fmt.Errorf("checkpoint: %s: model_type %q not supported (want \"bert\" or \"roberta\")", path, c.ModelType)
	}
	if c.HiddenAct != "" && c.HiddenAct != "gelu" {
		return nil, fmt.Errorf("checkpoint: %s: hidden_act %q not supported (the encoder uses exact GELU)", path, c.HiddenAct)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return &c, nil
}

// WriteConfig writes dir/config.json.
func WriteConfig(dir string, c Config) error {
	if c.ModelType == "" {
		c.ModelType = "bert"
	}
	if c.HiddenAct == "" {
		c.HiddenAct = "gelu"
	}
	if len(c.Architectures) == 0 {
		if c.ModelType == "roberta" {
			c.Architectures = []string{"RobertaModel"}
		} else {
			c.Architectures = []string{"BertModel"}
		}
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint: config: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, FileConfig), append(b, '\n'), 0o644)
}

// Save writes params (HF names) to dir/model.safetensors, cfg to
// dir/config.json and, when tok is not nil, the tokenizer files.
func Save(dir string, cfg Config, params []transformer.NamedParam, tok tokenizer.Tokenizer) error {
	if err := WriteWeights(dir, params, ""); err != nil {
		return err
	}
	if err := WriteConfig(dir, cfg); err != nil {
		return err
	}
	if tok != nil {
		if err := SaveTokenizer(dir, tok, cfg.MaxLen()); err != nil {
			return err
		}
	}
	return nil
}

// WriteWeights writes params to dir/model.safetensors (creating dir), each
// under prefix + its name, with the "format": "pt" metadata transformers
// expects.
func WriteWeights(dir string, params []transformer.NamedParam, prefix string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	ts := make(map[string]safetensors.Tensor, len(params))
	for _, p := range params {
		name := prefix + p.Name
		if _, dup := ts[name]; dup {
			return fmt.Errorf("checkpoint: parameter %q appears twice", name)
		}
		ts[name] = safetensors.Tensor{Shape: p.Shape, Data: tensor.Data(p.Param)}
	}
	if err := safetensors.WriteFile(filepath.Join(dir, FileWeights), ts, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// FileWeightsIndex is the index of a sharded checkpoint: {"weight_map":
// {tensor name: shard file name}}.
const FileWeightsIndex = "model.safetensors.index.json"

// Naming says how a model's parameter names relate to the tensor names of
// a checkpoint file of its family.
type Naming struct {
	// Prefixes are the architecture prefixes task models put before the
	// base model's names; the first that matches is stripped.
	Prefixes []string
	// Rename maps a name without prefix to the model's (nil: unchanged).
	Rename func(name string) string
	// Ignore says which file tensors (after Prefixes and Rename) a model
	// may leave unused: heads, buffers.
	Ignore func(name string) bool
	// Optional says which model parameters a file may lack (left as
	// initialised).
	Optional func(name string) bool
}

// canonical maps a file tensor name to the model's naming.
func (n Naming) canonical(name string) string {
	for _, p := range n.Prefixes {
		if rest, ok := strings.CutPrefix(name, p); ok {
			name = rest
			break
		}
	}
	if n.Rename != nil {
		name = n.Rename(name)
	}
	return name
}

// BERTNaming is the naming of BERT and RoBERTa checkpoints: "bert.",
// "roberta." or "model." prefixes, TensorFlow-era LayerNorm gamma/beta,
// pre-training heads (cls.*, lm_head.*, ...) and the position_ids buffer
// ignored, the pooler optional.
var BERTNaming = Naming{
	Prefixes: []string{"bert.", "roberta.", "model."},
	Rename: func(name string) string {
		if rest, ok := strings.CutSuffix(name, ".gamma"); ok {
			return rest + ".weight"
		}
		if rest, ok := strings.CutSuffix(name, ".beta"); ok {
			return rest + ".bias"
		}
		return name
	},
	Ignore: func(name string) bool {
		for _, p := range []string{"cls.", "lm_head.", "qa_outputs.", "classifier."} {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return strings.HasSuffix(name, "position_ids") || strings.HasPrefix(name, "pooler.")
	},
	Optional: func(name string) bool { return strings.HasPrefix(name, "pooler.") },
}

// canonical maps a BERT file tensor name to the encoder's naming.
func canonical(name string) string { return BERTNaming.canonical(name) }

// Apply copies file tensors into params by name (BERTNaming). Every
// required parameter must be present with its exact shape; every file
// tensor must be used or ignorable. All problems are reported together.
func Apply(params []transformer.NamedParam, file map[string]safetensors.Tensor) (ignored []string, err error) {
	return ApplyNaming(params, file, BERTNaming)
}

// ApplyNaming is Apply for a model family's naming. Nothing is copied
// unless everything matches, so a wrong checkpoint is never half loaded.
// A mismatch is a *MismatchError.
func ApplyNaming(params []transformer.NamedParam, file map[string]safetensors.Tensor, naming Naming) (ignored []string, err error) {
	shapes := make(map[string][]int, len(file))
	for n, t := range file {
		shapes[n] = t.Shape
	}
	wanted, ignored, err := plan(params, shapes, naming)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, m := range wanted {
		dst, src := tensor.Data(m.param.Param), file[m.file].Data
		if len(dst) != len(src) {
			problems = append(problems, fmt.Sprintf("tensor %q has %d values, parameter %q holds %d", m.file, len(src), m.param.Name, len(dst)))
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, &MismatchError{Problems: problems}
	}
	for _, m := range wanted {
		copy(tensor.Data(m.param.Param), file[m.file].Data)
	}
	return ignored, nil
}

// sameShape compares shapes exactly: HF shapes on both sides.
func sameShape(a, b []int) bool { return slices.Equal(a, b) }

// Model is a loaded encoder checkpoint.
type Model struct {
	Config    *Config
	Encoder   *transformer.Encoder
	Tokenizer tokenizer.Tokenizer // nil when the directory has none
	// Ignored lists file tensors deliberately left unused (heads).
	Ignored []string
}

// LoadEncoder opens a BERT or RoBERTa checkpoint directory: a repro one or
// a Hugging Face one (config.json + model.safetensors, names with or
// without the "bert."/"roberta." prefix). When config.json does not say
// add_pooling_layer, the encoder gets a pooler exactly when the weights
// hold one (HF base models default to having it). config.json's sizes are
// checked against the weights' header before the encoder is allocated
// (*ConfigError, *MismatchError), only the tensors the encoder uses are
// read, and they must be finite (*NonFiniteError). The tokenizer, when
// the directory has one, must fit the embedding and put its pad token
// where pad_token_id says (*ConfigError).
func LoadEncoder(dir string) (*Model, error) {
	cfg, err := ReadConfig(dir)
	if err != nil {
		return nil, err
	}
	w, err := OpenWeights(dir)
	if err != nil {
		return nil, err
	}
	defer w.Close()
	configPath := filepath.Join(dir, FileConfig)
	raw, _ := os.ReadFile(configPath)
	var keys map[string]json.RawMessage
	json.Unmarshal(raw, &keys)
	if _, set := keys["add_pooling_layer"]; !set {
		cfg.Pooler = false
		for _, n := range w.Names() {
			if strings.HasPrefix(canonical(n), "pooler.dense.") {
				cfg.Pooler = true
			}
		}
	}
	stacks := []Stack{{Field: "num_hidden_layers", Value: cfg.Layers, Prefix: "encoder.layer."}}
	shapes := func(limit int) ([]transformer.NamedParam, bool) { return transformer.ParamShapes(cfg.Config, limit) }
	// The pooler (2 tensors) is optional.
	if err := w.Prepare(configPath, BERTNaming, encoderDims(cfg.Config), stacks, 2, shapes); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	// The weights are overwritten; a fixed seed only fills what a
	// checkpoint may leave out.
	enc, err := transformer.NewEncoder(cfg.Config, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", configPath, err)
	}
	ignored, err := w.Load(enc.NamedParams(), BERTNaming)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	m := &Model{Config: cfg, Encoder: enc, Ignored: ignored}
	if tok, err := LoadTokenizer(dir); err == nil {
		m.Tokenizer = tok
	} else if hasTokenizerFiles(dir) {
		return nil, err
	}
	if m.Tokenizer != nil {
		if err := checkEncoderTokenizer(configPath, dir, cfg, m.Tokenizer); err != nil {
			return nil, fmt.Errorf("checkpoint: %w", err)
		}
	}
	return m, nil
}

// encoderDims are the config.json sizes of a BERT/RoBERTa encoder and the
// tensors whose shapes must agree with them.
func encoderDims(c transformer.Config) []Dim {
	d := []Dim{
		{"vocab_size", c.VocabSize, "embeddings.word_embeddings.weight", 0},
		{"hidden_size", c.Hidden, "embeddings.word_embeddings.weight", 1},
		{"max_position_embeddings", c.MaxPosition, "embeddings.position_embeddings.weight", 0},
		{"intermediate_size", c.Intermediate, "encoder.layer.0.intermediate.dense.weight", 0},
	}
	if c.TypeVocab > 0 {
		d = append(d, Dim{"type_vocab_size", c.TypeVocab, "embeddings.token_type_embeddings.weight", 0})
	}
	return d
}

// checkEncoderTokenizer: one embedding row per token at least, and the
// pad token where pad_token_id says (GPT-2 and T5 check theirs too), so a
// tokenizer that does not belong to the checkpoint fails here, naming it,
// not at a training step.
func checkEncoderTokenizer(configPath, dir string, cfg *Config, tok tokenizer.Tokenizer) error {
	file := filepath.Join(dir, FileVocab)
	if _, ok := tok.(*tokenizer.BPE); ok {
		file = filepath.Join(dir, FileBPEVocab)
	}
	if tok.Size() > cfg.VocabSize {
		return &ConfigError{Config: configPath, Field: "vocab_size", Against: file,
			Msg: fmt.Sprintf("is %d, but the tokenizer has %d tokens", cfg.VocabSize, tok.Size())}
	}
	if pad := tok.Special().PAD; pad != cfg.PadID {
		return &ConfigError{Config: configPath, Field: "pad_token_id", Against: file,
			Msg: fmt.Sprintf("is %d, but the tokenizer's pad token is id %d", cfg.PadID, pad)}
	}
	return nil
}

func hasTokenizerFiles(dir string) bool {
	for _, n := range []string{FileVocab, FileBPEVocab, FileMerges} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// SaveEncoder writes enc (and tok, when not nil) as a checkpoint directory
// with model_type "bert", or "roberta" when the position offset says so.
// repro holds repro's own config fields (e.g. {"pooling": "cls"}).
func SaveEncoder(dir string, enc *transformer.Encoder, tok tokenizer.Tokenizer, repro map[string]any) error {
	cfg := Config{Config: enc.Config, ModelType: "bert", Repro: repro}
	if enc.Config.PositionOffset > 0 {
		cfg.ModelType = "roberta"
	}
	cfg.Pooler = enc.Pooler != nil
	return Save(dir, cfg, enc.NamedParams(), tok)
}
