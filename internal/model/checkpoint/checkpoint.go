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
// ReadWeights (one file or the shards of model.safetensors.index.json),
// ApplyNaming with the family's Naming, WriteWeights and the tokenizer
// files.
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

// Load reads dir's weights into params (see Apply). It returns the names
// of tensors in the file that were deliberately ignored.
func Load(dir string, params []transformer.NamedParam) (ignored []string, err error) {
	file, path, err := ReadWeights(dir)
	if err != nil {
		return nil, err
	}
	ignored, err = Apply(params, file)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %s: %w", path, err)
	}
	return ignored, nil
}

// FileWeightsIndex is the index of a sharded checkpoint: {"weight_map":
// {tensor name: shard file name}}.
const FileWeightsIndex = "model.safetensors.index.json"

// ReadWeights reads every tensor of dir's checkpoint: model.safetensors, or
// the shards listed by model.safetensors.index.json. It also returns the
// path to name in errors about the tensors (the file or the index). A shard
// that lacks a tensor the index assigns to it, or a tensor in two shards,
// is an error.
func ReadWeights(dir string) (map[string]safetensors.Tensor, string, error) {
	path := filepath.Join(dir, FileWeights)
	f, err := safetensors.ReadFile(path)
	if err == nil {
		return f.Tensors, path, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("checkpoint: %w", err)
	}
	index := filepath.Join(dir, FileWeightsIndex)
	raw, ierr := os.ReadFile(index)
	if errors.Is(ierr, fs.ErrNotExist) {
		return nil, "", fmt.Errorf("checkpoint: %s has no %s or %s (only safetensors weights are read; convert pytorch_model.bin first)", dir, FileWeights, FileWeightsIndex)
	}
	if ierr != nil {
		return nil, "", fmt.Errorf("checkpoint: %w", ierr)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, "", fmt.Errorf("checkpoint: %s: %v", index, err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, "", fmt.Errorf("checkpoint: %s: empty weight_map", index)
	}
	shards := map[string][]string{} // shard -> tensors the index puts there
	for name, shard := range idx.WeightMap {
		if shard == "" || filepath.Base(shard) != shard {
			return nil, "", fmt.Errorf("checkpoint: %s: tensor %q is assigned to %q, not a file name in the directory", index, name, shard)
		}
		shards[shard] = append(shards[shard], name)
	}
	names := make([]string, 0, len(shards))
	for s := range shards {
		names = append(names, s)
	}
	sort.Strings(names)
	out := map[string]safetensors.Tensor{}
	from := map[string]string{}
	for _, shard := range names {
		sf, err := safetensors.ReadFile(filepath.Join(dir, shard))
		if err != nil {
			return nil, "", fmt.Errorf("checkpoint: %s: shard %s: %w", index, shard, err)
		}
		for _, n := range shards[shard] {
			if _, ok := sf.Tensors[n]; !ok {
				return nil, "", fmt.Errorf("checkpoint: %s: shard %s lacks tensor %q, which the index assigns to it", index, shard, n)
			}
		}
		for n, t := range sf.Tensors {
			if prev, dup := from[n]; dup {
				return nil, "", fmt.Errorf("checkpoint: %s: tensor %q is in shards %s and %s", index, n, prev, shard)
			}
			from[n] = shard
			out[n] = t
		}
	}
	return out, index, nil
}

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
func ApplyNaming(params []transformer.NamedParam, file map[string]safetensors.Tensor, naming Naming) (ignored []string, err error) {
	byName := map[string]string{} // canonical -> file name
	var problems []string
	for fn := range file {
		cn := naming.canonical(fn)
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
			if naming.Optional == nil || !naming.Optional(p.Name) {
				missing = append(missing, fmt.Sprintf("%s %v", p.Name, p.Shape))
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
		if naming.Ignore != nil && naming.Ignore(naming.canonical(fn)) {
			ignored = append(ignored, fn)
		} else {
			unexpected = append(unexpected, fmt.Sprintf("%s %v", fn, file[fn].Shape))
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
	weights, path, err := ReadWeights(dir)
	if err != nil {
		return nil, err
	}
	raw, _ := os.ReadFile(filepath.Join(dir, FileConfig))
	var keys map[string]json.RawMessage
	json.Unmarshal(raw, &keys)
	if _, set := keys["add_pooling_layer"]; !set {
		cfg.Pooler = false
		for n := range weights {
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
	ignored, err := Apply(enc.NamedParams(), weights)
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
