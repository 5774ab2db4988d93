package llmtest

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"repro/internal/model/gpt2"
	"repro/internal/model/tokenizer"
)

// TinyLM writes a small random GPT-2 language-model directory (one layer,
// width 16, a byte-level BPE vocabulary of 300 trained on a few sentences
// and the chat format's words, trained-with-BOS framing) under a temporary
// directory of t and returns it: a model for the in-process provider's
// tests, whose answers are gibberish but deterministic.
func TinyLM(t testing.TB, context int) string {
	t.Helper()
	texts := []string{"the cat sat on the mat", "a dog sat on a log", "the dog and the cat",
		"System: User: Assistant:", "Please paraphrase the input sentence.", "1. one\n2. two"}
	tok, err := tokenizer.TrainBPE(texts, tokenizer.BPETrainOptions{VocabSize: 300, Special: tokenizer.GPT2Specials})
	if err != nil {
		t.Fatal(err)
	}
	c := gpt2.DefaultConfig()
	c.VocabSize, c.NPositions, c.NEmbd, c.NLayer, c.NHead = tok.Size(), context, 16, 1, 2
	eos, _ := tok.ID(gpt2.EndOfText)
	c.BOSTokenID, c.EOSTokenID = eos, eos
	m, err := gpt2.New(c, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "lm")
	if err := gpt2.Save(dir, m, tok, map[string]any{"bos": true}); err != nil {
		t.Fatal(err)
	}
	return dir
}
