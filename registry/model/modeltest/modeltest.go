// Package modeltest writes tiny Hugging Face checkpoints -- BERT, GPT-2 and
// T5, with their tokenizer files -- for tests of the model.* stages and the
// fingerprint fixtures. Everything is drawn from seeded generators, so the
// same call writes the same bytes.
package modeltest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"repro/internal/encoder/pooled"
	"repro/internal/model/checkpoint"
	"repro/internal/model/gpt2"
	"repro/internal/model/safetensors"
	"repro/internal/model/t5"
	"repro/internal/model/tokenizer"
	"repro/internal/model/transformer"
	"repro/internal/tensor"
)

// Texts is the vocabularies' training text.
var Texts = []string{
	"A man is playing a guitar on the stage.",
	"A woman is slicing an onion in the kitchen.",
	"Two dogs are running through a field of grass.",
	"The children are playing football in the park.",
	"A cat is sleeping on a warm windowsill.",
	"The company reported a loss of 7000 dollars in 2004.",
	"Three people are walking along the beach at sunset.",
	"A chef is cooking pasta in a large pot.",
	"The train arrived at the station two hours late.",
	"She is reading a book under the old oak tree.",
}

// bertConfig is config.json as transformers writes it for a BertModel.
const bertConfig = `{
  "architectures": ["BertModel"],
  "attention_probs_dropout_prob": 0.1,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 16,
  "initializer_range": 0.02,
  "intermediate_size": 32,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 40,
  "model_type": "bert",
  "num_attention_heads": 2,
  "num_hidden_layers": 1,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "transformers_version": "4.36.0",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": %d
}
`

// BERT writes a one-layer, width-16 BERT with a pooler in dir as a Hugging
// Face BertModel directory: config.json, model.safetensors (names under
// "bert."), vocab.txt (WordPiece trained on Texts) and tokenizer_config.json.
func BERT(dir string, seed uint64) error {
	tok, err := pooled.TrainVocab(Texts, 120)
	if err != nil {
		return err
	}
	c := transformer.Config{VocabSize: tok.Size(), Hidden: 16, Layers: 1, Heads: 2, Intermediate: 32, MaxPosition: 40,
		TypeVocab: 2, HiddenDropout: 0.1, AttentionDropout: 0.1, LayerNormEps: 1e-12, PadID: tok.Special().PAD, Pooler: true}
	e, err := transformer.NewEncoder(c, rand.New(rand.NewPCG(seed, 1)))
	if err != nil {
		return err
	}
	// Non-zero biases and layer norms, so that a mis-mapped tensor shows.
	r := rand.New(rand.NewPCG(seed, 2))
	ts := map[string]safetensors.Tensor{}
	for _, p := range e.NamedParams() {
		d := tensor.Data(p.Param)
		for i := range d {
			d[i] += float32(r.NormFloat64() * 0.05)
		}
		ts["bert."+p.Name] = safetensors.Tensor{Shape: p.Shape, Data: append([]float32(nil), d...)}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := safetensors.WriteFile(filepath.Join(dir, checkpoint.FileWeights), ts, map[string]string{"format": "pt"}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, checkpoint.FileConfig), fmt.Appendf(nil, bertConfig, tok.Size()), 0o644); err != nil {
		return err
	}
	return checkpoint.SaveTokenizer(dir, tok, 40)
}

// GPT2 writes a one-layer, width-16 GPT-2 in dir as a Hugging Face
// GPT2LMHeadModel directory: config.json, model.safetensors, vocab.json and
// merges.txt (byte-level BPE trained on Texts, <|endoftext|> id 0).
func GPT2(dir string, seed uint64) error {
	tok, err := tokenizer.TrainBPE(Texts, tokenizer.BPETrainOptions{VocabSize: 300, Special: tokenizer.GPT2Specials})
	if err != nil {
		return err
	}
	eos, _ := tok.ID(gpt2.EndOfText)
	c := gpt2.DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead = tok.Size(), 64, 16, 1, 2
	c.BOSTokenID, c.EOSTokenID = eos, eos
	m, err := gpt2.New(c, rand.New(rand.NewPCG(seed, 3)))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return gpt2.Save(dir, m, tok, nil)
}

// T5 writes a one-block, width-16 T5 (v1.0 layout, tied) in dir as a
// Hugging Face T5ForConditionalGeneration directory: config.json,
// model.safetensors, spiece.model (a Unigram model trained on Texts, T5's
// pad 0, eos 1, unk 2, identity normaliser) with 4 sentinels, and tokenizer_config.json.
func T5(dir string, seed uint64) error {
	sm, err := tokenizer.TrainUnigram(Texts, tokenizer.UnigramTrainOptions{VocabSize: 100})
	if err != nil {
		return err
	}
	// Identity normalisation keeps spiece.model a few kilobytes (T5's
	// nmt_nfkc charsmap alone is 237 KB); the texts are ASCII.
	sm.Normalizer.Name, sm.Normalizer.PrecompiledCharsmap = "identity", nil
	tok, err := tokenizer.NewSentencePiece(sm, 4)
	if err != nil {
		return err
	}
	sp := tok.Special()
	c := t5.DefaultConfig()
	c.VocabSize, c.DModel, c.NumHeads, c.DKV, c.DFF, c.NumLayers = tok.Size(), 16, 2, 8, 32, 1
	c.PadTokenID, c.DecoderStartTokenID, c.EOSTokenID = sp.PAD, sp.PAD, sp.SEP
	m, err := t5.New(c, rand.New(rand.NewPCG(seed, 4)))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return t5.Save(dir, m, tok, nil)
}
