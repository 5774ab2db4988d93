// Package lm opens language-model artifacts (registry.KindLanguageModel):
// Hugging Face directories of any generative family repro has, behind one
// type that the stages use -- the generate.Model to drive, the tokenizer's
// encode and decode, and the model's end-of-text token.
//
// A family is recognised by config.json's model_type: "gpt2" (a causal
// model that continues its prompt) or "t5" (a text-to-text model that
// encodes the prompt and writes its output from the decoder start token). Models repro trains record in
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
	"repro/internal/model/t5"
)

// codec is the tokenizer side of a family: text to ids (no special
// tokens), a prompt's ids, and ids back to text.
type codec interface {
	IDs(text string) []int
	Decode(ids []int) string
}

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
	tok codec
	// GPT2 is the model itself when Family is "gpt2".
	GPT2 *gpt2.Model
	// T5 is the model itself when Family is "t5", and T5Text its framing
	// of texts (pieces then EOS).
	T5     *t5.Model
	T5Text *t5.Text
}

// t5Codec adapts t5.Text: ids without special tokens.
type t5Codec struct{ *t5.Text }

func (c t5Codec) IDs(text string) []int { return c.Pieces(text) }

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
	case "t5":
		m, tok, err := t5.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("language model: %w", err)
		}
		if tok == nil {
			return nil, fmt.Errorf("language model: %s has no tokenizer files", dir)
		}
		text := t5.NewText(tok, m.Config)
		return &LM{Dir: dir, Family: "t5", Model: m, EOS: m.Config.EOSTokenID, tok: t5Codec{text}, T5: m, T5Text: text}, nil
	case "":
		return nil, fmt.Errorf("language model: %s: config.json has no model_type", dir)
	}
	return nil, fmt.Errorf("language model: %s: model_type %q is not a language model family repro has (gpt2, t5)", dir, head.ModelType)
}

// Encode returns text's token ids, no special tokens added.
func (l *LM) Encode(text string) []int { return l.tok.IDs(text) }

// Decode returns the text of ids, special tokens left out.
func (l *LM) Decode(ids []int) string { return l.tok.Decode(ids) }

// Prompt encodes a prompt as the model expects it: for a causal model
// with the EOS token first when the model was trained so (BOS) or when bos
// forces it; for a text-to-text model as its encoder input (the pieces
// then EOS, as transformers' T5Tokenizer frames it; bos does not apply).
func (l *LM) Prompt(text string, bos bool) []int {
	if l.T5Text != nil {
		ids, _ := l.T5Text.Encode(text, 0)
		return ids
	}
	ids := l.Encode(text)
	if bos {
		ids = append([]int{l.EOS}, ids...)
	}
	return ids
}
