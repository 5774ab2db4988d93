package t5

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"repro/internal/model/checkpoint"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
)

// naming is how T5 checkpoint tensors map to NamedParams: the per-stack
// copies of the shared embedding (encoder.embed_tokens.weight,
// decoder.embed_tokens.weight) that some checkpoints carry, and
// lm_head.weight when the output layer is tied, are the shared embedding
// and are ignored.
func naming(tied bool) checkpoint.Naming {
	return checkpoint.Naming{Ignore: func(name string) bool {
		return name == "encoder.embed_tokens.weight" || name == "decoder.embed_tokens.weight" ||
			(tied && name == "lm_head.weight")
	}}
}

// Load opens a T5 directory as published on the Hugging Face hub or
// written by Save: config.json, model.safetensors (or sharded with
// model.safetensors.index.json) and, when present, the tokenizer
// (checkpoint.LoadTokenizer). A missing, unexpected or misshapen tensor
// fails the load naming it; so does a tokenizer larger than the embedding
// (T5 pads its embedding beyond the SentencePiece vocabulary, so smaller is
// allowed). config.json's sizes are checked against the weights' header
// before the model is allocated (*checkpoint.ConfigError), only the
// tensors the model uses are read, and they must be finite
// (*checkpoint.NonFiniteError). tok is nil when the directory has no
// tokenizer files.
func Load(dir string) (m *Model, tok tokenizer.Tokenizer, err error) {
	cfg, err := ReadConfig(dir)
	if err != nil {
		return nil, nil, err
	}
	w, err := checkpoint.OpenWeights(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("t5: %w", err)
	}
	defer w.Close()
	// config.json's sizes are checked against the header before they
	// decide any allocation.
	configPath := filepath.Join(dir, FileConfig)
	stacks := []checkpoint.Stack{
		{Field: "num_layers", Value: cfg.NumLayers, Prefix: "encoder.block."},
		{Field: "num_decoder_layers", Value: cfg.DecoderLayers(), Prefix: "decoder.block."},
	}
	shapes := func(limit int) ([]transformer.NamedParam, bool) { return paramShapes(*cfg, limit) }
	if err := w.Prepare(configPath, naming(cfg.TieWordEmbeddings), cfg.dims(), stacks, 0, shapes); err != nil {
		return nil, nil, fmt.Errorf("t5: %w", err)
	}
	m, err = New(*cfg, rand.New(rand.NewPCG(0, 0))) // every parameter is overwritten
	if err != nil {
		return nil, nil, fmt.Errorf("t5: %s: %w", configPath, err)
	}
	if _, err := w.Load(m.NamedParams(), naming(cfg.TieWordEmbeddings)); err != nil {
		return nil, nil, fmt.Errorf("t5: %w", err)
	}
	if !hasTokenizer(dir) {
		return m, nil, nil
	}
	tok, err = checkpoint.LoadTokenizer(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("t5: %w", err)
	}
	if err := m.CheckTokenizer(tok); err != nil {
		return nil, nil, fmt.Errorf("t5: %s: %w", dir, err)
	}
	return m, tok, nil
}

// CheckTokenizer reports whether tok fits the model: no more tokens than
// embedding rows, and its pad token where config.json's pad_token_id says.
func (m *Model) CheckTokenizer(tok tokenizer.Tokenizer) error {
	c := m.Config
	if tok.Size() > c.VocabSize {
		return fmt.Errorf("the tokenizer has %d tokens but the model's shared embedding has %d rows (vocab_size in config.json)", tok.Size(), c.VocabSize)
	}
	if pad := tok.Special().PAD; pad != c.PadTokenID {
		return fmt.Errorf("the tokenizer's pad token is id %d, config.json's pad_token_id is %d", pad, c.PadTokenID)
	}
	return nil
}

// Save writes m as a Hugging Face T5ForConditionalGeneration directory:
// config.json (repro's fields under "repro"), model.safetensors
// (lm_head.weight only when untied) and, when tok is not nil, its files.
func Save(dir string, m *Model, tok tokenizer.Tokenizer, repro map[string]any) error {
	if tok != nil {
		if err := m.CheckTokenizer(tok); err != nil {
			return fmt.Errorf("t5: save: %w", err)
		}
	}
	if err := checkpoint.WriteWeights(dir, m.NamedParams(), ""); err != nil {
		return fmt.Errorf("t5: %w", err)
	}
	cfg := m.Config
	cfg.Repro = repro
	if err := WriteConfig(dir, cfg); err != nil {
		return err
	}
	if tok != nil {
		if err := checkpoint.SaveTokenizer(dir, tok, 0); err != nil {
			return fmt.Errorf("t5: %w", err)
		}
	}
	return nil
}

// tokenizerFiles are the files any tokenizer checkpoint.LoadTokenizer
// reads consists of (WordPiece, byte-level BPE, SentencePiece).
var tokenizerFiles = []string{checkpoint.FileVocab, checkpoint.FileBPEVocab, checkpoint.FileMerges, "spiece.model", "tokenizer.json"}

func hasTokenizer(dir string) bool {
	for _, n := range tokenizerFiles {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}
