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
package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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

// Pooling returns Repro["pooling"] as a string ("" when unset).
func (c Config) Pooling() string {
	s, _ := c.Repro["pooling"].(string)
	return s
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
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	ts := make(map[string]safetensors.Tensor, len(params))
	for _, p := range params {
		if _, dup := ts[p.Name]; dup {
			return fmt.Errorf("checkpoint: parameter %q appears twice", p.Name)
		}
		ts[p.Name] = safetensors.Tensor{Shape: p.Shape, Data: tensor.Data(p.Param)}
	}
	if err := safetensors.WriteFile(filepath.Join(dir, FileWeights), ts, map[string]string{"format": "pt"}); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
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

// Load reads dir's weights into params (see Apply). It returns the names
// of tensors in the file that were deliberately ignored.
func Load(dir string, params []transformer.NamedParam) (ignored []string, err error) {
	f, err := safetensors.ReadFile(filepath.Join(dir, FileWeights))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("checkpoint: %s has no %s (only safetensors weights are read; convert pytorch_model.bin first)", dir, FileWeights)
		}
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	ignored, err = Apply(params, f.Tensors)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", filepath.Join(dir, FileWeights), err)
	}
	return ignored, nil
}

// prefixes are the architecture prefixes HF task models put before the
// base model's names.
var prefixes = []string{"bert.", "roberta.", "model."}

// ignorable are file tensors an encoder may leave unused: pre-training
// heads and buffers.
func ignorable(name string) bool {
	for _, p := range []string{"cls.", "lm_head.", "qa_outputs.", "classifier."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return strings.HasSuffix(name, "position_ids") || strings.HasPrefix(name, "pooler.")
}

// canonical maps a file tensor name to the model's naming: without the
// architecture prefix, gamma/beta renamed.
func canonical(name string) string {
	for _, p := range prefixes {
		if rest, ok := strings.CutPrefix(name, p); ok {
			name = rest
			break
		}
	}
	if rest, ok := strings.CutSuffix(name, ".gamma"); ok {
		return rest + ".weight"
	}
	if rest, ok := strings.CutSuffix(name, ".beta"); ok {
		return rest + ".bias"
	}
	return name
}

// optional are model parameters a checkpoint may lack (left as
// initialised): the pooler, which HF base checkpoints saved without
// add_pooling_layer do not have.
func optional(name string) bool { return strings.HasPrefix(name, "pooler.") }

// Apply copies file tensors into params by name. Every required parameter
// must be present with its exact shape; every file tensor must be used or
// ignorable. All problems are reported together.
func Apply(params []transformer.NamedParam, file map[string]safetensors.Tensor) (ignored []string, err error) {
	byName := map[string]string{} // canonical -> file name
	var problems []string
	for fn := range file {
		cn := canonical(fn)
		if other, dup := byName[cn]; dup {
			problems = append(problems, fmt.Sprintf("tensors %q and %q both map to %q", other, fn, cn))
			continue
		}
		byName[cn] = fn
	}
	used := map[string]bool{}
	type assign struct {
		dst []float32
		src []float32
	}
	var todo []assign
	var missing []string
	for _, p := range params {
		fn, ok := byName[p.Name]
		if !ok {
			if !optional(p.Name) {
				missing = append(missing, p.Name)
			}
			continue
		}
		used[fn] = true
		t := file[fn]
		if !sameShape(t.Shape, p.Shape) {
			problems = append(problems, fmt.Sprintf("tensor %q has shape %v, model parameter %q has shape %v", fn, t.Shape, p.Name, p.Shape))
			continue
		}
		dst := tensor.Data(p.Param)
		if len(dst) != len(t.Data) {
			problems = append(problems, fmt.Sprintf("tensor %q has %d values, parameter %q holds %d", fn, len(t.Data), p.Name, len(dst)))
			continue
		}
		todo = append(todo, assign{dst, t.Data})
	}
	var unexpected []string
	for fn := range file {
		if used[fn] {
			continue
		}
		if ignorable(canonical(fn)) {
			ignored = append(ignored, fn)
		} else {
			unexpected = append(unexpected, fn)
		}
	}
	sort.Strings(missing)
	sort.Strings(unexpected)
	sort.Strings(ignored)
	sort.Strings(problems)
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("missing tensors: %s", strings.Join(missing, ", ")))
	}
	if len(unexpected) > 0 {
		problems = append(problems, fmt.Sprintf("unexpected tensors (not parameters of this model): %s", strings.Join(unexpected, ", ")))
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "; "))
	}
	for _, a := range todo {
		copy(a.dst, a.src)
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
// hold one (HF base models default to having it).
func LoadEncoder(dir string) (*Model, error) {
	cfg, err := ReadConfig(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileWeights)
	f, err := safetensors.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("checkpoint: %s has no %s (only safetensors weights are read; convert pytorch_model.bin first)", dir, FileWeights)
		}
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, FileConfig))
	var keys map[string]json.RawMessage
	json.Unmarshal(raw, &keys)
	if _, set := keys["add_pooling_layer"]; !set {
		cfg.Pooler = false
		for n := range f.Tensors {
			if strings.HasPrefix(canonical(n), "pooler.dense.") {
				cfg.Pooler = true
			}
		}
	}
	// The weights are overwritten; a fixed seed only fills what a
	// checkpoint may leave out.
	enc, err := transformer.NewEncoder(cfg.Config, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", filepath.Join(dir, FileConfig), err)
	}
	ignored, err := Apply(enc.NamedParams(), f.Tensors)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	m := &Model{Config: cfg, Encoder: enc, Ignored: ignored}
	if tok, err := LoadTokenizer(dir); err == nil {
		m.Tokenizer = tok
	} else if hasTokenizerFiles(dir) {
		return nil, err
	}
	return m, nil
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
