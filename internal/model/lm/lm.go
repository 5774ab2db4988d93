// Package lm opens language-model artifacts (registry.KindLanguageModel):
// Hugging Face directories of any generative family repro has, behind one
// type that the stages use -- the generate.Model to drive, the tokenizer's
// encode and decode, and the model's end-of-text token.
//
// A family is recognised by config.json's model_type ("gpt2" today; the
// text-to-text family adds its case here). Models repro trains record in
// config.json's "repro" section how their training examples were framed:
// with "bos": true every example began with the end-of-text token (GPT-2's
// document separator), so prompts should too; checkpoints from elsewhere
// have no such field.
package lm

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"repro/internal/generate"
	"repro/internal/model/gpt2"
	"repro/internal/model/tokenizer"
)

// LM is an opened language model.
type LM struct {
	Dir    string
	Family string // config.json's model_type
	Model  generate.Model
	// EOS is the end-of-text token id.
	EOS int
	// BOS says the model was trained with every example starting with
	// the EOS token (repro's framing); prompts then start with it too.
	BOS bool
	tok *tokenizer.BPE
	// GPT2 is the model itself when Family is "gpt2".
	GPT2 *gpt2.Model
}

// Open reads the language model in dir.
func Open(dir string) (*LM, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return nil, fmt.Errorf("language model: %w", err)
	}
	var head struct {
		ModelType string         `json:"model_type"`
		Repro     map[string]any `json:"repro"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, fmt.Errorf("language model: %s: %v", filepath.Join(dir, "config.json"), err)
	}
	switch head.ModelType {
	case "gpt2":
		m, tok, err := gpt2.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("language model: %w", err)
		}
		if tok == nil {
			return nil, fmt.Errorf("language model: %s has no tokenizer (vocab.json and merges.txt)", dir)
		}
		bos, _ := head.Repro["bos"].(bool)
		return &LM{Dir: dir, Family: "gpt2", Model: m, EOS: m.Config.EOSTokenID, BOS: bos, tok: tok, GPT2: m}, nil
	case "":
		return nil, fmt.Errorf("language model: %s: config.json has no model_type", dir)
	}
	return nil, fmt.Errorf("language model: %s: model_type %q is not a language model family repro has (gpt2)", dir, head.ModelType)
}

// Encode returns text's token ids, no special tokens added.
func (l *LM) Encode(text string) []int { return l.tok.IDs(text) }

// Decode returns the text of ids, special tokens left out.
func (l *LM) Decode(ids []int) string { return l.tok.Decode(ids) }

// Prompt encodes a prompt as the model expects it: with the EOS token
// first when the model was trained so (BOS) or when bos forces it.
func (l *LM) Prompt(text string, bos bool) []int {
	ids := l.Encode(text)
	if bos {
		ids = append([]int{l.EOS}, ids...)
	}
	return ids
}
