package gpt2

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"repro/internal/model/checkpoint"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
)

// EndOfText is GPT-2's one special token: the separator between documents,
// the beginning-of-sequence and end-of-sequence token.
const EndOfText = "<|endoftext|>"

// buffer matches the attention buffers old checkpoints carry (the causal
// mask "bias" and "masked_bias"), which are not parameters.
var buffer = regexp.MustCompile(`^h\.\d+\.attn\.(masked_)?bias$`)

// naming is how GPT-2 checkpoint tensors map to NamedParams: with or
// without GPT2LMHeadModel's "transformer." prefix, the attention buffers
// ignored, and lm_head.weight ignored when the output layer is tied (it is
// then the token embedding; transformers does not save it).
func naming(tied bool) checkpoint.Naming {
	return checkpoint.Naming{
		Prefixes: []string{"transformer."},
		Ignore: func(name string) bool {
			return buffer.MatchString(name) || (tied && name == "lm_head.weight")
		},
	}
}

// Load opens a GPT-2 directory as published on the Hugging Face hub or
// written by Save: config.json, model.safetensors (or sharded with
// model.safetensors.index.json) and, when present, the tokenizer
// (vocab.json + merges.txt, byte-level BPE with <|endoftext|>). A tensor
// that is missing, unexpected or of the wrong shape fails the load naming
// the tensor and both shapes; a tokenizer whose vocabulary does not match
// the embedding's rows fails too. config.json's sizes are checked against
// the weights' header before the model is allocated
// (*checkpoint.ConfigError), only the tensors the model uses are read, and
// they must be finite (*checkpoint.NonFiniteError). tok is nil when the
// directory has no tokenizer files.
func Load(dir string) (m *Model, tok *tokenizer.BPE, err error) {
	cfg, err := ReadConfig(dir)
	if err != nil {
		return nil, nil, err
	}
	w, err := checkpoint.OpenWeights(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("gpt2: %w", err)
	}
	defer w.Close()
	// config.json's sizes are checked against the header before they
	// decide any allocation.
	configPath := filepath.Join(dir, FileConfig)
	stacks := []checkpoint.Stack{{Field: "n_layer", Value: cfg.NLayer, Prefix: "h."}}
	shapes := func(limit int) ([]transformer.NamedParam, bool) { return paramShapes(*cfg, limit) }
	if err := w.Prepare(configPath, naming(cfg.TieWordEmbeddings), cfg.dims(), stacks, 0, shapes); err != nil {
		return nil, nil, fmt.Errorf("gpt2: %w", err)
	}
	// Every parameter is overwritten; the seed is irrelevant.
	m, err = New(*cfg, rand.New(rand.NewPCG(0, 0)))
	if err != nil {
		return nil, nil, fmt.Errorf("gpt2: %s: %w", configPath, err)
	}
	if _, err := w.Load(m.NamedParams(), naming(cfg.TieWordEmbeddings)); err != nil {
		return nil, nil, fmt.Errorf("gpt2: %w", err)
	}
	tok, err = LoadTokenizer(dir)
	if err != nil {
		return nil, nil, err
	}
	if tok != nil {
		if err := m.CheckTokenizer(tok); err != nil {
			return nil, nil, fmt.Errorf("gpt2: %s: %w", dir, err)
		}
	}
	return m, tok, nil
}

// LoadTokenizer reads dir's vocab.json and merges.txt; it returns nil and
// no error when the directory has neither.
func LoadTokenizer(dir string) (*tokenizer.BPE, error) {
	vocab, merges := filepath.Join(dir, checkpoint.FileBPEVocab), filepath.Join(dir, checkpoint.FileMerges)
	_, errV := os.Stat(vocab)
	_, errM := os.Stat(merges)
	switch {
	case errV != nil && errM != nil:
		return nil, nil
	case errV != nil || errM != nil:
		return nil, fmt.Errorf("gpt2: %s has only one of %s and %s", dir, checkpoint.FileBPEVocab, checkpoint.FileMerges)
	}
	tok, err := tokenizer.LoadBPE(vocab, merges, tokenizer.BPEOptions{})
	if err != nil {
		return nil, fmt.Errorf("gpt2: %w", err)
	}
	return tok, nil
}

// CheckTokenizer reports whether tok fits the model: one embedding row per
// token, and <|endoftext|> where config.json's eos_token_id says.
func (m *Model) CheckTokenizer(tok *tokenizer.BPE) error {
	c := m.Config
	if tok.Size() != c.VocabSize {
		return fmt.Errorf("the tokenizer has %d tokens (vocab.json) but the model's token embedding has %d rows (vocab_size in config.json)", tok.Size(), c.VocabSize)
	}
	if id, ok := tok.ID(EndOfText); !ok || id != c.EOSTokenID {
		return fmt.Errorf("the tokenizer's %s is id %d (present: %v), config.json's eos_token_id is %d", EndOfText, id, ok, c.EOSTokenID)
	}
	return nil
}

// Save writes m as a Hugging Face GPT2LMHeadModel directory: config.json
// (with repro's fields under "repro"), model.safetensors (names prefixed
// "transformer."; lm_head.weight only when untied) and, when tok is not
// nil, vocab.json, merges.txt and tokenizer_config.json (GPT2Tokenizer).
func Save(dir string, m *Model, tok *tokenizer.BPE, repro map[string]any) error {
	if tok != nil {
		if err := m.CheckTokenizer(tok); err != nil {
			return fmt.Errorf("gpt2: save: %w", err)
		}
	}
	var ps []transformer.NamedParam
	for _, p := range m.NamedParams() {
		if !strings.HasPrefix(p.Name, "lm_head.") {
			p.Name = "transformer." + p.Name
		}
		ps = append(ps, p)
	}
	if err := checkpoint.WriteWeights(dir, ps, ""); err != nil {
		return fmt.Errorf("gpt2: %w", err)
	}
	cfg := m.Config
	cfg.Repro = repro
	if err := WriteConfig(dir, cfg); err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if err := tok.Save(dir); err != nil {
		return fmt.Errorf("gpt2: %w", err)
	}
	tc := map[string]any{
		"tokenizer_class": "GPT2Tokenizer", "model_max_length": cfg.NPositions, "add_prefix_space": false,
		"bos_token": EndOfText, "eos_token": EndOfText, "unk_token": EndOfText,
	}
	b, _ := json.MarshalIndent(tc, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, checkpoint.FileTokenizerConfig), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("gpt2: %w", err)
	}
	return nil
}
